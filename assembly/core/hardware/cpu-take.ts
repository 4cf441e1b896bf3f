// Which CPUs an exclusive request gets: upstream's packed, topology-aware best fit
// (takeByTopologyNUMAPacked). Whole sockets and NUMA nodes first when the request is that large,
// then whole cores, then single threads; at each step the units with the fewest free CPUs first
// (packing), ties by the lower id.
import { difference, intersection, normalize } from "./cpuset";
import { CpuTopology, LEVEL_CORE, LEVEL_NUMA, LEVEL_SOCKET } from "./cpu-topology";

export let takeError: string = "";

class Accumulator {
  result: i32[] = [];
  constructor(public topo: CpuTopology, public free: i32[], public needed: i32) {}

  freeIn(level: i32, unit: i32): i32[] {
    return intersection(this.topo.cpusIn(level, unit), this.free);
  }

  take(ids: i32[]): void {
    this.result = normalize(this.result.concat(ids));
    this.free = difference(this.free, ids);
    this.needed -= ids.length;
  }

  /// The units of `level` that still have free CPUs, fewest free first, then by id.
  sortedUnits(level: i32): i32[] {
    const units = level == LEVEL_SOCKET ? this.topo.sockets() : level == LEVEL_NUMA ? this.topo.numaNodes() : this.topo.coreKeys();
    const keyed = new Array<i64>();
    for (let i = 0; i < units.length; i++) {
      const n = this.freeIn(level, units[i]).length;
      if (n > 0) keyed.push((<i64>n << 32) | <i64>units[i]);
    }
    keyed.sort((a: i64, b: i64): i32 => (a < b ? -1 : a > b ? 1 : 0));
    const out = new Array<i32>();
    for (let i = 0; i < keyed.length; i++) out.push(<i32>(keyed[i] & 0xffffffff));
    return out;
  }

  /// Whole units of `level` (every CPU of it free) while the request still needs that many.
  takeFull(level: i32): void {
    const units = this.sortedUnits(level);
    for (let i = 0; i < units.length; i++) {
      const all = this.topo.cpusIn(level, units[i]);
      const freeHere = this.freeIn(level, units[i]);
      if (freeHere.length != all.length || all.length > this.needed) continue;
      this.take(freeHere);
    }
  }

  /// Cores in upstream's order: the smaller of socket and NUMA node (the outer unit) by fewest
  /// free CPUs, and within each its cores by fewest free CPUs.
  sortedCores(outerLevel: i32): i32[] {
    const out = new Array<i32>();
    const outers = this.sortedUnits(outerLevel);
    const cores = this.sortedUnits(LEVEL_CORE);
    for (let o = 0; o < outers.length; o++) {
      for (let c = 0; c < cores.length; c++) {
        const cpus = this.topo.cpusIn(LEVEL_CORE, cores[c]);
        if (cpus.length == 0) continue;
        const first = this.topo.find(cpus[0])!;
        const outer = outerLevel == LEVEL_SOCKET ? first.socket : first.numa;
        if (outer == outers[o]) out.push(cores[c]);
      }
    }
    return out;
  }
}

/// `count` CPUs out of `free`, or null with `takeError` set.
export function takeByTopology(topo: CpuTopology, free: i32[], count: i32): i32[] | null {
  const acc = new Accumulator(topo, normalize(free), count);
  if (count <= 0) return acc.result;
  if (count > acc.free.length) {
    takeError = "not enough cpus available to satisfy request: requested=" + count.toString() + ", available=" + acc.free.length.toString();
    return null;
  }
  // When NUMA nodes are at least as many as sockets, a socket holds NUMA nodes: sockets first.
  const socketsFirst = topo.numaNodes().length >= topo.sockets().length;
  const first = socketsFirst ? LEVEL_SOCKET : LEVEL_NUMA;
  const second = socketsFirst ? LEVEL_NUMA : LEVEL_SOCKET;
  acc.takeFull(first);
  if (acc.needed > 0) acc.takeFull(second);
  if (acc.needed > 0) {
    const cores = acc.sortedCores(second);
    for (let i = 0; i < cores.length && acc.needed > 0; i++) {
      const all = topo.cpusIn(LEVEL_CORE, cores[i]);
      const freeHere = acc.freeIn(LEVEL_CORE, cores[i]);
      if (freeHere.length == all.length && all.length <= acc.needed) acc.take(freeHere);
    }
  }
  if (acc.needed > 0) {
    const cores = acc.sortedCores(second);
    for (let i = 0; i < cores.length && acc.needed > 0; i++) {
      const freeHere = acc.freeIn(LEVEL_CORE, cores[i]);
      for (let j = 0; j < freeHere.length && acc.needed > 0; j++) acc.take([freeHere[j]]);
    }
  }
  if (acc.needed > 0) {
    takeError = "failed to allocate cpus";
    return null;
  }
  return acc.result;
}
