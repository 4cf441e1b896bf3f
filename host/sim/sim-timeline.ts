// The scenario's timeline played on the simulated node: container exits and dying sandboxes,
// fault windows, runtime and agent restarts, pods added, updated and deleted, memory use, and
// suspends. What only the simulator itself can do (restart the agent, delete through the
// apiserver, send the pods) it is asked to do.
import type { TraceWriter } from "../trace/recording-core.js";
import type { EventQueue } from "./event-queue.js";
import type { Faults } from "./faults.js";
import type { SimPodSource } from "./pod-source.js";
import type { Scenario } from "./scenario.js";
import type { TimelineAction } from "./scenario-types.js";
import type { SimApiserver } from "./sim-apiserver.js";
import type { SimMemory } from "./sim-memory.js";
import type { SimImages } from "./sim-images.js";
import type { SimRuntime } from "./sim-runtime.js";
import type { UpdateInvariants } from "./update-invariants.js";

export interface TimelineContext {
  now(): number;
  queue: EventQueue;
  runtime: SimRuntime;
  pods: SimPodSource;
  faults: Faults;
  memory: SimMemory;
  /** The image filesystem, when the scenario has one. */
  images?: SimImages;
  updates: UpdateInvariants;
  apiserver: SimApiserver;
  scenario: Scenario;
  trace?: TraceWriter;
  sendPods(): void;
  restartAgent(downMs: number): void;
  restartRuntime(downMs: number): void;
  deleteThroughApiserver(pod: string, graceSeconds: Parameters<SimPodSource["mark"]>[1]): void;
  /** logind's PrepareForShutdown, given to the core. */
  nodeShutdown(active: boolean): void;
  /** The whole node slept `forMs`: the run ends that much later. */
  extendEnd(forMs: number): void;
}

export function playTimelineAction(ctx: TimelineContext, action: TimelineAction): void {
  const now = ctx.now();
  switch (action.type) {
    case "exit": {
      const uid = ctx.pods.uidOf(action.pod);
      const running = uid ? ctx.runtime.runningNamed(uid, action.container) : [];
      ctx.trace?.sim(now, "exit", { pod: action.pod, name: action.container, code: action.code, found: running.length });
      for (const c of running) ctx.runtime.exit(c, action.code, action.code === 0 ? "Completed" : "Error", now);
      return;
    }
    case "sandboxDies": {
      const uid = ctx.pods.uidOf(action.pod);
      const ready = [...ctx.runtime.sandboxes.values()].filter((sb) => sb.podUid === uid && sb.state === "ready");
      ctx.trace?.sim(now, "sandbox-dies", { pod: action.pod, found: ready.length });
      for (const sb of ready) ctx.runtime.stopPodSandbox(sb.id, now);
      return;
    }
    case "fault":
      ctx.faults.openWindow(action.fault, now);
      return;
    case "relistFault":
      ctx.faults.openRelistWindow(action.lose, action.duplicate, action.forMs, now);
      return;
    case "runtimeRestart":
      ctx.restartRuntime(action.downMs);
      return;
    case "agentRestart":
      ctx.restartAgent(action.downMs);
      return;
    case "add":
    case "update": {
      const before = ctx.pods.desired.find((d) => d.key === action.pod.key && !d.deleted)?.spec;
      ctx.pods.put(action.pod);
      const after = ctx.pods.desired.find((d) => d.key === action.pod.key)?.spec;
      ctx.updates.onUpdate(action.pod.key, before, after, now);
      // A pod added (back) is a new object in the apiserver, with a status of its own.
      if (!before && after) ctx.apiserver.forget(after.uid);
      ctx.trace?.sim(now, action.type, { pod: action.pod.key });
      ctx.sendPods();
      return;
    }
    case "delete":
      ctx.trace?.sim(now, "delete", { pod: action.pod });
      if (ctx.scenario.source === "apiserver") ctx.deleteThroughApiserver(action.pod, action.graceSeconds);
      else if (ctx.pods.delete(action.pod)) ctx.sendPods();
      return;
    case "memory":
      ctx.trace?.sim(now, "memory", { pod: action.pod, name: action.container, bytes: action.bytes });
      ctx.memory.setUsage(action.pod, action.container, action.bytes);
      return;
    case "diskUsed":
      ctx.trace?.sim(now, "disk-used", { bytes: action.bytes });
      ctx.images?.setOtherBytes(action.bytes);
      return;
    case "nodeShutdown":
      ctx.trace?.sim(now, "node-shutdown", { active: action.active });
      ctx.nodeShutdown(action.active);
      return;
    case "suspend":
      // The whole node sleeps: nothing happens, then every clock has jumped.
      ctx.trace?.sim(now, "suspend", { forMs: action.forMs });
      ctx.queue.shift(action.forMs);
      ctx.faults.suspend(action.forMs, now);
      ctx.pods.suspend(action.forMs);
      ctx.extendEnd(action.forMs); // the scenario's events all still happen
      return;
  }
}
