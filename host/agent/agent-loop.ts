// The host's event loop around the core: feeds it pods, relists and action results; carries out
// what it polls; arms one timer for its deadline. A core trap is logged loudly and the core is
// re-created, then rebuilt from the desired pods and the next relist (the runtime is the truth).
// Beside it, each its own file: the pods-and-sources feed (pod-feed.ts), the runtime's calls
// (executor.ts), probes, hooks and volumes (pod-work.ts), pushed exits (exit-watch.ts), the
// back-off checkpoint, and the pods' leftovers on disk (pod-housekeeping.ts).
import { EVENTED_PLEG_UNHEALTHY_AFTER_MS, PLEG_UNHEALTHY_AFTER_MS } from "../common/pleg-policy.js";
import { Relister } from "../relist/relister.js";
import type { ActionResult, GcPlan, NodePressure, PlannedAction, ProbeResult, RuntimeSnapshot } from "../core/types.js";
import { Core, CoreAgent, CoreTrapError, type ImageGcRequest } from "../core/core.js";
import type { TaskExit } from "../cri/runtime-events.js";
import { removePodCgroups } from "../node/cgroups.js";
import type { ScanResult } from "../sources/static-pods.js";
import type { AcceptedPods } from "../sources/accepted-pods.js";
import { Executor } from "./executor.js";
import { PodFeed } from "./pod-feed.js";
import { BackOffCheckpoints } from "./back-off-checkpoints.js";
import { ExitWatch } from "./exit-watch.js";
import type { DeviceState } from "../devices/device-manager.js";
import { hookPod, probePod, setUpVolumes, tearDownVolumes, type PodWorkContext } from "./pod-work.js";
import { ExecSlots } from "../probes/exec-slots.js";
import { PodDirectories, podsToMeasure } from "./pod-housekeeping.js";
import { RemovedLogs } from "../logs/removed-logs.js";
import { errorResult, okResult } from "./action-results.js";
import { containerOf, noticeAction } from "./node-actions.js";
import type { AgentLoopOptions, PodRefusal } from "./agent-options.js";

export type { AgentLoopOptions, PodRefusal } from "./agent-options.js";

/** The longest the loop sleeps between pumps, whatever deadline the core gives. */
const MAX_PUMP_WAIT_MS = 60_000;

export class AgentLoop {
  /** Undefined while a trapped core is being re-created. */
  private core: Core | undefined;
  private executor: Executor;
  private relister: Relister;
  private feed: PodFeed;
  private backOffs: BackOffCheckpoints;
  private exits: ExitWatch;
  private podDirectories: PodDirectories;
  private work: PodWorkContext;
  private timer?: NodeJS.Timeout;
  private pendingResults: ActionResult[] = [];
  private pendingProbeResults: ProbeResult[] = [];
  private pumpScheduled = false;
  private stopped = false;
  private nowMs: () => number;
  /** Relists in flight; at most one, enforced by the core. */
  private relisting = false;
  /** Runtime events drive the relists (one every five minutes otherwise): see `eventStream`. */
  private eventedRelist = false;
  trapCount = 0;
  /** When a relist last succeeded (host ms; 0 before the first): the PLEG's health. */
  lastRelistOkMs = 0;
  /** The newest relist: which containers each pod has, for the stats pass. */
  private lastSnapshot: RuntimeSnapshot | undefined;
  private statsTimer?: NodeJS.Timeout;
  /** The pressure conditions the core last announced. */
  pressure: NodePressure = { memory: false, disk: false, pid: false };
  /**
   * Upstream's sourcesReady: the core is not polled (so it neither relists nor acts) until every
   * pod source has said what it wants once. Otherwise, after an agent restart, a relist that comes
   * before the apiserver's pod list makes every running pod an orphan, and the core stops them.
   */
  private sourcesReady = true;
  private sourcesTimer?: NodeJS.Timeout;

  /** Logs of containers removed, deleted a minute after them. */
  private readonly removedLogs: RemovedLogs;

