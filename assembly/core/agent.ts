// The agent: routes each input to the manager that owns it and runs the pod workers. The pod
// manager holds the records, the relist intake (PLEG) their view of the runtime, action results
// apply outcomes, the status manager publishes statuses and the eviction pass protects the node.
// Sans-IO: inputs carry `nowMs`, outputs are queued actions the host polls.
import { ActionResults } from "./action-results";
import { DeviceInfo } from "./hardware/device-manager";
import { HardwareConfig, HardwareManager } from "./hardware/hardware-manager";
import { Backoff, BackOffCheckpoint } from "./backoff";
import { WorkerContext } from "./context";
import { EvictionPass } from "./eviction-pass";
import { NodeShutdown, ShutdownGracePeriod } from "./node-shutdown";
import { ActionResult, AgentConfig, NodeConfig, NodeStats, PlannedAction, PodRejection, PodSpec, RuntimeSnapshot } from "./model";
import { PackedSnapshot, packSnapshot } from "./packed";
import { PodManager } from "./pod-manager";
import { PodRecord } from "./pod-record";
import { ProbeManager } from "./probe-manager";
import { ProbeResult } from "./probe-types";
import { WorkerEvent, WorkerState, movePod } from "./pod-workers";
import { PodFailure } from "./pod-record";
import { ContainerState, EventType } from "./model";
import { RankTable } from "./rank-table";
import { RelistIntake } from "./relist-intake";
import { refreshStatus } from "./status-manager";
import { syncPodStep } from "./sync-pod";
import { cleanupStep, terminatingStep } from "./terminate-pod";
import { tearDownStep } from "./volume-manager";

export { RELIST_ANSWER_TIMEOUT_MS } from "./relist-intake";

const DEADLINE_MESSAGE = "Pod was active on the node longer than the specified deadline";

/// Upstream's active deadline handler: a pod active longer than `activeDeadlineSeconds` (from its
/// start time) is stopped and Failed with reason DeadlineExceeded; before that, the worker is
/// woken at the deadline.
function checkActiveDeadline(rec: PodRecord, ctx: WorkerContext): void {
  const spec = rec.spec;
  if (spec === null || !spec.hasActiveDeadline || rec.startTimeMs == 0 || rec.failure !== null) return;
  const deadlineMs = rec.startTimeMs + <u64>spec.activeDeadlineSeconds * 1000;
  if (ctx.nowMs < deadlineMs) {
    rec.deadlineAtMs = deadlineMs;
    return;
  }
  rec.deadlineAtMs = 0;
  rec.failure = new PodFailure("DeadlineExceeded", DEADLINE_MESSAGE, false);
  rec.terminal = true;
  ctx.event(rec, "", EventType.Warning, "DeadlineExceeded", DEADLINE_MESSAGE);
}

export class Agent {
  private ctx: WorkerContext;
  private pods: PodManager;
  private intake: RelistIntake;
  private results: ActionResults;
  private eviction: EvictionPass;
  private probes: ProbeManager;
  private shutdown: NodeShutdown;

  constructor(public config: AgentConfig) {
    assert(config.relistPeriodMs > 0, "agent-config: relist-period-ms must be > 0");
    assert(config.backoffInitialMs > 0 && config.backoffInitialMs <= config.backoffMaxMs, "agent-config: back-off");
    const ctx = new WorkerContext(config, new Backoff(config.backoffInitialMs, config.backoffMaxMs),
      new Backoff(config.backoffInitialMs, config.backoffMaxMs));
    const rankTable = new RankTable();
    const pods = new PodManager(ctx, rankTable);
    const intake = new RelistIntake(ctx, pods);
    this.ctx = ctx;
    this.pods = pods;
    this.intake = intake;
    this.results = new ActionResults(ctx, pods, intake);
    this.eviction = new EvictionPass(ctx, pods, rankTable);
    this.probes = new ProbeManager(ctx, pods);
    this.shutdown = new NodeShutdown(ctx, pods);
  }

