// Upstream's NodeShutdownManager, its decisions only: which pods stop in which order, with what
// grace, and what their statuses say. The host holds logind's delay lock and tells the core when
// logind announces a shutdown (or its cancellation); the core answers with pod kills, group by
// group from the lowest priority up, and with `shutdown-inhibit-lock` actions saying when the
// lock may go (every group done) and when to take it again (a cancellation was applied).
import { WorkerContext } from "./context";
import { PodManager } from "./pod-manager";
import { PodFailure, PodRecord, DEFAULT_GRACE_PERIOD_SECONDS } from "./pod-record";
import { WorkerState } from "./pod-workers";

/// Upstream's default priority (no PriorityClass) and system-critical priority: the two groups
/// that shutdownGracePeriod and shutdownGracePeriodCriticalPods stand for.
const DEFAULT_PRIORITY: i32 = 0;
const SYSTEM_CRITICAL_PRIORITY: i32 = 2000000000;

export const NODE_SHUTDOWN_REASON = "Terminated";
export const NODE_SHUTDOWN_MESSAGE = "Pod was terminated in response to imminent node shutdown.";

/// Pods of at least `priority` (up to the next group's) get `gracePeriodSeconds` at shutdown.
export class ShutdownGracePeriod {
  constructor(public priority: i32 = 0, public gracePeriodSeconds: i64 = 0) {}
}

/// No event waiting, a shutdown waiting, a cancellation waiting.
const enum Pending {
  None = 0,
  Shutdown = 1,
  Cancel = 2,
}

export class NodeShutdown {
  /// Sorted by priority, lowest first; empty: the manager is off (shutdown is immediate).
  groups: ShutdownGracePeriod[] = [];
  /// Upstream's nodeShuttingDownNow: new pods are refused and the node is not ready.
  shuttingDown: bool = false;
  private processing: bool = false;
  private pending: Pending = Pending.None;
  /// Pods of each group, by uid, taken when the shutdown began.
  private podsByGroup: string[][] = [];
  private groupAt: i32 = -1;
  private groupDeadlineMs: u64 = 0;

  constructor(private ctx: WorkerContext, private pods: PodManager) {}

  /// Sets the groups as upstream's manager does: the by-priority list when given, else the two
  /// groups the plain settings stand for (none when the grace period is 0 or shorter than the
  /// critical pods' part). Returns how long the lock must hold shutdown off, in milliseconds
  /// (the sum of every group's grace); 0 means the manager stays off.
  configure(gracePeriodSeconds: i64, criticalPodsSeconds: i64, byPriority: ShutdownGracePeriod[]): u64 {
    let groups: ShutdownGracePeriod[] = [];
    if (byPriority.length > 0) {
      for (let i = 0; i < byPriority.length; i++) groups.push(new ShutdownGracePeriod(byPriority[i].priority, byPriority[i].gracePeriodSeconds));
    } else if (gracePeriodSeconds > 0 && criticalPodsSeconds >= 0 && criticalPodsSeconds <= gracePeriodSeconds) {
      groups.push(new ShutdownGracePeriod(DEFAULT_PRIORITY, gracePeriodSeconds - criticalPodsSeconds));
      groups.push(new ShutdownGracePeriod(SYSTEM_CRITICAL_PRIORITY, criticalPodsSeconds));
    }
    groups.sort((a: ShutdownGracePeriod, b: ShutdownGracePeriod): i32 => (a.priority < b.priority ? -1 : a.priority > b.priority ? 1 : 0));
    this.groups = groups;
    let totalSeconds: i64 = 0;
    for (let i = 0; i < groups.length; i++) if (groups[i].gracePeriodSeconds > 0) totalSeconds += groups[i].gracePeriodSeconds;
    return <u64>totalSeconds * 1000;
  }

  /// logind said a shutdown is coming (`true`) or was cancelled (`false`). Upstream handles one
  /// event at a time: an event that arrives while the pods are being stopped waits until they are.
  handle(nowMs: u64, shuttingDown: bool): void {
    if (this.groups.length == 0) return;
    if (this.processing) {
      this.pending = shuttingDown ? Pending.Shutdown : Pending.Cancel;
      return;
    }
    this.apply(nowMs, shuttingDown);
  }

