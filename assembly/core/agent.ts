// The agent: owns every pod record, feeds relists through the PLEG, applies action results to the
// view, runs pod worker steps and publishes statuses. Sans-IO: inputs carry `nowMs`, outputs are
// queued actions the host polls.
import { Backoff } from "./backoff";
import { InFlight, WorkerContext } from "./context";
import {
  ActionResult,
  ActionTag,
  AgentConfig,
  ContainerObservation,
  ContainerState,
  ContainerStatus,
  ErrorKind,
  EventType,
  NodeConfig,
  NodeStats,
  PodUsageIn,
  PodCondition,
  PodConditionType,
  PlannedAction,
  PodPhase,
  PodRejection,
  PodSpec,
  PodStatus,
  RuntimeSnapshot,
  SandboxObservation,
  SandboxState,
  TerminatedState,
  LinuxResources,
  ResourceQuantity,
} from "./model";
import { podConditions, sameConditions } from "./conditions";
import { Pleg } from "./pleg";
import { C_ID, PackedSnapshot, S_ID, packSnapshot } from "./packed";
import { AppliedResources, MINIMUM_GRACE_PERIOD_SECONDS, PodFailure, PodRecord } from "./pod-record";
import { EvictionCandidate, EvictionManager, resourceOfSignal } from "./eviction-manager";
import { RankTable, rankingKind } from "./rank-table";
import { AdmitResult, admitUnderPressure } from "./eviction-admission";
import { bytesOfMilli, isCriticalPod, podRequestBytes, writtenRequest } from "./resources";
import { requestMilli } from "./cgroup-values";
import { acceptAllocation } from "./resize";
import { WorkerEvent, WorkerState, canTransition, transition } from "./pod-workers";
import { imagePullKey, restartPolicyOf } from "./restart";
import { WaitingReason, containerStatuses, podPhase } from "./status";
import { syncPodStep } from "./sync-pod";
import { cleanupStep, terminatingStep } from "./terminate-pod";
import { podProblems } from "./validation";

/// gRPC NOT_FOUND: the object is already gone, which is what a stop or remove wanted.
const GRPC_NOT_FOUND: u32 = 5;
const NS_PER_MS: i64 = 1_000_000;
const BACKOFF_COLLECT_PERIOD_MS: u64 = 60_000;
/// A relist unanswered for this long is given up and asked again: a host that lost the answer
/// must not freeze every pod. (A real relist ends sooner: each CRI call has its own deadline.)
export const RELIST_ANSWER_TIMEOUT_MS: u64 = 30_000;

export class Agent {
  private ctx: WorkerContext;
  private pods: Map<string, PodRecord> = new Map();
  /// The same records as `pods`, in a list kept alongside it: walking it every poll allocates
  /// nothing, where Map.values() would copy the records into a new array each time.
  private podList: PodRecord[] = [];
  private pleg: Pleg = new Pleg();
  /// Pods whose view is not the runtime's last word (see markViewStale).
  private staleViews: PodRecord[] = [];
  private relistInFlightId: u64 = 0;
  private relistIssuedAtMs: u64 = 0;
  private nextRelistAtMs: u64 = 0;
  /// `listed-at-ms` of the newest relist taken in; an older one arriving later is out of date.
  private newestListedAtMs: u64 = 0;
  /// When back-off entries idle for more than 2 x max are next dropped (upstream: every minute).
  private nextBackoffCollectAtMs: u64 = 0;
  /// No pod is acted on before the first relist: after an agent restart the runtime already
  /// holds its pods, and acting blind would create duplicates.
  private seenRuntime: bool = false;
  private eviction: EvictionManager = new EvictionManager();
  /// The pressure conditions last announced with node-pressure-changed.
  private announcedPressure: string = "";
  /// Numbers the ranking passes: the rank table says which pods have stats and may be evicted in each.
  private statsPassCount: u64 = 0;
  /// The records in the order the last ranking pass's stats listed them, and a spare array for
  /// the next (the host lists pods in a steady order: matching by position saves a hash lookup).
  /// Slots are plain numbers, so that keeping them costs the collector nothing.
  private statsOrder: i32[] = [];
  private statsOrderSpare: i32[] = [];
  /// Each record's slot (`PodRecord.slot`) and the slots free for reuse.
  private slots: Array<PodRecord | null> = [];
  private freeSlots: i32[] = [];
  /// What ranking reads of each pod, by slot.
  private rankTable: RankTable = new RankTable();
  /// Counters, for tests and metrics.
  plegEventCount: u64 = 0;
  unknownResultCount: u64 = 0;
  staleRelistCount: u64 = 0;
  abandonedRelistCount: u64 = 0;

  constructor(public config: AgentConfig) {
    assert(config.relistPeriodMs > 0, "agent-config: relist-period-ms must be > 0");
    assert(config.backoffInitialMs > 0 && config.backoffInitialMs <= config.backoffMaxMs, "agent-config: back-off");
    this.ctx = new WorkerContext(config, new Backoff(config.backoffInitialMs, config.backoffMaxMs),
      new Backoff(config.backoffInitialMs, config.backoffMaxMs));
  }

