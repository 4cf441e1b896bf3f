// Which runtime actions share the executor's slots, and in what order waiting ones get them
// (kept apart from the executor so that the simulator's runtime uses the same rules).
import type { PlannedAction } from "../core/types.js";

export const DEFAULT_ACTION_CONCURRENCY = 8;

/**
 * Whether a runtime action takes one of the executor's slots. A StopContainer waits for the
 * container to end (up to its grace period, 30 s by default): holding a slot for that long let 8
 * stops at a time run and queued the rest, so removing 40 pods took five grace periods instead of
 * one, and no start or status call got a slot meanwhile. Calls that wait on a container run
 * beside the slots; their number is bounded by the containers the node runs (--max-pods).
 */
export function holdsSlot(action: PlannedAction): boolean {
  return action.kind.tag !== "stop-container";
}

/**
 * Which waiting action gets the next free slot: lower first, in arrival order within a rank.
 * A container of a pod whose sandbox is up goes before new sandboxes, as upstream's worker per
 * pod lets a pod go on while others still wait for theirs: with one queue in arrival order, 50
 * pods written at once had their 50 RunPodSandbox calls ahead of every container, and the first
 * container ran only after the last sandbox (tests/bench/vs-kubelet.mjs: about 10 s instead of
 * 2-4 s on a busy 2-core machine).
 */
export function slotRank(action: PlannedAction): number {
  switch (action.kind.tag) {
    case "create-container":
    case "start-container":
      return 0;
    case "run-sandbox":
      return 2;
    default:
      return 1;
  }
}