  private apply(nowMs: u64, shuttingDown: bool): void {
    this.shuttingDown = shuttingDown;
    if (!shuttingDown) {
      this.ctx.shutdownInhibitLock(true);
      return;
    }
    this.processing = true;
    this.podsByGroup = this.groupActivePods();
    this.groupAt = -1;
    this.advance(nowMs);
  }

  /// Moves to the next group once every pod of this one has stopped or its grace has run out;
  /// when the last group is done the lock may go, and a waiting event is applied.
  advance(nowMs: u64): void {
    if (!this.processing) return;
    while (true) {
      if (this.groupAt >= 0 && nowMs < this.groupDeadlineMs && !this.groupStopped(this.podsByGroup[this.groupAt])) return;
      this.groupAt++;
      if (this.groupAt >= this.podsByGroup.length) break;
      const uids = this.podsByGroup[this.groupAt];
      // A group without pods is not waited for.
      if (uids.length == 0) continue;
      const group = this.groups[this.groupAt];
      this.groupDeadlineMs = nowMs + <u64>(group.gracePeriodSeconds > 0 ? group.gracePeriodSeconds : 0) * 1000;
      for (let i = 0; i < uids.length; i++) this.kill(uids[i], group.gracePeriodSeconds);
    }
    this.processing = false;
    this.groupAt = -1;
    this.podsByGroup = [];
    this.ctx.shutdownInhibitLock(false);
    const pending = this.pending;
    this.pending = Pending.None;
    if (pending != Pending.None) this.apply(nowMs, pending == Pending.Shutdown);
  }

  /// When the current group's grace runs out (0: nothing to wait for).
  deadline(): u64 {
    return this.processing && this.groupAt >= 0 ? this.groupDeadlineMs : 0;
  }

  /// Upstream's groupByPriority over the active pods: a pod goes to the group of the highest
  /// priority not above its own, a pod below every group to the lowest.
  private groupActivePods(): string[][] {
    const byGroup: string[][] = [];
    for (let i = 0; i < this.groups.length; i++) byGroup.push([]);
    const list = this.pods.list;
    for (let i = 0; i < list.length; i++) {
      const rec = list[i];
      const spec = rec.spec;
      if (spec === null || rec.terminal || rec.needsAdmission || rec.state != WorkerState.SyncPod) continue;
      let at = 0;
      for (let g = 0; g < this.groups.length; g++) if (this.groups[g].priority <= spec.priority) at = g;
      byGroup[at].push(rec.uid);
    }
    // Sorted, so the actions never depend on the order pods arrived in.
    for (let i = 0; i < byGroup.length; i++) byGroup[i].sort((a: string, b: string): i32 => (a < b ? -1 : a > b ? 1 : 0));
    return byGroup;
  }

  /// As upstream's kill: the group's grace, or the pod's own when that is shorter; the status
  /// says Failed, reason Terminated, with a DisruptionTarget condition; a pod whose containers
  /// all exit 0 ends Succeeded instead (upstream's final status, computed once they stopped).
  private kill(uid: string, groupGraceSeconds: i64): void {
    if (!this.pods.has(uid)) return;
    const rec = this.pods.get(uid);
    const spec = rec.spec;
    if (spec === null || rec.terminal) return;
    let grace = groupGraceSeconds < 0 ? 0 : groupGraceSeconds;
    const own = spec.hasGracePeriod ? spec.terminationGracePeriodSeconds : DEFAULT_GRACE_PERIOD_SECONDS;
    if (own <= grace) grace = own;
    rec.failure = new PodFailure(NODE_SHUTDOWN_REASON, NODE_SHUTDOWN_MESSAGE, true, true);
    rec.graceOverrideSeconds = grace;
    rec.terminal = true;
    rec.dirty = true;
    rec.retryAtMs = 0;
  }

  private groupStopped(uids: string[]): bool {
    for (let i = 0; i < uids.length; i++) {
      if (!this.pods.has(uids[i])) continue;
      const rec: PodRecord = this.pods.get(uids[i]);
      if (rec.state == WorkerState.SyncPod || rec.state == WorkerState.TerminatingPod) return false;
    }
    return true;
  }
}