  /// Applies the node's resources and eviction flags; returns the error, or "" when applied.
  configureNode(config: NodeConfig): string {
    const error = this.eviction.configure(config);
    if (error.length > 0) return error;
    this.ctx.memoryCapacityBytes = <i64>config.memoryCapacityBytes;
    this.ctx.allocatableMemoryBytes = <i64>config.allocatableMemoryBytes;
    this.ctx.allocatableCpuMilli = <i64>config.allocatableCpuMilli;
    return "";
  }

  /// The node's pressure conditions now (MemoryPressure, DiskPressure, PIDPressure), sorted.
  get pressureConditions(): string[] {
    return this.eviction.conditions;
  }

  /// One stats pass: pressure conditions, at most one eviction, deferred resizes looked at again.
  handleNodeStats(nowMs: u64, stats: NodeStats): void {
    this.ctx.nowMs = nowMs;
    this.ctx.lastStats = stats;
    const evicting = this.eviction.evictingUid;
    const previousGone = evicting.length == 0 || !this.pods.has(evicting) ||
      this.pods.get(evicting).state == WorkerState.TerminatedPod || this.pods.get(evicting).state == WorkerState.Forgotten;
    const threshold = this.eviction.observe(nowMs, stats.signals, previousGone);
    const conditions = this.eviction.conditions;
    const announced = conditions.join(",");
    if (announced != this.announcedPressure) {
      this.announcedPressure = announced;
      this.ctx.nodePressureChanged(conditions.includes("MemoryPressure"), conditions.includes("DiskPressure"), conditions.includes("PIDPressure"));
    }
    const records = this.podList;
    if (threshold === null) {
      for (let i = 0, n = records.length; i < n; i++) {
        const rec = unchecked(records[i]);
        if (rec.resizePendingReason.length > 0) rec.dirty = true; // usage changed: a deferred resize may fit now
      }
      return;
    }
    const pass = ++this.statsPassCount;
    this.placeStats(stats, pass);
    const table = this.rankTable;
    for (let i = 0, n = records.length; i < n; i++) {
      const rec = unchecked(records[i]);
      if (rec.resizePendingReason.length > 0) rec.dirty = true;
      const spec = rec.spec;
      if (spec === null || rec.state != WorkerState.SyncPod || rec.terminal || rec.failure !== null) continue;
      // What ranking reads of a spec is worked out once per spec, not once per stats pass.
      if (rec.candidateSpec !== spec) {
        const candidate = candidateOf(rec, spec);
        rec.candidate = candidate;
        rec.candidateSpec = spec;
        table.setFacts(rec.slot, candidate);
      }
      if (!rec.candidate!.critical) table.markEligible(rec.slot, pass);
    }
    const kind = rankingKind(resourceOfSignal(threshold!.signal));
    const slot = table.first(kind, pass, this.slots);
    if (slot < 0) return;
    const rec = this.slots[slot]!;
    const decision = this.eviction.decide(nowMs, threshold!, stats, rec.candidate!);
    this.evict(rec, decision.message, decision.gracePeriodSeconds);
  }

  /// Puts each known pod's numbers from `stats` in the rank table for pass `pass`.
  private placeStats(stats: NodeStats, pass: u64): void {
    const previous = this.statsOrder;
    const order = this.statsOrderSpare;
    order.length = 0;
    let cursor = 0;
    const table = this.rankTable;
    for (let i = 0, n = stats.podCount(); i < n; i++) {
      let slot = -1;
      // Most pods are where they were last pass, or one further on when a pod before them left.
      // A slot taken by another pod since fails the uid check and falls back to the index.
      for (let k = cursor, end = min(cursor + 2, previous.length); k < end; k++) {
        const known = unchecked(previous[k]);
        if (table.uidIs(known, stats, i)) {
          slot = known;
          cursor = k + 1;
          break;
        }
      }
      if (slot < 0) {
        const uid = stats.uidAt(i);
        if (!this.pods.has(uid)) continue;
        slot = this.pods.get(uid).slot;
      }
      table.setUsage(slot, pass, stats, i);
      order.push(slot);
    }
    this.statsOrderSpare = previous;
    this.statsOrder = order;
  }

  /// Fails the pod as upstream's eviction does: killed with the given grace, phase Failed,
  /// reason Evicted, a DisruptionTarget condition, never restarted.
  private evict(rec: PodRecord, message: string, gracePeriodSeconds: i64): void {
    rec.failure = new PodFailure("Evicted", message, true);
    rec.graceOverrideSeconds = gracePeriodSeconds < 0 ? 0 : gracePeriodSeconds;
    rec.terminal = true;
    rec.dirty = true;
    rec.retryAtMs = 0;
    this.ctx.event(rec, "", EventType.Warning, "Evicted", message);
  }

