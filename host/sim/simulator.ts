// The deterministic simulator: the real core component against a simulated node (SimRuntime, and
// SimCri for the host's side of the CRI), a simulated pod source (the scenario's manifests) and a
// virtual clock that jumps from event to event. Every random choice comes from one seed. This
// file drives the core as the agent loop does and plays the scenario's timeline; the parts live
// beside it: faults.ts, pod-source.ts, expectations.ts, invariants.ts.
import type { ActionResult, NodePressure, NodeStats, PlannedAction, PodStatus, ProbeRequest, ProbeResult } from "../core/types.js";
import { hardMemoryThresholdBytes } from "../node/eviction-flags.js";
import { RankedPod, quantityBytes } from "./eviction-reference.js";
import { SYSTEM_CRITICAL_PRIORITY } from "./invariants.js";
import { Core, CoreAgent, CoreConfig, CoreTrapError } from "../core/core.js";
import { RETRY_POLICY } from "../cri/runtime.js";
import { RecordingCore, TraceSink, TraceWriter } from "../trace/recording-core.js";
import { SimRuntimeEvents } from "./sim-events.js";
import { EventQueue, SimEvent } from "./event-queue.js";
import { evaluateExpectation } from "./expectations.js";
import { Faults, RELIST_ANSWER_TIMEOUT_MS } from "./faults.js";
import { Invariants, Violation } from "./invariants.js";
import { SimPodSource } from "./pod-source.js";
import { Prng } from "./prng.js";
import { Expectation, Scenario } from "./scenario.js";
import { SimCri, Snapshot, drawDuration } from "./sim-cri.js";
import { ProbeInvariants } from "./probe-invariants.js";
import type { ContainerBehaviour } from "./scenario.js";
import { SimRuntime } from "./sim-runtime.js";
import { SimApiserver } from "./sim-apiserver.js";
import { UpdateInvariants } from "./update-invariants.js";

/** How long a simulated probe takes to answer. */
const PROBE_LATENCY_MS = 5;

