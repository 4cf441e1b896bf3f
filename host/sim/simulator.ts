// The deterministic simulator: the real core component against a simulated node (SimRuntime),
// a simulated pod source (the scenario's manifests) and a virtual clock that jumps from event to
// event. Every random choice comes from one seed. The host side here mirrors what AgentLoop and
// Executor do on a real node: at most 8 runtime calls at a time, ImageStatus before a create, the
// gRPC client's retries while the runtime restarts, one relist at a time.
import type { ActionResult, PlannedAction, PodSpec, PodStatus } from "../core-types.js";
import { Core, CoreAgent, CoreConfig, CoreTrapError } from "../core.js";
import { DEFAULT_ACTION_CONCURRENCY } from "../executor.js";
import { GrpcCode, RETRY_POLICY, RuntimeError } from "../cri/runtime.js";
import { ManifestError, podFromManifest } from "../sources/manifest.js";
import { packSnapshot } from "../relist-packing.js";
import { RecordingCore, TraceSink, TraceWriter } from "../trace/recording-core.js";
import { DurationRange } from "./duration.js";
import { EventQueue, SimEvent } from "./event-queue.js";
import { Invariants, Violation } from "./invariants.js";
import { Prng } from "./prng.js";
import { CallFault, ContainerBehaviour, CriCall, Expectation, Scenario, ScenarioPod } from "./scenario.js";
import { SimContainer, SimRuntime } from "./sim-runtime.js";

/** Virtual time 0 of every run: 2026-01-01T00:00:00Z, so traces show plausible dates. */
export const SIM_EPOCH_MS = Date.UTC(2026, 0, 1);
/** Must match the core's RELIST_ANSWER_TIMEOUT_MS: a lost relist is asked again after this. */
const RELIST_ANSWER_TIMEOUT_MS = 30_000;
const DEFAULT_GRACE_SECONDS = 30;

export interface SimOptions {
  scenario: Scenario;
  seed: number;
  /** Receives the trace, one JSON line at a time. */
  trace?: TraceSink;
  /** Stop at the first broken invariant (default true). */
  stopOnViolation?: boolean;
  /** Makes the core; tests wrap it to prove the invariants catch a broken core. */
  createCore?: (config: CoreConfig) => Promise<Core>;
}

export interface FailedExpectation {
  text: string;
  atMs: number;
  detail: string;
}

export interface SimStats {
  coreCalls: number;
  runtimeCalls: number;
  relists: number;
  containerStarts: number;
  restarts: number;
  faultsInjected: number;
  agentRestarts: number;
  runtimeRestarts: number;
  statusUpdates: number;
}

export interface SimReport {
  seed: number;
  scenario: string;
  file: string;
  ok: boolean;
  violations: Violation[];
  failedExpectations: FailedExpectation[];
  /** Pods the core refused, with its reason. */
  refused: string[];
  simulatedMs: number;
  wallMs: number;
  stats: SimStats;
}

interface DesiredPod {
  key: string;
  source: ScenarioPod;
  spec?: PodSpec;
  /** Manifest problem, when podFromManifest refused it. */
  problem?: string;
  deleted: boolean;
  changedAtMs: number;
}

interface PodInfo {
  key: string;
  restartPolicy: string;
  behaviour: Record<string, ContainerBehaviour>;
}

interface Deletion {
  uid: string;
  key: string;
  deletedAtMs: number;
  deadlineMs: number;
}

type CallOutcome = { ok: string } | { err: RuntimeError };

interface ActiveFault {
  fault: CallFault;
  untilMs: number;
}

/** Lowercase WIT phase names for the Kubernetes ones scenario files use. */
function phaseName(kubernetesPhase: string): string {
  return kubernetesPhase.toLowerCase();
}

export class Simulator {
  private readonly scenario: Scenario;
  private readonly queue = new EventQueue();
  private readonly runtime: SimRuntime;
  private readonly invariants: Invariants;
  private readonly trace?: TraceWriter;
  private readonly latencyRng: Prng;
  private readonly faultRng: Prng;
  private readonly behaviourRng: Prng;
  private readonly relistRng: Prng;
  private readonly config: CoreConfig;
  private endMs: number;

  private nowMs = SIM_EPOCH_MS;
  private core: Core | undefined;
  /** Bumped on each agent restart: answers to a dead agent's calls are dropped. */
  private generation = 0;
  private inFlight = 0;
  /** Runtime actions waiting for one of the executor's slots, with when the core decided them. */
  private waiting: { action: PlannedAction; decidedAtMs: number }[] = [];
  private pendingResults: ActionResult[] = [];
  private needPump = false;
  /** The pending wake-up at the core's deadline (a suspend moves it with every other event). */
  private wakeEvent: SimEvent | undefined;
  private stopped = false;