  handlePods(nowMs: u64, specs: PodSpec[]): PodRejection[] {
    this.ctx.nowMs = nowMs;
    const rejections: PodRejection[] = [];
    const desired = new Map<string, PodSpec>();
    // Full names (namespace/name) taken: upstream's config merge keeps the first pod of a name
    // and refuses the next as a duplicate, whatever their uids.
    const fullNames = new Set<string>();
    for (let i = 0; i < specs.length; i++) {
      const spec = specs[i];
      const problems = podProblems(spec, <u32>i);
      if (problems.length > 0) {
        for (let p = 0; p < problems.length; p++) rejections.push(problems[p]);
        continue;
      }
      if (desired.has(spec.uid)) {
        rejections.push(new PodRejection(<u32>i, spec.uid, "metadata.uid", 'Duplicate value: "' + spec.uid + '"'));
        continue;
      }
      const fullName = spec.namespace + "/" + spec.name;
      if (fullNames.has(fullName)) {
        rejections.push(new PodRejection(<u32>i, spec.uid, "metadata.name", 'Duplicate value: "' + spec.name + '"'));
        continue;
      }
      fullNames.add(fullName);
      desired.set(spec.uid, spec);
    }
    const uids = desired.keys();
    for (let i = 0; i < uids.length; i++) {
      const spec = desired.get(uids[i]);
      let rec: PodRecord;
      if (this.pods.has(spec.uid)) {
        rec = this.pods.get(spec.uid);
        const wasRemoved = rec.spec === null;
        if (!wasRemoved && rec.sameSpec(spec)) continue; // another pod changed, not this one
        rec.setSpec(spec);
        rec.retryAtMs = 0; // a new spec is acted on now; back-offs still apply inside the step
        if (wasRemoved && !spec.beingDeleted) this.move(rec, WorkerEvent.Readded);
      } else {
        rec = new PodRecord(spec.uid, spec.namespace, spec.name);
        rec.setSpec(spec);
        rec.startTimeMs = nowMs;
        acceptAllocation(rec, spec);
        rec.needsAdmission = true;
        this.addPod(rec);
      }
      // A pod marked for deletion is stopped for good; its status is still reported, and says
      // `finished` once everything is stopped so the host can delete the apiserver object.
      if (spec.beingDeleted) {
        this.move(rec, WorkerEvent.Deleted);
        this.stopSoonerIfShortened(rec);
      }
    }
    const known = this.podList;
    for (let i = 0; i < known.length; i++) {
      const rec = known[i];
      if (rec.spec !== null && !desired.has(rec.uid)) {
        rec.spec = null;
        rec.dirty = true;
        this.move(rec, WorkerEvent.Removed);
      }
    }
    return rejections;
  }

  /// Upstream's eviction admission: a new pod is refused while the node is under pressure
  /// (memory pressure refuses only BestEffort pods that do not tolerate it); critical pods
  /// always pass. A refused pod is Failed with reason Evicted and never started.
  private admit(rec: PodRecord, spec: PodSpec): void {
    rec.needsAdmission = false;
    // A pod the runtime already runs (an agent restart) was admitted before: keep it.
    if (rec.sandboxes.length > 0 || rec.containers.length > 0) return;
    if (spec.beingDeleted || spec.hasReportedTerminalPhase) return;
    let result = this.admitPodCount(rec);
    if (result.admit) result = admitUnderPressure(this.eviction.conditions, rec.qos, isCriticalPod(spec), spec.toleratesMemoryPressure);
    if (result.admit) return;
    // As upstream's rejectPod: the event carries the reason's words, the status says rejected.
    rec.failure = new PodFailure(result.reason, "Pod was rejected: " + result.message, false);
    rec.terminal = true;
    this.ctx.event(rec, "", EventType.Warning, result.reason, result.message);
  }

  /// Upstream's `--max-pods` predicate: a new pod is refused when the node already has that
  /// many active pods (admitted, not finished). Static pods count and are refused too.
  private admitPodCount(rec: PodRecord): AdmitResult {
    const maxPods = this.config.maxPods;
    if (maxPods == 0) return new AdmitResult();
    let used: u32 = 0;
    const pods = this.podList;
    for (let i = 0; i < pods.length; i++) {
      const other = pods[i];
      if (other === rec || other.spec === null || other.terminal || other.needsAdmission) continue;
      used++;
    }
    if (used < maxPods) return new AdmitResult();
    return new AdmitResult(false, "OutOfpods",
      "Node didn't have enough resource: pods, requested: 1, used: " + used.toString() + ", capacity: " + maxPods.toString());
  }

  /// A deletion whose grace period was shortened (deleted again with a shorter one) while its
  /// stops are running: the running containers are stopped again with the shorter timeout, as
  /// upstream's pod worker kills again when the grace period shrinks.
  private stopSoonerIfShortened(rec: PodRecord): void {
    if (rec.state != WorkerState.TerminatingPod || rec.stopTimeoutSeconds < 0) return;
    let grace = rec.gracePeriodSeconds();
    if (grace < MINIMUM_GRACE_PERIOD_SECONDS) grace = MINIMUM_GRACE_PERIOD_SECONDS;
    if (grace >= rec.stopTimeoutSeconds) return;
    for (let i = 0; i < rec.containers.length; i++) {
      const c = rec.containers[i];
      if (c.state == ContainerState.Running) this.ctx.stopContainer(rec, c.id, c.name, "Stopping container " + c.name);
    }
  }

