// The deterministic simulator: the real core component against a simulated node (SimRuntime, and
// SimCri for the host's side of the CRI), a simulated pod source (the scenario's manifests) and a
// virtual clock that jumps from event to event. Every random choice comes from one seed. This
// file drives the core as the agent loop does and plays the scenario's timeline; the parts live
// beside it: sim-timeline.ts (the scenario's timeline), faults.ts, pod-source.ts, sim-host-work.ts
// (volumes, probes), sim-memory.ts (stats and evictions), expectation-book.ts, invariants.ts.
import { SimImages } from "./sim-images.js";
import type { ActionResult, NodePressure, PlannedAction, PodStatus, ProbeResult } from "../core/types.js";
import { SimHostWork } from "./sim-host-work.js";
import { SimDeletions } from "./sim-deletions.js";
import { preloadImages } from "./sim-runtime.js";
import { playTimelineAction, type TimelineContext } from "./sim-timeline.js";
import { SimMemory } from "./sim-memory.js";
import { ExpectationBook } from "./expectation-book.js";
import { SIM_EPOCH_MS, type SimOptions, type SimReport } from "./sim-report.js";
import { Core, CoreAgent, CoreConfig, CoreTrapError } from "../core/core.js";
import { RETRY_POLICY } from "../cri/runtime.js";
import { RecordingCore, TraceWriter } from "../trace/recording-core.js";
import { SimRuntimeEvents } from "./sim-events.js";
import { EventQueue, SimEvent } from "./event-queue.js";
import { Faults, RELIST_ANSWER_TIMEOUT_MS } from "./faults.js";
import { Invariants } from "./invariants.js";
import { SimPodSource } from "./pod-source.js";
import { Prng } from "./prng.js";
import { Scenario, coreConfigOf } from "./scenario.js";
import { SimHardware } from "./sim-hardware.js";
import { SimCri, Snapshot } from "./sim-cri.js";
import { ProbeInvariants } from "./probe-invariants.js";
import { SimRuntime } from "./sim-runtime.js";
import { SimApiserver } from "./sim-apiserver.js";
import { UpdateInvariants } from "./update-invariants.js";

export { SIM_EPOCH_MS } from "./sim-report.js";
export type { FailedExpectation, SimOptions, SimReport, SimStats } from "./sim-report.js";

export class Simulator {
  private readonly scenario: Scenario;
  private readonly queue = new EventQueue();
  private readonly runtime: SimRuntime;
  private readonly invariants: Invariants;
  private readonly faults: Faults;
  private readonly cri: SimCri;
  private readonly pods: SimPodSource;
  /** The apiserver's copy of each pod's status (apiserver source), and the update rule. */
  private readonly apiserver: SimApiserver;
  private readonly updates: UpdateInvariants;
  private readonly trace?: TraceWriter;
  private readonly config: CoreConfig;
  private readonly maxLatencyMs: number;
  private endMs: number;

  private nowMs = SIM_EPOCH_MS;
  private core: Core | undefined;
  /** Bumped on each agent restart: answers to a dead agent's calls are dropped. */
  private generation = 0;
  /** logind announced a shutdown the core has not yet given up (cancelled): every stop is excused. */
  private nodeShuttingDown = false;
  /** Pods Failed in the agent's memory only: stopped or refused by a shutdown, or refused at admission. */
  private memoryOnlyFailures = new Set<string>();
  private pendingResults: ActionResult[] = [];
  private pendingProbeResults: ProbeResult[] = [];
  private probeInvariants: ProbeInvariants;
  /** Volume set-up and probes, as the host would do them. */
  private work: SimHostWork;
  private memory: SimMemory;
  /** The image filesystem and collector, when the scenario has one. */
  private images?: SimImages;
  private expectations: ExpectationBook;
  private deletions: SimDeletions;
  private needPump = false;
  /** The pending wake-up at the core's deadline (a suspend moves it with every other event). */
  private wakeEvent: SimEvent | undefined;
  private stopped = false;

  private readonly statuses = new Map<string, PodStatus>();
  private refused: string[] = [];
  private coreCalls = 0;
  private statusUpdates = 0;
  private agentRestarts = 0;
  private runtimeRestarts = 0;
  /** The pressure the core last announced. */
  pressure: NodePressure = { memory: false, disk: false, pid: false };
  private runtimeEvents: SimRuntimeEvents;
  /** The machine's CPUs and devices and the state files, when the scenario has hardware. */
  private hardware: SimHardware | undefined;

