// The kubelet's eviction flags turned into the core's node settings. The core parses and checks
// the threshold strings (it refuses bad ones with upstream's words); the host only needs the hard
// memory threshold in bytes, to keep it aside in the Node's allocatable memory.
import type { NodeSettings } from "../core/core.js";
import type { MachineInfo } from "./machine.js";

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 };
const DECIMAL: Record<string, number> = { "": 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };

/** Bytes the hard `memory.available` threshold keeps aside (0 when none or unreadable). */
export function hardMemoryThresholdBytes(evictionHard: string, memoryCapacityBytes: number): number {
  const m = /(?:^|,)\s*memory\.available\s*<\s*([^,\s]+)/.exec(evictionHard);
  if (!m) return 0;
  const value = m[1];
  if (value.endsWith("%")) return Math.floor((memoryCapacityBytes * Number(value.slice(0, -1))) / 100) || 0;
  const q = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(value);
  if (!q) return 0;
  const unit = q[2] ?? "";
  return Math.ceil(Number(q[1]) * (BINARY[unit] ?? DECIMAL[unit] ?? 1));
}

/** The kubelet's eviction flags, as NodeSettings carries them. */
export type EvictionFlags = Omit<NodeSettings, "memoryCapacityBytes" | "allocatableMemoryBytes" | "allocatableCpuMilli">;

/** The node's settings: capacity from the machine, allocatable as the container manager computed it. */
export function nodeSettings(machine: Pick<MachineInfo, "memoryBytes">, allocatable: { allocatableMemoryBytes: number; allocatableCpuMilli: number }, flags: EvictionFlags): NodeSettings {
  return {
    memoryCapacityBytes: machine.memoryBytes,
    allocatableMemoryBytes: allocatable.allocatableMemoryBytes,
    allocatableCpuMilli: allocatable.allocatableCpuMilli,
    ...flags,
  };
}
