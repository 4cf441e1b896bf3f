// The machine's CPU topology and NUMA memory as the kernel describes them in sysfs: each CPU's
// core and socket, each NUMA node's CPUs and memory. The core places CPUs and memory over this.
import fs from "node:fs";
import path from "node:path";
import { readKernelText } from "../files/bounded-file.js";

export interface CpuInfo {
  id: number;
  core: number;
  socket: number;
  numaNode: number;
}

export interface NumaMemory {
  numaNode: number;
  bytes: number;
}

export interface MachineTopology {
  cpus: CpuInfo[];
  numaMemory: NumaMemory[];
}

/** sysfs facts are a line: anything longer is not the file it should be. */
const FACT_BYTES = 4096;
/** meminfo of one node is a few dozen lines. */
const MEMINFO_BYTES = 64 * 1024;
/** More CPUs than any machine this runs on has; a larger id is not believed. */
const MAX_CPUS = 8192;

function readNumber(file: string): number | undefined {
  try {
    const n = Number.parseInt(readKernelText(file, FACT_BYTES).trim(), 10);
    return Number.isInteger(n) && n >= 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/** Expands a kernel cpulist (`0-3,8`). */
export function cpuList(text: string): number[] {
  const out: number[] = [];
  for (const part of text.trim().split(",")) {
    if (part === "") continue;
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) continue;
    const first = Number(m[1]), last = m[2] === undefined ? first : Number(m[2]);
    for (let id = first; id <= last && id < MAX_CPUS; id++) out.push(id);
  }
  return out;
}

function entries(dir: string, pattern: RegExp): number[] {
  try {
    return fs.readdirSync(dir).map((n) => pattern.exec(n)).filter((m): m is RegExpExecArray => m !== null).map((m) => Number(m[1])).sort((a, b) => a - b);
  } catch {
    return [];
  }
}

/** Reads the topology under `sysRoot` (`/sys` on a node; a directory of files in tests). */
export function readMachineTopology(sysRoot = "/sys"): MachineTopology {
  const cpuDir = path.join(sysRoot, "devices/system/cpu");
  const nodeDir = path.join(sysRoot, "devices/system/node");
  const numaOf = new Map<number, number>();
  const numaMemory: NumaMemory[] = [];
  for (const node of entries(nodeDir, /^node(\d+)$/)) {
    let list: number[] = [];
    try {
      list = cpuList(readKernelText(path.join(nodeDir, `node${node}`, "cpulist"), FACT_BYTES));
    } catch {
      continue;
    }
    for (const cpu of list) numaOf.set(cpu, node);
    try {
      const meminfo = readKernelText(path.join(nodeDir, `node${node}`, "meminfo"), MEMINFO_BYTES);
      const m = /MemTotal:\s+(\d+)\s+kB/.exec(meminfo);
      if (m) numaMemory.push({ numaNode: node, bytes: Number(m[1]) * 1024 });
    } catch {
      // a node without meminfo offers no memory to place
    }
  }
  const online = (() => {
    try {
      return new Set(cpuList(readKernelText(path.join(cpuDir, "online"), FACT_BYTES)));
    } catch {
      return undefined;
    }
  })();
  const cpus: CpuInfo[] = [];
  for (const id of entries(cpuDir, /^cpu(\d+)$/)) {
    if (online && !online.has(id)) continue;
    const topology = path.join(cpuDir, `cpu${id}`, "topology");
    const core = readNumber(path.join(topology, "core_id")) ?? id;
    const socket = readNumber(path.join(topology, "physical_package_id")) ?? 0;
    cpus.push({ id, core, socket, numaNode: numaOf.get(id) ?? 0 });
  }
  return { cpus, numaMemory };
}
