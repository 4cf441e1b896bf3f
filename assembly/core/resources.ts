// The cgroup values the core hands out with sandboxes, containers and resizes (WIT
// `linux-resources`), and the pod facts eviction and admission read from a spec.
import { ContainerSpec, LinuxResources, PodSpec, ResourceQuantity } from "./model";
import { QosClass, qosClassOf } from "./qos";
import { CgroupValues, SYSTEM_CRITICAL_PRIORITY, containerCgroupValues, containerOomScoreAdj, podAmountMilli, podCgroupValues, requestMilli } from "./cgroup-values";

/// Upstream's system-node-critical priority: such pods get the Guaranteed OOM score.
export const SYSTEM_NODE_CRITICAL_PRIORITY: i32 = 2000001000;

/// Static pods and pods of system-critical priority (upstream IsCriticalPod).
export function isCriticalPod(spec: PodSpec): bool {
  return spec.staticPod || spec.priority >= SYSTEM_CRITICAL_PRIORITY;
}

function toLinux(v: CgroupValues, oomScoreAdj: i32): LinuxResources {
  const r = new LinuxResources();
  r.cpuShares = <u64>v.cpuShares;
  r.cpuWeight = <u64>v.cpuWeight;
  r.cpuQuotaUs = v.cpuQuotaUs;
  r.cpuPeriodUs = <u64>v.cpuPeriodUs;
  r.memoryLimitBytes = v.memoryLimitBytes;
  r.oomScoreAdj = oomScoreAdj;
  return r;
}

/// Bytes of a milli-value, rounded up as resource.Quantity.Value() rounds.
export function bytesOfMilli(milli: i64): i64 {
  return milli / 1000 + (milli % 1000 > 0 ? 1 : 0);
}

/// A container's values. The QoS class is the pod's (`qos`, fixed when the pod was admitted).
export function containerResources(pod: PodSpec, qos: QosClass, container: ContainerSpec, memoryCapacityBytes: i64): LinuxResources {
  const nodeCritical = pod.priority >= SYSTEM_NODE_CRITICAL_PRIORITY;
  const memoryRequest = bytesOfMilli(requestMilli(container, "memory"));
  return toLinux(containerCgroupValues(container), containerOomScoreAdj(qos, nodeCritical, memoryRequest, memoryCapacityBytes));
}

/// The pod cgroup's values.
export function podResources(pod: PodSpec): LinuxResources {
  return toLinux(podCgroupValues(pod), 0);
}

/// The pod's request of `resource` (upstream PodRequests: init containers and sidecars counted),
/// in bytes (or units).
export function podRequestBytes(pod: PodSpec, resource: string): i64 {
  return bytesOfMilli(podAmountMilli(pod, resource, false));
}

/// The same in milli-units (CPU).
export function podRequestMilli(pod: PodSpec, resource: string): i64 {
  return podAmountMilli(pod, resource, false);
}

/// The container's request as written (the limit standing in), or "0".
export function writtenRequest(container: ContainerSpec, resource: string): string {
  for (let i = 0; i < container.requests.length; i++) if (container.requests[i].name == resource) return container.requests[i].quantity;
  for (let i = 0; i < container.limits.length; i++) if (container.limits[i].name == resource) return container.limits[i].quantity;
  return "0";
}

/// Only the cpu and memory entries (what allocation and resize concern), in the given order.
export function cpuAndMemory(list: ResourceQuantity[]): ResourceQuantity[] {
  const out: ResourceQuantity[] = [];
  for (let i = 0; i < list.length; i++) if (list[i].name == "cpu" || list[i].name == "memory") out.push(list[i]);
  return out;
}

export { QosClass, qosClassOf };