  private readonly desired: DesiredPod[] = [];
  private readonly podInfo = new Map<string, PodInfo>();
  private readonly statuses = new Map<string, PodStatus>();
  private readonly everDesiredUids = new Set<string>();
  private readonly removedUids = new Set<string>();
  private readonly deletions = new Map<string, Deletion>();
  private refused: string[] = [];

  private faults: ActiveFault[] = [];
  /** State per container ID the host's relister last read with ContainerStatus (per agent process). */
  private inspected = new Map<string, string>();
  private relistFault = { lose: 0, duplicate: 0, untilMs: 0 };
  private runtimeDownUntilMs = 0;
  /** Last time anything was done to the node that may delay the core (a fault, a restart). */
  private lastDisturbanceMs = -Infinity;

  private byExpectations: Expectation[] = [];
  private readonly failedExpectations: FailedExpectation[] = [];
  private readonly stats: SimStats = {
    coreCalls: 0,
    runtimeCalls: 0,
    relists: 0,
    containerStarts: 0,
    restarts: 0,
    faultsInjected: 0,
    agentRestarts: 0,
    runtimeRestarts: 0,
    statusUpdates: 0,
  };

  constructor(private options: SimOptions) {
    this.scenario = options.scenario;
    const rng = new Prng(options.seed);
    this.latencyRng = rng.fork("latency");
    this.faultRng = rng.fork("faults");
    this.behaviourRng = rng.fork("behaviour");
    this.relistRng = rng.fork("relist");
    this.runtime = new SimRuntime(rng.fork("ids"));
    const s = this.scenario;
    this.config = {
      nodeName: s.nodeName,
      relistPeriodMs: s.relistPeriodMs,
      backoffInitialMs: s.backoffInitialMs,
      backoffMaxMs: s.backoffMaxMs,
      workerErrorBackoffMs: s.workerErrorBackoffMs,
    };
    this.invariants = new Invariants({
      backoffInitialMs: s.backoffInitialMs,
      backoffMaxMs: s.backoffMaxMs,
      latencySlackMs: 10 * this.maxLatencyMs(),
    });
    this.endMs = SIM_EPOCH_MS + s.durationMs;
    if (options.trace) this.trace = new TraceWriter(options.trace);
    for (const image of s.missingImages) this.runtime.missingImages.add(image);
  }

  /** Runs the scenario to its end (or the first broken invariant) and reports. */
  static async run(options: SimOptions): Promise<SimReport> {
    return new Simulator(options).run();
  }

  async run(): Promise<SimReport> {
    const started = performance.now();
    const s = this.scenario;
    this.trace?.header(this.nowMs, { seed: this.options.seed, scenario: s.name, file: s.file });
    for (const pod of s.pods) this.desired.push({ key: pod.key, source: pod, deleted: false, changedAtMs: this.nowMs });
    this.preloadImages();
    for (const entry of s.timeline) this.queue.push(SIM_EPOCH_MS + entry.atMs, entry.action.type, () => this.apply(entry.action));
    for (const e of s.expect) {
      if (e.atMs !== undefined) this.queue.push(SIM_EPOCH_MS + e.atMs, "expect", () => this.checkAt(e));
      else {
        this.byExpectations.push(e);
        this.queue.push(SIM_EPOCH_MS + e.byMs!, "expect by", () => this.checkDeadline(e));
      }
    }
    await this.startCore();
    this.pump();

    while (!this.stopped) {
      const next = this.queue.peekMs();
      if (next === undefined || next > this.endMs) break;
      const event = this.queue.pop()!;
      this.nowMs = event.atMs;
      const pending = event.run();
      if (pending) await pending;
      if (this.queue.peekMs() !== this.nowMs) {
        if (this.needPump) this.pump();
        if (this.byExpectations.length > 0) this.checkBy();
      }
      if (this.options.stopOnViolation !== false && this.invariants.violations.length > 0) this.stopped = true;
    }
    if (!this.stopped) this.finish();
    const violations = this.invariants.violations;
    return {
      seed: this.options.seed,
      scenario: s.name,
      file: s.file,
      ok: violations.length === 0 && this.failedExpectations.length === 0,
      violations,
      failedExpectations: this.failedExpectations,
      refused: this.refused,
      simulatedMs: this.nowMs - SIM_EPOCH_MS,
      wallMs: performance.now() - started,
      stats: { ...this.stats, restarts: this.invariants.restartsSeen },
    };
  }

  // --- the core -----------------------------------------------------------------------------

