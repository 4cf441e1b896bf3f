// What eviction ranking reads of each pod, in flat arrays indexed by the pod's slot in the agent.
// At 10,000 pods a ranking pass is bound by memory, not arithmetic: records and candidates are
// scattered objects and every one read is a cache miss, while these arrays are read in order.
import { EvictionCandidate } from "./eviction-manager";
import { compareUsageKeys, comparePidKeys, PodUsage } from "./eviction-rank";
import { NodeStats } from "./model";
import { PodRecord } from "./pod-record";

/// Code units of a uid kept in the table; longer uids are matched through the agent's index.
const UID_UNITS: i32 = 40;

export const BY_MEMORY: i32 = 0;
export const BY_STORAGE: i32 = 1;
export const BY_PIDS: i32 = 2;

/// Which of a pod's numbers ranking for `resource` ("memory", "pids", "ephemeral-storage",
/// "inodes") reads.
export function rankingKind(resource: string): i32 {
  return resource == "memory" ? BY_MEMORY : resource == "pids" ? BY_PIDS : BY_STORAGE;
}

function grown<T>(from: StaticArray<T>, capacity: i32): StaticArray<T> {
  const to = new StaticArray<T>(capacity);
  memory.copy(changetype<usize>(to), changetype<usize>(from), <usize>from.length * sizeof<T>());
  return to;
}

export class RankTable {
  private capacity: i32 = 0;
  private uidText: StaticArray<u16> = new StaticArray<u16>(0);
  /// Length of each slot's uid, or -1 when it is too long to keep here.
  private uidLength: StaticArray<i32> = new StaticArray<i32>(0);
  private priority: StaticArray<i32> = new StaticArray<i32>(0);
  /// Evictable in the current pass: in the table, running, not finished, not critical.
  private eligiblePass: StaticArray<u64> = new StaticArray<u64>(0);
  /// The stats pass whose numbers `memoryUsage`..`processes` hold.
  private statsPass: StaticArray<u64> = new StaticArray<u64>(0);
  private memoryRequest: StaticArray<i64> = new StaticArray<i64>(0);
  private storageRequest: StaticArray<i64> = new StaticArray<i64>(0);
  private memoryUsage: StaticArray<i64> = new StaticArray<i64>(0);
  private storageUsage: StaticArray<i64> = new StaticArray<i64>(0);
  private processes: StaticArray<i64> = new StaticArray<i64>(0);

  private ensure(slot: i32): void {
    if (slot < this.capacity) return;
    let capacity = this.capacity < 64 ? 64 : this.capacity;
    while (capacity <= slot) capacity <<= 1;
    this.uidText = grown<u16>(this.uidText, capacity * UID_UNITS);
    this.uidLength = grown<i32>(this.uidLength, capacity);
    this.priority = grown<i32>(this.priority, capacity);
    this.eligiblePass = grown<u64>(this.eligiblePass, capacity);
    this.statsPass = grown<u64>(this.statsPass, capacity);
    this.memoryRequest = grown<i64>(this.memoryRequest, capacity);
    this.storageRequest = grown<i64>(this.storageRequest, capacity);
    this.memoryUsage = grown<i64>(this.memoryUsage, capacity);
    this.storageUsage = grown<i64>(this.storageUsage, capacity);
    this.processes = grown<i64>(this.processes, capacity);
    this.capacity = capacity;
  }

  /// A new pod takes `slot`: its uid is kept, its other entries cleared.
  claim(slot: i32, uid: string): void {
    this.ensure(slot);
    const length = uid.length;
    if (length <= UID_UNITS) {
      memory.copy(changetype<usize>(this.uidText) + ((<usize>slot * <usize>UID_UNITS) << 1), changetype<usize>(uid), <usize>length << 1);
      unchecked((this.uidLength[slot] = length));
    } else {
      unchecked((this.uidLength[slot] = -1));
    }
    unchecked((this.eligiblePass[slot] = 0));
    unchecked((this.statsPass[slot] = 0));
  }

  /// True when the pod in `slot` has the uid of `stats` pod `index`.
  uidIs(slot: i32, stats: NodeStats, index: i32): bool {
    if (slot >= this.capacity) return false;
    const length = unchecked(this.uidLength[slot]);
    return length >= 0 && stats.uidRangeIs(index, changetype<usize>(this.uidText) + ((<usize>slot * <usize>UID_UNITS) << 1), length);
  }

  /// Records what ranking reads of a pod's spec (kept until the spec changes).
  setFacts(slot: i32, candidate: EvictionCandidate): void {
    this.ensure(slot);
    unchecked((this.priority[slot] = candidate.priority));
    unchecked((this.memoryRequest[slot] = candidate.memoryRequestBytes));
    unchecked((this.storageRequest[slot] = candidate.storageRequestBytes));
  }

  /// The pod in `slot` may be evicted in ranking pass `pass`.
  markEligible(slot: i32, pass: u64): void {
    unchecked((this.eligiblePass[slot] = pass));
  }

  /// The pod in `slot` has stats in pass `pass`: those of `stats` pod `index`.
  setUsage(slot: i32, pass: u64, stats: NodeStats, index: i32): void {
    this.ensure(slot);
    unchecked((this.statsPass[slot] = pass));
    unchecked((this.memoryUsage[slot] = stats.memoryWorkingSetBytesAt(index)));
    unchecked((this.storageUsage[slot] = stats.ephemeralStorageBytesAt(index)));
    unchecked((this.processes[slot] = stats.processCountAt(index)));
  }

  private fill(slot: i32, kind: i32, pass: u64, into: PodUsage): void {
    const hasStats = unchecked(this.statsPass[slot]) == pass;
    into.priority = unchecked(this.priority[slot]);
    into.hasStats = hasStats;
    into.usage = !hasStats ? 0 : kind == BY_MEMORY ? unchecked(this.memoryUsage[slot]) : kind == BY_PIDS ? unchecked(this.processes[slot]) : unchecked(this.storageUsage[slot]);
    into.request = kind == BY_MEMORY ? unchecked(this.memoryRequest[slot]) : kind == BY_PIDS ? 0 : unchecked(this.storageRequest[slot]);
  }

  /// The slot of the first pod in eviction order among those eligible in `pass` (upstream's
  /// order for `kind`), or -1. `slots` gives each slot's record, whose uid breaks ties.
  first(kind: i32, pass: u64, slots: Array<PodRecord | null>): i32 {
    let best = -1;
    const bestUsage = new PodUsage();
    const next = new PodUsage();
    const end = min(slots.length, this.capacity);
    for (let slot = 0; slot < end; slot++) {
      if (unchecked(this.eligiblePass[slot]) != pass) continue;
      if (best < 0) {
        best = slot;
        this.fill(slot, kind, pass, bestUsage);
        continue;
      }
      this.fill(slot, kind, pass, next);
      const order = kind == BY_PIDS ? comparePidKeys(next, bestUsage) : compareUsageKeys(next, bestUsage);
      if (order < 0 || (order == 0 && unchecked(slots[slot])!.uid < unchecked(slots[best])!.uid)) {
        best = slot;
        this.fill(slot, kind, pass, bestUsage);
      }
    }
    return best;
  }
}