  constructor(private options: AgentLoopOptions) {
    this.nowMs = options.nowMs ?? Date.now;
    this.removedLogs = new RemovedLogs(options.podLogsDir, options.log, this.nowMs);
    const withCore = <T>(fn: (core: Core) => T) => this.withCore(fn);
    this.feed = new PodFeed(options, withCore, this.nowMs);
    this.backOffs = new BackOffCheckpoints(options.backOffCheckpoints, withCore, this.nowMs);
    this.executor = new Executor({
      runtime: options.runtime,
      podLogsDir: options.podLogsDir,
      log: options.log,
      concurrency: options.concurrency,
      // The host's own events (image checks) take the path of the core's events.
      onEvent: (action, event) => this.dispatch({ ...action, kind: { tag: "pod-event", val: event } }),
      podFacts: (uid) => this.feed.podFacts(uid),
      podsDir: options.podsDir,
      podRuntime: options.podRuntime,
      sandboxIp: (id) => this.podIpOf(id),
      objects: options.objects,
      volumes: options.volumes,
      logLinks: options.logLinks,
      images: options.images,
      removedLogs: this.removedLogs,
      runtimeHandler: options.runtimeHandler,
      devices: options.hardware?.devices,
    });
    this.relister = new Relister(options.runtime, this.nowMs);
    this.exits = new ExitWatch(options.runtime, this.relister, options.log, () => this.relistNow(), () => this.stopped);
    this.podDirectories = new PodDirectories(options.podsDir, options.volumes, options.log, options.logLinks);
    this.work = {
      runtime: options.runtime,
      log: options.log,
      volumes: options.volumes,
      targetIp: (uid) => this.probeTargetIp(uid),
      podFacts: (uid) => this.feed.podFacts(uid),
      execSlots: new ExecSlots(),
    };
  }

  /** The pods the core accepted at the last feed: what keeps running through a refused update. */
  get accepted(): AcceptedPods {
    return this.feed.accepted;
  }

  /** Holds the core back until `markSourcesReady`, or `timeoutMs` (a source that never answers). */
  holdUntilSourcesReady(timeoutMs: number): void {
    this.sourcesReady = false;
    this.sourcesTimer = setTimeout(() => {
      this.options.log.log("warn", "Pod sources not ready in time; starting with what they said so far", { waitedMs: timeoutMs });
      this.markSourcesReady();
    }, timeoutMs);
    this.sourcesTimer.unref?.();
  }

  /** Every pod source has delivered its pods once: the core may relist and act. */
  markSourcesReady(): void {
    if (this.sourcesReady) return;
    this.sourcesReady = true;
    clearTimeout(this.sourcesTimer);
    this.schedulePump();
  }

  /**
   * The runtime pushed an exit (see cri/runtime-events.ts): the core relists once the CRI shows
   * it. Events in a burst cost one relist, plus one more if they came while a relist was running.
   */
  runtimeEvent(containerId = "", exit?: TaskExit): void {
    if (this.stopped || !this.core) return;
    if (!containerId) return this.relistNow();
    this.exits.exited(containerId, exit);
  }

  /** containerd's OOM event for a container: its exit, when it comes, reads OOMKilled. */
  oomKill(containerId: string): void {
    this.exits.oomKill(containerId);
  }

  /**
   * logind announced a shutdown (true) or its cancellation (false): the core stops the pods by
   * priority and says when the lock may go (`onShutdownInhibitLock`).
   */
  nodeShutdown(active: boolean): void {
    if (this.stopped) return;
    this.withCore((core) => core.handleNodeShutdown?.(this.nowMs(), active));
    this.schedulePump();
  }

  /** The delay logind's lock must hold for every shutdown group (ms); 0: graceful shutdown is off. */
  get nodeShutdownDelayMs(): number {
    const settings = this.options.core.nodeShutdown;
    if (!settings) return 0;
    return this.withCore((core) => core.configureNodeShutdown?.(settings)) ?? 0;
  }

