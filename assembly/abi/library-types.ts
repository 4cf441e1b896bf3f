// Canonical-ABI lift/lower of the types only the pure interfaces (wit/pleg.wit, eviction.wit,
// qos.wit, cgroups.wit, status.wit, restart.wit) use, and the result<T, string> shape they share.
// Offsets follow the canonical ABI: fields aligned to their own alignment, records padded to
// their largest; strings and lists are (ptr u32, len u32).
import { ContainerSpec, PodSpec, ResourceQuantity } from "../core/model";
import { Threshold, ThresholdValue } from "../core/eviction-config";
import { liftList, liftListParts, liftString, liftStringParts, lowerString } from "./memory";
import { RESOURCE_QUANTITY_SIZE, liftResourceQuantity } from "./pod-spec";

/// Return area of the pure interfaces' results (largest: result<cgroup-values, string>, 48).
export const LIBRARY_RETURN_AREA: usize = memory.data(64, 8);

// container-resources { name @0, requests @8, limits @16 }: size 24, align 4.
export const CONTAINER_RESOURCES_SIZE: usize = 24;
// pod-resources { uid @0, priority s32 @8, static-pod u8 @12, containers @16 }: size 24, align 4.
export const POD_RESOURCES_SIZE: usize = 24;
// threshold-value variant { quantity(s64), percentage(f32) }: tag u8 @0, payload @8; size 16.
// threshold { signal @0, value @8, grace-period-ms u64 @24, min-reclaim: option @32 (tag u8,
//   threshold-value @40) }: size 56, align 8.
export const THRESHOLD_SIZE: usize = 56;
// met-threshold { threshold @0, first-observed-ms u64 @56, grace-period-met u8 @64 }: size 72.
export const MET_THRESHOLD_SIZE: usize = 72;

export function liftContainerResources(ptr: usize): ContainerSpec {
  const c = new ContainerSpec();
  c.name = liftString(ptr);
  c.requests = liftList<ResourceQuantity>(ptr + 8, RESOURCE_QUANTITY_SIZE, liftResourceQuantity);
  c.limits = liftList<ResourceQuantity>(ptr + 16, RESOURCE_QUANTITY_SIZE, liftResourceQuantity);
  return c;
}

export function liftContainerResourcesParts(namePtr: usize, nameLen: u32, requestsPtr: usize, requestsLen: u32, limitsPtr: usize, limitsLen: u32): ContainerSpec {
  const c = new ContainerSpec();
  c.name = liftStringParts(namePtr, nameLen);
  c.requests = liftListParts<ResourceQuantity>(requestsPtr, requestsLen, RESOURCE_QUANTITY_SIZE, liftResourceQuantity);
  c.limits = liftListParts<ResourceQuantity>(limitsPtr, limitsLen, RESOURCE_QUANTITY_SIZE, liftResourceQuantity);
  return c;
}

/// A pod-resources record as a PodSpec with only those fields set.
export function liftPodResourcesParts(uidPtr: usize, uidLen: u32, priority: i32, staticPod: i32, containersPtr: usize, containersLen: u32): PodSpec {
  const pod = new PodSpec();
  pod.uid = liftStringParts(uidPtr, uidLen);
  pod.priority = priority;
  pod.staticPod = staticPod != 0;
  pod.containers = liftListParts<ContainerSpec>(containersPtr, containersLen, CONTAINER_RESOURCES_SIZE, liftContainerResources);
  return pod;
}

export function liftPodResources(ptr: usize): PodSpec {
  return liftPodResourcesParts(load<u32>(ptr), load<u32>(ptr, 4), load<i32>(ptr, 8), load<u8>(ptr, 12), load<u32>(ptr, 16), load<u32>(ptr, 20));
}

/// An enum or variant discriminant; out of range traps, as the canonical ABI requires.
export function liftCase(value: u32, cases: u32, what: string): i32 {
  assert(value < cases, what);
  return <i32>value;
}

function liftThresholdValue(ptr: usize): ThresholdValue {
  const tag = liftCase(load<u8>(ptr), 2, "threshold-value: bad case");
  if (tag == 0) return new ThresholdValue(false, 0, load<i64>(ptr, 8));
  return new ThresholdValue(true, load<f32>(ptr, 8), 0);
}

function lowerThresholdValue(ptr: usize, value: ThresholdValue): void {
  if (value.isPercentage) {
    store<u8>(ptr, 1);
    store<f32>(ptr, value.fraction, 8);
    store<u32>(ptr, 0, 12);
  } else {
    store<u8>(ptr, 0);
    store<i64>(ptr, value.quantity, 8);
  }
}

export function liftThreshold(ptr: usize): Threshold {
  const t = new Threshold();
  t.signal = liftString(ptr);
  t.value = liftThresholdValue(ptr + 8);
  t.gracePeriodMs = load<i64>(ptr, 24);
  t.hasMinReclaim = liftCase(load<u8>(ptr, 32), 2, "option: bad case") == 1;
  if (t.hasMinReclaim) t.minReclaim = liftThresholdValue(ptr + 40);
  return t;
}

export function lowerThreshold(ptr: usize, t: Threshold): void {
  lowerString(ptr, t.signal);
  lowerThresholdValue(ptr + 8, t.value);
  store<i64>(ptr, t.gracePeriodMs, 24);
  store<u8>(ptr, t.hasMinReclaim ? 1 : 0, 32);
  if (t.hasMinReclaim) lowerThresholdValue(ptr + 40, t.minReclaim);
  else memory.fill(ptr + 40, 0, 16);
}

/// result<T, string>: the error case. `payloadOffset` is 4 when T aligns to at most 4, else 8.
export function lowerError(area: usize, payloadOffset: usize, message: string): usize {
  store<u8>(area, 1);
  lowerString(area + payloadOffset, message);
  return area;
}

/// result<list<T>, string>: the ok case with the list lowered at `list`, `length` items.
export function lowerOkList(area: usize, list: usize, length: i32): usize {
  store<u8>(area, 0);
  store<u32>(area, <u32>list, 4);
  store<u32>(area, <u32>length, 8);
  return area;
}

/// result<T, string>: the ok case's tag; the caller stores T at the payload offset.
export function lowerOkTag(area: usize): usize {
  store<u8>(area, 0);
  return area;
}
