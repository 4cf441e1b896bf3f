// Export shim of wit/pleg.wit: a fresh PLEG (the agent's own) relists `before`, then `after`.
import { RuntimeSnapshot } from "../core/model";
import { packSnapshot } from "../core/packed";
import { Pleg, PlegEvent, PlegEventType } from "../core/pleg";
import { allocReturn, lowerString, resetArgumentArena } from "../abi/memory";
import { liftSnapshotFlat } from "../abi/observations";
import { LIBRARY_RETURN_AREA, lowerError, lowerOkList } from "../abi/library-types";
import { uniqueNameProblem } from "./checks";

// lifecycle-event { pod-uid @0, container-id @8, event-type u8 @16 }: size 20, align 4.
const LIFECYCLE_EVENT_SIZE: usize = 20;

export function plegRelistEvents(
  beforeListedAtMs: u64, beforeSandboxesPtr: usize, beforeSandboxesLen: u32, beforeContainersPtr: usize, beforeContainersLen: u32,
  beforeUninspectedPtr: usize, beforeUninspectedLen: u32,
  afterListedAtMs: u64, afterSandboxesPtr: usize, afterSandboxesLen: u32, afterContainersPtr: usize, afterContainersLen: u32,
  afterUninspectedPtr: usize, afterUninspectedLen: u32,
): usize {
  const before = liftSnapshotFlat(beforeListedAtMs, beforeSandboxesPtr, beforeSandboxesLen, beforeContainersPtr, beforeContainersLen,
    beforeUninspectedPtr, beforeUninspectedLen);
  const after = liftSnapshotFlat(afterListedAtMs, afterSandboxesPtr, afterSandboxesLen, afterContainersPtr, afterContainersLen,
    afterUninspectedPtr, afterUninspectedLen);
  resetArgumentArena();
  let problem = snapshotProblem(before, "before");
  if (problem.length == 0) problem = snapshotProblem(after, "after");
  if (problem.length > 0) return lowerError(LIBRARY_RETURN_AREA, 4, problem);

  const pleg = new Pleg();
  const first = packSnapshot(before);
  pleg.relist(first);
  first.free();
  const second = packSnapshot(after);
  const diff = pleg.relist(second);
  const events: PlegEvent[] = [];
  // Upstream drops ContainerChanged before sending events on, and a pod's events when it could
  // not inspect the pod (it diffs that pod again at the next relist); so does this interface.
  const uninspected = new Set<string>();
  for (let i = 0; i < after.uninspectedPodUids.length; i++) uninspected.add(after.uninspectedPodUids[i]);
  for (let i = 0; i < diff.events.length; i++) {
    const e = diff.events[i];
    if (e.type != PlegEventType.ContainerChanged && !uninspected.has(e.podUid)) events.push(e);
  }
  second.free();
  pleg.dispose();
  events.sort(compareEvents);

  const n = events.length;
  const list = allocReturn(<usize>n * LIFECYCLE_EVENT_SIZE);
  for (let i = 0; i < n; i++) {
    const at = list + <usize>i * LIFECYCLE_EVENT_SIZE;
    lowerString(at, events[i].podUid);
    lowerString(at + 8, events[i].containerId);
    store<u8>(at, <u8>events[i].type, 16);
  }
  return lowerOkList(LIBRARY_RETURN_AREA, list, n);
}

function compareEvents(a: PlegEvent, b: PlegEvent): i32 {
  if (a.podUid != b.podUid) return a.podUid < b.podUid ? -1 : 1;
  if (a.containerId != b.containerId) return a.containerId < b.containerId ? -1 : 1;
  return a.type - b.type;
}

/// An empty ID or pod uid, or an ID listed twice (sandboxes and containers share one ID space).
function snapshotProblem(s: RuntimeSnapshot, name: string): string {
  const ids = new Set<string>();
  for (let i = 0; i < s.sandboxes.length; i++) {
    const path = name + ".sandboxes[" + i.toString() + "]";
    const problem = objectProblem(s.sandboxes[i].id, s.sandboxes[i].podUid, path, ids);
    if (problem.length > 0) return problem;
  }
  for (let i = 0; i < s.containers.length; i++) {
    const path = name + ".containers[" + i.toString() + "]";
    const problem = objectProblem(s.containers[i].id, s.containers[i].podUid, path, ids);
    if (problem.length > 0) return problem;
  }
  return "";
}

function objectProblem(id: string, podUid: string, path: string, ids: Set<string>): string {
  const problem = uniqueNameProblem(path + ".id", id, ids);
  if (problem.length > 0) return problem;
  return podUid.length == 0 ? path + ".pod-uid: Required value" : "";
}