  private addPod(rec: PodRecord): void {
    this.pods.set(rec.uid, rec);
    this.podList.push(rec);
    if (this.freeSlots.length > 0) {
      rec.slot = this.freeSlots.pop();
      this.slots[rec.slot] = rec;
    } else {
      rec.slot = this.slots.length;
      this.slots.push(rec);
    }
    this.rankTable.claim(rec.slot, rec.uid);
  }

  private removePod(rec: PodRecord): void {
    this.pods.delete(rec.uid);
    this.slots[rec.slot] = null;
    this.freeSlots.push(rec.slot);
    const list = this.podList;
    const at = list.indexOf(rec);
    if (at < 0) return;
    list[at] = list[list.length - 1]; // order does not matter: due pods are sorted by uid
    list.pop();
  }

  /// A typed relist: packed in place, then the one relist path.
  handleRelist(nowMs: u64, snapshot: RuntimeSnapshot): void {
    const packed = packSnapshot(snapshot);
    this.handlePackedRelist(nowMs, packed);
    packed.free();
  }

  handlePackedRelist(nowMs: u64, snapshot: PackedSnapshot): void {
    this.ctx.nowMs = nowMs;
    const listedBeforeAsked = this.relistInFlightId == 0 || snapshot.listedAtMs < this.relistIssuedAtMs;
    if (snapshot.listedAtMs < this.newestListedAtMs && listedBeforeAsked) {
      // A late or repeated answer to an earlier relist: the runtime has since said something
      // newer, and taking it would move views back in time. (An answer listed after the current
      // relist was asked is taken even if older: that is the host's clock stepping back.)
      this.staleRelistCount++;
      return;
    }
    this.relistInFlightId = 0;
    this.nextRelistAtMs = nowMs + this.config.relistPeriodMs;
    this.newestListedAtMs = snapshot.listedAtMs;
    this.seenRuntime = true;
    if (nowMs >= this.nextBackoffCollectAtMs) {
      // Keeps back-off memory bounded on a long run: one entry per container spec ever failed.
      this.ctx.crashBackoff.collect(nowMs);
      this.ctx.imageBackoff.collect(nowMs);
      this.nextBackoffCollectAtMs = nowMs + BACKOFF_COLLECT_PERIOD_MS;
    }
    const diff = this.pleg.relist(snapshot);
    this.plegEventCount += <u64>diff.events.length;
    const uninspected = new Set<string>();
    for (let i = 0; i < snapshot.uninspectedPodUids.length; i++) uninspected.add(snapshot.uninspectedPodUids[i]);

    // Pods the PLEG saw change, and orphans: sandboxes of pods nobody asked for.
    for (let i = 0, n = diff.pods.length; i < n; i++) {
      const slot = unchecked(diff.pods[i]);
      if (!slot.changed) continue;
      if (!this.pods.has(slot.uid)) {
        if (slot.sandboxIndices.length == 0) continue; // containers without a sandbox: nothing to act on
        this.adoptOrphan(snapshot.materializeSandbox(slot.sandboxIndices[0]));
      }
      this.markViewStale(this.pods.get(slot.uid));
    }
    // Every pod whose view is not what the runtime last said takes the new relist, unless it is
    // older than the pod's own newest action or the pod could not be inspected.
    const stale = this.staleViews;
    this.staleViews = [];
    for (let i = 0, n = stale.length; i < n; i++) {
      const rec = unchecked(stale[i]);
      if (rec.viewIsSnapshot || rec.state == WorkerState.Forgotten) continue;
      if (uninspected.has(rec.uid)) {
        // The runtime has something of this pod that could not be read. Acting on the old view
        // could duplicate what is there (after an agent restart the old view is empty), so the
        // pod waits for a relist that reads it, as upstream's pod worker waits out a status error.
        this.staleViews.push(rec);
        rec.needsFreshView = true;
        continue;
      }
      if (snapshot.listedAtMs <= rec.viewMutatedAtMs) {
        // Keep the view: it is newer. Look again at once if the pod is waiting for the runtime's
        // word (a relist taken in the same millisecond as the pod's last result cannot tell
        // whether it saw that result's effect).
        this.staleViews.push(rec);
        if (rec.needsFreshView) this.ctx.relistRequested = true;
        continue;
      }
      const slot = this.pleg.slotOf(rec.uid);
      const sandboxes: SandboxObservation[] = [];
      const containers: ContainerObservation[] = [];
      if (slot !== null) {
        for (let j = 0; j < slot.sandboxIndices.length; j++) {
          const index = slot.sandboxIndices[j];
          const previous = findSandboxAt(rec, snapshot, index);
          sandboxes.push(previous !== null && snapshot.sandboxUnchanged(index, previous) ? previous : snapshot.materializeSandbox(index));
        }
        for (let j = 0; j < slot.containerIndices.length; j++) {
          const index = slot.containerIndices[j];
          const previous = findContainerAt(rec, snapshot, index);
          containers.push(snapshot.materializeContainer(index, previous));
        }
      }
      rec.sandboxes = sandboxes;
      rec.containers = containers;
      rec.viewIsSnapshot = true;
      rec.onStaleList = false;
      rec.needsFreshView = false;
      rec.dirty = true;
    }
  }

