// One probe of one container (upstream prober/worker.go): its schedule, its consecutive-result
// count and the result the pod's status and sync read. Pure state and decisions; the probe
// manager queues the runs and feeds the outcomes back.
import { ContainerStatus, ContainerStatusState } from "./model";
import { Probe, ProbeOutcome, ProbeType } from "./probe-types";

/// A probe's result as the kubelet's results managers hold it, per container ID.
export const enum ProbeState {
  /// No result for the current container (none yet, or removed when the worker stopped).
  None = 0,
  Success = 1,
  Failure = 2,
  /// The startup probe's value before its first result.
  Unknown = 3,
}

const NS_PER_SECOND: i64 = 1_000_000_000;

/// The value each probe type starts a new container with (upstream newWorker).
function initialState(type: i32): i32 {
  if (type == ProbeType.Readiness) return ProbeState.Failure;
  if (type == ProbeType.Liveness) return ProbeState.Success;
  return ProbeState.Unknown;
}

/// What doProbe decided at one tick.
export const enum TickDecision {
  /// Nothing to run now; keep ticking.
  Wait = 0,
  /// Run the probe now.
  Run = 1,
  /// The worker is done for good (pod finished, container will not restart, pod deleting).
  Stop = 2,
}

export class ProbeWorker {
  containerId: string = "";
  state: i32 = ProbeState.None;
  /// The last outcome counted, as a ProbeState, and how many times in a row it came.
  lastResult: i32 = ProbeState.None;
  resultRun: i32 = 0;
  /// After a liveness or startup failure: no probing until the container is replaced.
  onHold: bool = false;
  stopped: bool = false;
  nextTickMs: u64 = 0;
  /// The run-probe action in flight, 0 if none; its container ID.
  inFlightId: u64 = 0;
  inFlightContainerId: string = "";
  /// A run asked for out of schedule (a started container with no readiness yet), once per container.
  triggered: bool = false;
  triggeredFor: string = "";

  constructor(public containerName: string, public type: i32, public probe: Probe) {}

  get periodMs(): u64 {
    return <u64>this.probe.periodSeconds * 1000;
  }

  /// The result for the container `containerId`: None when the worker holds none for it.
  resultFor(containerId: string): i32 {
    if (this.stopped || containerId.length == 0 || containerId != this.containerId) return ProbeState.None;
    return this.state;
  }

  /// Upstream doProbe up to the probe run: what the published status says decides whether the
  /// probe runs now. `status` is the container's published status (null: none yet);
  /// `podFinished`: phase Succeeded or Failed; `stopping`: the pod is being deleted or stopped.
  /// Returns whether the result the status reads changed, in `changed`, and the decision.
  tick(status: ContainerStatus | null, podFinished: bool, stopping: bool, neverRestart: bool, nowMs: u64, changed: bool[]): TickDecision {
    changed[0] = false;
    if (podFinished) return this.stop(changed);
    if (status === null || status.containerId.length == 0) return TickDecision.Wait;
    if (status.containerId != this.containerId) {
      this.containerId = status.containerId;
      this.state = initialState(this.type);
      this.onHold = false;
      this.lastResult = ProbeState.None;
      this.resultRun = 0;
      changed[0] = true;
    }
    if (this.onHold) return TickDecision.Wait;
    if (status.state == ContainerStatusState.Waiting) {
      // Created, not started yet (the kubelet starts it in the same sync, so its prober never
      // sees this): nothing to judge; a Failure here would kill it the moment it runs.
      return TickDecision.Wait;
    }
    if (status.state != ContainerStatusState.Running) {
      if (this.state != ProbeState.Failure) changed[0] = true;
      this.state = ProbeState.Failure;
      // A container that ended and will never run again has nothing left to probe.
      if (neverRestart) return this.stop(changed);
      return TickDecision.Wait;
    }
    if (stopping && this.type != ProbeType.Readiness) {
      // A quiet shutdown: liveness and startup end with success, so nothing kills the container.
      if (this.state != ProbeState.Success) changed[0] = true;
      this.state = ProbeState.Success;
      return this.stop(changed);
    }
    const runningForSeconds = (<i64>nowMs * 1_000_000 - status.startedAtNs) / NS_PER_SECOND;
    if (status.startedAtNs > 0 && runningForSeconds < <i64>this.probe.initialDelaySeconds) return TickDecision.Wait;
    if (status.started) {
      if (this.type == ProbeType.Startup) return TickDecision.Wait; // done: kept for a restarted container
    } else if (this.type != ProbeType.Startup) {
      return TickDecision.Wait; // liveness and readiness wait for startup
    }
    return TickDecision.Run;
  }

  /// Counts one outcome for `containerId` (upstream's thresholds). Returns whether the result the
  /// status reads changed.
  record(containerId: string, outcome: i32): bool {
    if (outcome == ProbeOutcome.Error || this.stopped || containerId != this.containerId) return false; // dropped, as upstream
    const result = outcome == ProbeOutcome.Success || outcome == ProbeOutcome.Warning ? ProbeState.Success : ProbeState.Failure;
    if (this.lastResult == result) {
      this.resultRun++;
    } else {
      this.lastResult = result;
      this.resultRun = 1;
    }
    if ((result == ProbeState.Failure && this.resultRun < this.probe.failureThreshold) ||
      (result == ProbeState.Success && this.resultRun < this.probe.successThreshold)) return false;
    const changed = this.state != result;
    this.state = result;
    if (this.type != ProbeType.Readiness && result == ProbeState.Failure) {
      // The container will be killed: no probing until a new container replaces it.
      this.onHold = true;
      this.resultRun = 0;
    }
    return changed;
  }

  /// Stops the worker and drops its result (upstream removes it when the worker exits).
  private stop(changed: bool[]): TickDecision {
    if (!this.stopped && this.state != ProbeState.None) changed[0] = true;
    this.stopped = true;
    return TickDecision.Stop;
  }
}