  private async startCore(): Promise<void> {
    const inner = await (this.options.createCore ?? CoreAgent.create)(this.config);
    this.core = this.trace ? RecordingCore.wrap(inner, this.trace, this.nowMs, this.config) : inner;
    this.sendPods();
  }

  /** Runs one call into the core; a trap is a broken invariant and ends the run. */
  private call<T>(fn: (core: Core) => T): T | undefined {
    if (!this.core || this.stopped) return undefined;
    this.stats.coreCalls++;
    try {
      return fn(this.core);
    } catch (error) {
      if (!(error instanceof CoreTrapError)) throw error;
      this.invariants.trap(this.nowMs, `core trapped in ${error.call}: ${error.reason}`);
      this.core = undefined;
      this.stopped = true;
      return undefined;
    }
  }

  /** As the agent loop's pump: results in, actions out, then sleep until the core's deadline. */
  private pump(): void {
    this.needPump = false;
    for (let round = 0; round < 100 && this.core; round++) {
      if (this.pendingResults.length > 0) {
        const results = this.pendingResults;
        this.pendingResults = [];
        this.call((core) => core.handleActionResults(this.nowMs, results));
      }
      const actions = this.call((core) => core.pollActions(this.nowMs)) ?? [];
      for (const action of actions) this.dispatch(action);
      const deadline = this.call((core) => core.pollDeadline());
      if (deadline === undefined) return;
      if (deadline > this.nowMs) {
        this.wakeAt(deadline);
        return;
      }
      if (actions.length === 0 && this.pendingResults.length === 0) {
        this.wakeAt(this.nowMs + 1); // due now but nothing to do: look again a moment later
        return;
      }
    }
  }

  private wakeAt(atMs: number): void {
    const current = this.wakeEvent;
    if (current !== undefined && current.atMs > this.nowMs && current.atMs <= atMs) return;
    const event: SimEvent = this.queue.push(atMs, "wake", () => {
      if (this.wakeEvent !== event) return; // superseded by an earlier wake
      this.wakeEvent = undefined;
      this.needPump = true;
    });
    this.wakeEvent = event;
  }

  private sendPods(): void {
    const specs: PodSpec[] = [];
    const keys: string[] = [];
    for (const d of this.desired) {
      if (d.deleted || !d.spec) continue;
      specs.push(d.spec);
      keys.push(d.key);
    }
    const rejections = this.call((core) => core.handlePods(this.nowMs, specs)) ?? [];
    this.refused = this.desired.filter((d) => d.problem && !d.deleted).map((d) => `${d.key}: ${d.problem}`);
    for (const r of rejections) this.refused.push(`${keys[r.index]}: ${r.field}: ${r.message}`);
    this.needPump = true;
  }

  private dispatch(action: PlannedAction): void {
    const kind = action.kind;
    switch (kind.tag) {
      case "relist":
        this.relist(action);
        return;
      case "pod-status-changed":
        this.stats.statusUpdates++;
        this.statuses.set(action.podUid, kind.val);
        this.invariants.onPhase(action.podUid, kind.val.phase, this.nowMs);
        return;
      case "pod-event":
      case "remove-pod-cgroup":
        return; // no log or cgroup file system in the simulation
      default:
        if (this.inFlight < DEFAULT_ACTION_CONCURRENCY) this.execute(action, this.generation, this.nowMs);
        else this.waiting.push({ action, decidedAtMs: this.nowMs });
    }
  }

  // --- the host's executor, against the simulated runtime -------------------------------------