  /// The pod's view differs from what the runtime said last: the next relist replaces it.
  private markViewStale(rec: PodRecord): void {
    if (!rec.viewIsSnapshot) {
      if (!rec.onStaleList) {
        rec.onStaleList = true;
        this.staleViews.push(rec);
      }
      return;
    }
    rec.viewIsSnapshot = false;
    rec.onStaleList = true;
    this.staleViews.push(rec);
  }

  private adoptOrphan(s: SandboxObservation): void {
    const rec = new PodRecord(s.podUid, s.podNamespace, s.podName);
    if (s.hasGracePeriod) rec.observedGracePeriodSeconds = s.terminationGracePeriodSeconds;
    rec.state = WorkerState.TerminatingPod;
    this.addPod(rec);
  }

  handleActionResults(nowMs: u64, results: ActionResult[]): void {
    this.ctx.nowMs = nowMs;
    for (let i = 0; i < results.length; i++) this.applyResult(nowMs, results[i]);
  }

  private applyResult(nowMs: u64, result: ActionResult): void {
    if (result.actionId == this.relistInFlightId && this.relistInFlightId != 0) {
      // Only failures of a relist come here; success is handle-relist.
      this.relistInFlightId = 0;
      this.nextRelistAtMs = nowMs + this.config.relistPeriodMs;
      return;
    }
    if (!this.ctx.inFlight.has(result.actionId)) {
      this.unknownResultCount++;
      return;
    }
    const flight = this.ctx.inFlight.get(result.actionId);
    this.ctx.inFlight.delete(result.actionId);
    if (!this.pods.has(flight.podUid)) return;
    const rec = this.pods.get(flight.podUid);
    rec.busyCount--;
    rec.dirty = true;
    rec.viewMutatedAtMs = nowMs;
    this.markViewStale(rec);
    const error = result.error;
    if (error !== null) {
      this.applyFailure(nowMs, rec, flight, error.kind, error.grpcCode, error.message);
      return;
    }
    const nowNs = <i64>nowMs * NS_PER_MS;
    switch (flight.tag) {
      case ActionTag.RunSandbox: {
        const s = new SandboxObservation();
        s.id = result.createdId;
        s.podUid = rec.uid;
        s.podName = rec.name;
        s.podNamespace = rec.namespace;
        s.attempt = flight.attempt;
        s.state = SandboxState.Ready;
        s.createdAtNs = nowNs;
        rec.putSandbox(s);
        if (flight.resources !== null) rec.podApplied = flight.resources;
        break;
      }
      case ActionTag.CreateContainer: {
        const c = new ContainerObservation();
        c.id = result.createdId;
        c.sandboxId = flight.sandboxId;
        c.podUid = rec.uid;
        c.name = flight.containerName;
        c.attempt = flight.attempt;
        c.state = ContainerState.Created;
        c.image = flight.image;
        c.specHash = flight.specHash;
        c.createdAtNs = nowNs;
        rec.putContainer(c);
        if (flight.resources !== null) rec.applied.set(c.id, new AppliedResources(changetype<LinuxResources>(flight.resources), flight.requests, flight.limits));
        rec.waiting.delete(flight.containerName);
        this.ctx.imageBackoff.reset(imagePullKey(rec.uid, flight.image));
        this.ctx.event(rec, flight.containerName, EventType.Normal, "Created", "Container created");
        break;
      }
      case ActionTag.StartContainer: {
        const c = rec.findContainer(flight.containerId);
        if (c !== null) {
          c.state = ContainerState.Running;
          c.startedAtNs = nowNs;
        }
        this.ctx.event(rec, flight.containerName, EventType.Normal, "Started", "Container started");
        break;
      }
      case ActionTag.StopContainer:
      case ActionTag.StopSandbox:
        // The exit code and finish time come from the runtime: decide again after a relist.
        this.markStopped(rec, flight);
        break;
      case ActionTag.RemoveContainer:
        rec.dropContainer(flight.containerId);
        rec.applied.delete(flight.containerId);
        break;
      case ActionTag.UpdateContainerResources:
        rec.applied.set(flight.containerId, new AppliedResources(changetype<LinuxResources>(flight.resources), flight.requests, flight.limits));
        this.ctx.event(rec, flight.containerName, EventType.Normal, "ResizeCompleted", "Container " + flight.containerName + " resized in place");
        break;
      case ActionTag.UpdatePodCgroup:
        rec.podApplied = flight.resources;
        break;
      case ActionTag.RemoveSandbox:
        rec.dropSandbox(flight.sandboxId);
        break;
    }
  }

  private markStopped(rec: PodRecord, flight: InFlight): void {
    if (flight.tag == ActionTag.StopSandbox) {
      const s = rec.findSandbox(flight.sandboxId);
      if (s !== null) s.state = SandboxState.NotReady;
    }
    // A stopped container's exit code and finish time are the runtime's to say: guessing them
    // would publish a status (say, Succeeded) that the next relist contradicts. The pod waits
    // for that relist before it acts again.
    rec.needsFreshView = true;
    this.ctx.relistRequested = true;
  }

