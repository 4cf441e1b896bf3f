// The CPU manager's static policy: a container of a Guaranteed pod whose CPU request is a whole
// number gets that many CPUs to itself; every other container shares the rest (the default set,
// which keeps the reserved CPUs). Init containers' CPUs are handed on to the pod's app containers.
import { CpuAssignment, HardwareRefusal, unexpected } from "./assignments";
import { contains, difference, intersection, normalize, union } from "./cpuset";
import { CpuTopology } from "./cpu-topology";
import { takeByTopology, takeError } from "./cpu-take";
import { allMasks, maskBits, maskCount } from "./numa-mask";
import { ResourceHints, TopologyHint } from "./topology-hints";

export const CPU_POLICY_NONE = "none";
export const CPU_POLICY_STATIC = "static";

export class CpuManager {
  policy: string = CPU_POLICY_NONE;
  topology: CpuTopology = new CpuTopology();
  reserved: i32[] = [];
  fullPcpusOnly: bool = false;
  /// The shared pool: every CPU no container holds exclusively (the reserved ones included).
  defaultSet: i32[] = [];
  assignments: CpuAssignment[] = [];
  /// CPUs of a pod's init containers that its app containers may take again, by pod uid.
  private reusable: Map<string, i32[]> = new Map();

  get isStatic(): bool {
    return this.policy == CPU_POLICY_STATIC;
  }

  configure(policy: string, topology: CpuTopology, reserved: i32[], fullPcpusOnly: bool): void {
    this.policy = policy;
    this.topology = topology;
    this.reserved = reserved;
    this.fullPcpusOnly = fullPcpusOnly;
    this.defaultSet = topology.allIds();
    this.assignments = [];
  }

  find(podUid: string, container: string): CpuAssignment | null {
    for (let i = 0; i < this.assignments.length; i++) {
      const a = this.assignments[i];
      if (a.podUid == podUid && a.container == container) return a;
    }
    return null;
  }

  /// The CPUs a container runs on: its own, or the shared pool. Empty under the none policy.
  cpusetOf(podUid: string, container: string): i32[] {
    if (!this.isStatic) return [];
    const own = this.find(podUid, container);
    return own !== null ? own.cpus : this.defaultSet;
  }

  /// What may be handed out exclusively now: the shared pool without the reserved CPUs.
  available(): i32[] {
    return difference(this.defaultSet, this.reserved);
  }

  /// upstream's topology hints for `count` exclusive CPUs; no preference when none are wanted.
  hints(podUid: string, container: string, count: i32): ResourceHints {
    const out = new ResourceHints("cpu", true);
    if (!this.isStatic || count == 0) return out;
    out.noPreference = false;
    const own = this.find(podUid, container);
    let free = own !== null ? own.cpus : union(this.available(), this.reusableOf(podUid));
    if (own !== null && own.cpus.length != count) return out; // a changed request: no placement
    const nodes = this.topology.numaNodes();
    const masks = allMasks(nodes);
    let minSize = nodes.length;
    for (let i = 0; i < masks.length; i++) {
      const inMask = this.topology.cpusInNumaNodes(maskBits(masks[i]));
      if (inMask.length >= count && maskCount(masks[i]) < minSize) minSize = maskCount(masks[i]);
      if (intersection(free, inMask).length < count) continue;
      out.hints.push(new TopologyHint(masks[i], false));
    }
    for (let i = 0; i < out.hints.length; i++) out.hints[i].preferred = maskCount(out.hints[i].mask) == minSize;
    return out;
  }

  /// Gives `container` `count` CPUs, from the NUMA nodes of `mask` first (0: anywhere); null when
  /// done (or nothing to do), else the refusal.
  allocate(podUid: string, container: string, count: i32, mask: u64, isInit: bool): HardwareRefusal | null {
    if (!this.isStatic || count == 0) return null;
    if (this.find(podUid, container) !== null) return null; // kept from before (a restart)
    if (this.fullPcpusOnly) {
      const perCore = this.topology.cpusPerCore();
      if (count % perCore != 0) {
        return new HardwareRefusal("SMTAlignmentError", "SMT Alignment Error: requested " + count.toString() +
          " cpus not multiple cpus per core = " + perCore.toString());
      }
    }
    const reuse = this.reusableOf(podUid);
    const free = union(this.available(), reuse);
    let taken: i32[] = [];
    if (mask != 0) {
      const aligned = intersection(free, this.topology.cpusInNumaNodes(maskBits(mask)));
      const want = aligned.length < count ? aligned.length : count;
      const first = takeByTopology(this.topology, aligned, want);
      if (first === null) return unexpected(takeError);
      taken = first;
    }
    if (taken.length < count) {
      const rest = takeByTopology(this.topology, difference(free, taken), count - taken.length);
      if (rest === null) return unexpected(takeError);
      taken = union(taken, rest);
    }
    this.assignments.push(new CpuAssignment(podUid, container, taken));
    this.defaultSet = difference(this.defaultSet, taken);
    if (isInit) this.reusable.set(podUid, union(reuse, taken));
    else this.reusable.set(podUid, difference(reuse, taken));
    return null;
  }

  private reusableOf(podUid: string): i32[] {
    return this.reusable.has(podUid) ? this.reusable.get(podUid) : [];
  }

  /// Frees every CPU of the pod: they return to the shared pool.
  releasePod(podUid: string): bool {
    let released: i32[] = [];
    const kept = new Array<CpuAssignment>();
    for (let i = 0; i < this.assignments.length; i++) {
      const a = this.assignments[i];
      if (a.podUid == podUid) released = union(released, a.cpus);
      else kept.push(a);
    }
    this.reusable.delete(podUid);
    if (kept.length == this.assignments.length) return false;
    this.assignments = kept;
    this.defaultSet = union(this.defaultSet, released);
    return true;
  }

  /// Puts back assignments a state file kept (an agent restart); the shared pool is what no entry
  /// holds. An entry naming a CPU the machine lacks is left out. (An app container may hold its
  /// init container's CPUs too: entries may overlap.)
  restore(entries: CpuAssignment[]): void {
    if (!this.isStatic) return;
    const all = this.topology.allIds();
    let held: i32[] = [];
    for (let i = 0; i < entries.length; i++) {
      const cpus = normalize(entries[i].cpus);
      let ok = cpus.length > 0;
      for (let j = 0; j < cpus.length && ok; j++) ok = contains(all, cpus[j]);
      if (!ok) continue;
      held = union(held, cpus);
      this.assignments.push(new CpuAssignment(entries[i].podUid, entries[i].container, cpus));
    }
    this.defaultSet = difference(all, held);
  }
}
