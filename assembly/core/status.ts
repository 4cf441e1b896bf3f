// Pod phase and container statuses (upstream kubelet_pods.go getPhase and
// convertToAPIContainerStatuses), computed from the spec, the runtime view and waiting reasons.
import { ContainerObservation, ContainerState, ContainerStatus, ContainerStatusState, PodPhase, PodSpec } from "./model";
import { RestartPolicy } from "./restart";

/// Why a container is waiting, as the pod worker last decided (CrashLoopBackOff, ErrImagePull...).
export class WaitingReason {
  constructor(public reason: string, public message: string) {}
}

/// Newest instance of `name` among `containers`: highest attempt, then latest creation.
export function latestContainer(containers: ContainerObservation[], name: string, sandboxId: string = ""): ContainerObservation | null {
  let best: ContainerObservation | null = null;
  for (let i = 0, n = containers.length; i < n; i++) {
    const c = unchecked(containers[i]);
    if (c.name != name) continue;
    if (sandboxId.length > 0 && c.sandboxId != sandboxId) continue;
    if (best === null || c.attempt > best.attempt || (c.attempt == best.attempt && c.createdAtNs > best.createdAtNs)) {
      best = c;
    }
  }
  return best;
}

function hasExitedInstance(containers: ContainerObservation[], name: string, except: ContainerObservation | null): bool {
  for (let i = 0, n = containers.length; i < n; i++) {
    const c = unchecked(containers[i]);
    if (c.name == name && c !== except && c.state == ContainerState.Exited) return true;
  }
  return false;
}

function terminatedReason(c: ContainerObservation): string {
  if (c.reason.length > 0) return c.reason;
  return c.exitCode == 0 ? "Completed" : "Error";
}

/// Status of each spec container, in spec order. A waiting reason wins over an exited instance
/// (the container is about to restart); `stoppedBefore[i]` tells whether container i has a last
/// terminated state, which getPhase counts as stopped.
export function containerStatuses(
  spec: PodSpec,
  containers: ContainerObservation[],
  waiting: Map<string, WaitingReason>,
  stoppedBefore: bool[],
): ContainerStatus[] {
  const out: ContainerStatus[] = [];
  for (let i = 0; i < spec.containers.length; i++) {
    const c = spec.containers[i];
    const status = new ContainerStatus();
    status.name = c.name;
    status.image = c.image;
    const latest = latestContainer(containers, c.name);
    let hasTerminated = false;
    if (latest !== null) {
      status.containerId = latest.id;
      status.restartCount = latest.attempt;
      status.startedAtNs = latest.startedAtNs;
      if (latest.state == ContainerState.Running) {
        status.state = ContainerStatusState.Running;
        status.ready = true;
      } else if (latest.state == ContainerState.Exited) {
        hasTerminated = true;
        if (waiting.has(c.name)) {
          const reason = waiting.get(c.name);
          status.state = ContainerStatusState.Waiting;
          status.reason = reason.reason;
          status.message = reason.message;
          status.exitCode = latest.exitCode;
        } else {
          status.state = ContainerStatusState.Terminated;
          status.reason = terminatedReason(latest);
          status.message = latest.message;
          status.exitCode = latest.exitCode;
          status.finishedAtNs = latest.finishedAtNs;
        }
      } else {
        status.state = ContainerStatusState.Waiting;
        status.reason = "ContainerCreating";
      }
    } else {
      status.state = ContainerStatusState.Waiting;
      if (waiting.has(c.name)) {
        status.reason = waiting.get(c.name).reason;
        status.message = waiting.get(c.name).message;
      } else {
        status.reason = "ContainerCreating";
      }
    }
    // Upstream counts a waiting container with a last termination state as stopped: an older
    // instance that exited (the one being restarted) is that last state.
    if (!hasTerminated) hasTerminated = hasExitedInstance(containers, c.name, latest);
    stoppedBefore.push(hasTerminated);
    out.push(status);
  }
  return out;
}

/// Upstream getPhase for regular containers. `hasStatus[i]` is false for a container with no
/// runtime instance yet (upstream's "unknown").
export function podPhase(
  statuses: ContainerStatus[],
  hasStatus: bool[],
  stoppedBefore: bool[],
  policy: RestartPolicy,
): PodPhase {
  let unknown = 0;
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (let i = 0; i < statuses.length; i++) {
    const s = statuses[i];
    if (!hasStatus[i]) {
      unknown++;
      continue;
    }
    if (s.state == ContainerStatusState.Running) {
      running++;
    } else if (s.state == ContainerStatusState.Terminated) {
      stopped++;
      if (s.exitCode == 0) succeeded++;
    } else if (stoppedBefore[i]) {
      stopped++; // waiting to restart after a termination
    } else {
      waiting++;
    }
  }
  if (waiting > 0) return PodPhase.Pending;
  if (running > 0 && unknown == 0) return PodPhase.Running;
  if (running == 0 && stopped > 0 && unknown == 0) {
    if (policy == RestartPolicy.Always) return PodPhase.Running;
    if (stopped == succeeded) return PodPhase.Succeeded;
    if (policy == RestartPolicy.Never) return PodPhase.Failed;
    return PodPhase.Running;
  }
  return PodPhase.Pending;
}