  /// The crash-loop back-off in force at `nowMs`, for the host's checkpoint.
  backOffs(nowMs: u64): BackOffCheckpoint[] {
    return this.ctx.crashBackoff.checkpoint(nowMs);
  }

  /// Checkpointed crash-loop back-off entries, given back to a new agent before its first relist.
  restoreBackOffs(nowMs: u64, entries: BackOffCheckpoint[]): void {
    for (let i = 0; i < entries.length; i++) this.ctx.crashBackoff.restoreCheckpoint(entries[i], nowMs);
  }

  /// Applies the node's resources and eviction flags; returns the error, or "" when applied.
  configureNode(config: NodeConfig): string {
    return this.eviction.configure(config);
  }

  /// Sets the topology, CPU and memory managers; "" when applied, else the reason.
  configureHardware(config: HardwareConfig): string {
    return this.ctx.hardware.configure(config);
  }

  /// A device plugin's devices (or none: the plugin went away).
  handleDevices(nowMs: u64, resource: string, devices: DeviceInfo[]): void {
    this.ctx.nowMs = nowMs;
    this.ctx.hardware.setDevices(resource, devices);
  }

  get hardware(): HardwareManager {
    return this.ctx.hardware;
  }

  /// Sets graceful node shutdown; returns the delay the lock must hold, 0 for off.
  configureNodeShutdown(gracePeriodSeconds: i64, criticalPodsSeconds: i64, byPriority: ShutdownGracePeriod[]): u64 {
    return this.shutdown.configure(gracePeriodSeconds, criticalPodsSeconds, byPriority);
  }

  /// logind announced a shutdown or its cancellation.
  handleNodeShutdown(nowMs: u64, shuttingDown: bool): void {
    this.ctx.nowMs = nowMs;
    this.shutdown.handle(nowMs, shuttingDown);
  }

  get nodeShuttingDown(): bool {
    return this.shutdown.shuttingDown;
  }

  /// The node's pressure conditions now (MemoryPressure, DiskPressure, PIDPressure), sorted.
  get pressureConditions(): string[] {
    return this.eviction.conditions;
  }

  handleNodeStats(nowMs: u64, stats: NodeStats): void {
    this.eviction.handle(nowMs, stats);
  }

  handlePods(nowMs: u64, specs: PodSpec[]): PodRejection[] {
    this.ctx.nowMs = nowMs;
    return this.pods.handlePods(nowMs, specs);
  }

  /// A typed relist: packed in place, then the one relist path.
  handleRelist(nowMs: u64, snapshot: RuntimeSnapshot): void {
    const packed = packSnapshot(snapshot);
    this.handlePackedRelist(nowMs, packed);
    packed.free();
  }

  handlePackedRelist(nowMs: u64, snapshot: PackedSnapshot): void {
    this.ctx.nowMs = nowMs;
    this.intake.handle(nowMs, snapshot);
  }

  /// A runtime event: the next poll relists (one relist covers any number of events).
  handleRuntimeEvent(nowMs: u64): void {
    this.ctx.nowMs = nowMs;
    this.ctx.relistRequested = true;
  }

  /// The runtime's stream of every container change is up, or given up on (see RelistIntake).
  handleEventStream(nowMs: u64, streaming: bool): void {
    this.ctx.nowMs = nowMs;
    this.intake.eventStream(streaming);
  }

  handleActionResults(nowMs: u64, results: ActionResult[]): void {
    this.ctx.nowMs = nowMs;
    for (let i = 0; i < results.length; i++) this.results.apply(nowMs, results[i]);
  }

  handleProbeResults(nowMs: u64, results: ProbeResult[]): void {
    this.ctx.nowMs = nowMs;
    this.probes.handleResults(nowMs, results);
  }

