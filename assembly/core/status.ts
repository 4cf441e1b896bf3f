// Pod phase and container statuses (upstream kubelet_pods.go getPhase and
// convertToAPIContainerStatuses), computed from the spec, the runtime view and waiting reasons.
import { ContainerObservation, ContainerSpec, ContainerState, ContainerStatus, ContainerStatusState, PodPhase, PodSpec, TerminatedState } from "./model";
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

/// The newest exited instance of `name` other than `except`: the container's last termination.
function previousExited(containers: ContainerObservation[], name: string, except: ContainerObservation | null): ContainerObservation | null {
  let best: ContainerObservation | null = null;
  for (let i = 0, n = containers.length; i < n; i++) {
    const c = unchecked(containers[i]);
    if (c.name != name || c === except || c.state != ContainerState.Exited) continue;
    if (best === null || c.attempt > best.attempt || (c.attempt == best.attempt && c.finishedAtNs > best.finishedAtNs)) best = c;
  }
  return best;
}

function terminatedState(c: ContainerObservation): TerminatedState {
  const t = new TerminatedState();
  t.containerId = c.id;
  t.exitCode = c.exitCode;
  t.reason = terminatedReason(c);
  t.message = c.message;
  t.startedAtNs = c.startedAtNs;
  t.finishedAtNs = c.finishedAtNs;
  return t;
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
  return containerStatusesOf(spec.containers, containers, waiting, stoppedBefore, spec.initContainers.length > 0);
}

/// The statuses of `specs` (the regular or the init containers). `podHasInitContainers`: a
/// container with no instance yet waits with PodInitializing instead of ContainerCreating.
export function containerStatusesOf(
  specs: ContainerSpec[],
  containers: ContainerObservation[],
  waiting: Map<string, WaitingReason>,
  stoppedBefore: bool[],
  podHasInitContainers: bool,
): ContainerStatus[] {
  const defaultReason = podHasInitContainers ? "PodInitializing" : "ContainerCreating";
  const out: ContainerStatus[] = [];
  for (let i = 0; i < specs.length; i++) {
    const c = specs[i];
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
        status.started = true;
      } else if (latest.state == ContainerState.Exited) {
        hasTerminated = true;
        if (waiting.has(c.name)) {
          // Waiting to restart: the exit just seen becomes the last state (upstream moves
          // state.terminated to lastState when a reason says why the container waits).
          const reason = waiting.get(c.name);
          status.state = ContainerStatusState.Waiting;
          status.reason = reason.reason;
          status.message = reason.message;
          status.exitCode = latest.exitCode;
          status.lastState = terminatedState(latest);
        } else {
          status.state = ContainerStatusState.Terminated;
          status.reason = terminatedReason(latest);
          status.message = latest.message;
          status.exitCode = latest.exitCode;
          status.finishedAtNs = latest.finishedAtNs;
        }
      } else {
        status.state = ContainerStatusState.Waiting;
        const previous = previousExited(containers, c.name, latest);
        if (previous !== null) {
          // A restart under way (created, not yet started): the kubelet's status goes from
          // CrashLoopBackOff straight to Running, the count rising with the new instance running;
          // so until then the exit stays the last state and the count stays.
          hasTerminated = true;
          status.containerId = previous.id;
          status.restartCount = previous.attempt;
          status.startedAtNs = previous.startedAtNs;
          status.reason = waiting.has(c.name) ? waiting.get(c.name).reason : "CrashLoopBackOff";
          if (waiting.has(c.name)) status.message = waiting.get(c.name).message;
          status.exitCode = previous.exitCode;
          status.lastState = terminatedState(previous);
        } else {
          status.reason = "ContainerCreating";
        }
      }
    } else {
      status.state = ContainerStatusState.Waiting;
      if (waiting.has(c.name)) {
        status.reason = waiting.get(c.name).reason;
        status.message = waiting.get(c.name).message;
      } else {
        status.reason = defaultReason;
      }
    }
    // The instance before the current one, if it exited, is the last termination (unless the
    // current one's own exit already is). Upstream counts a waiting container with a last
    // termination as stopped.
    if (status.lastState === null) {
      const previous = previousExited(containers, c.name, latest);
      if (previous !== null) {
        status.lastState = terminatedState(previous);
        hasTerminated = true;
      }
    }
    stoppedBefore.push(hasTerminated);
    out.push(status);
  }
  return out;
}

