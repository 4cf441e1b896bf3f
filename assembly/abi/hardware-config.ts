// The `hardware` interface's enums, and `hardware-config` lifted from its flat parameters.
import { HardwareConfig, SCOPE_CONTAINER, SCOPE_POD } from "../core/hardware/hardware-manager";
import { CPU_POLICY_NONE, CPU_POLICY_STATIC } from "../core/hardware/cpu-manager";
import { MEMORY_POLICY_NONE, MEMORY_POLICY_STATIC, NumaMemory } from "../core/hardware/memory-manager";
import { POLICY_BEST_EFFORT, POLICY_NONE, POLICY_RESTRICTED, POLICY_SINGLE_NUMA_NODE } from "../core/hardware/topology-hints";
import { CpuInfo } from "../core/hardware/cpu-topology";
import { liftListParts, liftStringParts } from "./memory";
import { CPU_INFO_SIZE, NUMA_MEMORY_SIZE, liftCpuInfo, liftNumaMemory } from "./hardware";

/// `topology-manager-policy` in case order.
export function topologyPolicyName(value: i32): string {
  return value == 1 ? POLICY_BEST_EFFORT : value == 2 ? POLICY_RESTRICTED : value == 3 ? POLICY_SINGLE_NUMA_NODE : POLICY_NONE;
}

export function liftHardwareConfig(
  cpusPtr: usize, cpusLen: u32, numaPtr: usize, numaLen: u32, cpuPolicy: i32, reservedPtr: usize, reservedLen: u32,
  reservedCount: u32, fullPcpusOnly: i32, reconcilePeriodMs: u64, memoryPolicy: i32, reservedMemoryPtr: usize,
  reservedMemoryLen: u32, topologyPolicy: i32, topologyScope: i32,
): HardwareConfig {
  const config = new HardwareConfig();
  config.cpus = liftListParts<CpuInfo>(cpusPtr, cpusLen, CPU_INFO_SIZE, liftCpuInfo);
  config.numaMemory = liftListParts<NumaMemory>(numaPtr, numaLen, NUMA_MEMORY_SIZE, liftNumaMemory);
  config.cpuPolicy = cpuPolicy == 1 ? CPU_POLICY_STATIC : CPU_POLICY_NONE;
  config.reservedCpus = liftStringParts(reservedPtr, reservedLen);
  config.reservedCpuCount = reservedCount > 8192 ? 8192 : <i32>reservedCount;
  config.fullPcpusOnly = fullPcpusOnly != 0;
  config.reconcilePeriodMs = reconcilePeriodMs;
  config.memoryPolicy = memoryPolicy == 1 ? MEMORY_POLICY_STATIC : MEMORY_POLICY_NONE;
  config.reservedMemory = liftListParts<NumaMemory>(reservedMemoryPtr, reservedMemoryLen, NUMA_MEMORY_SIZE, liftNumaMemory);
  config.topologyPolicy = topologyPolicyName(topologyPolicy);
  config.topologyScope = topologyScope == 1 ? SCOPE_POD : SCOPE_CONTAINER;
  return config;
}
