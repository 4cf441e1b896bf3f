// The machine's CPUs as the host reads them from /sys/devices/system/cpu: each logical CPU with its
// core, socket and NUMA node. Given as data so that a test can describe any machine.
import { normalize } from "./cpuset";

/// One logical CPU (a hardware thread).
export class CpuInfo {
  constructor(public id: i32 = 0, public core: i32 = 0, public socket: i32 = 0, public numa: i32 = 0) {}
}

export class CpuTopology {
  constructor(public cpus: CpuInfo[] = []) {}

  allIds(): i32[] {
    const out = new Array<i32>();
    for (let i = 0; i < this.cpus.length; i++) out.push(this.cpus[i].id);
    return normalize(out);
  }

  find(id: i32): CpuInfo | null {
    for (let i = 0; i < this.cpus.length; i++) if (this.cpus[i].id == id) return this.cpus[i];
    return null;
  }

  sockets(): i32[] {
    const out = new Array<i32>();
    for (let i = 0; i < this.cpus.length; i++) out.push(this.cpus[i].socket);
    return normalize(out);
  }

  numaNodes(): i32[] {
    const out = new Array<i32>();
    for (let i = 0; i < this.cpus.length; i++) out.push(this.cpus[i].numa);
    return normalize(out);
  }

  /// Core ids are unique per socket only on some machines: a core is (socket, core).
  coreKey(cpu: CpuInfo): i32 {
    return cpu.socket * 65536 + cpu.core;
  }

  coreKeys(): i32[] {
    const out = new Array<i32>();
    for (let i = 0; i < this.cpus.length; i++) out.push(this.coreKey(this.cpus[i]));
    return normalize(out);
  }

  cpusPerCore(): i32 {
    const cores = this.coreKeys().length;
    return cores == 0 ? 1 : this.cpus.length / cores;
  }

  /// The CPUs of a socket (`level` 0), a NUMA node (1) or a core key (2).
  cpusIn(level: i32, unit: i32): i32[] {
    const out = new Array<i32>();
    for (let i = 0; i < this.cpus.length; i++) {
      const cpu = this.cpus[i];
      const key = level == 0 ? cpu.socket : level == 1 ? cpu.numa : this.coreKey(cpu);
      if (key == unit) out.push(cpu.id);
    }
    return normalize(out);
  }

  /// The CPUs in the NUMA nodes of `nodes`.
  cpusInNumaNodes(nodes: i32[]): i32[] {
    const out = new Array<i32>();
    for (let i = 0; i < this.cpus.length; i++) if (nodes.indexOf(this.cpus[i].numa) >= 0) out.push(this.cpus[i].id);
    return normalize(out);
  }

  /// The NUMA nodes holding any of `ids`.
  numaOf(ids: i32[]): i32[] {
    const out = new Array<i32>();
    for (let i = 0; i < ids.length; i++) {
      const cpu = this.find(ids[i]);
      if (cpu !== null) out.push(cpu.numa);
    }
    return normalize(out);
  }
}

export const LEVEL_SOCKET: i32 = 0;
export const LEVEL_NUMA: i32 = 1;
export const LEVEL_CORE: i32 = 2;