  private applyFailure(nowMs: u64, rec: PodRecord, flight: InFlight, kind: i32, grpcCode: u32, message: string): void {
    const tag = flight.tag;
    if (grpcCode == GRPC_NOT_FOUND && tag != ActionTag.CreateContainer && tag != ActionTag.RunSandbox && tag != ActionTag.StartContainer) {
      // Already gone: exactly what a stop or remove wanted.
      if (tag == ActionTag.RemoveContainer) rec.dropContainer(flight.containerId);
      else if (tag == ActionTag.RemoveSandbox) rec.dropSandbox(flight.sandboxId);
      else this.markStopped(rec, flight);
      return;
    }
    // A replacement for a spec change that cannot be created or started: its status says why.
    if (tag == ActionTag.CreateContainer || tag == ActionTag.StartContainer) {
      rec.restartForSpecChange.delete(flight.containerName);
      rec.restartForResize.delete(flight.containerName);
    }
    if (tag == ActionTag.CreateContainer && kind == ErrorKind.ImagePull) {
      this.ctx.imageBackoff.next(imagePullKey(rec.uid, flight.image), nowMs, nowMs);
      rec.waiting.set(flight.containerName, new WaitingReason("ErrImagePull", message));
      this.ctx.event(rec, flight.containerName, EventType.Warning, "Failed", "Failed to pull image \"" + flight.image + "\": " + message);
      // Look again after one relist period: the status then says ImagePullBackOff until the
      // wait ends (the step wakes the pod at the end of the wait).
      this.wake(rec, nowMs + this.config.relistPeriodMs);
      return;
    }
    if (tag == ActionTag.CreateContainer) {
      rec.waiting.set(flight.containerName, new WaitingReason("CreateContainerError", message));
    } else if (tag == ActionTag.StartContainer) {
      rec.waiting.set(flight.containerName, new WaitingReason("RunContainerError", message));
      // A container whose start failed is left "created" or "exited" by the runtime: look again.
      rec.needsFreshView = true;
      this.ctx.relistRequested = true;
    }
    const reason = tag == ActionTag.RunSandbox ? "FailedCreatePodSandBox" : tag == ActionTag.StopContainer || tag == ActionTag.StopSandbox ? "FailedKillPod" : "Failed";
    this.ctx.event(rec, flight.containerName, EventType.Warning, reason, message);
    // Upstream pod workers retry a failed sync after a fixed back-off.
    this.wake(rec, nowMs + this.config.workerErrorBackoffMs);
  }

  private wake(rec: PodRecord, atMs: u64): void {
    if (rec.retryAtMs == 0 || atMs < rec.retryAtMs || rec.retryAtMs <= this.ctx.nowMs) rec.retryAtMs = atMs;
  }

  pollActions(nowMs: u64): PlannedAction[] {
    const ctx = this.ctx;
    ctx.nowMs = nowMs;
    if (ctx.relistRequested && this.relistInFlightId == 0) {
      ctx.relistRequested = false;
      this.nextRelistAtMs = nowMs;
    }
    if (this.relistInFlightId != 0 && nowMs >= this.relistIssuedAtMs + RELIST_ANSWER_TIMEOUT_MS) {
      this.abandonedRelistCount++;
      this.relistInFlightId = 0;
    }
    if (this.relistInFlightId == 0 && nowMs >= this.nextRelistAtMs) {
      this.relistInFlightId = ctx.relist();
      this.relistIssuedAtMs = nowMs;
    }
    if (this.seenRuntime) this.runWorkers(nowMs);
    const out = ctx.queue;
    ctx.queue = [];
    return out;
  }

  private runWorkers(nowMs: u64): void {
    const due: string[] = [];
    const records = this.podList;
    for (let i = 0, n = records.length; i < n; i++) {
      const rec = unchecked(records[i]);
      if (rec.retryAtMs != 0 && rec.retryAtMs <= nowMs) {
        rec.retryAtMs = 0;
        rec.dirty = true;
      }
      if (!rec.dirty) continue;
      if (rec.busyCount == 0 && !rec.needsFreshView && rec.retryAtMs == 0) due.push(rec.uid);
      else this.refreshStatus(rec); // waiting to act, but what it shows may have changed
    }
    // Sorted, so that the actions never depend on the order pods arrived in.
    due.sort((a: string, b: string): i32 => (a < b ? -1 : a > b ? 1 : 0));
    for (let i = 0; i < due.length; i++) this.runWorker(this.pods.get(due[i]));
  }

  private runWorker(rec: PodRecord): void {
    rec.dirty = false;
    if (rec.needsAdmission && rec.spec !== null) this.admit(rec, rec.spec!);
    this.refreshStatus(rec);
    if (rec.state == WorkerState.SyncPod) {
      if (rec.terminal) {
        this.move(rec, WorkerEvent.BecameTerminal);
      } else {
        syncPodStep(rec, this.ctx);
        this.refreshStatus(rec);
        return;
      }
    }
    if (rec.state == WorkerState.TerminatingPod) {
      if (terminatingStep(rec, this.ctx)) return;
      this.move(rec, WorkerEvent.AllStopped);
    }
    if (rec.state == WorkerState.TerminatedPod) {
      if (rec.spec !== null) return; // terminal but still desired: keep it as it is
      if (cleanupStep(rec, this.ctx)) return;
      this.move(rec, WorkerEvent.AllRemoved);
    }
    if (rec.state == WorkerState.Forgotten) this.removePod(rec);
  }

