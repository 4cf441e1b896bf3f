// The actions the loop only passes on or logs: a pod's event, and the node-wide ones (pressure,
// reclaim, logind's shutdown lock). None needs a result.
import type { NodePressure, PlannedAction } from "../core/types.js";
import type { AgentLoopOptions } from "./agent-options.js";

/** The container a runtime call is about, for its log line (none for a sandbox's). */
export function containerOf(action: PlannedAction): { container?: string } {
  const kind = action.kind;
  switch (kind.tag) {
    case "create-container":
      return { container: kind.val.container.name };
    case "start-container":
    case "stop-container":
    case "remove-container":
    case "update-container-resources":
      return { container: kind.val.containerName };
    default:
      return {};
  }
}

/** Logs a pod event, or hands a node-wide action to whoever carries it out. */
export function noticeAction(options: AgentLoopOptions, action: PlannedAction, pod: string | undefined, setPressure: (p: NodePressure) => void): void {
  const kind = action.kind;
  switch (kind.tag) {
    case "pod-event":
      options.log.log(kind.val.eventType === "warning" ? "warn" : "info", kind.val.message, { pod, container: kind.val.containerName, reason: kind.val.reason });
      return;
    case "reclaim-node-resources":
      options.log.log("info", "Eviction manager: attempting to reclaim node-level resources", { signal: kind.val });
      options.reclaimNodeResources?.(kind.val);
      return;
    case "shutdown-inhibit-lock":
      options.onShutdownInhibitLock?.(kind.val);
      return;
    case "node-pressure-changed": {
      const p = kind.val;
      setPressure(p);
      options.log.log(p.memory || p.disk || p.pid ? "warn" : "info", "Node pressure changed", { memory: p.memory, disk: p.disk, pid: p.pid });
      options.onPressure?.(p);
      return;
    }
  }
}
