// The eviction manager's agent side: each stats pass announces pressure changes, ranks the pods
// that may be evicted (the rank table keeps what ranking reads of each, by slot) and evicts at
// most one per interval; before that, pods over a limit of their own (an emptyDir over its
// sizeLimit) are evicted at once, as upstream's local storage eviction does.
import { WorkerContext } from "./context";
import { EventType, NodeConfig, NodeStats, PodSpec, VolumeKind } from "./model";
import { parseQuantity } from "./quantity";
import { requestMilli } from "./cgroup-values";
import { EvictionCandidate, EvictionManager, resourceOfSignal } from "./eviction-manager";
import { PodManager } from "./pod-manager";
import { PodFailure, PodRecord } from "./pod-record";
import { WorkerState } from "./pod-workers";
import { RankTable, rankingKind } from "./rank-table";
import { bytesOfMilli, isCriticalPod, podRequestBytes, writtenRequest } from "./resources";

export class EvictionPass {
  manager: EvictionManager = new EvictionManager();
  /// The pressure conditions last announced with node-pressure-changed.
  private announcedPressure: string = "";
  /// Numbers the ranking passes: the rank table says which pods have stats and may be evicted in each.
  private statsPassCount: u64 = 0;
  /// The records in the order the last ranking pass's stats listed them, and a spare array for
  /// the next (the host lists pods in a steady order: matching by position saves a hash lookup).
  /// Slots are plain numbers, so that keeping them costs the collector nothing.
  private statsOrder: i32[] = [];
  private statsOrderSpare: i32[] = [];
  /// The last pass asked the host to reclaim node-level resources instead of evicting.
  private reclaimedLastPass: bool = false;

  constructor(private ctx: WorkerContext, private pods: PodManager, private rankTable: RankTable) {}

  /// The node's pressure conditions now (MemoryPressure, DiskPressure, PIDPressure), sorted.
  get conditions(): string[] {
    return this.manager.conditions;
  }

  /// Applies the node's resources and eviction flags; returns the error, or "" when applied.
  configure(config: NodeConfig): string {
    const error = this.manager.configure(config);
    if (error.length > 0) return error;
    this.ctx.memoryCapacityBytes = <i64>config.memoryCapacityBytes;
    this.ctx.allocatableMemoryBytes = <i64>config.allocatableMemoryBytes;
    this.ctx.allocatableCpuMilli = <i64>config.allocatableCpuMilli;
    return "";
  }

  /// One stats pass: pressure conditions, at most one eviction, deferred resizes looked at again.
  handle(nowMs: u64, stats: NodeStats): void {
    this.ctx.nowMs = nowMs;
    this.ctx.lastStats = stats;
    const evicting = this.manager.evictingUid;
    const previousGone = evicting.length == 0 || !this.pods.has(evicting) ||
      this.pods.get(evicting).state == WorkerState.TerminatedPod || this.pods.get(evicting).state == WorkerState.Forgotten;
    const threshold = this.manager.observe(nowMs, stats.signals, previousGone);
    const conditions = this.manager.conditions;
    const announced = conditions.join(",");
    if (announced != this.announcedPressure) {
      this.announcedPressure = announced;
      this.ctx.nodePressureChanged(conditions.includes("MemoryPressure"), conditions.includes("DiskPressure"), conditions.includes("PIDPressure"));
    }
    // Upstream's local storage eviction comes before the thresholds: a pod over a limit of its
    // own is evicted whatever the node's pressure, and the pass ends there.
    if (this.evictOverLimit(stats)) return;
    const records = this.pods.list;
    if (threshold !== null && isDiskSignal(threshold.signal) && !this.reclaimedLastPass) {
      // Upstream reclaims node-level resources before evicting for disk: unused images go
      // first, and a pod is evicted at the next pass only if the threshold is still met then.
      this.reclaimedLastPass = true;
      this.ctx.reclaimNodeResources(threshold.signal);
      return;
    }
    this.reclaimedLastPass = false;
    if (threshold === null) {
      for (let i = 0, n = records.length; i < n; i++) {
        const rec = unchecked(records[i]);
        if (rec.resizePendingReason.length > 0) rec.dirty = true; // usage changed: a deferred resize may fit now
      }
      return;
    }
    const pass = ++this.statsPassCount;
    this.placeStats(stats, pass);
    const table = this.rankTable;
    for (let i = 0, n = records.length; i < n; i++) {
      const rec = unchecked(records[i]);
      if (rec.resizePendingReason.length > 0) rec.dirty = true;
      const spec = rec.spec;
      if (spec === null || rec.state != WorkerState.SyncPod || rec.terminal || rec.failure !== null) continue;
      // What ranking reads of a spec is worked out once per spec, not once per stats pass.
      if (rec.candidateSpec !== spec) {
        const candidate = candidateOf(rec, spec);
        rec.candidate = candidate;
        rec.candidateSpec = spec;
        table.setFacts(rec.slot, candidate);
      }
      if (!rec.candidate!.critical) table.markEligible(rec.slot, pass);
    }
    const kind = rankingKind(resourceOfSignal(threshold.signal));
    const slot = table.first(kind, pass, this.pods.slots);
    if (slot < 0) return;
    const rec = this.pods.slots[slot]!;
    const decision = this.manager.decide(nowMs, threshold, stats, rec.candidate!);
    this.evict(rec, decision.message, decision.gracePeriodSeconds);
  }