/// Upstream getPhase for regular containers. `hasStatus[i]` is false for a container with no
/// runtime instance yet (upstream's "unknown").
/// `podIsTerminal`: the pod worker finished terminating the pod (deleted or removed); its
/// stopped containers then end it Succeeded or Failed whatever the restart policy (upstream
/// getPhase since v1.27).
export function podPhase(
  statuses: ContainerStatus[],
  hasStatus: bool[],
  stoppedBefore: bool[],
  policy: RestartPolicy,
  podIsTerminal: bool = false,
  init: InitStatuses | null = null,
): PodPhase {
  const phase = runningPhase(statuses, hasStatus, stoppedBefore, policy, podIsTerminal, init);
  // A terminal pod whose containers never all ran to an end still ends: Failed.
  if (podIsTerminal && phase != PodPhase.Succeeded && phase != PodPhase.Failed) return PodPhase.Failed;
  return phase;
}

/// The init containers' side of getPhase: their statuses, which are sidecars, and whether the
/// pod was initialized before (then a sidecar that is not started does not make it Pending).
export class InitStatuses {
  constructor(
    public statuses: ContainerStatus[],
    public hasStatus: bool[],
    public sidecar: bool[],
    public podHasInitialized: bool,
  ) {}
}

function runningPhase(
  statuses: ContainerStatus[],
  hasStatus: bool[],
  stoppedBefore: bool[],
  policy: RestartPolicy,
  podIsTerminal: bool,
  init: InitStatuses | null,
): PodPhase {
  let unknown = 0;
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  let pendingRegularInit = 0;
  let pendingSidecars = 0;
  let failedInitialization = 0;
  if (init !== null) {
    for (let i = 0; i < init.statuses.length; i++) {
      const s = init.statuses[i];
      const last = s.lastState;
      if (!init.sidecar[i]) {
        if (!init.hasStatus[i] || s.state == ContainerStatusState.Running) pendingRegularInit++;
        else if (s.state == ContainerStatusState.Terminated) {
          if (s.exitCode != 0) failedInitialization++;
        } else if (last !== null) {
          if (last.exitCode != 0) failedInitialization++;
        } else pendingRegularInit++;
        continue;
      }
      // Sidecars: running ones count as running; stopped ones do not count at all.
      if (!init.hasStatus[i]) {
        unknown++;
      } else if (s.state == ContainerStatusState.Running) {
        if (!s.started) pendingSidecars++;
        running++;
      } else if (s.state == ContainerStatusState.Waiting && last === null) {
        pendingSidecars++;
        waiting++;
      }
    }
  }
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
  if (failedInitialization > 0 && policy == RestartPolicy.Never) return PodPhase.Failed;
  if (pendingRegularInit > 0 || (pendingSidecars > 0 && !(init !== null && init.podHasInitialized))) return PodPhase.Pending;
  if (waiting > 0) return PodPhase.Pending;
  if (running > 0 && unknown == 0) return PodPhase.Running;
  if (running == 0 && stopped > 0 && unknown == 0) {
    if (podIsTerminal) return stopped == succeeded ? PodPhase.Succeeded : PodPhase.Failed;
    if (policy == RestartPolicy.Always) return PodPhase.Running;
    if (stopped == succeeded) return PodPhase.Succeeded;
    if (policy == RestartPolicy.Never) return PodPhase.Failed;
    return PodPhase.Running;
  }
  return PodPhase.Pending;
}
