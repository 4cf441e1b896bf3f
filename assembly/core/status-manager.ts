// The status manager's core half: a pod's status (phase, container statuses, conditions) worked
// out from its spec, its view of the runtime and the worker's waiting reasons, and published
// (as a pod-status-changed action) only when it changed.
import { WorkerContext } from "./context";
import { ContainerStatus, PodCondition, PodConditionType, PodPhase, PodSpec, PodStatus, ResourceQuantity, SandboxState, TerminatedState } from "./model";
import { podConditions, sameConditions } from "./conditions";
import { applyProbeResults } from "./probe-status";
import { PodRecord } from "./pod-record";
import { WorkerState } from "./pod-workers";
import { restartPolicyOf } from "./restart";
import { InitStatuses, containerStatuses, containerStatusesOf, podPhase } from "./status";
import { ContainerStatusState as State } from "./model";

/// Recomputes the pod's status and publishes it when it changed.
export function refreshStatus(rec: PodRecord, ctx: WorkerContext): void {
  const spec = rec.lastSpec;
  if (spec === null) return;
  // No first status from a view the runtime has not confirmed: after an agent restart that
  // would say Pending for a pod the runtime shows Failed.
  if (rec.status === null && rec.needsFreshView) return;
  // A container being replaced for a spec change is stopped and started as one step upstream
  // (one SyncPod); the stopped moment in between is not a status (under Never it would read
  // Failed, and a terminal phase is final).
  if ((rec.restartForSpecChange.size > 0 || rec.restartForResize.size > 0 || rec.restartForProbe.size > 0) && rec.state == WorkerState.SyncPod) return;
  const stoppedBefore: bool[] = [];
  const statuses = containerStatuses(spec, rec.containers, rec.waiting, stoppedBefore);
  hidePostStarting(rec, statuses);
  applyProbeResults(rec, statuses);
  const init = initStatuses(rec, spec, statuses);
  const hasStatus: bool[] = [];
  for (let i = 0; i < statuses.length; i++) hasStatus.push(statuses[i].containerId.length > 0);
  // A deleted pod whose containers all stopped ends Succeeded or Failed whatever its restart
  // policy (upstream since v1.27; static pods removed from their file are not deleted pods).
  const finished = rec.state == WorkerState.TerminatedPod;
  const podIsTerminal = finished && spec.beingDeleted;
  let phase = podPhase(statuses, hasStatus, stoppedBefore, restartPolicyOf(spec), podIsTerminal, init);
  const previous = rec.status;
  const failure = rec.failure;
  if (failure !== null && failure.completionWins) {
    // Stopped by the node shutdown: upstream's final status is the phase of the stopped
    // containers (all 0: Succeeded); until they stopped the pod keeps its phase.
    if (finished) phase = podPhase(statuses, hasStatus, stoppedBefore, restartPolicyOf(spec), true, init) == PodPhase.Succeeded ? PodPhase.Succeeded : PodPhase.Failed;
    else if (previous !== null && (previous.phase == PodPhase.Succeeded || previous.phase == PodPhase.Failed)) phase = previous.phase;
  } else if (failure !== null) phase = PodPhase.Failed; // evicted or refused by the node
  else if (rec.terminal && previous !== null) phase = previous.phase; // never leaves Succeeded or Failed
  else if (spec.hasReportedTerminalPhase) phase = spec.reportedTerminalPhase; // finished before this agent knew it
  if (phase == PodPhase.Succeeded || phase == PodPhase.Failed) rec.terminal = true;
  const status = new PodStatus();
  status.phase = phase;
  for (let i = 0; i < rec.sandboxes.length; i++) {
    if (rec.sandboxes[i].state == SandboxState.Ready) status.sandboxId = rec.sandboxes[i].id;
  }
  status.containerStatuses = statuses;
  if (init !== null) status.initContainerStatuses = init.statuses;
  status.ephemeralContainerStatuses = ephemeralStatuses(rec, spec);
  addResources(rec, statuses);
  const previousConditions = previous !== null ? previous.conditions : [];
  status.conditions = podConditions(statuses, phase, status.sandboxId.length > 0, previousConditions, ctx.nowMs, spec.readinessGates, init);
  if (failure !== null) {
    // A Succeeded pod says no reason (upstream keeps the reason only with the phase it came with).
    if (phase != PodPhase.Succeeded) {
      status.reason = failure.reason;
      status.message = failure.message;
    }
    if (failure.disruption) {
      status.conditions.push(extraCondition(PodConditionType.DisruptionTarget, "TerminationByKubelet", failure.message, previousConditions, ctx.nowMs));
    }
  }
  if (rec.resizePendingReason.length > 0 && failure === null) {
    status.conditions.push(extraCondition(PodConditionType.PodResizePending, rec.resizePendingReason, rec.resizePendingMessage, previousConditions, ctx.nowMs));
  } else if (rec.resizeInProgress && failure === null) {
    status.conditions.push(extraCondition(PodConditionType.PodResizeInProgress, "", "", previousConditions, ctx.nowMs));
  }
  status.startTimeMs = rec.startTimeMs;
  status.finished = finished;
  if (previous !== null && sameStatus(previous, status)) return;
  status.version = ++rec.statusVersion;
  rec.status = status;
  ctx.publishStatus(rec);
  if (rec.terminal && rec.state == WorkerState.SyncPod) rec.dirty = true;
}

