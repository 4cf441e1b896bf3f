// The host's side of the CRI in a simulation, mirroring the real agent's: the executor (at most 8
// runtime calls at a time, ImageStatus before a create, a pull when the image is missing), the
// gRPC client's retries while the runtime restarts, and the relister (list, then ContainerStatus
// for containers seen in a new state). Each call takes a drawn latency and then takes effect on
// the simulated runtime, unless a fault says otherwise.
import type { ActionResult, PlannedAction, PodSpec } from "../core/types.js";
import type { ProbeInvariants } from "./probe-invariants.js";
import { GrpcCode, RETRY_POLICY, RuntimeError } from "../cri/runtime.js";
import { DEFAULT_ACTION_CONCURRENCY, holdsSlot } from "../agent/action-slots.js";
import { packSnapshot } from "../core/snapshot-packing.js";
import type { TraceWriter } from "../trace/recording-core.js";
import type { DurationRange } from "./duration.js";
import type { EventQueue } from "./event-queue.js";
import type { Faults } from "./faults.js";
import type { Invariants } from "./invariants.js";
import type { Prng } from "./prng.js";
import type { ContainerBehaviour, CriCall, Scenario } from "./scenario.js";
import type { SimRuntime } from "./sim-runtime.js";

type CallOutcome = { ok: string } | { err: RuntimeError };
export type Snapshot = ReturnType<SimRuntime["snapshot"]>;

export interface PodInfo {
  key: string;
  restartPolicy: string;
  behaviour: Record<string, ContainerBehaviour>;
  /** The pod-spec the core was given (probes, init containers). */
  spec?: PodSpec;
}

/** What the simulation around the executor provides. */
export interface SimCriHost {
  now(): number;
  /** The current agent process; calls and answers of an earlier one are dropped. */
  generation(): number;
  podInfo(uid: string): PodInfo | undefined;
  /** An action's outcome for the core. */
  onResult(result: ActionResult): void;
  /** A relist answer for the core. */
  onSnapshot(taken: Snapshot): void;
}

export interface CriStats {
  runtimeCalls: number;
  relists: number;
  containerStarts: number;
}

export function drawDuration(rng: Prng, range: DurationRange): number {
  return range.minMs === range.maxMs ? range.minMs : rng.int(range.minMs, range.maxMs);
}

export class SimCri {
  private inFlight = 0;
  /** Runtime actions waiting for one of the executor's slots, with when the core decided them. */
  private waiting: { action: PlannedAction; decidedAtMs: number }[] = [];
  /** State per container ID the relister last read with ContainerStatus (per agent process). */
  private inspected = new Map<string, string>();
  /** The runtime's change count when every container had been read; -1 if not. */
  private inspectedAt = -1;
  readonly stats: CriStats = { runtimeCalls: 0, relists: 0, containerStarts: 0 };
  /** Checks of init-container order and sidecar stops (set by the simulator). */
  probeInvariants?: ProbeInvariants;
  /**
   * StopContainer calls in progress per container: containerd's StopContainer returns once the
   * process is gone, so a stop with a long timeout returns early when another (shorter) stop,
   * or the process itself, ends it.
   */
  private stopWaiters = new Map<string, Set<(outcome: CallOutcome) => void>>();

  constructor(
    private host: SimCriHost,
    private queue: EventQueue,
    private runtime: SimRuntime,
    private scenario: Scenario,
    private faults: Faults,
    private invariants: Invariants,
    private latencyRng: Prng,
    private behaviourRng: Prng,
    private trace?: TraceWriter,
  ) {
    runtime.onExit = (c, nowMs) => {
      const waiters = this.stopWaiters.get(c.id);
      if (!waiters) return;
      for (const finish of [...waiters]) this.queue.push(nowMs + this.latency("StopContainer"), "StopContainer returns", () => finish({ ok: "" }));
    };
  }

  /** The agent process died: what it had queued and what it had read die with it. */
  reset(): void {
    this.stopWaiters.clear();
    this.inFlight = 0;
    this.waiting = [];
    this.inspected.clear();
    this.inspectedAt = -1;
  }