/** Virtual time 0 of every run: 2026-01-01T00:00:00Z, so traces show plausible dates. */
export const SIM_EPOCH_MS = Date.UTC(2026, 0, 1);

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
  statsPasses: number;
  evictions: number;
  /** Pushed runtime changes delivered to the core, and exits lost on the way (scenario runtimeEvents). */
  runtimeEvents: number;
  runtimeEventsLost: number;
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
  private pendingResults: ActionResult[] = [];
  private pendingProbeResults: ProbeResult[] = [];
  private probeInvariants: ProbeInvariants;
  private probeRng: Prng;
  private volumeRng: Prng;
  /** Pods whose volumes the simulated host has set up and not torn down (they outlive agent restarts). */
  private mounted = new Set<string>();
  /** When each container run's probes turn, drawn at its first probe. */
  private probeTurns = new Map<string, { startupAfterMs: number; healthyForMs: number }>();
  private needPump = false;
  /** The pending wake-up at the core's deadline (a suspend moves it with every other event). */
  private wakeEvent: SimEvent | undefined;
  private stopped = false;

  private readonly statuses = new Map<string, PodStatus>();
  private refused: string[] = [];
  private byExpectations: Expectation[] = [];
  private readonly failedExpectations: FailedExpectation[] = [];
  private coreCalls = 0;
  private statusUpdates = 0;
  private agentRestarts = 0;
  private runtimeRestarts = 0;
  /** Memory: working sets set by the timeline, by `<pod key>/<container>`. */
  private readonly memoryUsage = new Map<string, number>();
  /** The stats last given to the core, and the pressure it last announced. */
  private lastStats: NodeStats | undefined;
  pressure: NodePressure = { memory: false, disk: false, pid: false };
  private statsPasses = 0;
  private runtimeEvents: SimRuntimeEvents;

  constructor(private options: SimOptions) {
    const s = (this.scenario = options.scenario);
    const rng = new Prng(options.seed);
    this.runtime = new SimRuntime(rng.fork("ids"), s.listOrder === "shuffled" ? rng.fork("list-order") : undefined);
    for (const image of s.missingImages) this.runtime.missingImages.add(image);
    if (options.trace) this.trace = new TraceWriter(options.trace);
    this.config = {
      nodeName: s.nodeName,
      relistPeriodMs: s.relistPeriodMs,
      backoffInitialMs: s.backoffInitialMs,
      backoffMaxMs: s.backoffMaxMs,
      workerErrorBackoffMs: s.workerErrorBackoffMs,
    };
    if (s.memory) {
      const m = s.memory;
      this.config.node = {
        memoryCapacityBytes: m.capacityBytes,
        allocatableMemoryBytes: Math.max(0, m.capacityBytes - hardMemoryThresholdBytes(m.evictionHard, m.capacityBytes)),
        allocatableCpuMilli: 4000,
        evictionHard: m.evictionHard,
        evictionSoft: m.evictionSoft,
        evictionSoftGracePeriod: m.evictionSoftGracePeriod,
        evictionMinimumReclaim: m.evictionMinimumReclaim,
        evictionPressureTransitionPeriodMs: m.transitionPeriodMs,
        evictionMaxPodGracePeriodSeconds: m.maxPodGracePeriodSeconds,
        evictionIntervalMs: m.intervalMs,
      };
    }
    this.maxLatencyMs = Math.max(...Object.entries(s.latency).filter(([k]) => k !== "PullImage").map(([, r]) => r.maxMs), 1);
    this.invariants = new Invariants({ backoffInitialMs: s.backoffInitialMs, backoffMaxMs: s.backoffMaxMs, latencySlackMs: 10 * this.maxLatencyMs });
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
    this.probeRng = rng.fork("probes");
    this.volumeRng = rng.fork("volumes");
    this.probeInvariants = new ProbeInvariants(this.invariants, (uid) => this.pods.isMarked(uid) || this.pods.keyOf(uid) === undefined);
    this.cri.probeInvariants = this.probeInvariants;
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
    if (s.memory) this.queue.push(SIM_EPOCH_MS + s.memory.intervalMs, "stats", () => this.statsPass());
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
      stats: {
        coreCalls: this.coreCalls,
        ...this.cri.stats,
        restarts: this.invariants.restartsSeen,
        faultsInjected: this.faults.injected,
        agentRestarts: this.agentRestarts,
        runtimeRestarts: this.runtimeRestarts,
        statusUpdates: this.statusUpdates,
        statsPasses: this.statsPasses,
        evictions: this.invariants.evictions,
        runtimeEvents: this.runtimeEvents.delivered,
        runtimeEventsLost: this.runtimeEvents.lost,
      },
    };
  }

  // --- the core, driven as the agent loop drives it -----------------------------------------

  private async startCore(): Promise<void> {
    const inner = await (this.options.createCore ?? CoreAgent.create)(this.config);
    this.core = this.trace ? RecordingCore.wrap(inner, this.trace, this.nowMs, this.config) : inner;
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

  /** A pod marked for deletion must have been reported finished (and so deleted) by its deadline. */
  private scheduleFinishedCheck(key: string, uid: string, markedAtMs: number, deadlineMs: number): void {
    this.queue.push(deadlineMs, "finished check", () => {
      if (!this.pods.isMarked(uid)) return; // finished and deleted, or replaced
      if (this.faults.calmSinceMs() >= markedAtMs) {
        // Faults or restarts may rightly delay it: look again once they have passed.
        this.scheduleFinishedCheck(key, uid, this.nowMs, this.nowMs + this.settleMs());
        return;
      }
      this.invariants.deletedPodNotFinished(key, uid, markedAtMs, this.nowMs);
    });
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
        if (isEviction(kind.val) && !wasEvicted) this.onEviction(action.podUid);
        if (this.scenario.source === "apiserver") {
          this.apiserver.publish(action.podUid, kind.val, this.pods.podInfo(action.podUid)?.spec?.hostNetwork ?? false, this.nowMs);
          this.asApiserver(action.podUid, kind.val);
        }
        return;
      case "run-probe":
        this.simulateProbe(action, kind.val);
        return;
      case "pod-event":
        return; // no log in the simulation
      case "remove-pod-cgroup":
        // The last step of a removed pod: its volumes must be gone by now.
        if (this.mounted.has(action.podUid)) this.invariants.mountedAfterRemoval(action.podUid, this.nowMs);
        return;
      case "set-up-volumes":
        this.simulateVolumeSetUp(action);
        return;
      case "tear-down-volumes":
        this.mounted.delete(action.podUid);
        this.pendingResults.push({ actionId: action.id, outcome: { tag: "ok", val: "" } });
        this.needPump = true;
        return;
      case "node-pressure-changed":
        this.pressure = kind.val;
        this.trace?.sim(this.nowMs, "pressure", { ...kind.val });
        return;
      case "update-pod-cgroup":
        // The host writes cgroup files itself (no CRI call): done at once.
        this.pendingResults.push({ actionId: action.id, outcome: { tag: "ok", val: "" } });
        this.needPump = true;
        return;
      default:
        if (kind.tag === "stop-container") {
          const uid = action.podUid;
          const excused = this.pods.isMarked(uid) || this.invariants.evicted.has(uid) || this.pods.keyOf(uid) === undefined;
          this.updates.onStop(kind.val.containerId, excused, this.nowMs);
        }
        if (kind.tag === "run-sandbox" || kind.tag === "create-container") {
          if (this.invariants.evicted.has(action.podUid)) this.invariants.startedAfterEviction(action.podUid, kind.tag, this.nowMs);
          else if (this.pods.isMarked(action.podUid)) this.invariants.startedWhileDeleted(action.podUid, kind.tag, this.nowMs);
          else if (this.pods.isReportedTerminal(action.podUid)) this.invariants.startedAfterFinished(action.podUid, kind.tag, this.nowMs);
          const volumes = this.pods.podInfo(action.podUid)?.spec?.volumes ?? [];
          if (volumes.some((v) => v.used) && !this.mounted.has(action.podUid)) this.invariants.startedBeforeVolumes(action.podUid, kind.tag, this.nowMs);
        }
        this.cri.submit(action);
    }
  }

  /**
   * The host's volume set-up, simulated: it takes the scenario's latency and fails as often as
   * it says; a pod counts as set up only once it answered ok.
   */
  private simulateVolumeSetUp(action: PlannedAction): void {
    const generation = this.generation;
    const { latency, failure } = this.scenario.volumes;
    const fails = this.volumeRng.chance(failure);
    this.queue.push(this.nowMs + this.volumeRng.int(latency.minMs, latency.maxMs), "volumes set up", () => {
      if (generation !== this.generation) return; // the agent that asked is gone
      if (!fails) this.mounted.add(action.podUid);
      this.pendingResults.push(fails
        ? { actionId: action.id, outcome: { tag: "err", val: { kind: "other", grpcCode: 0, message: 'MountVolume.SetUp failed for volume "data" : simulated failure' } } }
        : { actionId: action.id, outcome: { tag: "ok", val: "" } });
      this.needPump = true;
    });
  }

  /**
   * A probe on the simulated runtime: a running container answers after a moment; one that is
   * gone makes the probe error, as an exec into a stopped container does.
   */
  private simulateProbe(action: PlannedAction, request: ProbeRequest): void {
    const generation = this.generation;
    const info = this.pods.podInfo(action.podUid);
    this.probeInvariants.onProbeRequest(request, info?.spec, this.nowMs);
    this.queue.push(this.nowMs + PROBE_LATENCY_MS, "probe answers", () => {
      if (generation !== this.generation) return; // the agent that asked is gone
      const container = this.runtime.containers.get(request.containerId);
      let outcome: ProbeResult["outcome"] = "error";
      let output = "container is not running";
      if (container?.state === "running") {
        const behaviour = info?.behaviour[container.name];
        const ranMs = this.nowMs - container.startedAtMs;
        const limits = this.probeLimits(container.id, container.runNumber, behaviour);
        const timedOut = behaviour !== undefined && behaviour.probeTimeouts > 0 && this.probeRng.chance(behaviour.probeTimeouts);
        const healthy = request.probeType === "startup" ? ranMs >= limits.startupAfterMs : ranMs < limits.healthyForMs;
        outcome = timedOut ? "failure" : healthy ? "success" : "failure";
        output = timedOut ? "command timed out" : healthy ? "" : "HTTP probe failed with statuscode: 500";
      }
      this.probeInvariants.onProbeResult(request, outcome);
      this.trace?.sim(this.nowMs, "probe", { container: request.containerId.slice(0, 12), type: request.probeType, outcome });
      this.pendingProbeResults.push({ actionId: action.id, outcome, output });
      this.needPump = true;
    });
  }

  /** When a container's probes turn (drawn once per run of the container). */
  private probeLimits(containerId: string, runNumber: number, behaviour: ContainerBehaviour | undefined): { startupAfterMs: number; healthyForMs: number } {
    const key = `${containerId}#${runNumber}`;
    let limits = this.probeTurns.get(key);
    if (!limits) {
      limits = {
        startupAfterMs: behaviour?.startupAfter ? drawDuration(this.probeRng, behaviour.startupAfter) : 0,
        healthyForMs: behaviour?.healthyFor ? drawDuration(this.probeRng, behaviour.healthyFor) : Infinity,
      };
      this.probeTurns.set(key, limits);
    }
    return limits;
  }

  /**
   * What the apiserver and the host's status manager do with a status: a terminal phase comes
   * back on the pod through the watch; a marked pod that finished is deleted, and leaves.
   */
  private asApiserver(podUid: string, status: PodStatus): void {
    if (status.finished && this.pods.isMarked(podUid)) {
      this.invariants.onDeletedPodFinished(podUid, status.phase, this.nowMs);
      const key = this.pods.keyOf(podUid);
      this.queue.push(this.nowMs, "apiserver delete", () => {
        this.trace?.sim(this.nowMs, "apiserver-delete", { pod: key });
        this.apiserver.forget(podUid);
        if (key !== undefined && this.pods.delete(key)) this.sendPods();
      });
      return;
    }
    if (this.pods.report(podUid, status.phase)) this.queue.push(this.nowMs, "apiserver phase", () => this.sendPods());
  }

  // --- memory: the stats pass and evictions ----------------------------------------------------

  /** A container's working set: the timeline's, else its behaviour's, else 1 MiB. */
  private workingSetOf(podUid: string, name: string): number {
    const key = this.pods.keyOf(podUid);
    const set = key === undefined ? undefined : this.memoryUsage.get(`${key}/${name}`);
    return set ?? this.pods.podInfo(podUid)?.behaviour[name]?.memoryBytes ?? 1024 * 1024;
  }

  /** The kubelet's eviction monitoring: the node's memory and each pod's, every interval. */
  private statsPass(): void {
    const m = this.scenario.memory!;
    this.queue.push(this.nowMs + m.intervalMs, "stats", () => this.statsPass());
    if (!this.core) return; // the agent is down: nobody takes stats
    const pods = new Map<string, NodeStats["pods"][number]>();
    let used = m.systemBytes;
    for (const c of this.runtime.containers.values()) {
      if (c.state !== "running") continue;
      const bytes = this.workingSetOf(c.podUid, c.name);
      used += bytes;
      let pod = pods.get(c.podUid);
      if (!pod) pods.set(c.podUid, (pod = { uid: c.podUid, memoryWorkingSetBytes: 0n, ephemeralStorageBytes: 0n, processCount: 0n, containers: [] }));
      pod.memoryWorkingSetBytes += BigInt(bytes);
      pod.processCount += 1n;
      pod.containers.push({ name: c.name, memoryWorkingSetBytes: BigInt(bytes) });
    }
    const stats: NodeStats = {
      signals: [{ signal: "memory.available", available: BigInt(m.capacityBytes - used), capacity: BigInt(m.capacityBytes) }],
      pods: [...pods.values()].sort((a, b) => (a.uid < b.uid ? -1 : 1)),
      volumes: [],
    };
    this.statsPasses++;
    this.lastStats = stats;
    this.call((core) => core.handleNodeStats(this.nowMs, stats));
    this.needPump = true;
  }

  private isCritical(uid: string): boolean {
    const spec = this.pods.desired.find((d) => d.spec?.uid === uid)?.spec;
    return this.scenario.source === "file" || (spec?.priority ?? 0) >= SYSTEM_CRITICAL_PRIORITY;
  }

  /**
   * The pods the core could have evicted at the last stats pass: active, not critical, not
   * marked or refused; `evicted` among them (its status already says Failed).
   */
  private evictionCandidates(evicted: string): RankedPod[] | undefined {
    const stats = this.lastStats;
    if (!stats) return undefined;
    const usage = new Map(stats.pods.map((p) => [p.uid, Number(p.memoryWorkingSetBytes)]));
    const out: RankedPod[] = [];
    for (const d of this.pods.desired) {
      const spec = d.spec;
      if (!spec || d.deleted || d.markedAtMs !== undefined || d.problem || this.isCritical(spec.uid)) continue;
      if (this.refused.some((r) => r.startsWith(`${d.key}:`))) continue;
      const phase = this.statuses.get(spec.uid)?.phase;
      if ((phase === "succeeded" || phase === "failed") && spec.uid !== evicted) continue;
      const requestBytes = spec.containers.reduce((sum, c) => {
        const q = c.requests.find((r) => r.name === "memory") ?? c.limits.find((r) => r.name === "memory");
        return sum + (q ? quantityBytes(q.quantity) : 0);
      }, 0);
      out.push({ uid: spec.uid, priority: spec.priority, hasStats: usage.has(spec.uid), usageBytes: usage.get(spec.uid) ?? 0, requestBytes });
    }
    return out;
  }

  private onEviction(uid: string): void {
    if (this.invariants.evicted.has(uid)) return;
    const candidates = this.evictionCandidates(uid);
    this.invariants.onEviction(uid, this.isCritical(uid), candidates, this.scenario.memory?.intervalMs ?? 0, this.nowMs);
    this.scheduleEvictedCheck(uid, this.nowMs, this.nowMs + 30_000 + this.settleMs());
  }

  /** An evicted pod's containers stop within its grace period and a relist, faults aside. */
  private scheduleEvictedCheck(uid: string, evictedAtMs: number, deadlineMs: number): void {
    this.queue.push(deadlineMs, "evicted check", () => {
      const running = [...this.runtime.containers.values()].filter((c) => c.podUid === uid && c.state === "running").length;
      if (running === 0) return;
      if (this.faults.calmSinceMs() >= evictedAtMs) {
        this.scheduleEvictedCheck(uid, this.nowMs, this.nowMs + this.settleMs());
        return;
      }
      this.invariants.evictedStillRunning(uid, running, this.nowMs);
    });
  }

  // --- the timeline -------------------------------------------------------------------------

  private async apply(action: Scenario["timeline"][number]["action"]): Promise<void> {
    const now = this.nowMs;
    switch (action.type) {
      case "exit": {
        const uid = this.pods.uidOf(action.pod);
        const running = uid ? this.runtime.runningNamed(uid, action.container) : [];
        this.trace?.sim(now, "exit", { pod: action.pod, name: action.container, code: action.code, found: running.length });
        for (const c of running) this.runtime.exit(c, action.code, action.code === 0 ? "Completed" : "Error", now);
        return;
      }
      case "sandboxDies": {
        const uid = this.pods.uidOf(action.pod);
        const ready = [...this.runtime.sandboxes.values()].filter((sb) => sb.podUid === uid && sb.state === "ready");
        this.trace?.sim(now, "sandbox-dies", { pod: action.pod, found: ready.length });
        for (const sb of ready) this.runtime.stopPodSandbox(sb.id, now);
        return;
      }
      case "fault":
        this.faults.openWindow(action.fault, now);
        return;
      case "relistFault":
        this.faults.openRelistWindow(action.lose, action.duplicate, action.forMs, now);
        return;
      case "runtimeRestart": {
        this.runtimeRestarts++;
        const upAtMs = this.faults.runtimeRestart(action.downMs, now);
        this.runtimeEvents.runtimeRestarted();
        this.queue.push(upAtMs, "runtime up", () => this.faults.disturbed("runtime-up", {}, this.nowMs));
        return;
      }
      case "agentRestart": {
        this.agentRestarts++;
        this.faults.disturbed("agent-restart", { downMs: action.downMs }, now, now + action.downMs);
        // The process dies: its queue, its calls' answers and its core's memory go with it.
        this.core = undefined;
        // A new agent process announces no pressure until its core sees some.
        this.pressure = { memory: false, disk: false, pid: false };
        this.invariants.onAgentRestart();
        this.cri.reset();
        const generation = ++this.generation;
        this.pendingResults = [];
        this.pendingProbeResults = [];
        this.wakeEvent = undefined;
        this.queue.push(now + Math.max(1, action.downMs), "agent start", async () => {
          if (generation !== this.generation) return; // restarted again while down: that start wins
          this.faults.disturbed("agent-start", {}, this.nowMs);
          await this.startCore();
        });
        return;
      }
      case "add":
      case "update": {
        const before = this.pods.desired.find((d) => d.key === action.pod.key && !d.deleted)?.spec;
        this.pods.put(action.pod);
        const after = this.pods.desired.find((d) => d.key === action.pod.key)?.spec;
        this.updates.onUpdate(action.pod.key, before, after, now);
        // A pod added (back) is a new object in the apiserver, with a status of its own.
        if (!before && after) this.apiserver.forget(after.uid);
        this.trace?.sim(now, action.type, { pod: action.pod.key });
        this.sendPods();
        return;
      }
      case "delete":
        this.trace?.sim(now, "delete", { pod: action.pod });
        if (this.scenario.source === "apiserver") {
          const uid = this.pods.uidOf(action.pod);
          const deadlineMs = this.pods.mark(action.pod, action.graceSeconds);
          if (deadlineMs === undefined || uid === undefined) return;
          this.sendPods();
          this.scheduleFinishedCheck(action.pod, uid, now, deadlineMs);
          // A pod that had already finished (its status says so) is deleted at once by the host's
          // status manager, which looks again whenever the watch shows a change.
          const last = this.statuses.get(uid);
          if (last?.finished) this.asApiserver(uid, last);
        } else if (this.pods.delete(action.pod)) this.sendPods();
        return;
      case "memory":
        this.trace?.sim(now, "memory", { pod: action.pod, name: action.container, bytes: action.bytes });
        this.memoryUsage.set(`${action.pod}/${action.container}`, action.bytes);
        return;
      case "suspend":
        // The whole node sleeps: nothing happens, then every clock has jumped.
        this.trace?.sim(now, "suspend", { forMs: action.forMs });
        this.queue.shift(action.forMs);
        this.faults.suspend(action.forMs, now);
        this.pods.suspend(action.forMs);
        this.endMs += action.forMs; // the scenario's events all still happen
        return;
    }
  }

  /** How long after the last disturbance the core must have caught up. */
  private settleMs(): number {
    const s = this.scenario;
    return s.criTimeoutMs + RELIST_ANSWER_TIMEOUT_MS + RETRY_POLICY.budgetMs + s.workerErrorBackoffMs + 2 * s.relistPeriodMs + 10 * this.maxLatencyMs;
  }

  /** Images the scenario's pods use are present from the start, unless the scenario says which. */
  private preloadImages(): void {
    const s = this.scenario;
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
    const uid = this.pods.uidOf(e.pod);
    return evaluateExpectation(e, uid, uid === undefined ? undefined : this.statuses.get(uid), this.runtime);
  }

  private record(e: Expectation, problem: string | undefined): void {
    if (problem) this.failedExpectations.push({ text: e.text, atMs: this.nowMs - SIM_EPOCH_MS, detail: problem });
    this.trace?.sim(this.nowMs, "expect", { expectation: e.text, ok: !problem, detail: problem });
  }

  private checkAt(e: Expectation): void {
    this.record(e, this.evaluate(e));
  }

  /** A `by` expectation's time has come: met now, or it failed. */
  private checkDeadline(e: Expectation): void {
    if (!this.byExpectations.includes(e)) return; // met earlier
    this.byExpectations = this.byExpectations.filter((x) => x !== e);
    this.record(e, this.evaluate(e));
  }

  private checkBy(): void {
    this.byExpectations = this.byExpectations.filter((e) => {
      if (this.evaluate(e) !== undefined) return true;
      this.trace?.sim(this.nowMs, "expect", { expectation: e.text, ok: true });
      return false;
    });
  }

  private finish(): void {
    this.nowMs = Math.max(this.nowMs, this.endMs);
    for (const e of this.byExpectations) {
      this.failedExpectations.push({ text: e.text, atMs: this.nowMs - SIM_EPOCH_MS, detail: this.evaluate(e) ?? "met only after its time" });
    }
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