/// allocatedResources and the resources applied to each container's current instance.
/// A container whose postStart hook still runs is not running yet as far as users see: upstream
/// publishes no status while the hook runs, so the last one (ContainerCreating) stays.
function hidePostStarting(rec: PodRecord, statuses: ContainerStatus[]): void {
  if (rec.postStartRunning.size == 0) return;
  for (let i = 0; i < statuses.length; i++) {
    const s = statuses[i];
    if (s.state != State.Running || !rec.postStartRunning.has(s.containerId)) continue;
    s.state = State.Waiting;
    s.reason = "ContainerCreating";
    s.startedAtNs = 0;
  }
}

/// The init containers' statuses and what getPhase reads of them; null for a pod without any.
function initStatuses(rec: PodRecord, spec: PodSpec, statuses: ContainerStatus[]): InitStatuses | null {
  if (spec.initContainers.length == 0) return null;
  const stoppedBefore: bool[] = [];
  const list = containerStatusesOf(spec.initContainers, rec.containers, rec.waiting, stoppedBefore, true);
  hidePostStarting(rec, list);
  applyProbeResults(rec, list);
  const hasStatus: bool[] = [];
  const sidecar: bool[] = [];
  for (let i = 0; i < list.length; i++) {
    hasStatus.push(list[i].containerId.length > 0);
    sidecar.push(spec.initContainers[i].isSidecar);
    // An init container that ran to success is ready (upstream's prober manager says so).
    const s = list[i];
    if (!spec.initContainers[i].isSidecar && s.state == State.Terminated && s.exitCode == 0) s.ready = true;
  }
  // Initialized before: a regular container ran, or the last status said so.
  let initializedBefore = false;
  for (let i = 0; i < statuses.length; i++) if (statuses[i].state != State.Waiting || statuses[i].lastState !== null) initializedBefore = true;
  const previous = rec.status;
  if (previous !== null) {
    for (let i = 0; i < previous.conditions.length; i++) {
      const c = previous.conditions[i];
      if (c.conditionType == PodConditionType.Initialized && c.status) initializedBefore = true;
    }
  }
  return new InitStatuses(list, hasStatus, sidecar, initializedBefore);
}

