// The core's sandbox and container actions as CRI requests: labels and annotations that let a
// relist find nanolet's objects again, and cgroup values as CRI takes them.
import type { CreateContainer, LinuxResources, SandboxSpec } from "../core/types.js";
import {
  ANNOTATION_GRACE_PERIOD,
  ANNOTATION_SPEC_HASH,
  ContainerConfig,
  ContainerResources,
  LABEL_CONTAINER_NAME,
  LABEL_MANAGED_BY,
  LABEL_POD_NAME,
  LABEL_POD_NAMESPACE,
  LABEL_POD_UID,
  SandboxConfig,
} from "../cri/runtime.js";
import { containerLogName, podLogDirectory } from "../logs/log-paths.js";

export function sandboxConfig(spec: SandboxSpec, podLogsDir: string): SandboxConfig {
  const labels = {
    [LABEL_POD_UID]: spec.podUid,
    [LABEL_POD_NAME]: spec.podName,
    [LABEL_POD_NAMESPACE]: spec.podNamespace,
    [LABEL_MANAGED_BY]: "true",
  };
  return {
    podUid: spec.podUid,
    podName: spec.podName,
    podNamespace: spec.podNamespace,
    attempt: spec.attempt,
    hostNetwork: spec.hostNetwork,
    cgroupParent: spec.cgroupParent,
    logDirectory: podLogDirectory(podLogsDir, spec),
    labels,
    annotations: { [ANNOTATION_GRACE_PERIOD]: String(spec.terminationGracePeriodSeconds) },
  };
}

export function containerConfig(create: CreateContainer): ContainerConfig {
  const c = create.container;
  return {
    name: c.name,
    attempt: create.attempt,
    image: c.image,
    command: c.command,
    args: c.args,
    env: c.env,
    workingDir: c.workingDir,
    // Relative to the sandbox's log directory, as upstream: <container>/<attempt>.log
    logPath: containerLogName(c.name, create.attempt),
    labels: {
      [LABEL_POD_UID]: create.sandbox.podUid,
      [LABEL_POD_NAME]: create.sandbox.podName,
      [LABEL_POD_NAMESPACE]: create.sandbox.podNamespace,
      [LABEL_CONTAINER_NAME]: c.name,
      [LABEL_MANAGED_BY]: "true",
    },
    annotations: { [ANNOTATION_SPEC_HASH]: create.specHash },
    resources: {
      ...criResources(create.resources),
      ...(create.cpusetCpus ? { cpusetCpus: create.cpusetCpus } : {}),
      ...(create.cpusetMems ? { cpusetMems: create.cpusetMems } : {}),
    },
    ...(create.targetContainerId ? { targetContainerId: create.targetContainerId } : {}),
  };
}

/** The core's values as CRI takes them (cgroup v2 weights are the runtime's conversion). */
export function criResources(r: LinuxResources): ContainerResources {
  return {
    cpuShares: Number(r.cpuShares),
    cpuQuotaUs: Number(r.cpuQuotaUs),
    cpuPeriodUs: Number(r.cpuPeriodUs),
    memoryLimitBytes: Number(r.memoryLimitBytes),
    oomScoreAdj: r.oomScoreAdj,
  };
}