  pollActions(nowMs: u64): PlannedAction[] {
    const ctx = this.ctx;
    ctx.nowMs = nowMs;
    this.intake.poll(nowMs);
    if (this.intake.seenRuntime) {
      // A group whose grace ran out gives way before the workers run, so the next one's stops
      // go out in this poll.
      this.shutdown.advance(nowMs);
      this.runWorkers(nowMs);
      // After the workers: probes read the statuses they just published. A probe result that
      // changed what a status says is acted on at the next poll (the deadline says now).
      this.probes.poll(nowMs);
    }
    // After the workers: a group whose pods all stopped just now gives way to the next.
    this.shutdown.advance(nowMs);
    if (this.intake.seenRuntime) this.reconcileHardware(nowMs);
    const out = ctx.queue;
    ctx.queue = [];
    return out;
  }

  pollDeadline(): u64 {
    if (this.ctx.queue.length > 0) return this.ctx.nowMs;
    let deadline = this.intake.deadline();
    const hardware = this.ctx.hardware;
    if (hardware.cpu.isStatic && this.intake.seenRuntime && hardware.nextReconcileMs < deadline) deadline = hardware.nextReconcileMs;
    const shutdownDeadline = this.shutdown.deadline();
    if (shutdownDeadline != 0 && shutdownDeadline < deadline) deadline = shutdownDeadline;
    if (this.intake.seenRuntime) {
      const probeDeadline = this.probes.deadline(this.ctx.nowMs);
      if (probeDeadline < deadline) deadline = probeDeadline;
    }
    const records = this.pods.list;
    for (let i = 0, n = records.length; i < n; i++) {
      const rec = unchecked(records[i]);
      if (rec.deadlineAtMs != 0 && rec.deadlineAtMs < deadline) deadline = rec.deadlineAtMs;
      if (rec.busyCount > 0 || rec.needsFreshView) continue;
      // A due refresh waits for a pod's back-off like any other step (else the host would be
      // called again at once, and again, until the back-off ends).
      const refreshAtMs = rec.volumes.refreshAtMs;
      if (refreshAtMs != 0 && rec.state == WorkerState.SyncPod && !rec.terminal) {
        const atMs = rec.retryAtMs > refreshAtMs ? rec.retryAtMs : refreshAtMs;
        if (atMs < deadline) deadline = atMs;
      }
      if (rec.retryAtMs != 0 && rec.retryAtMs < deadline) deadline = rec.retryAtMs;
      else if (rec.retryAtMs == 0 && rec.dirty && this.intake.seenRuntime) deadline = this.ctx.nowMs;
    }
    return deadline;
  }

  /// Runs the worker of every pod that has something to decide and is not waiting on the runtime.
  private runWorkers(nowMs: u64): void {
    const due: string[] = [];
    const records = this.pods.list;
    for (let i = 0, n = records.length; i < n; i++) {
      const rec = unchecked(records[i]);
      if (rec.retryAtMs != 0 && rec.retryAtMs <= nowMs) {
        rec.retryAtMs = 0;
        rec.dirty = true;
      }
      if (rec.deadlineAtMs != 0 && rec.deadlineAtMs <= nowMs) {
        rec.deadlineAtMs = 0;
        rec.dirty = true;
      }
      if (rec.volumes.refreshAtMs != 0 && rec.volumes.refreshAtMs <= nowMs && rec.state == WorkerState.SyncPod && !rec.terminal) rec.dirty = true;
      if (!rec.dirty) continue;
      if (rec.busyCount == 0 && !rec.needsFreshView && rec.retryAtMs == 0) due.push(rec.uid);
      else refreshStatus(rec, this.ctx); // waiting to act, but what it shows may have changed
    }
    // Sorted, so that the actions never depend on the order pods arrived in.
    due.sort((a: string, b: string): i32 => (a < b ? -1 : a > b ? 1 : 0));
    for (let i = 0; i < due.length; i++) this.runWorker(this.pods.get(due[i]));
  }

