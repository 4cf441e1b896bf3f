// Pod worker lifecycle: every state a pod's worker can be in and every move between them, in one
// table (upstream pod_workers.go: SyncPod -> TerminatingPod -> TerminatedPod). A move that is not
// in the table is a broken invariant and traps.

import { PodRecord } from "./pod-record";

export const enum WorkerState {
  /// Desired and not terminal: make the runtime match the spec.
  SyncPod = 0,
  /// Stopping every container, then the sandbox, with the pod's grace period.
  TerminatingPod = 1,
  /// Everything stopped. A removed pod is then cleaned up; a terminal pod stays.
  TerminatedPod = 2,
  /// Removed and cleaned up; the record is dropped.
  Forgotten = 3,
}

export const enum WorkerEvent {
  /// The pod left the desired set (manifest removed, pod deleted, or an orphan found).
  Removed = 0,
  /// The pod's phase became Succeeded or Failed.
  BecameTerminal = 1,
  /// No container and no sandbox of the pod is running any more.
  AllStopped = 2,
  /// A removed pod has no container, sandbox or cgroup left.
  AllRemoved = 3,
  /// A removed pod came back into the desired set with the same uid.
  Readded = 4,
  /// The apiserver marked the pod for deletion: stop it for good, keep reporting its status.
  Deleted = 5,
}

const STATE_NAMES: string[] = ["SyncPod", "TerminatingPod", "TerminatedPod", "Forgotten"];
const EVENT_NAMES: string[] = ["Removed", "BecameTerminal", "AllStopped", "AllRemoved", "Readded", "Deleted"];

/// [from, event, to] rows. Readded while terminating finishes the termination first (upstream
/// restarts a pod only once its old instance is fully stopped).
const TRANSITIONS: i32[][] = [
  [WorkerState.SyncPod, WorkerEvent.Removed, WorkerState.TerminatingPod],
  [WorkerState.SyncPod, WorkerEvent.BecameTerminal, WorkerState.TerminatingPod],
  [WorkerState.TerminatingPod, WorkerEvent.Removed, WorkerState.TerminatingPod],
  [WorkerState.TerminatingPod, WorkerEvent.Readded, WorkerState.TerminatingPod],
  [WorkerState.TerminatingPod, WorkerEvent.AllStopped, WorkerState.TerminatedPod],
  [WorkerState.TerminatedPod, WorkerEvent.Removed, WorkerState.TerminatedPod],
  [WorkerState.TerminatedPod, WorkerEvent.Readded, WorkerState.SyncPod],
  [WorkerState.TerminatedPod, WorkerEvent.AllRemoved, WorkerState.Forgotten],
  [WorkerState.SyncPod, WorkerEvent.Deleted, WorkerState.TerminatingPod],
  [WorkerState.TerminatingPod, WorkerEvent.Deleted, WorkerState.TerminatingPod],
  [WorkerState.TerminatedPod, WorkerEvent.Deleted, WorkerState.TerminatedPod],
];

export function workerStateName(state: i32): string {
  return STATE_NAMES[state];
}

export function workerEventName(event: i32): string {
  return EVENT_NAMES[event];
}

/// The state after `event` in `state`; traps on a move the table does not allow.
export function transition(state: i32, event: i32): i32 {
  for (let i = 0; i < TRANSITIONS.length; i++) {
    const row = unchecked(TRANSITIONS[i]);
    if (row[0] == state && row[1] == event) return row[2];
  }
  assert(false, "pod worker: no transition from " + workerStateName(state) + " on " + workerEventName(event));
  return state;
}

/// Whether `event` is allowed in `state` (for callers that may see an event twice).
export function canTransition(state: i32, event: i32): bool {
  for (let i = 0; i < TRANSITIONS.length; i++) {
    const row = unchecked(TRANSITIONS[i]);
    if (row[0] == state && row[1] == event) return true;
  }
  return false;
}

/// The table as Graphviz dot, for docs and tests.
export function transitionsDot(): string {
  let dot = "digraph podWorker {\n";
  for (let i = 0; i < TRANSITIONS.length; i++) {
    const row = TRANSITIONS[i];
    dot += "  " + STATE_NAMES[row[0]] + " -> " + STATE_NAMES[row[2]] + ' [label="' + EVENT_NAMES[row[1]] + '"];\n';
  }
  return dot + "}\n";
}

/// Moves the pod's worker on `event` and resets what the new state does not keep: restarts
/// planned for a spec change or resize (never while terminating) and any back-off wait
/// (termination and cleanup do not wait).
export function movePod(rec: PodRecord, event: i32): void {
  if (event == WorkerEvent.Removed && !canTransition(rec.state, event)) return;
  const from = rec.state;
  rec.state = transition(rec.state, event);
  if (from == WorkerState.SyncPod && rec.state == WorkerState.TerminatingPod) {
    // A new termination: its grace budget starts with its first stop.
    rec.stopTimeoutSeconds = -1;
    rec.terminatingSinceMs = 0;
  }
  if (rec.state != WorkerState.SyncPod) {
    rec.restartForSpecChange.clear();
    rec.restartForResize.clear();
    rec.restartForProbe.clear();
  }
  rec.dirty = true;
  rec.retryAtMs = 0;
  if (event == WorkerEvent.Readded && rec.state == WorkerState.SyncPod) {
    const spec = rec.spec;
    rec.terminal = spec !== null && spec.hasReportedTerminalPhase;
    rec.cgroupRemoved = false;
  }
}

/// Asks for the pod's worker to run again at `atMs` (the earlier wins over a later wait).
export function wakePod(rec: PodRecord, atMs: u64, nowMs: u64): void {
  if (rec.retryAtMs == 0 || atMs < rec.retryAtMs || rec.retryAtMs <= nowMs) rec.retryAtMs = atMs;
}
