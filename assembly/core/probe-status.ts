// What probe results mean for a container (upstream prober_manager UpdatePodStatus and
// computePodActions): `started`, `ready`, and whether a liveness or startup failure kills it.
import { ContainerStatus, ContainerStatusState } from "./model";
import { PodRecord } from "./pod-record";
import { ProbeType } from "./probe-types";
import { ProbeState } from "./probe-worker";
import { probeWorkerOf } from "./probe-manager";

/// Sets `started` and `ready` of each status from the probe results; a started container that is
/// not ready yet asks its readiness probe to run now (once per container instance).
export function applyProbeResults(rec: PodRecord, statuses: ContainerStatus[]): void {
  for (let i = 0; i < statuses.length; i++) {
    const status = statuses[i];
    if (status.state != ContainerStatusState.Running) {
      status.started = false;
      status.ready = false;
      continue;
    }
    status.started = isStarted(rec, status);
    if (!status.started) {
      status.ready = false;
      continue;
    }
    const readiness = probeWorkerOf(rec, status.name, ProbeType.Readiness);
    if (readiness === null || readiness.stopped) {
      status.ready = true;
      continue;
    }
    status.ready = readiness.resultFor(status.containerId) == ProbeState.Success;
    if (!status.ready && readiness.triggeredFor != status.containerId) {
      readiness.triggered = true;
      readiness.triggeredFor = status.containerId;
    }
  }
}

function isStarted(rec: PodRecord, status: ContainerStatus): bool {
  return isContainerStarted(rec, status.name, status.containerId);
}

/// Whether the running container `containerId` has started: it has no startup probe, or its
/// startup probe succeeded.
export function isContainerStarted(rec: PodRecord, name: string, containerId: string): bool {
  const startup = probeWorkerOf(rec, name, ProbeType.Startup);
  if (startup === null || startup.stopped) return true;
  return startup.resultFor(containerId) == ProbeState.Success;
}

/// Which probe says the running container `containerId` must be killed: Liveness or Startup,
/// or -1 for none.
export function failedProbe(rec: PodRecord, name: string, containerId: string): i32 {
  const liveness = probeWorkerOf(rec, name, ProbeType.Liveness);
  if (liveness !== null && liveness.resultFor(containerId) == ProbeState.Failure) return ProbeType.Liveness;
  const startup = probeWorkerOf(rec, name, ProbeType.Startup);
  if (startup !== null && startup.resultFor(containerId) == ProbeState.Failure) return ProbeType.Startup;
  return -1;
}
