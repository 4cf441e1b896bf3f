// The node's capacity and allocatable as the kubelet's container manager computes them:
// allocatable = capacity - systemReserved - kubeReserved - the hard eviction thresholds (memory.
// available for memory, nodefs.available for ephemeral-storage), never below 0; huge page pools
// are allocatable as they are and come out of memory. `reservedSystemCPUs` replaces the cpu of
// both reservations with its count of CPUs. The `kubepods` cgroup gets capacity less the two
// reservations (not the eviction thresholds), as upstream enforces `pods`.
//
// Quantities are exact (bigint milli-units) and written as the apiserver's canonical form of the
// capacity's format: binary (`3927636Ki`, `1Gi`) for bytes, decimal (`3500m`, `4`) for cpu.
import type { MachineInfo } from "./machine.js";

const BINARY: Record<string, bigint> = { Ki: 1n << 10n, Mi: 1n << 20n, Gi: 1n << 30n, Ti: 1n << 40n, Pi: 1n << 50n, Ei: 1n << 60n };
const DECIMAL: Record<string, bigint> = { "": 1n, k: 10n ** 3n, M: 10n ** 6n, G: 10n ** 9n, T: 10n ** 12n, P: 10n ** 15n, E: 10n ** 18n };

/** A quantity in thousandths of its unit (rounded up, as a Quantity's MilliValue), or undefined when it is not one. */
export function quantityMilli(text: string): bigint | undefined {
  const m = /^([+-]?)(\d+)(?:\.(\d+))?(m|Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/.exec(String(text).trim());
  if (!m || m[2].length + (m[3]?.length ?? 0) > 30) return undefined;
  const fraction = m[3] ?? "";
  const digits = BigInt(m[2] + fraction);
  const scale = 10n ** BigInt(fraction.length);
  const unit = m[4] ?? "";
  const multiplier = unit === "m" ? 1n : (BINARY[unit] ?? DECIMAL[unit]) * 1000n;
  const numerator = digits * multiplier;
  const milli = numerator / scale + (numerator % scale !== 0n ? 1n : 0n);
  return m[1] === "-" ? -milli : milli;
}

/** Bytes (whole) as a binary-format quantity's canonical text: the largest binary unit that divides it. */
export function binaryQuantity(bytes: bigint): string {
  if (bytes === 0n) return "0";
  for (const unit of ["Ei", "Pi", "Ti", "Gi", "Mi", "Ki"]) if (bytes % BINARY[unit] === 0n) return `${bytes / BINARY[unit]}${unit}`;
  return String(bytes);
}

/** Milli-units as a decimal-format quantity's canonical text (`4`, `3500m`, `1k`). */
export function decimalQuantity(milli: bigint): string {
  if (milli % 1000n !== 0n) return `${milli}m`;
  const whole = milli / 1000n;
  for (const unit of ["E", "P", "T", "G", "M", "k"]) if (whole !== 0n && whole % DECIMAL[unit] === 0n) return `${whole / DECIMAL[unit]}${unit}`;
  return String(whole);
}

/**
 * Bytes a hard eviction threshold keeps aside: a quantity, or a percentage of the capacity as
 * upstream computes it, int64(float64(capacity) * float64(percentage)) with a float32 percentage
 * (10% is 0.100000001490116...: not exactly a tenth). 0 for what is neither.
 */
export function thresholdBytes(value: string, capacityBytes: number): number {
  if (value.endsWith("%")) {
    const percentage = Math.fround(Math.fround(Number(value.slice(0, -1))) / 100);
    const bytes = Math.floor(capacityBytes * percentage);
    return Number.isFinite(bytes) && bytes > 0 ? bytes : 0;
  }
  const milli = quantityMilli(value);
  if (milli === undefined || milli <= 0n) return 0;
  // Whole bytes, rounded up as a quantity's Value() is.
  return Number(milli / 1000n + (milli % 1000n !== 0n ? 1n : 0n));
}

/** The resources a reservation may name (upstream refuses others). */
const RESERVABLE = /^(cpu|memory|ephemeral-storage|pid|hugepages-[0-9A-Za-z]+)$/;

/** Checks systemReserved or kubeReserved as upstream's parseResourceList does; returns the errors. */
export function reservationProblems(field: string, flag: string, reserved: Record<string, string>): string[] {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(reserved)) {
    if (!RESERVABLE.test(name)) {
      problems.push(`${field} (${flag}): cannot reserve ${JSON.stringify(name.slice(0, 64))} resource`);
      continue;
    }
    const milli = quantityMilli(value);
    if (milli === undefined) problems.push(`${field} (${flag}): ${name}: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' (got ${JSON.stringify(String(value).slice(0, 64))})`);
    else if (milli < 0n) problems.push(`${field} (${flag}): resource quantity for ${JSON.stringify(name)} cannot be negative: ${value}`);
  }
  return problems;
}