  /** The node is shutting down (its Ready condition says so; new pods are refused). */
  get shuttingDown(): boolean {
    return this.withCore((core) => core.nodeShuttingDown?.()) ?? false;
  }

  /** How old the last relist may be before the PLEG is unhealthy (longer while events drive it). */
  get plegThresholdMs(): number {
    return this.eventedRelist ? EVENTED_PLEG_UNHEALTHY_AFTER_MS : PLEG_UNHEALTHY_AFTER_MS;
  }

  /** A CRI container event: the CRI already shows the change, so the core relists at once. */
  runtimeChange(containerId: string, kind: string): void {
    if (this.stopped || !this.core) return;
    this.options.log.log("debug", "Relist asked by a runtime event", { containerId, event: kind });
    this.relistNow();
  }

  /**
   * The CRI event stream came up, or broke: the core slows its periodic relist to the evented
   * period while it streams, and returns to the configured one when not (relisting at once).
   */
  eventStream(streaming: boolean): void {
    if (this.stopped || !this.core) return;
    this.eventedRelist = streaming;
    this.options.log.log("info", streaming ? "Runtime events drive the relist" : "Runtime events stopped; relisting every period", { streaming });
    this.withCore((core) => core.handleEventStream?.(this.nowMs(), streaming));
    this.schedulePump();
  }

  private relistNow(): void {
    if (this.stopped) return;
    this.withCore((core) => core.handleRuntimeEvent?.(this.nowMs()));
    this.schedulePump();
  }

  private createCore(): Promise<Core> {
    return (this.options.createCore ?? CoreAgent.create)(this.options.core);
  }

  async start(): Promise<void> {
    this.core = await this.createCore();
    // What the CPU, memory and device managers held before: given back before the first pods.
    this.options.hardware?.restoreInto(this.core, this.nowMs());
    this.backOffs.load();
    this.backOffs.restore();
    this.schedulePump();
    if (this.options.stats) {
      this.statsTimer = setInterval(() => this.takeStats(), this.options.statsIntervalMs ?? 10_000);
      this.statsTimer.unref?.();
    }
  }

  /** A device plugin's devices (or none: it went away), for the core's device manager. */
  handleDevices(resource: string, devices: DeviceState[]): void {
    this.withCore((core) => core.handleDevices?.(this.nowMs(), resource, devices));
    this.schedulePump();
  }

  /** One stats pass into the core (upstream's eviction manager synchronize). */
  takeStats(): void {
    const stats = this.options.stats;
    const snapshot = this.lastSnapshot;
    if (!stats || !snapshot || this.stopped) return;
    let result;
    try {
      result = stats.collect(podsToMeasure(snapshot, this.options.podLogsDir));
    } catch (error) {
      this.options.log.log("warn", "Node stats failed", { error: (error as Error).message });
      return;
    }
    // What emptyDirs with a sizeLimit hold: the core evicts a pod over its limit.
    if (this.options.volumes) result = { ...result, volumes: this.options.volumes.emptyDirUsage() };
    this.withCore((core) => core.handleNodeStats(this.nowMs(), result));
    this.schedulePump();
  }

  /** A new scan of the pod sources: the complete desired set. Returns the pods the node refused. */
  setPods(scan: ScanResult): PodRefusal[] {
    // RuntimeClasses are watched only while a desired pod names one.
    this.options.onRuntimeClassesInUse?.(scan.pods.some((p) => typeof (p.manifest as { spec?: { runtimeClassName?: unknown } } | undefined)?.spec?.runtimeClassName === "string"));
    const refusals = this.feed.setPods(scan);
    this.schedulePump();
    return refusals;
  }

  /** The image collector's decision, from the running core (undefined while there is none). */
  planImageGc(request: ImageGcRequest): GcPlan | undefined {
    return this.withCore((core) => core.planImageGc?.(request));
  }

  /** The running core, if any (the hardware host reads the managers' state from it). */
  get currentCore(): Core | undefined {
    return this.core;
  }