  private move(rec: PodRecord, event: i32): void {
    if (event == WorkerEvent.Removed && !canTransition(rec.state, event)) return;
    const from = rec.state;
    rec.state = transition(rec.state, event);
    if (from == WorkerState.SyncPod && rec.state == WorkerState.TerminatingPod) rec.stopTimeoutSeconds = -1; // a new termination
    if (rec.state != WorkerState.SyncPod) {
      rec.restartForSpecChange.clear(); // no restart while terminating
      rec.restartForResize.clear();
    }
    rec.dirty = true;
    rec.retryAtMs = 0; // termination and cleanup do not wait for a back-off
    if (event == WorkerEvent.Readded && rec.state == WorkerState.SyncPod) {
      const spec = rec.spec;
      rec.terminal = spec !== null && spec.hasReportedTerminalPhase;
      rec.cgroupRemoved = false;
    }
  }

  /// Recomputes the pod's status and publishes it when it changed.
  private refreshStatus(rec: PodRecord): void {
    const spec = rec.lastSpec;
    if (spec === null) return;
    // No first status from a view the runtime has not confirmed: after an agent restart that
    // would say Pending for a pod the runtime shows Failed.
    if (rec.status === null && rec.needsFreshView) return;
    // A container being replaced for a spec change is stopped and started as one step upstream
    // (one SyncPod); the stopped moment in between is not a status (under Never it would read
    // Failed, and a terminal phase is final).
    if ((rec.restartForSpecChange.size > 0 || rec.restartForResize.size > 0) && rec.state == WorkerState.SyncPod) return;
    const stoppedBefore: bool[] = [];
    const statuses = containerStatuses(spec, rec.containers, rec.waiting, stoppedBefore);
    const hasStatus: bool[] = [];
    for (let i = 0; i < statuses.length; i++) hasStatus.push(statuses[i].containerId.length > 0);
    // A deleted pod whose containers all stopped ends Succeeded or Failed whatever its restart
    // policy (upstream since v1.27; static pods removed from their file are not deleted pods).
    const finished = rec.state == WorkerState.TerminatedPod;
    const podIsTerminal = finished && spec.beingDeleted;
    let phase = podPhase(statuses, hasStatus, stoppedBefore, restartPolicyOf(spec), podIsTerminal);
    const previous = rec.status;
    const failure = rec.failure;
    if (failure !== null) phase = PodPhase.Failed; // evicted or refused by the node
    else if (rec.terminal && previous !== null) phase = previous.phase; // never leaves Succeeded or Failed
    else if (spec.hasReportedTerminalPhase) phase = spec.reportedTerminalPhase; // finished before this agent knew it
    if (phase == PodPhase.Succeeded || phase == PodPhase.Failed) rec.terminal = true;
    const status = new PodStatus();
    status.phase = phase;
    for (let i = 0; i < rec.sandboxes.length; i++) {
      if (rec.sandboxes[i].state == SandboxState.Ready) status.sandboxId = rec.sandboxes[i].id;
    }
    status.containerStatuses = statuses;
    this.addResources(rec, statuses);
    const previousConditions = previous !== null ? previous.conditions : [];
    status.conditions = podConditions(statuses, phase, status.sandboxId.length > 0, previousConditions, this.ctx.nowMs);
    if (failure !== null) {
      status.reason = failure.reason;
      status.message = failure.message;
      if (failure.disruption) {
        status.conditions.push(extraCondition(PodConditionType.DisruptionTarget, "TerminationByKubelet", failure.message, previousConditions, this.ctx.nowMs));
      }
    }
    if (rec.resizePendingReason.length > 0 && failure === null) {
      status.conditions.push(extraCondition(PodConditionType.PodResizePending, rec.resizePendingReason, rec.resizePendingMessage, previousConditions, this.ctx.nowMs));
    } else if (rec.resizeInProgress && failure === null) {
      status.conditions.push(extraCondition(PodConditionType.PodResizeInProgress, "", "", previousConditions, this.ctx.nowMs));
    }
    status.startTimeMs = rec.startTimeMs;
    status.finished = finished;
    if (previous !== null && sameStatus(previous, status)) return;
    status.version = ++rec.statusVersion;
    rec.status = status;
    this.ctx.publishStatus(rec);
    if (rec.terminal && rec.state == WorkerState.SyncPod) rec.dirty = true;
  }

  /// allocatedResources and the resources applied to each container's current instance.
  private addResources(rec: PodRecord, statuses: ContainerStatus[]): void {
    const spec = rec.lastSpec!;
    for (let i = 0; i < statuses.length; i++) {
      const status = statuses[i];
      const container = spec.containers[i];
      status.allocatedResources = rec.allocated.has(container.name) ? rec.allocated.get(container.name) : container.requests;
      if (status.containerId.length == 0) continue;
      if (rec.applied.has(status.containerId)) {
        const applied = rec.applied.get(status.containerId);
        status.resourceRequests = applied.requests;
        status.resourceLimits = applied.limits;
      } else {
        status.resourceRequests = container.requests;
        status.resourceLimits = container.limits;
      }
    }
  }

