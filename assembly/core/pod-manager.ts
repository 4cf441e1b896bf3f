// The pod manager: which pods are desired, and a record for each pod the core knows (desired,
// terminating, or an orphan the runtime still holds). It validates and merges `handle-pods`,
// admits new pods, and keeps the slot table eviction ranking indexes by.
import { WorkerContext } from "./context";
import { ContainerState, EventType, PodRejection, PodSpec, SandboxObservation } from "./model";
import { MINIMUM_GRACE_PERIOD_SECONDS, PodFailure, PodRecord } from "./pod-record";
import { AdmitResult, admitUnderPressure } from "./eviction-admission";
import { isCriticalPod, podRequestBytes, podRequestMilli } from "./resources";
import { acceptAllocation } from "./resize";
import { RankTable } from "./rank-table";
import { WorkerEvent, WorkerState, movePod } from "./pod-workers";
import { podProblems } from "./validation";

/// Upstream's node shutdown admission refusal (the shutdown manager's Admit).
const NODE_SHUTDOWN_NOT_ADMITTED_REASON = "NodeShutdown";
const NODE_SHUTDOWN_NOT_ADMITTED_MESSAGE = "Pod was rejected as the node is shutting down.";

export class PodManager {
  private byUid: Map<string, PodRecord> = new Map();
  /// The same records as `byUid`, in a list kept alongside it: walking it every poll allocates
  /// nothing, where Map.values() would copy the records into a new array each time.
  list: PodRecord[] = [];
  /// The sources gave their pods at least once: a pod unknown now is gone, not yet to come.
  handledOnce: bool = false;
  /// Each record's slot (`PodRecord.slot`) and the slots free for reuse.
  slots: Array<PodRecord | null> = [];
  private freeSlots: i32[] = [];

  constructor(private ctx: WorkerContext, private rankTable: RankTable) {}

  has(uid: string): bool {
    return this.byUid.has(uid);
  }

  get(uid: string): PodRecord {
    return this.byUid.get(uid);
  }

  /// Whether `rec` is the record this manager holds for its pod (not one forgotten since).
  holds(rec: PodRecord): bool {
    return rec.slot < this.slots.length && unchecked(this.slots[rec.slot]) === rec;
  }

  get size(): i32 {
    return this.byUid.size;
  }