function addResources(rec: PodRecord, statuses: ContainerStatus[]): void {
  const spec = rec.lastSpec!;
  for (let i = 0; i < statuses.length; i++) {
    const status = statuses[i];
    const container = spec.containers[i];
    status.allocatedResources = rec.allocated.has(container.name) ? rec.allocated.get(container.name) : container.requests;
    if (status.containerId.length == 0) continue;
    if (rec.applied.has(status.containerId)) {
      const applied = rec.applied.get(status.containerId);
      status.resourceRequests = applied.requests;
      status.resourceLimits = applied.limits;
    } else {
      status.resourceRequests = container.requests;
      status.resourceLimits = container.limits;
    }
  }
}

function sameContainerStatus(a: ContainerStatus, b: ContainerStatus): bool {
  return a.name == b.name && a.containerId == b.containerId && a.image == b.image && a.state == b.state &&
    a.reason == b.reason && a.message == b.message && a.exitCode == b.exitCode && a.restartCount == b.restartCount &&
    a.ready == b.ready && a.startedAtNs == b.startedAtNs && a.finishedAtNs == b.finishedAtNs && a.started == b.started &&
    sameTerminated(a.lastState, b.lastState) && sameQuantityList(a.allocatedResources, b.allocatedResources) &&
    sameQuantityList(a.resourceRequests, b.resourceRequests) && sameQuantityList(a.resourceLimits, b.resourceLimits);
}

function sameQuantityList(a: ResourceQuantity[], b: ResourceQuantity[]): bool {
  if (a.length != b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i].name != b[i].name || a[i].quantity != b[i].quantity) return false;
  return true;
}

/// A condition outside upstream's fixed five, status True, its transition time kept.
function extraCondition(type: i32, reason: string, message: string, previous: PodCondition[], nowMs: u64): PodCondition {
  let at = nowMs;
  for (let i = 0; i < previous.length; i++) if (previous[i].conditionType == type && previous[i].status) at = previous[i].lastTransitionMs;
  return new PodCondition(type, true, reason, message, at);
}

function sameTerminated(a: TerminatedState | null, b: TerminatedState | null): bool {
  if (a === null || b === null) return a === b;
  return a.containerId == b.containerId && a.exitCode == b.exitCode && a.reason == b.reason && a.message == b.message &&
    a.startedAtNs == b.startedAtNs && a.finishedAtNs == b.finishedAtNs;
}

/// Ephemeral containers' statuses: as any container's, but never ready and never said to have
/// started (no probes run on them), and no restarts (they are never restarted).
function ephemeralStatuses(rec: PodRecord, spec: PodSpec): ContainerStatus[] {
  if (spec.ephemeralContainers.length == 0) return [];
  const stoppedBefore: bool[] = [];
  const list = containerStatusesOf(spec.ephemeralContainers, rec.containers, rec.waiting, stoppedBefore, false);
  for (let i = 0; i < list.length; i++) {
    list[i].ready = false;
    list[i].started = false;
  }
  return list;
}

function sameStatus(a: PodStatus, b: PodStatus): bool {
  if (a.finished != b.finished || a.startTimeMs != b.startTimeMs || !sameConditions(a.conditions, b.conditions)) return false;
  if (a.phase != b.phase || a.reason != b.reason || a.message != b.message || a.sandboxId != b.sandboxId) return false;
  if (a.containerStatuses.length != b.containerStatuses.length || a.initContainerStatuses.length != b.initContainerStatuses.length) return false;
  for (let i = 0; i < a.initContainerStatuses.length; i++) {
    if (!sameContainerStatus(a.initContainerStatuses[i], b.initContainerStatuses[i])) return false;
  }
  for (let i = 0; i < a.containerStatuses.length; i++) {
    if (!sameContainerStatus(a.containerStatuses[i], b.containerStatuses[i])) return false;
  }
  if (a.ephemeralContainerStatuses.length != b.ephemeralContainerStatuses.length) return false;
  for (let i = 0; i < a.ephemeralContainerStatuses.length; i++) {
    if (!sameContainerStatus(a.ephemeralContainerStatuses[i], b.ephemeralContainerStatuses[i])) return false;
  }
  return true;
}