  /// One step of a pod's worker: sync, terminate or clean up, by its state.
  private runWorker(rec: PodRecord): void {
    const ctx = this.ctx;
    rec.dirty = false;
    if (rec.needsAdmission && rec.spec !== null) this.pods.admit(rec, rec.spec!, this.eviction.conditions, this.shutdown.shuttingDown);
    refreshStatus(rec, ctx);
    if (rec.state == WorkerState.SyncPod && !rec.terminal) checkActiveDeadline(rec, ctx);
    if (rec.state == WorkerState.SyncPod) {
      if (rec.terminal) {
        movePod(rec, WorkerEvent.BecameTerminal);
      } else {
        // A wait noted for one container (its back-off) must not hold back the action just
        // queued for another: the pod steps again when that action's result comes in.
        if (syncPodStep(rec, ctx)) rec.retryAtMs = 0;
        refreshStatus(rec, ctx);
        return;
      }
    }
    if (rec.state == WorkerState.TerminatingPod) {
      if (terminatingStep(rec, ctx)) return;
      movePod(rec, WorkerEvent.AllStopped);
    }
    if (rec.state == WorkerState.TerminatedPod) {
      // Every container stopped: its CPUs, memory and devices go back (upstream's RemoveContainer).
      this.releaseHardware(rec.uid);
      // Upstream unmounts the volumes of every pod whose containers have all stopped.
      if (tearDownStep(rec, ctx)) return;
      if (rec.spec !== null && !rec.terminal && !rec.spec!.beingDeleted) {
        // Removed, then desired again while it stopped (a duplicate that shadowed it went away):
        // it runs again, as upstream starts a new worker for a pod it had finished.
        movePod(rec, WorkerEvent.Readded);
        return;
      }
      if (rec.spec !== null) return; // terminal but still desired: keep it as it is
      if (cleanupStep(rec, ctx)) return;
      movePod(rec, WorkerEvent.AllRemoved);
    }
    if (rec.state == WorkerState.Forgotten) this.pods.remove(rec);
  }

  private releaseHardware(uid: string): void {
    const hardware = this.ctx.hardware;
    const before = hardware.version;
    hardware.releasePod(uid);
    if (hardware.version != before) this.ctx.hardwareStateChanged();
  }

  /// The CPU manager's reconcile (every `reconcilePeriodMs`): each running container whose cpuset
  /// changed since it was last written gets it again, and assignments of pods the agent no longer
  /// knows (gone while it was down) are freed.
  private reconcileHardware(nowMs: u64): void {
    const hardware = this.ctx.hardware;
    if (!hardware.cpu.isStatic || nowMs < hardware.nextReconcileMs) return;
    hardware.nextReconcileMs = nowMs + hardware.reconcilePeriodMs;
    if (this.pods.handledOnce) {
      const uids = hardware.heldPods();
      for (let i = 0; i < uids.length; i++) if (!this.pods.has(uids[i])) this.releaseHardware(uids[i]);
    }
    const records = this.pods.list.slice(0);
    records.sort((a: PodRecord, b: PodRecord): i32 => (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0));
    for (let i = 0; i < records.length; i++) {
      const rec = records[i];
      for (let j = 0; j < rec.containers.length; j++) {
        const c = rec.containers[j];
        if (c.state != ContainerState.Running) continue;
        const update = hardware.reconcileOne(rec.uid, c.id, c.name);
        if (update !== null) this.ctx.updateContainerCpuset(rec, c.id, c.name, update.cpus, update.mems);
      }
    }
  }

  get podCount(): i32 {
    return this.pods.size;
  }

  get plegEventCount(): u64 {
    return this.intake.plegEventCount;
  }

  get staleRelistCount(): u64 {
    return this.intake.staleRelistCount;
  }

  get abandonedRelistCount(): u64 {
    return this.intake.abandonedRelistCount;
  }

  get probeRunCount(): u64 {
    return this.probes.runCount;
  }

  get unknownResultCount(): u64 {
    return this.results.unknownCount;
  }
}