  /// Replaces the desired set; returns the refusals. Pods left out are stopped.
  handlePods(nowMs: u64, specs: PodSpec[]): PodRejection[] {
    this.handledOnce = true;
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
        // An update the node cannot honour never touches what runs: a pod it holds keeps the
        // spec it was accepted with (the host says why the update was not applied).
        const held = this.byUid.has(spec.uid) ? this.byUid.get(spec.uid).spec : null;
        if (held !== null && !desired.has(held.uid) && !fullNames.has(held.namespace + "/" + held.name)) {
          fullNames.add(held.namespace + "/" + held.name);
          desired.set(held.uid, held);
        }
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
      if (this.byUid.has(spec.uid)) {
        rec = this.byUid.get(spec.uid);
        const wasRemoved = rec.spec === null;
        if (!wasRemoved && rec.sameSpec(spec)) continue; // another pod changed, not this one
        rec.setSpec(spec);
        rec.retryAtMs = 0; // a new spec is acted on now; back-offs still apply inside the step
        if (wasRemoved && !spec.beingDeleted) movePod(rec, WorkerEvent.Readded);
      } else {
        rec = new PodRecord(spec.uid, spec.namespace, spec.name);
        rec.setSpec(spec);
        // The apiserver's start time, when the pod ran before (an agent restart); else now.
        rec.startTimeMs = spec.hasStartTime && spec.startTimeMs > 0 ? spec.startTimeMs : nowMs;
        acceptAllocation(rec, spec);
        rec.needsAdmission = true;
        this.add(rec);
      }
      // A pod marked for deletion is stopped for good; its status is still reported, and says
      // `finished` once everything is stopped so the host can delete the apiserver object.
      if (spec.beingDeleted) {
        movePod(rec, WorkerEvent.Deleted);
        this.stopSoonerIfShortened(rec);
      }
    }
    const known = this.list;
    for (let i = 0; i < known.length; i++) {
      const rec = known[i];
      if (rec.spec !== null && !desired.has(rec.uid)) {
        rec.spec = null;
        rec.dirty = true;
        movePod(rec, WorkerEvent.Removed);
      }
    }
    return rejections;
  }

  /// Upstream's admission: `--max-pods`, then eviction admission (a new pod is refused while the
  /// node is under pressure; memory pressure refuses only BestEffort pods that do not tolerate
  /// it; critical pods always pass). A refused pod is Failed and never started.
  admit(rec: PodRecord, spec: PodSpec, pressureConditions: string[], shuttingDown: bool): void {
    rec.needsAdmission = false;
    // A pod the runtime already runs (an agent restart) was admitted before: keep it.
    if (rec.sandboxes.length > 0 || rec.containers.length > 0) return;
    if (spec.beingDeleted || spec.hasReportedTerminalPhase) return;
    let result = this.admitPodCount(rec);
    if (result.admit) result = this.admitResources(rec, spec);
    if (result.admit) result = admitUnderPressure(pressureConditions, rec.qos, isCriticalPod(spec), spec.toleratesMemoryPressure);
    // Upstream's node shutdown admission: every new pod, critical or not, while the node shuts down.
    if (result.admit && shuttingDown) result = new AdmitResult(false, NODE_SHUTDOWN_NOT_ADMITTED_REASON, NODE_SHUTDOWN_NOT_ADMITTED_MESSAGE);
    // Last, so that a pod refused for another reason never holds CPUs or devices.
    if (result.admit) result = this.admitHardware(rec, spec);
    if (result.admit) return;
    // As upstream's rejectPod: the event carries the reason's words, the status says rejected.
    rec.failure = new PodFailure(result.reason, "Pod was rejected: " + result.message, false);
    rec.terminal = true;
    this.ctx.event(rec, "", EventType.Warning, result.reason, result.message);
  }

  /// The topology manager's admission: the pod's exclusive CPUs, NUMA memory and devices, allocated
  /// now (upstream's resource allocation handler), or the refusal.
  private admitHardware(rec: PodRecord, spec: PodSpec): AdmitResult {
    const hardware = this.ctx.hardware;
    if (!hardware.concerns(spec, rec.qos)) return new AdmitResult();
    const before = hardware.version;
    const refusal = hardware.admit(spec, rec.qos);
    if (hardware.version != before) this.ctx.hardwareStateChanged();
    if (refusal === null) return new AdmitResult();
    return new AdmitResult(false, refusal.reason, refusal.message);
  }

  /// Upstream's `--max-pods` predicate: a new pod is refused when the node already has that
  /// many active pods (admitted, not finished). Static pods count and are refused too.
  private admitPodCount(rec: PodRecord): AdmitResult {
    const maxPods = this.ctx.config.maxPods;
    if (maxPods == 0) return new AdmitResult();
    let used: u32 = 0;
    const pods = this.list;
    for (let i = 0; i < pods.length; i++) {
      const other = pods[i];
      if (other === rec || other.spec === null || other.terminal || other.needsAdmission) continue;
      used++;
    }
    if (used < maxPods) return new AdmitResult();
    return new AdmitResult(false, "OutOfpods",
      "Node didn't have enough resource: pods, requested: 1, used: " + used.toString() + ", capacity: " + maxPods.toString());
  }

  /// Upstream's resource fit (GeneralPredicates): the pod's requests (init containers and sidecars
  /// counted as upstream's PodRequests) must fit in allocatable less what the active pods request,
  /// cpu then memory; the first that does not fit is the reason (`OutOfcpu`, `OutOfmemory`).
  /// Critical pods are not held to it here (upstream makes room for them by preemption instead,
  /// which nanolet does not do). Unknown allocatable (0) checks nothing.
  private admitResources(rec: PodRecord, spec: PodSpec): AdmitResult {
    if (isCriticalPod(spec)) return new AdmitResult();
    const cpuCapacity = this.ctx.allocatableCpuMilli;
    const memoryCapacity = this.ctx.allocatableMemoryBytes;
    const cpu = podRequestMilli(spec, "cpu");
    const memory = podRequestBytes(spec, "memory");
    if (cpu == 0 && memory == 0) return new AdmitResult();
    let usedCpu: i64 = 0;
    let usedMemory: i64 = 0;
    const pods = this.list;
    for (let i = 0; i < pods.length; i++) {
      const other = pods[i];
      const otherSpec = other.spec;
      if (other === rec || otherSpec === null || other.terminal || other.needsAdmission) continue;
      usedCpu += podRequestMilli(otherSpec, "cpu");
      usedMemory += podRequestBytes(otherSpec, "memory");
    }
    if (cpuCapacity > 0 && cpu > cpuCapacity - usedCpu) return insufficient("cpu", cpu, usedCpu, cpuCapacity);
    if (memoryCapacity > 0 && memory > memoryCapacity - usedMemory) return insufficient("memory", memory, usedMemory, memoryCapacity);
    return new AdmitResult();
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

  /// A sandbox of a pod nobody asked for: a record that only terminates it.
  adoptOrphan(s: SandboxObservation): PodRecord {
    const rec = new PodRecord(s.podUid, s.podNamespace, s.podName);
    if (s.hasGracePeriod) rec.observedGracePeriodSeconds = s.terminationGracePeriodSeconds;
    rec.state = WorkerState.TerminatingPod;
    this.add(rec);
    return rec;
  }

  private add(rec: PodRecord): void {
    this.byUid.set(rec.uid, rec);
    this.list.push(rec);
    if (this.freeSlots.length > 0) {
      rec.slot = this.freeSlots.pop();
      this.slots[rec.slot] = rec;
    } else {
      rec.slot = this.slots.length;
      this.slots.push(rec);
    }
    this.rankTable.claim(rec.slot, rec.uid);
  }

  /// Drops a forgotten pod's record.
  remove(rec: PodRecord): void {
    this.byUid.delete(rec.uid);
    this.slots[rec.slot] = null;
    this.freeSlots.push(rec.slot);
    const list = this.list;
    const at = list.indexOf(rec);
    if (at < 0) return;
    list[at] = list[list.length - 1]; // order does not matter: due pods are sorted by uid
    list.pop();
  }
}

/// Upstream's InsufficientResourceError as the kubelet's admission words it.
function insufficient(resource: string, requested: i64, used: i64, capacity: i64): AdmitResult {
  return new AdmitResult(false, "OutOf" + resource,
    "Node didn't have enough resource: " + resource + ", requested: " + requested.toString() + ", used: " + used.toString() + ", capacity: " + capacity.toString());
}