  private withCore<T>(fn: (core: Core) => T): T | undefined {
    if (!this.core) return undefined;
    try {
      return fn(this.core);
    } catch (error) {
      if (!(error instanceof CoreTrapError)) throw error;
      this.onTrap(error);
      return undefined;
    }
  }

  private onTrap(error: CoreTrapError): void {
    this.trapCount++;
    this.options.log.log("error", "CORE TRAPPED: re-creating the core and rebuilding its state from the runtime", {
      call: error.call,
      reason: error.reason,
    });
    this.pendingResults = []; // results of the dead instance's actions mean nothing to a new one
    this.pendingProbeResults = [];
    this.core = undefined;
    void this.createCore().then((core) => {
      this.core = core;
      this.options.podTable.resetVersions();
      this.options.onCoreReplaced?.();
      this.options.hardware?.restoreInto(core, this.nowMs());
      this.backOffs.restore();
      this.feed.refeed();
      this.schedulePump();
    });
  }

  private schedulePump(): void {
    if (this.pumpScheduled || this.stopped) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    if (this.stopped || !this.sourcesReady) return;
    const now = this.nowMs();
    if (this.pendingResults.length > 0) {
      const results = this.pendingResults;
      this.pendingResults = [];
      this.withCore((core) => core.handleActionResults(now, results));
    }
    if (this.pendingProbeResults.length > 0) {
      const results = this.pendingProbeResults;
      this.pendingProbeResults = [];
      this.withCore((core) => core.handleProbeResults(now, results));
    }
    const actions = this.withCore((core) => core.pollActions(now)) ?? [];
    for (const action of actions) this.dispatch(action);
    const deadline = this.withCore((core) => core.pollDeadline());
    clearTimeout(this.timer);
    if (deadline !== undefined) {
      const waitMs = Math.max(0, Math.min(deadline - this.nowMs(), MAX_PUMP_WAIT_MS));
      this.timer = setTimeout(() => this.pump(), waitMs);
    }
  }

  /** An outcome for the core's next pump. */
  private resultReady(result: ActionResult): void {
    this.pendingResults.push(result);
    this.schedulePump();
  }

  private dispatch(action: PlannedAction): void {
    this.options.onAction?.(action);
    const kind = action.kind;
    const pod = action.podName ? `${action.podNamespace}/${action.podName}` : undefined;
    switch (kind.tag) {
      case "relist":
        void this.relist(action);
        return;
      case "pod-status-changed":
        this.options.podTable.applyStatus(action.podUid, kind.val);
        return;
      case "pod-event":
      case "reclaim-node-resources":
      case "shutdown-inhibit-lock":
      case "node-pressure-changed":
        noticeAction(this.options, action, pod, (p) => (this.pressure = p));
        return;
      case "update-pod-cgroup": {
        let result = okResult(action.id);
        try {
          this.options.cgroups?.update(kind.val.cgroupParent, kind.val.resources);
        } catch (error) {
          const message = `could not write pod cgroup ${kind.val.cgroupParent}: ${(error as Error).message}`;
          this.options.log.log("warn", "Pod cgroup update failed", { pod, error: message });
          result = errorResult(action.id, message);
        }
        this.resultReady(result);
        return;
      }
      case "run-sandbox":
        try {
          // The pod's own cgroup, with its values, before the runtime puts the sandbox in it.
          this.options.cgroups?.ensurePod(kind.val.cgroupParent, kind.val.podResources);
        } catch (error) {
          this.options.log.log("warn", "Could not prepare pod cgroup", { pod, error: (error as Error).message });
        }
        this.execute(action, pod);
        return;
      case "run-probe":
        void probePod(this.work, action, kind.val, pod).then((result) => {
          this.pendingProbeResults.push(result);
          this.schedulePump();
        });
        return;
      case "run-hook":
        void hookPod(this.work, action, kind.val, pod).then((result) => this.resultReady(result));
        return;
      case "set-up-volumes":
        void setUpVolumes(this.work, action, kind.val, pod).then((result) => this.resultReady(result));
        return;
      case "tear-down-volumes":
        void tearDownVolumes(this.work, action, pod).then((result) => this.resultReady(result));
        return;
      case "update-container-cpuset":
      case "hardware-state-changed":
        // Without the hardware managers' host nothing is placed: nothing to write.
        this.options.hardware?.handle(action);
        return;
      case "remove-pod-cgroup": {
        const failures = removePodCgroups(kind.val, this.options.cgroupRoot);
        for (const f of failures) this.options.log.log("warn", "Could not remove pod cgroup", { pod, dir: f.dir, error: f.error });
        this.podDirectories.remove(action.podUid, pod);
        return;
      }
      default:
        this.execute(action, pod);
    }
  }