  constructor(private options: SimOptions) {
    const s = (this.scenario = options.scenario);
    const rng = new Prng(options.seed);
    this.runtime = new SimRuntime(rng.fork("ids"), s.listOrder === "shuffled" ? rng.fork("list-order") : undefined);
    for (const image of s.missingImages) this.runtime.missingImages.add(image);
    if (options.trace) this.trace = new TraceWriter(options.trace);
    this.config = coreConfigOf(s);
    this.maxLatencyMs = Math.max(...Object.entries(s.latency).filter(([k]) => k !== "PullImage").map(([, r]) => r.maxMs), 1);
    this.invariants = new Invariants({ backoffInitialMs: s.backoffInitialMs, backoffMaxMs: s.backoffMaxMs, latencySlackMs: 10 * this.maxLatencyMs });
    if (s.hardware) this.hardware = new SimHardware(s.hardware, this.invariants);
    this.faults = new Faults(s, rng.fork("faults"), rng.fork("relist"), this.maxLatencyMs, this.trace);
    const now = () => this.nowMs;
    this.pods = new SimPodSource(s, this.queue, this.runtime, this.invariants, this.faults, { now, settleMs: () => this.settleMs(), maxLatencyMs: this.maxLatencyMs });
    this.apiserver = new SimApiserver(this.runtime, this.invariants);
    this.updates = new UpdateInvariants(this.runtime, this.invariants);
    this.cri = new SimCri(
      {
        now,
        generation: () => this.generation,
        podInfo: (uid) => this.pods.podInfo(uid),
        onResult: (result) => {
          this.pendingResults.push(result);
          this.needPump = true;
        },
        onSnapshot: (taken: Snapshot) => {
          this.call((core) => core.handleSnapshot(this.nowMs, taken.snapshot, taken.packed));
          this.needPump = true;
        },
      },
      this.queue,
      this.runtime,
      s,
      this.faults,
      this.invariants,
      rng.fork("latency"),
      rng.fork("behaviour"),
      this.trace,
    );
    this.runtimeEvents = new SimRuntimeEvents(s.runtimeEvents, rng.fork("events"), this.queue, this.faults, {
      now,
      generation: () => this.generation,
      deliver: (fn) => {
        this.call(fn);
        this.needPump = true;
      },
    }, this.trace);
    this.runtime.onChange = (exit) => this.runtimeEvents.changed(exit);
    const probeRng = rng.fork("probes");
    const volumeRng = rng.fork("volumes");
    this.probeInvariants = new ProbeInvariants(this.invariants, (uid) => this.pods.isMarked(uid) || this.pods.keyOf(uid) === undefined);
    this.cri.probeInvariants = this.probeInvariants;
    const shared = { now, queue: this.queue, runtime: this.runtime, pods: this.pods, scenario: s, trace: this.trace };
    this.work = new SimHostWork({
      ...shared,
      generation: () => this.generation,
      probeInvariants: this.probeInvariants,
      onResult: (result) => {
        this.pendingResults.push(result);
        this.needPump = true;
      },
      onProbeResult: (result) => {
        this.pendingProbeResults.push(result);
        this.needPump = true;
      },
    }, probeRng, volumeRng);
    this.memory = new SimMemory({
      ...shared,
      invariants: this.invariants,
      faults: this.faults,
      statuses: this.statuses,
      refused: () => this.refused,
      coreUp: () => this.core !== undefined,
      call: (fn) => this.call(fn),
      askPump: () => (this.needPump = true),
      settleMs: () => this.settleMs(),
    });
    this.expectations = new ExpectationBook({ ...shared, statuses: this.statuses });
    if (s.imageGc) this.images = new SimImages({ ...shared, invariants: this.invariants, coreUp: () => this.core !== undefined, call: (fn) => this.call(fn) }, s.imageGc);
    this.deletions = new SimDeletions({
      ...shared, invariants: this.invariants, faults: this.faults, apiserver: this.apiserver, statuses: this.statuses,
      sendPods: () => this.sendPods(), settleMs: () => this.settleMs(),
    });
    this.endMs = SIM_EPOCH_MS + s.durationMs;
  }

  /** Runs the scenario to its end (or the first broken invariant) and reports. */
  static async run(options: SimOptions): Promise<SimReport> {
    return new Simulator(options).run();
  }