/** How many CPUs a cpuset names (`0-1,3` is 3), or an error in upstream's words. */
export function cpusetSize(text: string): number | string {
  let count = 0;
  const seen = new Set<number>();
  for (const part of text.split(",").map((p) => p.trim()).filter((p) => p !== "")) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) return `invalid cpuset "${text.slice(0, 64)}": strconv.Atoi: parsing ${JSON.stringify(part.slice(0, 32))}: invalid syntax`;
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (to < from || to - from > 4096) return `invalid range "${part}" (${from} > ${to})`;
    for (let cpu = from; cpu <= to; cpu++) if (!seen.has(cpu)) {
      seen.add(cpu);
      count++;
    }
  }
  return count;
}

export interface ReservationSettings {
  systemReserved: Record<string, string>;
  kubeReserved: Record<string, string>;
  /** `reservedSystemCPUs` (a cpuset), "" for none. */
  reservedSystemCPUs: string;
  /** `evictionHard` as a map (`memory.available: 100Mi`, `nodefs.available: 10%`). */
  evictionHard: Record<string, string>;
  maxPods: number;
}

export interface NodeResources {
  capacity: Record<string, string>;
  allocatable: Record<string, string>;
  allocatableMemoryBytes: number;
  allocatableCpuMilli: number;
  /** What the `kubepods` cgroup may use: capacity less systemReserved and kubeReserved. */
  podsMemoryLimitBytes: number;
  podsCpuMilli: number;
  /** systemReserved and kubeReserved as applied (cpu replaced by reservedSystemCPUs). */
  systemReserved: Record<string, string>;
  kubeReserved: Record<string, string>;
}

/** Upstream's capacity and allocatable for this machine and these settings. */
export function nodeResources(machine: MachineInfo, settings: ReservationSettings): NodeResources {
  const systemReserved = { ...settings.systemReserved };
  const kubeReserved = { ...settings.kubeReserved };
  // --reserved-cpus overwrites the cpu of both reservations (upstream's server.go).
  const cpus = settings.reservedSystemCPUs ? cpusetSize(settings.reservedSystemCPUs) : 0;
  if (typeof cpus === "number" && cpus > 0) {
    delete kubeReserved.cpu;
    systemReserved.cpu = String(cpus);
  }
  const hugepageBytes = (machine.hugepages ?? []).reduce((sum, p) => sum + BigInt(p.bytes), 0n);
  // Capacity in milli-units (bytes * 1000 for byte resources).
  const capacity = new Map<string, bigint>([
    ["cpu", BigInt(machine.cpuCount) * 1000n],
    ["ephemeral-storage", BigInt(machine.ephemeralStorageBytes) * 1000n],
    ["memory", BigInt(machine.memoryBytes) * 1000n],
    ["pods", BigInt(settings.maxPods) * 1000n],
  ]);
  const reserved = (name: string, map: Record<string, string>) => (map[name] !== undefined ? quantityMilli(map[name]) ?? 0n : 0n);
  const eviction = (name: string) => {
    const signal = name === "memory" ? "memory.available" : name === "ephemeral-storage" ? "nodefs.available" : undefined;
    const value = signal ? settings.evictionHard[signal] : undefined;
    return value === undefined ? 0n : BigInt(thresholdBytes(value, Number(capacity.get(name)! / 1000n))) * 1000n;
  };
  const format = (name: string, milli: bigint) => (name === "cpu" ? decimalQuantity(milli) : name === "pods" ? String(milli / 1000n) : binaryQuantity(milli / 1000n));
  const allocatableMilli = new Map<string, bigint>();
  for (const [name, value] of capacity) {
    let left = value - reserved(name, systemReserved) - reserved(name, kubeReserved) - eviction(name);
    if (name === "memory") left -= hugepageBytes * 1000n;
    allocatableMilli.set(name, left < 0n ? 0n : left);
  }
  const hugepages = Object.fromEntries((machine.hugepages ?? []).map((p) => [p.resource, binaryQuantity(BigInt(p.bytes))]));
  const written = (values: Map<string, bigint>) => ({
    cpu: format("cpu", values.get("cpu")!),
    "ephemeral-storage": format("ephemeral-storage", values.get("ephemeral-storage")!),
    ...hugepages,
    memory: format("memory", values.get("memory")!),
    pods: format("pods", values.get("pods")!),
  });
  const podsLimit = (name: string) => {
    const left = capacity.get(name)! - reserved(name, systemReserved) - reserved(name, kubeReserved);
    return left < 0n ? 0n : left;
  };
  return {
    capacity: written(capacity),
    allocatable: written(allocatableMilli),
    allocatableMemoryBytes: Number(allocatableMilli.get("memory")! / 1000n),
    allocatableCpuMilli: Number(allocatableMilli.get("cpu")!),
    podsMemoryLimitBytes: Number(podsLimit("memory") / 1000n),
    podsCpuMilli: Number(podsLimit("cpu")),
    systemReserved,
    kubeReserved,
  };
}
