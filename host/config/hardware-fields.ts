// The KubeletConfiguration fields of the CPU, memory and topology managers: their values, upstream's
// checks on them, and the hardware settings the core is given.
import { ConfigError, type KubeletConfiguration } from "./config-types.js";
import { parseGoDuration } from "./go-duration.js";
import { printable } from "../common/log.js";
import type { MachineTopology } from "../hardware/machine-topology.js";
import type { HardwareConfig } from "../core/core.js";

/** One `reservedMemory` entry: a NUMA node and what is kept on it (`memory`, `hugepages-2Mi`...). */
export interface ReservedMemory {
  numaNode: number;
  limits: Record<string, string>;
}

const CPU_POLICIES = ["none", "static"];
const CPU_POLICY_OPTIONS = new Set(["full-pcpus-only"]);
const MEMORY_POLICIES = ["None", "Static"];
const TOPOLOGY_POLICIES = ["none", "best-effort", "restricted", "single-numa-node"];
const TOPOLOGY_SCOPES = ["container", "pod"];

/** Reads `reservedMemory` from the file: a list of {numaNode, limits}. */
export function readReservedMemory(value: unknown): ReservedMemory[] | string {
  if (!Array.isArray(value)) return "expected a list of {numaNode, limits}";
  const out: ReservedMemory[] = [];
  for (const [i, entry] of value.entries()) {
    if (entry === null || typeof entry !== "object" || Array.isArray(entry)) return `[${i}]: expected {numaNode, limits}`;
    const e = entry as Record<string, unknown>;
    for (const key of Object.keys(e)) if (key !== "numaNode" && key !== "limits") return `[${i}]: unknown field "${printable(key, 64)}"`;
    const node = e.numaNode ?? 0;
    if (typeof node !== "number" || !Number.isInteger(node) || node < 0 || node > 63) return `[${i}].numaNode: expected a whole number from 0 to 63`;
    const limits = e.limits ?? {};
    if (limits === null || typeof limits !== "object" || Array.isArray(limits)) return `[${i}].limits: expected a map of resources to quantities`;
    const copy: Record<string, string> = {};
    for (const [k, v] of Object.entries(limits as Record<string, unknown>)) {
      if (typeof v !== "string" && typeof v !== "number") return `[${i}].limits.${printable(k, 64)}: expected a quantity`;
      copy[k] = String(v);
    }
    out.push({ numaNode: node, limits: copy });
  }
  return out;
}

/** upstream's --reserved-memory syntax: `0:memory=1Gi,hugepages-1M=2Gi;1:memory=2Gi`. */
export function reservedMemoryFlag(text: string): ReservedMemory[] {
  const out: ReservedMemory[] = [];
  for (const part of text.split(";").map((p) => p.trim()).filter((p) => p !== "")) {
    const m = /^(\d+):(.+)$/.exec(part);
    if (!m) throw new ConfigError(`invalid argument "${printable(text, 64)}" for "--reserved-memory" flag: the reserved memory has incorrect format, expected numaNodeID:type=quantity[,type=quantity...], got ${printable(part, 64)}`);
    const limits: Record<string, string> = {};
    for (const pair of m[2].split(",")) {
      const [k, v] = pair.split("=").map((s) => s.trim());
      if (!k || !v) throw new ConfigError(`invalid argument "${printable(text, 64)}" for "--reserved-memory" flag: the reserved limit has incorrect value, expected type=quantity, got ${printable(pair, 64)}`);
      limits[k] = v;
    }
    out.push({ numaNode: Number(m[1]), limits });
  }
  return out;
}