  private execute(action: PlannedAction, generation: number, decidedAtMs: number): void {
    this.inFlight++;
    const done = (outcome: CallOutcome) => {
      if (generation !== this.generation) return; // the agent that asked is gone
      this.inFlight--;
      const next = this.waiting.shift();
      if (next) this.execute(next.action, generation, next.decidedAtMs);
      let result: ActionResult;
      if ("ok" in outcome) result = { actionId: action.id, outcome: { tag: "ok", val: outcome.ok } };
      else {
        const e = outcome.err;
        const errorKind = e.call === "PullImage" ? "image-pull" : e.grpcCode === GrpcCode.DEADLINE_EXCEEDED ? "timeout" : "runtime";
        result = { actionId: action.id, outcome: { tag: "err", val: { kind: errorKind, grpcCode: e.grpcCode, message: e.message } } };
      }
      this.pendingResults.push(result);
      this.needPump = true;
    };
    const rt = this.runtime;
    const kind = action.kind;
    switch (kind.tag) {
      case "run-sandbox":
        this.criCall("RunPodSandbox", () => rt.runPodSandbox(kind.val, this.nowMs), done);
        return;
      case "stop-sandbox":
        this.criCall("StopPodSandbox", () => (rt.stopPodSandbox(kind.val, this.nowMs), ""), done);
        return;
      case "remove-sandbox":
        this.criCall("RemovePodSandbox", () => (rt.removePodSandbox(kind.val), ""), done);
        return;
      case "create-container": {
        const create = kind.val;
        const image = create.container.image;
        const createIt = () =>
          this.criCall(
            "CreateContainer",
            () => {
              const id = rt.createContainer(create, this.nowMs);
              // A create that lands after its agent died: that agent's back-off memory died too.
              if (generation === this.generation) this.invariants.onCreate(rt, rt.containers.get(id)!, this.podInfo.get(create.sandbox.podUid)?.restartPolicy ?? "Always", decidedAtMs);
              return id;
            },
            done,
          );
        this.criCall("ImageStatus", () => (rt.hasImage(image) ? "present" : ""), (status) => {
          if ("err" in status) return done(status);
          if (status.ok === "present") return createIt();
          this.criCall("PullImage", () => (rt.pullImage(image), ""), (pulled) => ("err" in pulled ? done(pulled) : createIt()));
        });
        return;
      }
      case "start-container":
        this.criCall("StartContainer", () => (this.startContainer(kind.val.containerId), ""), done);
        return;
      case "stop-container":
        this.stopContainer(kind.val.containerId, Number(kind.val.timeoutSeconds), done);
        return;
      case "remove-container":
        this.criCall("RemoveContainer", () => (rt.removeContainer(kind.val.containerId), ""), done);
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
  private criCall(call: CriCall, effect: () => string, done: (outcome: CallOutcome) => void, extraMs = 0): void {
    const issuedAtMs = this.nowMs;
    const generation = this.generation;
    let delayMs: number = RETRY_POLICY.firstDelayMs;
    const attempt = () => {
      // A call the runtime has not received yet dies with the agent process that made it.
      if (generation !== this.generation) return;
      this.stats.runtimeCalls++;
      if (this.nowMs < this.runtimeDownUntilMs) {
        if (this.nowMs - issuedAtMs + delayMs < RETRY_POLICY.budgetMs) {
          this.queue.push(this.nowMs + delayMs, `retry ${call}`, attempt);
          delayMs = Math.min(delayMs * 2, RETRY_POLICY.maxDelayMs);
          return;
        }
        return done({ err: new RuntimeError(`${call}: connection refused`, GrpcCode.UNAVAILABLE, call) });
      }
      let latencyMs = this.latency(call) + extraMs;
      const fault = this.drawFault(call);
      if (fault === "slow") latencyMs *= 10;
      if (fault === "error") {
        this.queue.push(this.nowMs + latencyMs, `${call} error`, () => done({ err: new RuntimeError(`${call}: injected failure`, GrpcCode.UNKNOWN, call) }));
        return;
      }
      const timeoutMs = this.scenario.criTimeoutMs + extraMs;
      if (fault === "timeout") {
        // The runtime may still do it, late: the host has given up by then.
        if (this.faultRng.chance(0.5)) this.queue.push(this.nowMs + Math.min(latencyMs, timeoutMs - 1), `${call} late effect`, () => void this.tryEffect(effect));
        this.queue.push(this.nowMs + timeoutMs, `${call} timeout`, () => done({ err: new RuntimeError(`${call}: context deadline exceeded`, GrpcCode.DEADLINE_EXCEEDED, call) }));
        return;
      }
      this.queue.push(this.nowMs + Math.min(latencyMs, timeoutMs), call, () => {
        if (this.nowMs < this.runtimeDownUntilMs) {
          // The runtime went down during the call: it may or may not have done it.
          if (this.faultRng.chance(0.5)) this.tryEffect(effect);
          attempt();
          return;
        }
        done(this.tryEffect(effect));
      });
    };
    attempt();
  }

  private tryEffect(effect: () => string): CallOutcome {
    try {
      return { ok: effect() };
    } catch (error) {
      if (error instanceof RuntimeError) return { err: error };
      throw error;
    }
  }

  private startContainer(id: string): void {
    const c = this.runtime.startContainer(id, this.nowMs);
    this.stats.containerStarts++;
    const info = this.podInfo.get(c.podUid);
    this.invariants.onStart(this.runtime, c, this.nowMs);
    const behaviour = info?.behaviour[c.name];
    if (behaviour?.exitAfter) {
      const run = c.runNumber;
      const code = behaviour.exitCode;
      this.queue.push(this.nowMs + this.draw(this.behaviourRng, behaviour.exitAfter), "exit", () => {
        if (c.state !== "running" || c.runNumber !== run) return;
        this.runtime.exit(c, code, code === 0 ? "Completed" : "Error", this.nowMs);
        this.trace?.sim(this.nowMs, "exit", { container: c.id, name: c.name, pod: c.podUid, code });
      });
    }
  }

  /** StopContainer blocks until the process is gone: SIGTERM, then SIGKILL after the timeout. */
  private stopContainer(id: string, timeoutSeconds: number, done: (outcome: CallOutcome) => void): void {
    const c = this.runtime.containers.get(id);
    let stopMs = 0;
    let code = 143; // 128 + SIGTERM
    if (c && c.state === "running") {
      const behaviour = this.podInfo.get(c.podUid)?.behaviour[c.name];
      const graceMs = timeoutSeconds * 1000;
      const termMs = behaviour ? (behaviour.ignoreSigterm ? Infinity : this.draw(this.behaviourRng, behaviour.stopAfter)) : 10;
      if (termMs >= graceMs) {
        stopMs = graceMs;
        code = 137; // 128 + SIGKILL
      } else stopMs = termMs;
    }
    this.criCall(
      "StopContainer",
      () => {
        const now = this.runtime.mustGet(id, "StopContainer");
        this.runtime.exit(now, code, "Error", this.nowMs);
        return "";
      },
      done,
      stopMs,
    );
  }

  // --- relists ------------------------------------------------------------------------------

  private relist(action: PlannedAction): void {
    const generation = this.generation;
    const listedAtMs = this.nowMs;
    this.stats.relists++;
    let taken: ReturnType<SimRuntime["snapshot"]> | undefined;
    this.criCall("ListPodSandbox", () => "", (sandboxes) => {
      if ("err" in sandboxes) return this.relistFailed(action, generation, sandboxes.err);
      this.criCall("ListContainers", () => ((taken = this.inspect(this.runtime.snapshot(listedAtMs))), ""), (containers) => {
        if ("err" in containers) return this.relistFailed(action, generation, containers.err);
        if (generation !== this.generation) return;
        const lossy = this.nowMs < this.relistFault.untilMs;
        if (lossy && this.relistRng.chance(this.relistFault.lose)) {
          this.disturbed("relist-lost", {}, this.nowMs + RELIST_ANSWER_TIMEOUT_MS);
          return;
        }
        const deliver = () => {
          if (generation !== this.generation) return;
          this.call((core) => core.handleSnapshot(this.nowMs, taken!.snapshot, taken!.packed));
          this.needPump = true;
        };
        deliver();
        if (lossy && this.relistRng.chance(this.relistFault.duplicate)) {
          this.disturbed("relist-duplicated", {}, this.nowMs + 3 * this.scenario.relistPeriodMs);
          this.queue.push(this.nowMs + this.relistRng.int(1, 3 * this.scenario.relistPeriodMs), "relist duplicate", deliver);
        }
      });
    });
  }

  /**
   * As the host's relister: ContainerStatus for every container seen in a new state. One that
   * fails leaves the container listed without its details, and its pod uninspected, so the core
   * keeps that pod's previous view.
   */
  private inspect(taken: ReturnType<SimRuntime["snapshot"]>): ReturnType<SimRuntime["snapshot"]> {
    const failed = new Set<string>();
    const listed = new Set<string>();
    for (const c of this.runtime.containers.values()) {
      listed.add(c.id);
      if (c.state === "created" || this.inspected.get(c.id) === c.state) continue;
      const fault = this.drawFault("ContainerStatus");
      if (fault === "error" || fault === "timeout") failed.add(c.id);
      else this.inspected.set(c.id, c.state);
    }
    for (const id of this.inspected.keys()) if (!listed.has(id)) this.inspected.delete(id);
    if (failed.size === 0) return taken;
    const blank = { exitCode: 0, reason: "", message: "", startedAtNs: 0n, finishedAtNs: 0n };
    const containers = taken.snapshot.containers.map((c) => (failed.has(c.id) ? { ...c, ...blank } : c));
    const uninspectedPodUids = [...new Set(taken.snapshot.containers.filter((c) => failed.has(c.id)).map((c) => c.podUid))].sort();
    const snapshot = { ...taken.snapshot, containers, uninspectedPodUids };
    return { snapshot, packed: packSnapshot(snapshot) };
  }

  private relistFailed(action: PlannedAction, generation: number, error: RuntimeError): void {
    if (generation !== this.generation) return;
    this.pendingResults.push({ actionId: action.id, outcome: { tag: "err", val: { kind: "runtime", grpcCode: error.grpcCode, message: error.message } } });
    this.needPump = true;
  }

  // --- randomness ---------------------------------------------------------------------------

  private draw(rng: Prng, range: DurationRange): number {
    return range.minMs === range.maxMs ? range.minMs : rng.int(range.minMs, range.maxMs);
  }

  private latency(call: CriCall): number {
    const range = this.scenario.latency[call] ?? this.scenario.latency.default;
    return Math.max(1, this.draw(this.latencyRng, range));
  }

  private maxLatencyMs(): number {
    return Math.max(...Object.entries(this.scenario.latency).filter(([k]) => k !== "PullImage").map(([, r]) => r.maxMs), 1);
  }

  private drawFault(call: CriCall): "error" | "timeout" | "slow" | undefined {
    if (this.faults.length === 0) return undefined;
    this.faults = this.faults.filter((f) => f.untilMs > this.nowMs);
    for (const { fault } of this.faults) {
      if (fault.call !== "*" && fault.call !== call) continue;
      const roll = this.faultRng.float();
      let kind: "error" | "timeout" | "slow" | undefined;
      if (roll < fault.error) kind = "error";
      else if (roll < fault.error + fault.timeout) kind = "timeout";
      else if (roll < fault.error + fault.timeout + fault.slow) kind = "slow";
      if (kind) {
        this.stats.faultsInjected++;
        // A failed call is retried after the worker back-off; a timed-out one only after its deadline.
        const s = this.scenario;
        const lastsMs = kind === "timeout" ? s.criTimeoutMs + s.workerErrorBackoffMs : kind === "error" ? s.workerErrorBackoffMs : 0;
        this.disturbed("fault", { call, kind }, this.nowMs + lastsMs + 10 * this.maxLatencyMs());
        return kind;
      }
    }
    return undefined;
  }

  /** Records a disturbance whose effects on the core may last until `untilMs`. */
  private disturbed(event: string, fields: Record<string, unknown>, untilMs = this.nowMs): void {
    this.lastDisturbanceMs = Math.max(this.lastDisturbanceMs, untilMs);
    this.trace?.sim(this.nowMs, event, fields);
  }

  // --- the timeline -------------------------------------------------------------------------

  private async apply(action: Scenario["timeline"][number]["action"]): Promise<void> {
    switch (action.type) {
      case "exit": {
        const uid = this.uidOf(action.pod);
        const running = uid ? this.runtime.runningNamed(uid, action.container) : [];
        this.trace?.sim(this.nowMs, "exit", { pod: action.pod, name: action.container, code: action.code, found: running.length });
        for (const c of running) this.runtime.exit(c, action.code, action.code === 0 ? "Completed" : "Error", this.nowMs);
        return;
      }
      case "fault":
        this.faults.push({ fault: action.fault, untilMs: this.nowMs + action.fault.forMs });
        this.disturbed("fault-window", { ...action.fault });
        return;
      case "relistFault":
        this.relistFault = { lose: action.lose, duplicate: action.duplicate, untilMs: this.nowMs + action.forMs };
        this.disturbed("relist-fault-window", { lose: action.lose, duplicate: action.duplicate, forMs: action.forMs });
        return;
      case "runtimeRestart":
        this.stats.runtimeRestarts++;
        this.runtimeDownUntilMs = this.nowMs + action.downMs;
        this.disturbed("runtime-restart", { downMs: action.downMs });
        this.queue.push(this.runtimeDownUntilMs, "runtime up", () => this.disturbed("runtime-up", {}));
        return;
      case "agentRestart":
        this.stats.agentRestarts++;
        this.disturbed("agent-restart", { downMs: action.downMs }, this.nowMs + action.downMs);
        // The process dies: its queue, its calls' answers and its core's memory go with it.
        this.core = undefined;
        this.invariants.onAgentRestart();
        this.inspected.clear();
        const generation = ++this.generation;
        this.inFlight = 0;
        this.waiting = [];
        this.pendingResults = [];
        this.wakeEvent = undefined;
        this.queue.push(this.nowMs + Math.max(1, action.downMs), "agent start", async () => {
          if (generation !== this.generation) return; // restarted again while down: that start wins
          this.disturbed("agent-start", {});
          await this.startCore();
        });
        return;
      case "add":
      case "update": {
        const existing = this.desired.find((d) => d.key === action.pod.key);
        if (existing && !existing.deleted && existing.spec) this.forget(existing);
        if (existing) {
          existing.source = action.pod;
          existing.deleted = false;
          existing.spec = undefined;
          existing.changedAtMs = this.nowMs;
          this.preparePod(existing);
        } else {
          const d: DesiredPod = { key: action.pod.key, source: action.pod, deleted: false, changedAtMs: this.nowMs };
          this.desired.push(d);
          this.preparePod(d);
        }
        this.trace?.sim(this.nowMs, action.type, { pod: action.pod.key });
        this.sendPods();
        return;
      }
      case "delete": {
        const d = this.desired.find((x) => x.key === action.pod && !x.deleted);
        this.trace?.sim(this.nowMs, "delete", { pod: action.pod });
        if (!d) return;
        this.forget(d);
        d.deleted = true;
        d.changedAtMs = this.nowMs;
        this.sendPods();
        return;
      }
      case "suspend":
        // The whole node sleeps: nothing happens, then every clock has jumped.
        this.trace?.sim(this.nowMs, "suspend", { forMs: action.forMs });
        this.queue.shift(action.forMs);
        for (const f of this.faults) f.untilMs += action.forMs;
        this.relistFault.untilMs += action.forMs;
        if (this.runtimeDownUntilMs > this.nowMs) this.runtimeDownUntilMs += action.forMs;
        for (const d of this.deletions.values()) d.deadlineMs += action.forMs;
        if (this.lastDisturbanceMs > this.nowMs) this.lastDisturbanceMs += action.forMs; // its effects resume too
        this.endMs += action.forMs; // the scenario's events all still happen
        return;
    }
  }

  /** The pod's spec as the static pod source makes it, or the reason it cannot be one. */
  private preparePod(d: DesiredPod): void {
    try {
      d.spec = podFromManifest(d.source.manifest, { nodeName: this.scenario.nodeName, source: this.scenario.file, documentIndex: this.desired.indexOf(d) });
      d.problem = undefined;
    } catch (error) {
      if (!(error instanceof ManifestError)) throw error;
      d.spec = undefined;
      d.problem = `${error.field}: ${error.message}`;
      return;
    }
    const uid = d.spec.uid;
    if (this.removedUids.has(uid)) {
      this.invariants.onReadded(uid);
      this.removedUids.delete(uid);
      this.deletions.delete(uid);
    }
    this.everDesiredUids.add(uid);
    this.podInfo.set(uid, { key: d.key, restartPolicy: d.spec.restartPolicy, behaviour: d.source.behaviour });
  }

  /** The pod leaves the desired set (deleted, or replaced by an edit): its deadline starts. */
  private forget(d: DesiredPod): void {
    if (!d.spec) return;
    const uid = d.spec.uid;
    const graceMs = Number(d.spec.terminationGracePeriodSeconds ?? BigInt(DEFAULT_GRACE_SECONDS)) * 1000;
    // The core cannot cancel a call in flight (an image pull can take seconds): termination
    // starts when it returns. So the bound is the grace period, one relist, the longest call and
    // the few calls of the clean-up.
    const longestCallMs = Math.max(...Object.values(this.scenario.latency).map((r) => r.maxMs));
    const deadlineMs = this.nowMs + graceMs + this.scenario.relistPeriodMs + longestCallMs + 10 * this.maxLatencyMs();
    const deletion: Deletion = { uid, key: d.key, deletedAtMs: this.nowMs, deadlineMs };
    this.removedUids.add(uid);
    this.deletions.set(uid, deletion);
    this.scheduleGoneCheck(deletion);
  }

  private scheduleGoneCheck(deletion: Deletion): void {
    this.queue.push(deletion.deadlineMs, "gone check", () => {
      if (this.deletions.get(deletion.uid) !== deletion) return; // re-added since
      if (this.calmSinceMs() >= deletion.deletedAtMs) {
        // Faults or restarts may rightly delay the clean-up: look again once they have passed.
        deletion.deletedAtMs = this.nowMs;
        deletion.deadlineMs = this.nowMs + this.settleMs();
        this.scheduleGoneCheck(deletion);
        return;
      }
      this.invariants.checkGone(this.runtime, deletion.uid, deletion.key, deletion.deletedAtMs, this.nowMs);
      this.deletions.delete(deletion.uid);
    });
  }

  /** When the node last stopped being disturbed (a restart in progress counts until it ends). */
  private calmSinceMs(): number {
    return Math.max(this.lastDisturbanceMs, this.runtimeDownUntilMs);
  }

  /** How long after the last disturbance the core must have caught up. */
  private settleMs(): number {
    const s = this.scenario;
    return s.criTimeoutMs + RELIST_ANSWER_TIMEOUT_MS + RETRY_POLICY.budgetMs + s.workerErrorBackoffMs + 2 * s.relistPeriodMs + 10 * this.maxLatencyMs();
  }

  private uidOf(key: string): string | undefined {
    return this.desired.find((d) => d.key === key)?.spec?.uid;
  }

  private preloadImages(): void {
    const s = this.scenario;
    for (const d of this.desired) this.preparePod(d);
    if (s.preloadedImages !== "all") {
      for (const image of s.preloadedImages) this.runtime.images.add(image);
      return;
    }
    const all = [...s.pods, ...s.timeline.flatMap((e) => (e.action.type === "add" || e.action.type === "update" ? [e.action.pod] : []))];
    for (const pod of all) {
      const containers = (pod.manifest.spec as { containers?: { image?: unknown }[] } | undefined)?.containers ?? [];
      for (const c of containers) if (typeof c.image === "string" && !s.missingImages.includes(c.image)) this.runtime.images.add(c.image);
    }
  }

  // --- expectations and the end of the run --------------------------------------------------

  private evaluate(e: Expectation): string | undefined {
    const uid = this.uidOf(e.pod) ?? this.desired.find((d) => d.key === e.pod)?.spec?.uid;
    if (!uid) return `pod ${e.pod} has no spec`;
    const problems: string[] = [];
    const status = this.statuses.get(uid);
    if (e.phase !== undefined && status?.phase !== phaseName(e.phase)) problems.push(`phase is ${status?.phase ?? "unpublished"}, want ${e.phase}`);
    const statusOf = (name: string) => status?.containerStatuses.find((c) => c.name === name);
    for (const [name, n] of Object.entries(e.restarts ?? {})) {
      const got = statusOf(name)?.restartCount;
      if (got !== n) problems.push(`restarts of ${name} are ${got ?? "unknown"}, want ${n}`);
    }
    for (const [name, n] of Object.entries(e.minRestarts ?? {})) {
      const got = statusOf(name)?.restartCount ?? 0;
      if (got < n) problems.push(`restarts of ${name} are ${got}, want at least ${n}`);
    }
    for (const [name, reason] of Object.entries(e.reason ?? {})) {
      const got = statusOf(name)?.reason ?? "";
      if (got !== reason) problems.push(`reason of ${name} is "${got}", want "${reason}"`);
    }
    for (const name of e.running ?? []) if (this.runtime.runningNamed(uid, name).length === 0) problems.push(`${name} is not running`);
    for (const name of e.notRunning ?? []) if (this.runtime.runningNamed(uid, name).length > 0) problems.push(`${name} is running`);
    if (e.gone !== undefined) {
      const left = [...this.runtime.sandboxes.values()].filter((s) => s.podUid === uid).length + [...this.runtime.containers.values()].filter((c) => c.podUid === uid).length;
      if (e.gone && left > 0) problems.push(`${left} sandbox(es) and container(s) are left`);
      if (!e.gone && left === 0) problems.push("nothing of it is left");
    }
    return problems.length > 0 ? problems.join("; ") : undefined;
  }

  private checkAt(e: Expectation): void {
    const problem = this.evaluate(e);
    if (problem) this.failedExpectations.push({ text: e.text, atMs: this.nowMs - SIM_EPOCH_MS, detail: problem });
    this.trace?.sim(this.nowMs, "expect", { expectation: e.text, ok: !problem, detail: problem });
  }

  /** A `by` expectation's time has come: met now, or it failed. */
  private checkDeadline(e: Expectation): void {
    if (!this.byExpectations.includes(e)) return; // met earlier
    this.byExpectations = this.byExpectations.filter((x) => x !== e);
    const problem = this.evaluate(e);
    if (problem) this.failedExpectations.push({ text: e.text, atMs: this.nowMs - SIM_EPOCH_MS, detail: problem });
    this.trace?.sim(this.nowMs, "expect", { expectation: e.text, ok: !problem, detail: problem });
  }

  private checkBy(): void {
    this.byExpectations = this.byExpectations.filter((e) => {
      if (this.evaluate(e) === undefined) {
        this.trace?.sim(this.nowMs, "expect", { expectation: e.text, ok: true });
        return false;
      }
      return true;
    });
  }

  private finish(): void {
    this.nowMs = Math.max(this.nowMs, this.endMs);
    for (const e of this.byExpectations) {
      this.failedExpectations.push({ text: e.text, atMs: this.nowMs - SIM_EPOCH_MS, detail: this.evaluate(e) ?? "met only after its time" });
    }
    // Every desired pod must have reached running or an end, if the run was calm for long enough.
    const calmSince = Math.max(this.calmSinceMs(), SIM_EPOCH_MS);
    if (this.nowMs - calmSince < this.settleMs()) return;
    for (const d of this.desired) {
      if (d.deleted || !d.spec || this.nowMs - d.changedAtMs < this.settleMs()) continue;
      if (this.refused.some((r) => r.startsWith(`${d.key}:`))) continue;
      if (d.spec.containers.some((c) => this.runtime.missingImages.has(c.image))) continue; // can never run
      this.invariants.checkSettled(d.key, d.spec.uid, this.statuses.get(d.spec.uid)?.phase, this.nowMs);
    }
  }

  /** For tests: what the simulated runtime holds now. */
  get node(): SimRuntime {
    return this.runtime;
  }
}

export type { SimContainer };