  private execute(action: PlannedAction, pod: string | undefined): void {
    const tag = action.kind.tag;
    this.options.log.log("debug", "runtime call", { pod, action: tag, ...containerOf(action), id: Number(action.id) });
    void this.executor.execute(action).then((result) => {
      if (result.outcome.tag === "err") {
        this.options.log.log("warn", "Runtime call failed", { pod, action: tag, error: result.outcome.val.message });
      }
      this.resultReady(result);
    });
  }

  /** Where a probe or hook without a host connects: the pod's IP, or the node's (host network). */
  private probeTargetIp(podUid: string): string {
    const sandbox = this.lastSnapshot?.sandboxes.find((s) => s.podUid === podUid && s.state === "ready");
    return (sandbox && this.relister.sandboxIp(sandbox.id)) || this.options.nodeIp || "127.0.0.1";
  }

  private async relist(action: PlannedAction): Promise<void> {
    if (this.relisting) {
      // The core gave up waiting for the previous answer; this host is still on it. Say so, and
      // the core asks again one period later.
      this.resultReady(errorResult(action.id, "a relist is already in progress"));
      return;
    }
    this.relisting = true;
    try {
      const startMs = this.nowMs();
      const relist = await this.relister.relist();
      const snapshot = relist.snapshot;
      this.lastRelistOkMs = this.nowMs();
      this.options.onRelist?.(startMs, this.lastRelistOkMs, relist.counts);
      this.lastSnapshot = snapshot;
      if (!this.stopped) {
        // Packed as the runtime answered; the snapshot's lists are made only if a reader asks.
        this.withCore((core) => core.handleSnapshot(this.nowMs(), snapshot, relist.packed));
        this.backOffs.save();
      }
      if (this.sourcesReady) this.podDirectories.cleanupOrphans(snapshot, this.feed.desired.map((p) => p.spec.uid), this.nowMs());
      this.podDirectories.sweepLogLinks(snapshot, this.nowMs());
      this.removedLogs.sweep(this.nowMs());
    } catch (error) {
      this.options.log.log("warn", "Relist failed", { error: (error as Error).message });
      this.pendingResults.push(errorResult(action.id, String((error as Error).message), "runtime"));
    } finally {
      this.relisting = false;
      this.schedulePump();
    }
  }

  /** What the last successful relist saw (stats Summary, /metrics). */
  get snapshot(): RuntimeSnapshot | undefined {
    return this.lastSnapshot;
  }

  /** Whether a sandbox or container of the pod is being started: its status is between steps. */
  starting(podUid: string): boolean {
    return this.executor.starting(podUid);
  }

  /** The image digest reference of a container, as the last relist saw it. */
  imageRefOf(containerId: string): string | undefined {
    return this.relister.imageRefOf(containerId) ?? this.executor.imageIdOf(containerId);
  }

  /** The IP of a sandbox, as the runtime told it. */
  podIpOf(sandboxId: string): string | undefined {
    return this.relister.sandboxIp(sandboxId) || undefined;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.sourcesTimer);
    clearTimeout(this.timer);
    clearInterval(this.statsTimer);
  }
}
