// The numbers the kubelet writes into cgroups and gives the runtime (pkg/kubelet/cm/helpers_linux.go,
// pkg/kubelet/qos/policy.go): cpu shares and CFS quota from milli-CPU, the cgroup v2 weight from
// shares, a container's OOM score adjustment, and a pod's totals.
import { ContainerSpec, PodSpec, ResourceQuantity } from "./model";
import { QosClass, qosClassOf } from "./qos";
import { parseQuantity } from "./quantity";

export const MIN_SHARES: i64 = 2;
export const MAX_SHARES: i64 = 262144;
export const SHARES_PER_CPU: i64 = 1024;
export const QUOTA_PERIOD_US: i64 = 100000;
export const MIN_QUOTA_PERIOD_US: i64 = 1000;
export const GUARANTEED_OOM_SCORE_ADJ: i32 = -997;
export const BESTEFFORT_OOM_SCORE_ADJ: i32 = 1000;
/// Upstream's SystemCriticalPriority: pods at or above it are node-critical.
export const SYSTEM_CRITICAL_PRIORITY: i32 = 2000000000;

/// cpu.shares for a request of `milliCpu` (0 or none: the minimum, 2).
export function cpuSharesFromMilli(milliCpu: i64): i64 {
  if (milliCpu <= 0) return MIN_SHARES;
  const shares = (milliCpu * SHARES_PER_CPU) / 1000;
  if (shares < MIN_SHARES) return MIN_SHARES;
  if (shares > MAX_SHARES) return MAX_SHARES;
  return shares;
}

/// cpu.cfs_quota_us for a limit of `milliCpu` over `periodUs`; 0 for no limit (none is set).
export function cpuQuotaFromMilli(milliCpu: i64, periodUs: i64 = QUOTA_PERIOD_US): i64 {
  if (milliCpu <= 0) return 0;
  const quota = (milliCpu * periodUs) / 1000;
  return quota < MIN_QUOTA_PERIOD_US ? MIN_QUOTA_PERIOD_US : quota;
}

/// cgroup v2 cpu.weight for v1 shares (the runtime's conversion: [2, 262144] onto [1, 10000]).
export function cpuWeightFromShares(shares: i64): i64 {
  if (shares < MIN_SHARES) shares = MIN_SHARES;
  if (shares > MAX_SHARES) shares = MAX_SHARES;
  return 1 + ((shares - 2) * 9999) / 262142;
}

/// Value of `resource` in `list` (milli-units), or -1 when absent or unparsable.
function milliOf(list: ResourceQuantity[], resource: string): i64 {
  for (let i = 0; i < list.length; i++) {
    if (list[i].name != resource) continue;
    const parsed = parseQuantity(list[i].quantity);
    return parsed.ok ? parsed.milliValue : -1;
  }
  return -1;
}

/// A container's request of `resource` in milli-units, the limit standing in for a missing one.
export function requestMilli(c: ContainerSpec, resource: string): i64 {
  const request = milliOf(c.requests, resource);
  if (request >= 0) return request;
  const limit = milliOf(c.limits, resource);
  return limit >= 0 ? limit : 0;
}

export function limitMilli(c: ContainerSpec, resource: string): i64 {
  return milliOf(c.limits, resource);
}

/// A container's oom_score_adj. `memoryCapacityBytes` is the node's memory.
export function containerOomScoreAdj(qos: QosClass, critical: bool, memoryRequestBytes: i64, memoryCapacityBytes: i64): i32 {
  if (critical || qos == QosClass.Guaranteed) return GUARANTEED_OOM_SCORE_ADJ;
  if (qos == QosClass.BestEffort) return BESTEFFORT_OOM_SCORE_ADJ;
  if (memoryCapacityBytes <= 0) return BESTEFFORT_OOM_SCORE_ADJ - 1;
  const adj = <i32>(1000 - (1000 * memoryRequestBytes) / memoryCapacityBytes);
  // A Guaranteed container using all memory scores about 3: a Burstable one must stay above it,
  // and below a BestEffort one.
  if (adj < 1000 + GUARANTEED_OOM_SCORE_ADJ) return 1000 + GUARANTEED_OOM_SCORE_ADJ;
  if (adj == BESTEFFORT_OOM_SCORE_ADJ) return adj - 1;
  return adj;
}

