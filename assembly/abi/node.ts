// Canonical-ABI lift/lower of the node family: node-stats (signal-observation, pod-usage,
// container-usage). Lowering exists so that abi-check can echo the stats back.
import { ContainerUsage, NodeStats, PackedContainers, PackedPods, PodUsageIn, SignalObservation, VolumeUsage } from "../core/model";
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

const POD_VALUES: i32 = 6;
const CONTAINER_VALUES: i32 = 3;

/// Unpacks a packed-node-stats read in place (its lists are in the argument arena). Bounds are
/// checked: a host that packs wrongly gets a trap with the reason, not a wrong decision.
export function unpackNodeStats(textPtr: usize, textBytes: u32, podsPtr: usize, podValues: u32, containersPtr: usize, containerValues: u32): NodeStats {
  assert(podValues % <u32>POD_VALUES == 0 && containerValues % <u32>CONTAINER_VALUES == 0, "packed-node-stats: list lengths are not whole records");
  const podCount = <i32>(podValues / <u32>POD_VALUES);
  const containerCount = <i64>(containerValues / <u32>CONTAINER_VALUES);
  // Copied out as they are (the arguments live only for this call) and read in place after.
  const text = new StaticArray<u8>(<i32>textBytes);
  memory.copy(changetype<usize>(text), textPtr, <usize>textBytes);
  const values = new StaticArray<i64>(<i32>podValues);
  memory.copy(changetype<usize>(values), podsPtr, <usize>podValues << 3);
  const containers = new StaticArray<i64>(<i32>containerValues);
  memory.copy(changetype<usize>(containers), containersPtr, <usize>containerValues << 3);
  const starts = new StaticArray<i32>(podCount);
  let next: i64 = 0;
  for (let i = 0; i < podCount; i++) {
    const start = unchecked(values[i * POD_VALUES]);
    const length = unchecked(values[i * POD_VALUES + 1]);
    assert(start >= 0 && length >= 0 && start + length <= <i64>textBytes, "packed-node-stats: string out of range");
    const own = unchecked(values[i * POD_VALUES + 5]);
    assert(own >= 0 && next + own <= containerCount, "packed-node-stats: container count out of range");
    unchecked((starts[i] = <i32>next));
    next += own;
  }
  for (let j = 0; j < <i32>containerCount; j++) {
    const start = unchecked(containers[j * CONTAINER_VALUES]);
    const length = unchecked(containers[j * CONTAINER_VALUES + 1]);
    assert(start >= 0 && length >= 0 && start + length <= <i64>textBytes, "packed-node-stats: string out of range");
  }
  const stats = new NodeStats();
  stats.packed = new PackedPods(text, values, starts, new PackedContainers(text, containers));
  return stats;
}

/// node-stats flattens to three lists: (signals, pods, volumes) as (ptr, len); returned in 24 bytes.
export function lowerNodeStats(ptr: usize, stats: NodeStats): void {
  lowerList<SignalObservation>(ptr, stats.signals, SIGNAL_OBSERVATION_SIZE, lowerSignalObservation);
  lowerList<PodUsageIn>(ptr + 8, stats.pods, POD_USAGE_SIZE, lowerPodUsage);
  lowerList<VolumeUsage>(ptr + 16, stats.volumes, VOLUME_USAGE_SIZE, lowerVolumeUsage);
}

// volume-usage { pod-uid @0, volume @8, used-bytes s64 @16 }: size 24, align 8.
export const VOLUME_USAGE_SIZE: usize = 24;

export function liftVolumeUsage(ptr: usize): VolumeUsage {
  return new VolumeUsage(liftString(ptr), liftString(ptr + 8), load<i64>(ptr + 16));
}

export function lowerVolumeUsage(ptr: usize, item: VolumeUsage): void {
  lowerString(ptr, item.podUid);
  lowerString(ptr + 8, item.volume);
  store<i64>(ptr + 16, item.usedBytes);
}