  /** A runtime action the core decided now. */
  submit(action: PlannedAction): void {
    const decidedAtMs = this.host.now();
    if (!this.slotted(action) || this.inFlight < DEFAULT_ACTION_CONCURRENCY) this.execute(action, this.host.generation(), decidedAtMs);
    else this.waiting.push({ action, decidedAtMs });
  }

  /** As the real executor: stops run beside the slots (unless the scenario asks for the old executor). */
  private slotted(action: PlannedAction): boolean {
    return this.scenario.stopsHoldSlots || holdsSlot(action);
  }

  private execute(action: PlannedAction, generation: number, decidedAtMs: number): void {
    const slotted = this.slotted(action);
    if (slotted) this.inFlight++;
    const done = (outcome: CallOutcome) => {
      if (generation !== this.host.generation()) return; // the agent that asked is gone
      if (!slotted) return this.finish(action, outcome);
      this.inFlight--;
      const next = this.waiting.shift();
      if (next) this.execute(next.action, generation, next.decidedAtMs);
      this.finish(action, outcome);
    };
    this.perform(action, generation, decidedAtMs, done);
  }

  private finish(action: PlannedAction, outcome: CallOutcome): void {
    let result: ActionResult;
    if ("ok" in outcome) result = { actionId: action.id, outcome: { tag: "ok", val: outcome.ok } };
    else {
      const e = outcome.err;
      const errorKind = e.call === "PullImage" ? "image-pull" : e.grpcCode === GrpcCode.DEADLINE_EXCEEDED ? "timeout" : "runtime";
      result = { actionId: action.id, outcome: { tag: "err", val: { kind: errorKind, grpcCode: e.grpcCode, message: e.message } } };
    }
    this.host.onResult(result);
  }

  /** Carries out one runtime action on the simulated runtime; `done` gets its outcome. */
  private perform(action: PlannedAction, generation: number, decidedAtMs: number, done: (outcome: CallOutcome) => void): void {
    const rt = this.runtime;
    const now = () => this.host.now();
    const kind = action.kind;
    switch (kind.tag) {
      case "run-sandbox":
        this.call("RunPodSandbox", () => rt.runPodSandbox(kind.val, now()), done);
        return;
      case "stop-sandbox":
        this.call("StopPodSandbox", () => (rt.stopPodSandbox(kind.val, now()), ""), done);
        return;
      case "remove-sandbox":
        this.call("RemovePodSandbox", () => (rt.removePodSandbox(kind.val), ""), done);
        return;
      case "create-container": {
        const create = kind.val;
        const image = create.container.image;
        const createIt = () =>
          this.call(
            "CreateContainer",
            () => {
              const id = rt.createContainer(create, now());
              // A create that lands after its agent died: that agent's back-off memory died too.
              if (generation === this.host.generation()) {
                this.invariants.onCreate(rt, rt.containers.get(id)!, this.host.podInfo(create.sandbox.podUid)?.restartPolicy ?? "Always", decidedAtMs);
                this.probeInvariants?.onCreate(rt, rt.containers.get(id)!, this.host.podInfo(create.sandbox.podUid)?.spec, decidedAtMs);
              }
              return id;
            },
            done,
          );
        this.call("ImageStatus", () => (rt.hasImage(image) ? "present" : ""), (status) => {
          if ("err" in status) return done(status);
          if (status.ok === "present") return createIt();
          this.call("PullImage", () => (rt.pullImage(image), ""), (pulled) => ("err" in pulled ? done(pulled) : createIt()));
        });
        return;
      }
      case "start-container":
        this.call("StartContainer", () => (this.startContainer(kind.val.containerId), ""), done);
        return;
      case "stop-container":
        this.stopContainer(kind.val.containerId, Number(kind.val.timeoutSeconds), done);
        return;
      case "remove-container":
        this.call("RemoveContainer", () => (rt.removeContainer(kind.val.containerId), ""), done);
        return;
      case "update-container-resources":
        this.call("UpdateContainerResources", () => (rt.updateResources(kind.val.containerId, kind.val.resources), ""), done);
        return;
      default:
        throw new Error(`simulator: ${kind.tag} is not a runtime action`);
    }
  }

