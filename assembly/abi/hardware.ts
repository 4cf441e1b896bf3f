// Canonical-ABI lift/lower of the `hardware` interface's records: the machine, devices, the
// managers' assignments and the topology manager's hints.
import { CpuAssignment, DeviceAssignment, MemoryAssignment } from "../core/hardware/assignments";
import { CpuInfo } from "../core/hardware/cpu-topology";
import { formatCpuSet, parseCpuSet } from "../core/hardware/cpuset";
import { DeviceInfo } from "../core/hardware/device-manager";
import { NumaMemory } from "../core/hardware/memory-manager";
import { ResourceHints, TopologyHint } from "../core/hardware/topology-hints";
import { liftList, liftListParts, liftString, liftStringElement, lowerList, lowerString, lowerStringElement } from "./memory";

// cpu-info { id u32 @0, core u32 @4, socket u32 @8, numa-node u32 @12 }: 16, align 4.
export const CPU_INFO_SIZE: usize = 16;
// numa-memory { numa-node u32 @0, bytes u64 @8 }: 16, align 8.
export const NUMA_MEMORY_SIZE: usize = 16;
// device { id @0, healthy u8 @8, numa-nodes list<u32> @12 }: 20, align 4.
export const DEVICE_SIZE: usize = 20;
// device-assignment { pod-uid @0, container-name @8, resource @16, device-ids @24 }: 32, align 4.
export const DEVICE_ASSIGNMENT_SIZE: usize = 32;
// cpu-assignment { pod-uid @0, container-name @8, cpus @16 }: 24, align 4.
const CPU_ASSIGNMENT_SIZE: usize = 24;
// memory-assignment { pod-uid @0, container-name @8, numa-nodes @16, bytes u64 @24 }: 32, align 8.
const MEMORY_ASSIGNMENT_SIZE: usize = 32;
// hardware-state { default-cpus @0, cpus @8, devices @16, memory @24 }: 32, align 4.
// topology-hint { numa-mask u64 @0, preferred u8 @8 }: 16, align 8.
const TOPOLOGY_HINT_SIZE: usize = 16;
// resource-hints { resource @0, no-preference u8 @8, hints @12 }: 20, align 4.
export const RESOURCE_HINTS_SIZE: usize = 20;

function liftU32(ptr: usize): i32 {
  return <i32>load<u32>(ptr);
}

function lowerU32(ptr: usize, value: i32): void {
  store<u32>(ptr, <u32>value);
}

export function liftCpuInfo(ptr: usize): CpuInfo {
  return new CpuInfo(<i32>load<u32>(ptr), <i32>load<u32>(ptr + 4), <i32>load<u32>(ptr + 8), <i32>load<u32>(ptr + 12));
}

export function liftNumaMemory(ptr: usize): NumaMemory {
  return new NumaMemory(<i32>load<u32>(ptr), <i64>load<u64>(ptr + 8));
}

export function liftDevice(ptr: usize): DeviceInfo {
  return new DeviceInfo(liftString(ptr), load<u8>(ptr + 8) != 0, liftList<i32>(ptr + 12, 4, liftU32));
}

export function liftDeviceAssignment(ptr: usize): DeviceAssignment {
  return new DeviceAssignment(liftString(ptr), liftString(ptr + 8), liftString(ptr + 16), liftList<string>(ptr + 24, 8, liftStringElement));
}

export function lowerDeviceAssignment(ptr: usize, a: DeviceAssignment): void {
  lowerString(ptr, a.podUid);
  lowerString(ptr + 8, a.container);
  lowerString(ptr + 16, a.resource);
  lowerList<string>(ptr + 24, a.ids, 8, lowerStringElement);
}

function liftCpuAssignment(ptr: usize): CpuAssignment {
  const cpus = parseCpuSet(liftString(ptr + 16));
  return new CpuAssignment(liftString(ptr), liftString(ptr + 8), cpus === null ? [] : cpus);
}

function lowerCpuAssignment(ptr: usize, a: CpuAssignment): void {
  lowerString(ptr, a.podUid);
  lowerString(ptr + 8, a.container);
  lowerString(ptr + 16, formatCpuSet(a.cpus));
}

function liftMemoryAssignment(ptr: usize): MemoryAssignment {
  return new MemoryAssignment(liftString(ptr), liftString(ptr + 8), liftList<i32>(ptr + 16, 4, liftU32), <i64>load<u64>(ptr + 24));
}

function lowerMemoryAssignment(ptr: usize, a: MemoryAssignment): void {
  lowerString(ptr, a.podUid);
  lowerString(ptr + 8, a.container);
  lowerList<i32>(ptr + 16, a.numaNodes, 4, lowerU32);
  store<u64>(ptr + 24, <u64>a.bytes);
}

/// The state the managers hold, lifted.
export class HardwareStateIn {
  cpus: CpuAssignment[] = [];
  devices: DeviceAssignment[] = [];
  memory: MemoryAssignment[] = [];
}

export function liftHardwareStateParts(cpusPtr: usize, cpusLen: u32, devicesPtr: usize, devicesLen: u32, memoryPtr: usize, memoryLen: u32): HardwareStateIn {
  // The shared pool is derived from the entries: what the file said of it is not needed.
  const state = new HardwareStateIn();
  state.cpus = liftListParts<CpuAssignment>(cpusPtr, cpusLen, CPU_ASSIGNMENT_SIZE, liftCpuAssignment);
  state.devices = liftListParts<DeviceAssignment>(devicesPtr, devicesLen, DEVICE_ASSIGNMENT_SIZE, liftDeviceAssignment);
  state.memory = liftListParts<MemoryAssignment>(memoryPtr, memoryLen, MEMORY_ASSIGNMENT_SIZE, liftMemoryAssignment);
  return state;
}

export function lowerHardwareState(ptr: usize, defaultCpus: i32[], cpus: CpuAssignment[], devices: DeviceAssignment[], memory: MemoryAssignment[]): void {
  lowerString(ptr, formatCpuSet(defaultCpus));
  lowerList<CpuAssignment>(ptr + 8, cpus, CPU_ASSIGNMENT_SIZE, lowerCpuAssignment);
  lowerList<DeviceAssignment>(ptr + 16, devices, DEVICE_ASSIGNMENT_SIZE, lowerDeviceAssignment);
  lowerList<MemoryAssignment>(ptr + 24, memory, MEMORY_ASSIGNMENT_SIZE, lowerMemoryAssignment);
}

function liftTopologyHint(ptr: usize): TopologyHint {
  return new TopologyHint(load<u64>(ptr), load<u8>(ptr + 8) != 0);
}

export function liftResourceHints(ptr: usize): ResourceHints {
  const r = new ResourceHints(liftString(ptr), load<u8>(ptr + 8) != 0);
  r.hints = liftList<TopologyHint>(ptr + 12, TOPOLOGY_HINT_SIZE, liftTopologyHint);
  return r;
}