  /// Puts each known pod's numbers from `stats` in the rank table for pass `pass`.
  private placeStats(stats: NodeStats, pass: u64): void {
    const previous = this.statsOrder;
    const order = this.statsOrderSpare;
    order.length = 0;
    let cursor = 0;
    const table = this.rankTable;
    for (let i = 0, n = stats.podCount(); i < n; i++) {
      let slot = -1;
      // Most pods are where they were last pass, or one further on when a pod before them left.
      // A slot taken by another pod since fails the uid check and falls back to the index.
      for (let k = cursor, end = min(cursor + 2, previous.length); k < end; k++) {
        const known = unchecked(previous[k]);
        if (table.uidIs(known, stats, i)) {
          slot = known;
          cursor = k + 1;
          break;
        }
      }
      if (slot < 0) {
        const uid = stats.uidAt(i);
        if (!this.pods.has(uid)) continue;
        slot = this.pods.get(uid).slot;
      }
      table.setUsage(slot, pass, stats, i);
      order.push(slot);
    }
    this.statsOrderSpare = previous;
    this.statsOrder = order;
  }

  /// Evicts (grace 0) every running pod with an emptyDir that holds more than its sizeLimit.
  /// Returns true when one was.
  private evictOverLimit(stats: NodeStats): bool {
    let evicted = false;
    for (let i = 0; i < stats.volumes.length; i++) {
      const usage = stats.volumes[i];
      if (!this.pods.has(usage.podUid)) continue;
      const rec = this.pods.get(usage.podUid);
      const spec = rec.spec;
      if (spec === null || rec.state != WorkerState.SyncPod || rec.terminal || rec.failure !== null) continue;
      const message = emptyDirOverLimitMessage(spec, usage.volume, usage.usedBytes);
      if (message.length == 0) continue;
      this.evict(rec, message, 0);
      evicted = true;
    }
    return evicted;
  }

  /// Fails the pod as upstream's eviction does: killed with the given grace, phase Failed,
  /// reason Evicted, a DisruptionTarget condition, never restarted.
  private evict(rec: PodRecord, message: string, gracePeriodSeconds: i64): void {
    rec.failure = new PodFailure("Evicted", message, true);
    rec.graceOverrideSeconds = gracePeriodSeconds < 0 ? 0 : gracePeriodSeconds;
    rec.terminal = true;
    rec.dirty = true;
    rec.retryAtMs = 0;
    this.ctx.event(rec, "", EventType.Warning, "Evicted", message);
  }
}

/// Upstream's emptyDir limit check: the message when `volume` of `spec` is an emptyDir holding
/// more than its sizeLimit, else "".
export function emptyDirOverLimitMessage(spec: PodSpec, volume: string, usedBytes: i64): string {
  for (let i = 0; i < spec.volumes.length; i++) {
    const v = spec.volumes[i];
    if (v.name != volume || v.kind != VolumeKind.EmptyDir || v.sizeLimit.length == 0) continue;
    const limit = parseQuantity(v.sizeLimit);
    if (!limit.ok || limit.milliValue <= 0) return "";
    // Bytes, rounded up as a quantity's Value() is.
    const limitBytes = limit.milliValue / 1000 + (limit.milliValue % 1000 != 0 ? 1 : 0);
    if (usedBytes <= limitBytes) return "";
    return 'Usage of EmptyDir volume "' + volume + '" exceeds the limit "' + v.sizeLimit + '". ';
  }
  return "";
}

function candidateOf(rec: PodRecord, spec: PodSpec): EvictionCandidate {
  const names: string[] = [];
  const written: string[] = [];
  const bytes: i64[] = [];
  for (let i = 0; i < spec.containers.length; i++) {
    const c = spec.containers[i];
    names.push(c.name);
    written.push(writtenRequest(c, "memory"));
    bytes.push(bytesOfMilli(requestMilli(c, "memory")));
  }
  return new EvictionCandidate(rec.uid, spec.priority, isCriticalPod(spec), podRequestBytes(spec, "memory"),
    podRequestBytes(spec, "ephemeral-storage"), names, written, bytes, rec.gracePeriodSeconds());
}

/// Signals of the node's or the image filesystem, whose pressure node-level resources can relieve.
function isDiskSignal(signal: string): bool {
  return signal.startsWith("nodefs.") || signal.startsWith("imagefs.") || signal.startsWith("containerfs.");
}
