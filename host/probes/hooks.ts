// Runs one lifecycle hook the core asked for (upstream lifecycle/handlers.go): exec in the
// container, an HTTP GET, or a sleep. An error comes back as the message upstream writes into
// the FailedPreStopHook event and the PostStartHookError status.
import type { HookRequest } from "../core/types.js";
import type { Runtime } from "../cri/runtime.js";
import { runProbe } from "./prober.js";

export interface HookTarget {
  runtime: Runtime;
  podIp: string;
  /** `namespace/name(uid)`, as upstream's format.Pod writes a pod in messages. */
  podLabel: string;
}

/** Runs the hook; resolves to "" on success, or the error message. Never rejects. */
export async function runHook(request: HookRequest, target: HookTarget): Promise<string> {
  const where = `for Container "${request.containerName}" in Pod "${target.podLabel}"`;
  const handler = request.handler;
  const timeoutSeconds = Number(request.timeoutSeconds);
  switch (handler.tag) {
    case "exec": {
      const command = `[${handler.val.join(" ")}]`;
      try {
        const r = await target.runtime.execSync(request.containerId, handler.val, timeoutSeconds);
        if (r.exitCode === 0) return "";
        const output = Buffer.concat([r.stdout, r.stderr]).toString();
        return `Exec lifecycle hook (${command}) ${where} failed - error: command '${handler.val.join(" ")}' exited with ${r.exitCode}: ${output}, message: "${output}"`;
      } catch (error) {
        return `Exec lifecycle hook (${command}) ${where} failed - error: ${(error as Error).message}, message: ""`;
      }
    }
    case "http-get": {
      const finding = await runProbe(
        { containerId: request.containerId, containerName: request.containerName, probeType: "liveness", handler, timeoutSeconds: timeoutSeconds > 0 ? timeoutSeconds : 3600 },
        { podIp: target.podIp, runtime: target.runtime },
      );
      if (finding.outcome === "success" || finding.outcome === "warning") return "";
      return `HTTP lifecycle hook (${handler.val.path}) ${where} failed - error: ${finding.output}, message: ""`;
    }
    case "sleep": {
      const seconds = Number(handler.val);
      const limit = timeoutSeconds > 0 ? Math.min(seconds, timeoutSeconds) : seconds;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, limit) * 1000));
      return "";
    }
    default:
      return `invalid handler: ${handler.tag} is not supported as a lifecycle hook`;
  }
}