  async run(): Promise<SimReport> {
    const started = performance.now();
    const s = this.scenario;
    this.trace?.header(this.nowMs, { seed: this.options.seed, scenario: s.name, file: s.file });
    preloadImages(s, this.runtime);
    const timeline: TimelineContext = {
      now: () => this.nowMs, queue: this.queue, runtime: this.runtime, pods: this.pods, faults: this.faults, memory: this.memory, images: this.images,
      updates: this.updates, apiserver: this.apiserver, scenario: s, trace: this.trace,
      sendPods: () => this.sendPods(),
      restartAgent: (downMs) => this.restartAgent(downMs),
      restartRuntime: (downMs) => this.restartRuntime(downMs),
      deleteThroughApiserver: (pod, graceSeconds) => this.deletions.deleteThroughApiserver(pod, graceSeconds),
      extendEnd: (forMs) => (this.endMs += forMs),
      nodeShutdown: (active) => {
        if (active) this.nodeShuttingDown = true;
        this.call((core) => core.handleNodeShutdown?.(this.nowMs, active));
        this.needPump = true;
      },
    };
    for (const entry of s.timeline) this.queue.push(SIM_EPOCH_MS + entry.atMs, entry.action.type, () => playTimelineAction(timeline, entry.action));
    for (const e of s.expect) {
      if (e.atMs !== undefined) this.queue.push(SIM_EPOCH_MS + e.atMs, "expect", () => this.expectations.checkAt(e));
      else {
        this.expectations.byExpectations.push(e);
        this.queue.push(SIM_EPOCH_MS + e.byMs!, "expect by", () => this.expectations.checkDeadline(e));
      }
    }
    await this.startCore();
    if (s.memory) this.queue.push(SIM_EPOCH_MS + s.memory.intervalMs, "stats", () => this.memory.statsPass());
    if (this.images) this.queue.push(SIM_EPOCH_MS, "image-gc", () => this.images!.periodic());
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
        if (this.expectations.byExpectations.length > 0) this.expectations.checkBy();
      }
      if (this.options.stopOnViolation !== false && this.invariants.violations.length > 0) this.stopped = true;
    }
    if (!this.stopped) this.finish();
    const violations = this.invariants.violations;
    return {
      seed: this.options.seed,
      scenario: s.name,
      file: s.file,
      ok: violations.length === 0 && this.expectations.failed.length === 0,
      violations,
      failedExpectations: this.expectations.failed,
      refused: this.refused,
      simulatedMs: this.nowMs - SIM_EPOCH_MS,
      wallMs: performance.now() - started,
      stats: {
        coreCalls: this.coreCalls,
        ...this.cri.stats,
        restarts: this.invariants.restartsSeen,
        faultsInjected: this.faults.injected,
        agentRestarts: this.agentRestarts,
        runtimeRestarts: this.runtimeRestarts,
        statusUpdates: this.statusUpdates,
        statsPasses: this.memory.passes,
        evictions: this.invariants.evictions,
        runtimeEvents: this.runtimeEvents.delivered,
        runtimeEventsLost: this.runtimeEvents.lost,
        runtimeEventsDuplicated: this.runtimeEvents.duplicated,
        runtimeEventsLate: this.runtimeEvents.late,
      },
    };
  }

  // --- the core, driven as the agent loop drives it -----------------------------------------

  private async startCore(): Promise<void> {
    const inner = await (this.options.createCore ?? CoreAgent.create)(this.config);
    this.core = this.trace ? RecordingCore.wrap(inner, this.trace, this.nowMs, this.config) : inner;
    // The state files and the plugins' devices before the first pods, as the agent loop gives them.
    if (this.hardware) this.call((core) => this.hardware!.restoreInto(core, this.nowMs));
    this.sendPods();
    this.runtimeEvents.agentStarted();
  }

  /** Runs one call into the core; a trap is a broken invariant and ends the run. */
  private call<T>(fn: (core: Core) => T): T | undefined {
    if (!this.core || this.stopped) return undefined;
    this.coreCalls++;
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
      if (this.pendingProbeResults.length > 0) {
        const results = this.pendingProbeResults;
        this.pendingProbeResults = [];
        this.call((core) => core.handleProbeResults(this.nowMs, results));
      }
      const actions = this.call((core) => core.pollActions(this.nowMs)) ?? [];
      for (const action of actions) this.dispatch(action);
      // Actions done at once (volume tear-down, cgroup writes) left results: another round now,
      // not at the core's next deadline (minutes away while runtime events drive the relists).
      if (this.pendingResults.length > 0 || this.pendingProbeResults.length > 0) continue;
      const deadline = this.call((core) => core.pollDeadline());
      if (deadline === undefined) return;
      if (deadline > this.nowMs) {
        this.wakeAt(deadline);
        return;
      }
      if (actions.length === 0 && this.pendingResults.length === 0 && this.pendingProbeResults.length === 0) {
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
    const { specs, keys } = this.pods.specs();
    const rejections = this.call((core) => core.handlePods(this.nowMs, specs)) ?? [];
    this.refused = this.pods.desired.filter((d) => d.problem && !d.deleted).map((d) => `${d.key}: ${d.problem}`);
    for (const r of rejections) this.refused.push(`${keys[r.index]}: ${r.field}: ${r.message}`);
    this.needPump = true;
  }

  private dispatch(action: PlannedAction): void {
    const kind = action.kind;
    switch (kind.tag) {
      case "relist":
        this.cri.relist(action);
        return;
      case "pod-status-changed":
        this.statusUpdates++;
        const wasEvicted = isEviction(this.statuses.get(action.podUid));
        this.statuses.set(action.podUid, kind.val);
        this.probeInvariants.onStatus(kind.val, this.pods.podInfo(action.podUid)?.spec, this.nowMs);
        this.invariants.onPhase(action.podUid, kind.val.phase, this.nowMs);
        if (isEviction(kind.val) && !wasEvicted) this.memory.onEviction(action.podUid);
        if (isShutdownTermination(kind.val) || isAdmissionRefusal(kind.val)) this.memoryOnlyFailures.add(action.podUid);
        if (this.scenario.source === "apiserver") {
          this.apiserver.publish(action.podUid, kind.val, this.pods.podInfo(action.podUid)?.spec?.hostNetwork ?? false, this.nowMs);
          this.deletions.published(action.podUid, kind.val);
        }
        return;
      case "run-probe":
        this.work.probe(action, kind.val);
        return;
      case "pod-event":
        return; // no log in the simulation
      case "remove-pod-cgroup":
        // The last step of a removed pod: its volumes must be gone by now.
        if (this.work.mounted.has(action.podUid)) this.invariants.mountedAfterRemoval(action.podUid, this.nowMs);
        return;
      case "set-up-volumes":
        this.work.setUpVolumes(action);
        return;
      case "tear-down-volumes":
        this.work.mounted.delete(action.podUid);
        this.pendingResults.push({ actionId: action.id, outcome: { tag: "ok", val: "" } });
        this.needPump = true;
        return;
      case "reclaim-node-resources":
        // Every eligible image goes (with an image filesystem); the next stats pass decides.
        this.trace?.sim(this.nowMs, "reclaim", { signal: kind.val });
        this.images?.reclaim();
        return;
      case "shutdown-inhibit-lock":
        this.trace?.sim(this.nowMs, "shutdown-lock", { hold: kind.val });
        // Taken again: the cancellation is applied, the node is back.
        if (kind.val) this.nodeShuttingDown = false;
        return;
      case "node-pressure-changed":
        this.pressure = kind.val;
        this.trace?.sim(this.nowMs, "pressure", { ...kind.val });
        return;
      case "hardware-state-changed":
        this.call((core) => this.hardware?.onStateChanged(core, this.nowMs));
        return;
      case "update-container-cpuset":
        // A cpuset rewrite needs no answer: the runtime's cgroups are not modelled.
        this.trace?.sim(this.nowMs, "cpuset", { container: kind.val.containerId, cpus: kind.val.cpusetCpus });
        return;
      case "update-pod-cgroup":
        // The host writes cgroup files itself (no CRI call): done at once.
        this.pendingResults.push({ actionId: action.id, outcome: { tag: "ok", val: "" } });
        this.needPump = true;
        return;
      default:
        if (kind.tag === "stop-container") {
          const uid = action.podUid;
          // A node shutdown stops every pod: no update is kept running through it.
          const excused = this.pods.isMarked(uid) || this.invariants.evicted.has(uid) || this.pods.keyOf(uid) === undefined || this.nodeShuttingDown;
          this.updates.onStop(kind.val.containerId, excused, this.nowMs);
        }
        if (kind.tag === "run-sandbox" || kind.tag === "create-container") {
          if (this.invariants.evicted.has(action.podUid)) this.invariants.startedAfterEviction(action.podUid, kind.tag, this.nowMs);
          else if (this.pods.isMarked(action.podUid)) this.invariants.startedWhileDeleted(action.podUid, kind.tag, this.nowMs);
          else if (this.pods.isReportedTerminal(action.podUid)) this.invariants.startedAfterFinished(action.podUid, kind.tag, this.nowMs);
          const volumes = this.pods.podInfo(action.podUid)?.spec?.volumes ?? [];
          if (volumes.some((v) => v.used) && !this.work.mounted.has(action.podUid)) this.invariants.startedBeforeVolumes(action.podUid, kind.tag, this.nowMs);
        }
        this.cri.submit(action);
    }
  }

  // --- what the timeline does to the node (sim-timeline.ts plays it) --------------------------

  /** The agent process dies and starts again `downMs` later: its queue, calls' answers and core's memory are gone. */
  private restartAgent(downMs: number): void {
    const now = this.nowMs;
    this.agentRestarts++;
    this.faults.disturbed("agent-restart", { downMs }, now, now + downMs);
    this.core = undefined;
    // A new agent process announces no pressure until its core sees some.
    this.pressure = { memory: false, disk: false, pid: false };
    this.invariants.onAgentRestart();
    // A static pod stopped by a node shutdown, or refused at admission, was Failed in the agent's
    // memory only: a new agent admits it again, as upstream's does (an apiserver's pod keeps its
    // phase there, and the watch gives it back). The shutdown itself is forgotten with the agent.
    if (this.scenario.source === "file") for (const uid of this.memoryOnlyFailures) this.invariants.onReadded(uid);
    this.memoryOnlyFailures.clear();
    this.nodeShuttingDown = false;
    this.cri.reset();
    const generation = ++this.generation;
    this.pendingResults = [];
    this.pendingProbeResults = [];
    this.wakeEvent = undefined;
    this.queue.push(now + Math.max(1, downMs), "agent start", async () => {
      if (generation !== this.generation) return; // restarted again while down: that start wins
      this.faults.disturbed("agent-start", {}, this.nowMs);
      await this.startCore();
    });
  }

  /** The runtime goes away for `downMs`. */
  private restartRuntime(downMs: number): void {
    this.runtimeRestarts++;
    const upAtMs = this.faults.runtimeRestart(downMs, this.nowMs);
    this.runtimeEvents.runtimeRestarted();
    this.queue.push(upAtMs, "runtime up", () => this.faults.disturbed("runtime-up", {}, this.nowMs));
  }

  /** How long after the last disturbance the core must have caught up. */
  private settleMs(): number {
    const s = this.scenario;
    return s.criTimeoutMs + RELIST_ANSWER_TIMEOUT_MS + RETRY_POLICY.budgetMs + s.workerErrorBackoffMs + 2 * s.relistPeriodMs + 10 * this.maxLatencyMs;
  }

  private finish(): void {
    this.nowMs = Math.max(this.nowMs, this.endMs);
    this.expectations.finish();
    // Every desired pod must have reached running or an end, if the run was calm for long enough.
    const calmSince = Math.max(this.faults.calmSinceMs(), SIM_EPOCH_MS);
    if (this.nowMs - calmSince < this.settleMs()) return;
    for (const d of this.pods.desired) {
      if (d.deleted || !d.spec || this.nowMs - d.changedAtMs < this.settleMs()) continue;
      if (this.refused.some((r) => r.startsWith(`${d.key}:`))) continue;
      if (d.spec.containers.some((c) => this.runtime.missingImages.has(c.image))) continue; // can never run
      this.invariants.checkSettled(d.key, d.spec.uid, this.statuses.get(d.spec.uid)?.phase, this.nowMs);
      // What the apiserver holds says what runs (a postStart hook hides a start until it is done).
      const hooked = [...d.spec.containers, ...d.spec.initContainers].some((c) => c.postStart);
      if (this.scenario.source === "apiserver" && d.markedAtMs === undefined && !hooked) this.apiserver.checkConverged(d.key, d.spec.uid, d.spec.hostNetwork, this.nowMs);
    }
  }
}

/** A status the core publishes when it evicts a pod (an admission refusal has no DisruptionTarget). */
function isEviction(status: PodStatus | undefined): boolean {
  return status?.reason === "Evicted" && status.conditions.some((c) => c.conditionType === "disruption-target");
}

/** An admission refusal (`Pod was rejected: ...`): the topology manager's, a device's, resources'. */
function isAdmissionRefusal(status: PodStatus | undefined): boolean {
  return status?.phase === "failed" && status.message.startsWith("Pod was rejected: ");
}

/** A status the node shutdown manager gave: Terminated with a DisruptionTarget condition, or refused (NodeShutdown). */
function isShutdownTermination(status: PodStatus | undefined): boolean {
  if (status?.reason === "NodeShutdown") return true;
  return status?.reason === "Terminated" && status.conditions.some((c) => c.conditionType === "disruption-target");
}