  /**
   * One CRI call: retried while the runtime is down (as GrpcRuntime does), then after its latency
   * it takes effect, unless a fault says otherwise. A call cut off by a runtime restart may have
   * taken effect before the connection dropped, and is then retried: as on a real node.
   */
  private call(call: CriCall, effect: () => string, done: (outcome: CallOutcome) => void, extraMs = 0): void {
    const issuedAtMs = this.host.now();
    const generation = this.host.generation();
    let delayMs: number = RETRY_POLICY.firstDelayMs;
    const attempt = () => {
      // A call the runtime has not received yet dies with the agent process that made it.
      if (generation !== this.host.generation()) return;
      this.stats.runtimeCalls++;
      const nowMs = this.host.now();
      if (this.faults.isRuntimeDown(nowMs)) {
        if (nowMs - issuedAtMs + delayMs < RETRY_POLICY.budgetMs) {
          this.queue.push(nowMs + delayMs, `retry ${call}`, attempt);
          delayMs = Math.min(delayMs * 2, RETRY_POLICY.maxDelayMs);
          return;
        }
        return done({ err: new RuntimeError(`${call}: connection refused`, GrpcCode.UNAVAILABLE, call) });
      }
      let latencyMs = this.latency(call) + extraMs;
      const fault = this.faults.draw(call, nowMs);
      if (fault === "slow") latencyMs *= 10;
      if (fault === "error") {
        this.queue.push(nowMs + latencyMs, `${call} error`, () => done({ err: new RuntimeError(`${call}: injected failure`, GrpcCode.UNKNOWN, call) }));
        return;
      }
      const timeoutMs = this.scenario.criTimeoutMs + extraMs;
      if (fault === "timeout") {
        // The runtime may still do it, late: the host has given up by then.
        if (this.faults.tookEffect()) this.queue.push(nowMs + Math.min(latencyMs, timeoutMs - 1), `${call} late effect`, () => void tryEffect(effect));
        this.queue.push(nowMs + timeoutMs, `${call} timeout`, () => done({ err: new RuntimeError(`${call}: context deadline exceeded`, GrpcCode.DEADLINE_EXCEEDED, call) }));
        return;
      }
      this.queue.push(nowMs + Math.min(latencyMs, timeoutMs), call, () => {
        if (this.faults.isRuntimeDown(this.host.now())) {
          // The runtime went down during the call: it may or may not have done it.
          if (this.faults.tookEffect()) tryEffect(effect);
          attempt();
          return;
        }
        done(tryEffect(effect));
      });
    };
    attempt();
  }

  private latency(call: CriCall): number {
    const range = this.scenario.latency[call] ?? this.scenario.latency.default;
    return Math.max(1, drawDuration(this.latencyRng, range));
  }

  private startContainer(id: string): void {
    const nowMs = this.host.now();
    const c = this.runtime.startContainer(id, nowMs);
    this.stats.containerStarts++;
    this.invariants.onStart(this.runtime, c, nowMs);
    const behaviour = this.host.podInfo(c.podUid)?.behaviour[c.name];
    if (!behaviour?.exitAfter) return;
    const run = c.runNumber;
    const code = behaviour.exitCode;
    this.queue.push(nowMs + drawDuration(this.behaviourRng, behaviour.exitAfter), "exit", () => {
      if (c.state !== "running" || c.runNumber !== run) return;
      const at = this.host.now();
      this.runtime.exit(c, code, code === 0 ? "Completed" : "Error", at);
      this.trace?.sim(at, "exit", { container: c.id, name: c.name, pod: c.podUid, code });
    });
  }

