// The memory manager's Static policy: a container of a Guaranteed pod gets its memory request on
// a set of NUMA nodes (its `cpuset.mems`), taken from what those nodes have left after the
// per-node reservations; other containers may use every node.
import { HardwareRefusal, MemoryAssignment, unexpected } from "./assignments";
import { allMasks, maskBits, maskCount, maskOf } from "./numa-mask";
import { ResourceHints, TopologyHint } from "./topology-hints";

export const MEMORY_POLICY_NONE = "None";
export const MEMORY_POLICY_STATIC = "Static";

/// One NUMA node's memory: what the machine has and what is reserved on it.
export class NumaMemory {
  constructor(public node: i32 = 0, public bytes: i64 = 0) {}
}

export class MemoryManager {
  policy: string = MEMORY_POLICY_NONE;
  capacity: NumaMemory[] = [];
  reserved: NumaMemory[] = [];
  assignments: MemoryAssignment[] = [];

  get isStatic(): bool {
    return this.policy == MEMORY_POLICY_STATIC;
  }

  configure(policy: string, capacity: NumaMemory[], reserved: NumaMemory[]): void {
    this.policy = policy;
    this.capacity = capacity;
    this.reserved = reserved;
    this.assignments = [];
  }

  nodes(): i32[] {
    const out = new Array<i32>();
    for (let i = 0; i < this.capacity.length; i++) out.push(this.capacity[i].node);
    out.sort((a: i32, b: i32): i32 => a - b);
    return out;
  }

  /// What a node offers Guaranteed containers: its memory less its reservation.
  allocatable(node: i32): i64 {
    let bytes: i64 = 0;
    for (let i = 0; i < this.capacity.length; i++) if (this.capacity[i].node == node) bytes += this.capacity[i].bytes;
    for (let i = 0; i < this.reserved.length; i++) if (this.reserved[i].node == node) bytes -= this.reserved[i].bytes;
    return bytes > 0 ? bytes : 0;
  }

  /// What a node has left: allocatable less what containers hold on it (shared evenly over their nodes).
  free(node: i32): i64 {
    let bytes = this.allocatable(node);
    for (let i = 0; i < this.assignments.length; i++) {
      const a = this.assignments[i];
      if (a.numaNodes.indexOf(node) >= 0) bytes -= a.bytes / <i64>a.numaNodes.length;
    }
    return bytes;
  }

  private sum(mask: u64, free: bool): i64 {
    const bits = maskBits(mask);
    let total: i64 = 0;
    for (let i = 0; i < bits.length; i++) total += free ? this.free(bits[i]) : this.allocatable(bits[i]);
    return total;
  }

  find(podUid: string, container: string): MemoryAssignment | null {
    for (let i = 0; i < this.assignments.length; i++) {
      const a = this.assignments[i];
      if (a.podUid == podUid && a.container == container) return a;
    }
    return null;
  }

  hints(podUid: string, container: string, bytes: i64): ResourceHints {
    const out = new ResourceHints("memory", true);
    if (!this.isStatic || bytes <= 0) return out;
    out.noPreference = false;
    const own = this.find(podUid, container);
    if (own !== null) {
      out.hints.push(new TopologyHint(maskOf(own.numaNodes), true));
      return out;
    }
    const nodes = this.nodes();
    const masks = allMasks(nodes);
    let minSize = nodes.length;
    for (let i = 0; i < masks.length; i++) {
      if (this.sum(masks[i], false) >= bytes && maskCount(masks[i]) < minSize) minSize = maskCount(masks[i]);
      if (this.sum(masks[i], true) >= bytes) out.hints.push(new TopologyHint(masks[i], false));
    }
    for (let i = 0; i < out.hints.length; i++) out.hints[i].preferred = maskCount(out.hints[i].mask) == minSize;
    return out;
  }

  /// Places `bytes` on the nodes of `mask`, or (0) on the narrowest nodes that fit.
  allocate(podUid: string, container: string, bytes: i64, mask: u64): HardwareRefusal | null {
    if (!this.isStatic || bytes <= 0 || this.find(podUid, container) !== null) return null;
    let chosen = mask;
    if (chosen == 0 || this.sum(chosen, true) < bytes) {
      chosen = 0;
      const masks = allMasks(this.nodes());
      for (let i = 0; i < masks.length && chosen == 0; i++) if (this.sum(masks[i], true) >= bytes) chosen = masks[i];
    }
    if (chosen == 0) return unexpected("[memorymanager] failed to find NUMA nodes to extend the container memory");
    this.assignments.push(new MemoryAssignment(podUid, container, maskBits(chosen), bytes));
    return null;
  }

  /// The NUMA nodes a container's memory is bound to; empty for none.
  nodesOf(podUid: string, container: string): i32[] {
    const own = this.find(podUid, container);
    return own === null ? [] : own.numaNodes;
  }

  releasePod(podUid: string): bool {
    const kept = new Array<MemoryAssignment>();
    for (let i = 0; i < this.assignments.length; i++) if (this.assignments[i].podUid != podUid) kept.push(this.assignments[i]);
    if (kept.length == this.assignments.length) return false;
    this.assignments = kept;
    return true;
  }

  restore(entries: MemoryAssignment[]): void {
    if (!this.isStatic) return;
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i];
      if (e.numaNodes.length > 0 && this.find(e.podUid, e.container) === null) this.assignments.push(e);
    }
  }
}