  pollDeadline(): u64 {
    if (this.ctx.queue.length > 0) return this.ctx.nowMs;
    let deadline: u64 = u64.MAX_VALUE;
    if (this.relistInFlightId == 0) deadline = this.ctx.relistRequested ? this.ctx.nowMs : this.nextRelistAtMs;
    else deadline = this.relistIssuedAtMs + RELIST_ANSWER_TIMEOUT_MS;
    const records = this.podList;
    for (let i = 0, n = records.length; i < n; i++) {
      const rec = unchecked(records[i]);
      if (rec.busyCount > 0 || rec.needsFreshView) continue;
      if (rec.retryAtMs != 0 && rec.retryAtMs < deadline) deadline = rec.retryAtMs;
      else if (rec.retryAtMs == 0 && rec.dirty && this.seenRuntime) deadline = this.ctx.nowMs;
    }
    return deadline;
  }

  get podCount(): i32 {
    return this.pods.size;
  }
}



/// The pod's current observation of the sandbox at `index` of the snapshot, by ID.
function findSandboxAt(rec: PodRecord, snapshot: PackedSnapshot, index: i32): SandboxObservation | null {
  const start = snapshot.sandboxWord(index, S_ID);
  const length = snapshot.sandboxWord(index, S_ID + 1);
  for (let i = 0; i < rec.sandboxes.length; i++) {
    if (snapshot.rangeEquals(rec.sandboxes[i].id, start, length)) return rec.sandboxes[i];
  }
  return null;
}

function findContainerAt(rec: PodRecord, snapshot: PackedSnapshot, index: i32): ContainerObservation | null {
  const start = snapshot.containerWord(index, C_ID);
  const length = snapshot.containerWord(index, C_ID + 1);
  for (let i = 0; i < rec.containers.length; i++) {
    if (snapshot.rangeEquals(rec.containers[i].id, start, length)) return rec.containers[i];
  }
  return null;
}

function sameContainerStatus(a: ContainerStatus, b: ContainerStatus): bool {
  return a.name == b.name && a.containerId == b.containerId && a.image == b.image && a.state == b.state &&
    a.reason == b.reason && a.message == b.message && a.exitCode == b.exitCode && a.restartCount == b.restartCount &&
    a.ready == b.ready && a.startedAtNs == b.startedAtNs && a.finishedAtNs == b.finishedAtNs && a.started == b.started &&
    sameTerminated(a.lastState, b.lastState) && sameQuantityList(a.allocatedResources, b.allocatedResources) &&
    sameQuantityList(a.resourceRequests, b.resourceRequests) && sameQuantityList(a.resourceLimits, b.resourceLimits);
}

function sameQuantityList(a: ResourceQuantity[], b: ResourceQuantity[]): bool {
  if (a.length != b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i].name != b[i].name || a[i].quantity != b[i].quantity) return false;
  return true;
}

/// A condition outside upstream's fixed five, status True, its transition time kept.
function extraCondition(type: i32, reason: string, message: string, previous: PodCondition[], nowMs: u64): PodCondition {
  let at = nowMs;
  for (let i = 0; i < previous.length; i++) if (previous[i].conditionType == type && previous[i].status) at = previous[i].lastTransitionMs;
  return new PodCondition(type, true, reason, message, at);
}

function candidateOf(rec: PodRecord, spec: PodSpec): EvictionCandidate {
  const names: string[] = [];
  const written: string[] = [];
  const bytes: i64[] = [];
  for (let i = 0; i < spec.containers.length; i++) {
    const c = spec.containers[i];
    names.push(c.name);
    written.push(writtenRequest(c, "memory"));
    bytes.push(bytesOfMilli(requestMilli(c, "memory")));
  }
  return new EvictionCandidate(rec.uid, spec.priority, isCriticalPod(spec), podRequestBytes(spec, "memory"),
    podRequestBytes(spec, "ephemeral-storage"), names, written, bytes, rec.gracePeriodSeconds());
}

function sameTerminated(a: TerminatedState | null, b: TerminatedState | null): bool {
  if (a === null || b === null) return a === b;
  return a.containerId == b.containerId && a.exitCode == b.exitCode && a.reason == b.reason && a.message == b.message &&
    a.startedAtNs == b.startedAtNs && a.finishedAtNs == b.finishedAtNs;
}

function sameStatus(a: PodStatus, b: PodStatus): bool {
  if (a.finished != b.finished || a.startTimeMs != b.startTimeMs || !sameConditions(a.conditions, b.conditions)) return false;
  if (a.phase != b.phase || a.reason != b.reason || a.message != b.message || a.sandboxId != b.sandboxId) return false;
  if (a.containerStatuses.length != b.containerStatuses.length) return false;
  for (let i = 0; i < a.containerStatuses.length; i++) {
    if (!sameContainerStatus(a.containerStatuses[i], b.containerStatuses[i])) return false;
  }
  return true;
}
