// Export shims of wit/qos.wit over the agent's own QoS and OOM-score code.
import { qosClassOf } from "../core/qos";
import { containerResources } from "../core/resources";
import { allocReturn, lowerString, resetArgumentArena } from "../abi/memory";
import { LIBRARY_RETURN_AREA, liftPodResourcesParts, lowerError, lowerOkList, lowerOkTag } from "../abi/library-types";
import { podResourcesProblem } from "./checks";

export function qosPodQosClass(uidPtr: usize, uidLen: u32, priority: i32, staticPod: i32, containersPtr: usize, containersLen: u32): usize {
  const pod = liftPodResourcesParts(uidPtr, uidLen, priority, staticPod, containersPtr, containersLen);
  resetArgumentArena();
  const problem = podResourcesProblem(pod, "spec.");
  if (problem.length > 0) return lowerError(LIBRARY_RETURN_AREA, 4, problem);
  store<u8>(lowerOkTag(LIBRARY_RETURN_AREA), <u8>qosClassOf(pod), 4);
  return LIBRARY_RETURN_AREA;
}

// container-oom-score-adj { name @0, oom-score-adj s32 @8 }: size 12, align 4.
const OOM_SCORE_SIZE: usize = 12;

export function qosOomScoreAdjust(
  uidPtr: usize, uidLen: u32, priority: i32, staticPod: i32, containersPtr: usize, containersLen: u32, memoryCapacityBytes: u64,
): usize {
  const pod = liftPodResourcesParts(uidPtr, uidLen, priority, staticPod, containersPtr, containersLen);
  resetArgumentArena();
  const problem = podResourcesProblem(pod, "spec.");
  if (problem.length > 0) return lowerError(LIBRARY_RETURN_AREA, 4, problem);
  const qos = qosClassOf(pod);
  const n = pod.containers.length;
  const list = allocReturn(<usize>n * OOM_SCORE_SIZE);
  for (let i = 0; i < n; i++) {
    const c = pod.containers[i];
    const at = list + <usize>i * OOM_SCORE_SIZE;
    lowerString(at, c.name);
    store<i32>(at, containerResources(pod, qos, c, <i64>memoryCapacityBytes).oomScoreAdj, 8);
  }
  return lowerOkList(LIBRARY_RETURN_AREA, list, n);
}