  /** StopContainer blocks until the process is gone: SIGTERM, then SIGKILL after the timeout. */
  private stopContainer(id: string, timeoutSeconds: number, done: (outcome: CallOutcome) => void): void {
    const c = this.runtime.containers.get(id);
    // The core's intent counts, whatever the outcome: a stop that fails, or finds the container
    // already gone (its view was behind), still means the core replaces it.
    if (c) c.stopRequested = true;
    if (c && c.state === "running") {
      c.killedWhileRunning = true;
      this.probeInvariants?.onStop(this.runtime, c, this.host.podInfo(c.podUid)?.spec, this.host.now());
    }
    let stopMs = 0;
    let code = 143; // 128 + SIGTERM
    if (c && c.state === "running") {
      const behaviour = this.host.podInfo(c.podUid)?.behaviour[c.name];
      const graceMs = timeoutSeconds * 1000;
      const termMs = behaviour ? (behaviour.ignoreSigterm ? Infinity : drawDuration(this.behaviourRng, behaviour.stopAfter)) : 10;
      if (termMs >= graceMs) {
        stopMs = graceMs;
        code = 137; // 128 + SIGKILL
      } else stopMs = termMs;
    }
    const generation = this.host.generation();
    let finished = false;
    const finish = (outcome: CallOutcome) => {
      if (finished) return;
      finished = true;
      this.stopWaiters.get(id)?.delete(finish);
      if (generation === this.host.generation()) done(outcome);
    };
    if (!this.stopWaiters.has(id)) this.stopWaiters.set(id, new Set());
    this.stopWaiters.get(id)!.add(finish);
    this.call(
      "StopContainer",
      () => {
        this.runtime.exit(this.runtime.mustGet(id, "StopContainer"), code, "Error", this.host.now());
        return "";
      },
      finish,
      stopMs,
    );
  }

  /** One relist: the two list calls, the inspections, and the answer (unless a fault loses it). */
  relist(action: PlannedAction): void {
    const generation = this.host.generation();
    const listedAtMs = this.host.now();
    this.stats.relists++;
    let taken: Snapshot | undefined;
    this.call("ListPodSandbox", () => "", (sandboxes) => {
      if ("err" in sandboxes) return this.relistFailed(action, generation, sandboxes.err);
      this.call("ListContainers", () => ((taken = this.inspect(this.runtime.snapshot(listedAtMs))), ""), (containers) => {
        if ("err" in containers) return this.relistFailed(action, generation, containers.err);
        if (generation !== this.host.generation()) return;
        const nowMs = this.host.now();
        if (this.faults.loseRelist(nowMs)) return;
        const deliver = () => {
          if (generation === this.host.generation()) this.host.onSnapshot(taken!);
        };
        deliver();
        const repeatAfterMs = this.faults.repeatRelist(nowMs);
        if (repeatAfterMs !== undefined) this.queue.push(nowMs + repeatAfterMs, "relist duplicate", deliver);
      });
    });
  }

  /**
   * As the host's relister: ContainerStatus for every container seen in a new state. One that
   * fails leaves the container listed without its details, and its pod uninspected, so the core
   * keeps that pod's previous view.
   */
  private inspect(taken: Snapshot): Snapshot {
    // Nothing changed since an inspection that read everything: nothing new to read.
    if (this.inspectedAt === this.runtime.changeCount) return taken;
    const failed = new Set<string>();
    const listed = new Set<string>();
    const nowMs = this.host.now();
    for (const c of this.runtime.containers.values()) {
      listed.add(c.id);
      if (c.state === "created" || this.inspected.get(c.id) === c.state) continue;
      const fault = this.faults.draw("ContainerStatus", nowMs);
      if (fault === "error" || fault === "timeout") failed.add(c.id);
      else this.inspected.set(c.id, c.state);
    }
    for (const id of this.inspected.keys()) if (!listed.has(id)) this.inspected.delete(id);
    this.inspectedAt = failed.size === 0 ? this.runtime.changeCount : -1;
    if (failed.size === 0) return taken;
    const blank = { exitCode: 0, reason: "", message: "", startedAtNs: 0n, finishedAtNs: 0n };
    const containers = taken.snapshot.containers.map((c) => (failed.has(c.id) ? { ...c, ...blank } : c));
    const uninspectedPodUids = [...new Set(taken.snapshot.containers.filter((c) => failed.has(c.id)).map((c) => c.podUid))].sort();
    const snapshot = { ...taken.snapshot, containers, uninspectedPodUids };
    return { snapshot, packed: packSnapshot(snapshot) };
  }

  private relistFailed(action: PlannedAction, generation: number, error: RuntimeError): void {
    if (generation !== this.host.generation()) return;
    this.host.onResult({ actionId: action.id, outcome: { tag: "err", val: { kind: "runtime", grpcCode: error.grpcCode, message: error.message } } });
  }
}

function tryEffect(effect: () => string): CallOutcome {
  try {
    return { ok: effect() };
  } catch (error) {
    if (error instanceof RuntimeError) return { err: error };
    throw error;
  }
}
