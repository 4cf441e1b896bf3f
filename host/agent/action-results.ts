// The two shapes an action's outcome takes on its way back to the core.
import type { ActionResult } from "../core/types.js";

export function okResult(actionId: bigint): ActionResult {
  return { actionId, outcome: { tag: "ok", val: "" } };
}

/** A failure the core retries with back-off; `kind` "runtime" when the runtime itself failed. */
export function errorResult(actionId: bigint, message: string, kind: "other" | "runtime" = "other"): ActionResult {
  return { actionId, outcome: { tag: "err", val: { kind, grpcCode: 0, message } } };
}
