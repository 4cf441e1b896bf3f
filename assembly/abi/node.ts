// Canonical-ABI lift/lower of the node family: node-stats (signal-observation, pod-usage,
// container-usage). Lowering exists so that abi-check can echo the stats back.
import { ContainerUsage, NodeStats, PodUsageIn, SignalObservation } from "../core/model";
import { liftList, liftString, lowerList, lowerString } from "./memory";

// signal-observation { signal @0, available s64 @8, capacity s64 @16 }: 24, align 8.
export const SIGNAL_OBSERVATION_SIZE: usize = 24;
// container-usage { name @0, memory-working-set-bytes s64 @8 }: 16, align 8.
const CONTAINER_USAGE_SIZE: usize = 16;
// pod-usage { uid @0, memory-working-set-bytes s64 @8, ephemeral-storage-bytes s64 @16,
//   process-count s64 @24, containers @32 }: 40, align 8.
export const POD_USAGE_SIZE: usize = 40;

export function liftSignalObservation(ptr: usize): SignalObservation {
  return new SignalObservation(liftString(ptr), load<i64>(ptr + 8), load<i64>(ptr + 16));
}

function lowerSignalObservation(ptr: usize, item: SignalObservation): void {
  lowerString(ptr, item.signal);
  store<i64>(ptr + 8, item.available);
  store<i64>(ptr + 16, item.capacity);
}

function liftContainerUsage(ptr: usize): ContainerUsage {
  return new ContainerUsage(liftString(ptr), load<i64>(ptr + 8));
}

function lowerContainerUsage(ptr: usize, item: ContainerUsage): void {
  lowerString(ptr, item.name);
  store<i64>(ptr + 8, item.memoryWorkingSetBytes);
}

export function liftPodUsage(ptr: usize): PodUsageIn {
  const pod = new PodUsageIn();
  pod.uid = liftString(ptr);
  pod.memoryWorkingSetBytes = load<i64>(ptr + 8);
  pod.ephemeralStorageBytes = load<i64>(ptr + 16);
  pod.processCount = load<i64>(ptr + 24);
  pod.containers = liftList<ContainerUsage>(ptr + 32, CONTAINER_USAGE_SIZE, liftContainerUsage);
  return pod;
}

function lowerPodUsage(ptr: usize, pod: PodUsageIn): void {
  lowerString(ptr, pod.uid);
  store<i64>(ptr + 8, pod.memoryWorkingSetBytes);
  store<i64>(ptr + 16, pod.ephemeralStorageBytes);
  store<i64>(ptr + 24, pod.processCount);
  lowerList<ContainerUsage>(ptr + 32, pod.containers, CONTAINER_USAGE_SIZE, lowerContainerUsage);
}

/// node-stats flattens to two lists: (signals ptr, len, pods ptr, len); returned in 16 bytes.
export function lowerNodeStats(ptr: usize, stats: NodeStats): void {
  lowerList<SignalObservation>(ptr, stats.signals, SIGNAL_OBSERVATION_SIZE, lowerSignalObservation);
  lowerList<PodUsageIn>(ptr + 8, stats.pods, POD_USAGE_SIZE, lowerPodUsage);
}