/** Upstream's checks of the managers' settings (its validation's words). */
export function validateHardware(c: KubeletConfiguration, bad: (text: string) => void): void {
  if (!CPU_POLICIES.includes(c.cpuManagerPolicy)) bad(`invalid configuration: cpuManagerPolicy (--cpu-manager-policy) ${JSON.stringify(printable(String(c.cpuManagerPolicy), 64))} is not one of ${JSON.stringify(CPU_POLICIES)}`);
  for (const [name, value] of Object.entries((c.cpuManagerPolicyOptions ?? {}) as Record<string, string>)) {
    if (!CPU_POLICY_OPTIONS.has(name)) bad(`invalid configuration: option ${JSON.stringify(printable(name, 64))} not supported by nanolet's CPU manager (known: full-pcpus-only)`);
    else if (value !== "true" && value !== "false") bad(`invalid configuration: option ${JSON.stringify(name)} needs a boolean value, got ${JSON.stringify(printable(String(value), 32))}`);
    else if (c.cpuManagerPolicy !== "static") bad(`invalid configuration: option ${JSON.stringify(name)} needs cpuManagerPolicy static`);
  }
  if (!MEMORY_POLICIES.includes(c.memoryManagerPolicy)) bad(`invalid configuration: memoryManagerPolicy (--memory-manager-policy) ${JSON.stringify(printable(String(c.memoryManagerPolicy), 64))} is not one of ${JSON.stringify(MEMORY_POLICIES)}`);
  if (c.memoryManagerPolicy === "Static" && (c.reservedMemory ?? []).length === 0) bad("invalid configuration: memoryManagerPolicy Static needs reservedMemory (--reserved-memory) for at least one NUMA node");
  if (!TOPOLOGY_POLICIES.includes(c.topologyManagerPolicy)) bad(`invalid configuration: topologyManagerPolicy (--topology-manager-policy) ${JSON.stringify(printable(String(c.topologyManagerPolicy), 64))} is not one of ${JSON.stringify(TOPOLOGY_POLICIES)}`);
  if (!TOPOLOGY_SCOPES.includes(c.topologyManagerScope)) bad(`invalid configuration: topologyManagerScope (--topology-manager-scope) ${JSON.stringify(printable(String(c.topologyManagerScope), 64))} is not one of ${JSON.stringify(TOPOLOGY_SCOPES)}`);
}

function bytesOf(quantity: string): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(quantity.trim());
  if (!m) throw new ConfigError(`invalid configuration: reservedMemory: ${JSON.stringify(printable(quantity, 32))} is not a quantity`);
  const scale: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
  return Math.ceil(Number(m[1]) * (m[2] ? scale[m[2]] : 1));
}

/** The managers' settings for the core, over the machine read from sysfs. */
export function hardwareSettings(c: KubeletConfiguration, machine: MachineTopology, reservedCpuMilli: number, memoryBytes: number): HardwareConfig {
  const reconcile = parseGoDuration(String(c.cpuManagerReconcilePeriod));
  // A machine whose kernel shows no NUMA nodes is one node holding all the memory, as upstream sees it.
  const numaMemory = machine.numaMemory.length > 0 ? machine.numaMemory : [{ numaNode: 0, bytes: memoryBytes }];
  return {
    cpus: machine.cpus,
    numaMemory: numaMemory.map((m) => ({ numaNode: m.numaNode, bytes: BigInt(Math.trunc(m.bytes)) })),
    cpuPolicy: c.cpuManagerPolicy === "static" ? "static" : "none",
    reservedCpus: c.reservedSystemCPUs ?? "",
    reservedCpuCount: Math.ceil(reservedCpuMilli / 1000),
    fullPcpusOnly: (c.cpuManagerPolicyOptions ?? {})["full-pcpus-only"] === "true",
    cpuReconcilePeriodMs: typeof reconcile === "bigint" && reconcile > 0n ? reconcile / 1_000_000n : 10_000n,
    memoryPolicy: c.memoryManagerPolicy === "Static" ? "static" : "none",
    reservedMemory: ((c.reservedMemory ?? []) as ReservedMemory[]).filter((r) => r.limits.memory !== undefined).map((r) => ({ numaNode: r.numaNode, bytes: BigInt(bytesOf(r.limits.memory)) })),
    topologyPolicy: c.topologyManagerPolicy,
    topologyScope: c.topologyManagerScope,
  };
}
