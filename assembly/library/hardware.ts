// Export shims of wit/hardware.wit's pure functions over the CPU manager's take and the topology
// manager's merge: the same code the agent admits pods with.
import { CpuTopology } from "../core/hardware/cpu-topology";
import { formatCpuSet, parseCpuSet, parseError } from "../core/hardware/cpuset";
import { takeByTopology, takeError } from "../core/hardware/cpu-take";
import { ResourceHints, mergeHints } from "../core/hardware/topology-hints";
import { CpuInfo } from "../core/hardware/cpu-topology";
import { liftListParts, liftStringParts, lowerString, resetArgumentArena } from "../abi/memory";
import { CPU_INFO_SIZE, RESOURCE_HINTS_SIZE, liftCpuInfo, liftResourceHints } from "../abi/hardware";
import { LIBRARY_RETURN_AREA, lowerError } from "../abi/library-types";
import { topologyPolicyName } from "../abi/hardware-config";

export function hardwareTakeCpus(cpusPtr: usize, cpusLen: u32, freePtr: usize, freeLen: u32, count: u32): usize {
  const cpus = liftListParts<CpuInfo>(cpusPtr, cpusLen, CPU_INFO_SIZE, liftCpuInfo);
  const freeText = liftStringParts(freePtr, freeLen);
  resetArgumentArena();
  const free = parseCpuSet(freeText);
  if (free === null) return lowerError(LIBRARY_RETURN_AREA, 4, parseError);
  if (cpus.length > 8192) return lowerError(LIBRARY_RETURN_AREA, 4, "more than 8192 CPUs");
  if (count > 8192) return lowerError(LIBRARY_RETURN_AREA, 4, "count " + count.toString() + " is more CPUs than a cpuset can name");
  const taken = takeByTopology(new CpuTopology(cpus), free, <i32>count);
  if (taken === null) return lowerError(LIBRARY_RETURN_AREA, 4, takeError);
  store<u8>(LIBRARY_RETURN_AREA, 0);
  lowerString(LIBRARY_RETURN_AREA + 4, formatCpuSet(taken));
  return LIBRARY_RETURN_AREA;
}

// merged-hint { hint { numa-mask u64 @0, preferred u8 @8 } @0, admit u8 @16 }: 24, align 8.
export function hardwareMergeHints(policy: i32, numaMask: u64, providersPtr: usize, providersLen: u32): usize {
  const providers = liftListParts<ResourceHints>(providersPtr, providersLen, RESOURCE_HINTS_SIZE, liftResourceHints);
  resetArgumentArena();
  const merged = mergeHints(topologyPolicyName(policy), numaMask, providers);
  store<u64>(LIBRARY_RETURN_AREA, merged.hint.mask);
  store<u8>(LIBRARY_RETURN_AREA, merged.hint.preferred ? 1 : 0, 8);
  store<u8>(LIBRARY_RETURN_AREA, merged.admit ? 1 : 0, 16);
  return LIBRARY_RETURN_AREA;
}
