// Pod QoS class (upstream v1/helper/qos) and the pod's cgroup parent under /kubepods.
import { PodSpec, ResourceQuantity } from "./model";
import { parseQuantity } from "./quantity";

export const enum QosClass {
  Guaranteed = 0,
  Burstable = 1,
  BestEffort = 2,
}

/// Milli-value of `resource` in `list`, or -1 when absent or unparsable.
function find(list: ResourceQuantity[], resource: string): i64 {
  for (let i = 0; i < list.length; i++) {
    if (list[i].name == resource) {
      const parsed = parseQuantity(list[i].quantity);
      return parsed.ok ? parsed.milliValue : -1;
    }
  }
  return -1;
}

/// Upstream ComputePodQOS over every container, init containers and sidecars included: an init
/// container with a request makes the pod Burstable at least, and one without limits keeps it
/// from Guaranteed.
export function qosClassOf(pod: PodSpec): QosClass {
  let anySet = false;
  let guaranteed = true;
  const total = pod.containers.length + pod.initContainers.length;
  for (let i = 0; i < total; i++) {
    const c = i < pod.containers.length ? pod.containers[i] : pod.initContainers[i - pod.containers.length];
    for (let r = 0; r < 2; r++) {
      const resource = r == 0 ? "cpu" : "memory";
      const limit = find(c.limits, resource);
      // The apiserver defaults a missing request to the limit.
      let request = find(c.requests, resource);
      if (request < 0) request = limit;
      if (request > 0 || limit > 0) anySet = true;
      if (limit <= 0 || request != limit) guaranteed = false;
    }
  }
  if (!anySet) return QosClass.BestEffort;
  return guaranteed ? QosClass.Guaranteed : QosClass.Burstable;
}

/// `/kubepods/pod<uid>` for Guaranteed pods, `/kubepods/<qos>/pod<uid>` otherwise.
export function podCgroupParent(pod: PodSpec): string {
  const qos = qosClassOf(pod);
  if (qos == QosClass.Guaranteed) return "/kubepods/pod" + pod.uid;
  return (qos == QosClass.Burstable ? "/kubepods/burstable/pod" : "/kubepods/besteffort/pod") + pod.uid;
}
