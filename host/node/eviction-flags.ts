// The kubelet's eviction flags turned into the core's node settings. The core parses and checks
// the threshold strings (it refuses bad ones with upstream's words); allocatable comes from the
// container manager's arithmetic (allocatable.ts), whose threshold rule the simulator's node uses
// through hardMemoryThresholdBytes.
import type { NodeSettings } from "../core/core.js";
import type { MachineInfo } from "./machine.js";
import { thresholdBytes } from "./allocatable.js";

/** Bytes the hard `memory.available` threshold keeps aside (0 when none or unreadable). */
export function hardMemoryThresholdBytes(evictionHard: string, memoryCapacityBytes: number): number {
  const m = /(?:^|,)\s*memory\.available\s*<\s*([^,\s]+)/.exec(evictionHard);
  return m ? thresholdBytes(m[1], memoryCapacityBytes) : 0;
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
