// Export shims of wit/cgroups.wit over the agent's own cgroup-value code.
import { CgroupValues, containerCgroupValues, podCgroupValues } from "../core/cgroup-values";
import { podCgroupParent } from "../core/qos";
import { resourcesProblem } from "../core/validation";
import { lowerString, resetArgumentArena } from "../abi/memory";
import { LIBRARY_RETURN_AREA, liftContainerResourcesParts, liftPodResourcesParts, lowerError, lowerOkTag } from "../abi/library-types";
import { podResourcesProblem } from "./checks";

/// result<cgroup-values, string>: cgroup-values { cpu-shares @0, cpu-weight @8, cpu-quota-us @16,
/// cpu-period-us @24, memory-limit-bytes @32 } at payload offset 8.
function lowerValues(v: CgroupValues): usize {
  const at = lowerOkTag(LIBRARY_RETURN_AREA) + 8;
  store<i64>(at, v.cpuShares);
  store<i64>(at, v.cpuWeight, 8);
  store<i64>(at, v.cpuQuotaUs, 16);
  store<i64>(at, v.cpuPeriodUs, 24);
  store<i64>(at, v.memoryLimitBytes, 32);
  return LIBRARY_RETURN_AREA;
}

export function cgroupsContainerCgroup(namePtr: usize, nameLen: u32, requestsPtr: usize, requestsLen: u32, limitsPtr: usize, limitsLen: u32): usize {
  const c = liftContainerResourcesParts(namePtr, nameLen, requestsPtr, requestsLen, limitsPtr, limitsLen);
  resetArgumentArena();
  const problem = resourcesProblem(c, "");
  if (problem !== null) return lowerError(LIBRARY_RETURN_AREA, 8, problem.field + ": " + problem.message);
  return lowerValues(containerCgroupValues(c));
}

export function cgroupsPodCgroup(uidPtr: usize, uidLen: u32, priority: i32, staticPod: i32, containersPtr: usize, containersLen: u32): usize {
  const pod = liftPodResourcesParts(uidPtr, uidLen, priority, staticPod, containersPtr, containersLen);
  resetArgumentArena();
  const problem = podResourcesProblem(pod, "spec.");
  if (problem.length > 0) return lowerError(LIBRARY_RETURN_AREA, 8, problem);
  return lowerValues(podCgroupValues(pod));
}

export function cgroupsPodCgroupParent(uidPtr: usize, uidLen: u32, priority: i32, staticPod: i32, containersPtr: usize, containersLen: u32): usize {
  const pod = liftPodResourcesParts(uidPtr, uidLen, priority, staticPod, containersPtr, containersLen);
  resetArgumentArena();
  let problem = pod.uid.length == 0 ? "metadata.uid: Required value" : "";
  if (problem.length == 0) problem = podResourcesProblem(pod, "spec.");
  if (problem.length > 0) return lowerError(LIBRARY_RETURN_AREA, 4, problem);
  lowerString(lowerOkTag(LIBRARY_RETURN_AREA) + 4, podCgroupParent(pod));
  return LIBRARY_RETURN_AREA;
}
