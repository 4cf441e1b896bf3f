// Where the kubelet keeps container logs, as upstream lays them out: a directory per pod,
// `<namespace>_<name>_<uid>`, and in it `<container>/<attempt>.log`. The runtime writes there, the
// log manager rotates, the API reads, and log shippers find them.
import path from "node:path";
import type { SandboxSpec } from "../core/types.js";
import { PathEscapeError, pathUnder, safeComponent } from "../common/safe-path.js";

/** Kubelet's pod log directory name: `<namespace>_<name>_<uid>`. */
export function podLogDirectory(podLogsDir: string, sandbox: Pick<SandboxSpec, "podUid" | "podName" | "podNamespace">): string {
  const name = `${sandbox.podNamespace}_${sandbox.podName}_${sandbox.podUid}`;
  if (!safeComponent(name)) throw new PathEscapeError(podLogsDir, name);
  return pathUnder(podLogsDir, name);
}

/**
 * A container's log file relative to its pod's log directory, `<container>/<attempt>.log` as
 * upstream: where the runtime writes it, the log manager rotates it and the API reads it.
 */
export function containerLogName(containerName: string, attempt: number): string {
  if (!safeComponent(containerName)) throw new PathEscapeError("<pod log directory>", containerName);
  return path.join(containerName, `${attempt}.log`);
}