export class CgroupValues {
  cpuShares: i64 = MIN_SHARES;
  cpuWeight: i64 = 1;
  /// 0: no quota.
  cpuQuotaUs: i64 = 0;
  cpuPeriodUs: i64 = QUOTA_PERIOD_US;
  /// 0: no memory limit.
  memoryLimitBytes: i64 = 0;
}

function bytes(milli: i64): i64 {
  return milli / 1000 + (milli % 1000 > 0 ? 1 : 0);
}

/// The container's own cgroup values, from its requests and limits.
export function containerCgroupValues(c: ContainerSpec): CgroupValues {
  const v = new CgroupValues();
  v.cpuShares = cpuSharesFromMilli(requestMilli(c, "cpu"));
  v.cpuWeight = cpuWeightFromShares(v.cpuShares);
  const cpuLimit = limitMilli(c, "cpu");
  v.cpuQuotaUs = cpuLimit > 0 ? cpuQuotaFromMilli(cpuLimit) : 0;
  const memoryLimit = limitMilli(c, "memory");
  v.memoryLimitBytes = memoryLimit > 0 ? bytes(memoryLimit) : 0;
  return v;
}

/// One container's request, or limit (noting in `allSet` a container without one).
function amountMilli(c: ContainerSpec, resource: string, limits: bool, allSet: bool[]): i64 {
  if (!limits) return requestMilli(c, resource);
  const l = limitMilli(c, resource);
  if (l > 0) return l;
  allSet[0] = false;
  return 0;
}

/// A pod's effective request or limit of `resource` in milli-units (upstream PodRequests and
/// PodLimits): the regular containers and the sidecars summed; each init container counted with
/// the sidecars started before it; the larger of the two. `limits`: limits instead of requests.
/// `allSet[0]` ends false when a container has no limit of `resource` (upstream's ContainerFn).
export function podAmountMilli(pod: PodSpec, resource: string, limits: bool, allSet: bool[] = [true]): i64 {
  let sum: i64 = 0;
  for (let i = 0; i < pod.containers.length; i++) sum += amountMilli(pod.containers[i], resource, limits, allSet);
  let sidecars: i64 = 0;
  let initMax: i64 = 0;
  for (let i = 0; i < pod.initContainers.length; i++) {
    const c = pod.initContainers[i];
    const a = amountMilli(c, resource, limits, allSet);
    if (c.isSidecar) {
      sidecars += a;
      sum += a;
      if (sidecars > initMax) initMax = sidecars;
    } else if (a + sidecars > initMax) {
      initMax = a + sidecars;
    }
  }
  const total = sum > initMax ? sum : initMax;
  // Upstream's PodRequests and PodLimits add the overhead: to requests always, to a limit only
  // where the containers declare one.
  if (limits && total == 0) return total;
  return total + overheadMilli(pod, resource);
}

function overheadMilli(pod: PodSpec, resource: string): i64 {
  for (let i = 0; i < pod.overhead.length; i++) {
    const q = pod.overhead[i];
    if (q.name != resource) continue;
    const parsed = parseQuantity(q.quantity);
    return parsed.ok ? parsed.milliValue : 0;
  }
  return 0;
}

/// The pod cgroup's values: shares from the pod's request; a quota and a memory limit only when
/// every container (init containers too) has that limit: one unlimited container leaves the pod
/// unlimited.
export function podCgroupValues(pod: PodSpec): CgroupValues {
  const v = new CgroupValues();
  const cpuRequest = podAmountMilli(pod, "cpu", false);
  const allCpuLimited: bool[] = [pod.containers.length > 0];
  const cpuLimit = podAmountMilli(pod, "cpu", true, allCpuLimited);
  const allMemoryLimited: bool[] = [pod.containers.length > 0];
  const memoryLimit = podAmountMilli(pod, "memory", true, allMemoryLimited);
  const qos = qosClassOf(pod);
  v.cpuShares = qos == QosClass.BestEffort ? MIN_SHARES : cpuSharesFromMilli(cpuRequest);
  v.cpuWeight = cpuWeightFromShares(v.cpuShares);
  v.cpuQuotaUs = allCpuLimited[0] ? cpuQuotaFromMilli(cpuLimit) : 0;
  v.memoryLimitBytes = allMemoryLimited[0] ? bytes(memoryLimit) : 0;
  return v;
}
