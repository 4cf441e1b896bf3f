// Everything the core knows about one pod: its spec, its worker state, its part of the runtime
// view, its waiting reasons and its last published status.
import { ContainerObservation, LinuxResources, PodSpec, PodUsageIn, PodStatus, ResourceQuantity, SandboxObservation } from "./model";
import { WorkerState } from "./pod-workers";
import { WaitingReason } from "./status";
import { containerSpecHash } from "./hash";
import { QosClass, podCgroupParent, qosClassOf } from "./qos";
import { EvictionCandidate } from "./eviction-manager";
import { ProbeWorker } from "./probe-worker";
import { PodVolumes, usedVolumeCount, volumesKey } from "./volume-manager";
import { PodSlot, SlotOwner } from "./pleg";

/// Why the node itself failed a pod (eviction, admission under pressure): the pod is Failed
/// with this reason and message whatever its containers say.
export class PodFailure {
  /// `completionWins`: as upstream's node shutdown kill, a pod whose containers all end with 0 is
  /// Succeeded (without the reason) once they stopped; otherwise the failure makes it Failed at once.
  constructor(public reason: string, public message: string, public disruption: bool, public completionWins: bool = false) {}
}

/// What was last given to the runtime for one container: the values and the spec's lists.
export class AppliedResources {
  constructor(public values: LinuxResources, public requests: ResourceQuantity[], public limits: ResourceQuantity[]) {}
}

/// Upstream's grace period for a pod whose spec is unknown, and the least any container gets
/// (minimumGracePeriodInSeconds).
export const MINIMUM_GRACE_PERIOD_SECONDS: i64 = 2;
/// The Kubernetes default of spec.terminationGracePeriodSeconds.
export const DEFAULT_GRACE_PERIOD_SECONDS: i64 = 30;

export class PodRecord extends SlotOwner {
  // The fields every stats pass reads of every pod come first, so that they share a cache line
  // (fields are laid out in declaration order): at 10,000 pods, ranking is bound by memory.
  uid: string;
  /// The desired spec; null once removed or for an orphan. `lastSpec` keeps the last one.
  spec: PodSpec | null = null;
  state: i32 = WorkerState.SyncPod;
  /// Set once the phase was Succeeded or Failed: it never goes back.
  terminal: bool = false;
  /// The record's number in the agent's slot table (reused after the record is removed).
  slot: i32 = 0;
  /// The PLEG's slot for this pod when a relist last saw it change (checked against the PLEG's
  /// generation before use): replaceView finds the pod's objects without a lookup by UID.
  plegSlot: PodSlot | null = null;
  failure: PodFailure | null = null;
  /// What eviction ranking reads of `candidateSpec`, worked out once per spec.
  candidate: EvictionCandidate | null = null;
  candidateSpec: PodSpec | null = null;
  /// A resize that waits: reason `Deferred` or `Infeasible`, and why; empty when none.
  resizePendingReason: string = "";
  namespace: string;
  name: string;
  lastSpec: PodSpec | null = null;
  /// Spec hash of each container of `lastSpec`, in spec order, and of each init container.
  hashes: string[] = [];
  initHashes: string[] = [];
  cgroupParent: string = "";

  sandboxes: SandboxObservation[] = [];
  containers: ContainerObservation[] = [];
  /// Host time of the newest local change to the view; older relists are not applied.
  viewMutatedAtMs: u64 = 0;
  /// True while the view is exactly what the last applied relist said (no local change since).
  viewIsSnapshot: bool = false;
  /// On the agent's list of pods whose view the next relist replaces.
  onStaleList: bool = false;
  /// After a stop, wait for a relist newer than `viewMutatedAtMs` before deciding again.
  needsFreshView: bool = false;

  /// Actions of this pod in flight; the worker decides nothing while > 0.
  busyCount: i32 = 0;
  /// Do nothing before this time (error or back-off wait).
  retryAtMs: u64 = 0;
  /// The pod's active deadline, when it is still ahead: the worker looks again then (0: none).
  deadlineAtMs: u64 = 0;
  dirty: bool = true;
  cgroupRemoved: bool = false;

  waiting: Map<string, WaitingReason> = new Map();
  /// Containers whose create or start just failed, by name, with when to try them again: the
  /// pod's other containers go on meanwhile (upstream's SyncPod starts every container and
  /// collects the errors; one bad container never holds the others back).
  containerRetryAtMs: Map<string, u64> = new Map();
  /// Containers stopped because their spec changed: they are started again whatever the
  /// restart policy, and without a back-off (upstream kills and restarts them in one sync).
  restartForSpecChange: Set<string> = new Set();
  /// Containers stopped because a resize of theirs needs a restart (resizePolicy
  /// RestartContainer), by name, with the ID of the stopped instance: started again at once.
  restartForResize: Map<string, string> = new Map();
  /// Containers killed for failing a liveness or startup probe, by name, with the ID of the
  /// killed instance: started again at once unless the policy is Never (upstream kills and
  /// starts them in one sync, so no crash-loop back-off applies).
  restartForProbe: Map<string, string> = new Map();
  /// Containers whose postStart hook runs: not running yet as far as the status says.
  postStartRunning: Set<string> = new Set();
  /// Containers whose preStop hook was run (once per container, however often it is stopped).
  preStopRun: Set<string> = new Set();
  /// Sidecars whose Killing event went out at the start of the termination (they stop later).
  stopAnnounced: Set<string> = new Set();
  /// One worker per container probe, and the spec they were made for.
  probeWorkers: ProbeWorker[] = [];
  probesForSpec: PodSpec | null = null;
  /// The back-off key whose BackOff event was last sent per container, to send it once per wait.
  backoffEventSent: Map<string, string> = new Map();
  status: PodStatus | null = null;
  statusVersion: u64 = 0;
  /// When the core first accepted the pod (`status.startTime`); 0 for an orphan.
  startTimeMs: u64 = 0;

  /// The timeout of the newest stop asked for; a shorter deletion grace period stops again.
  stopTimeoutSeconds: i64 = -1;
  /// When the current termination queued its first stop, host ms (0: none yet). The pod's grace
  /// period is one budget from then: a sidecar stopped after the others gets what is left.
  terminatingSinceMs: u64 = 0;
  /// Grace period recorded on a sandbox, for orphans.
  observedGracePeriodSeconds: i64 = -1;
  /// A grace period imposed by the node (eviction); -1 for none.
  graceOverrideSeconds: i64 = -1;
  /// New to this agent: checked against node pressure once the runtime's view is known.
  needsAdmission: bool = false;
  /// The QoS class decided when the pod was first accepted; a resize never changes it.
  qos: QosClass = QosClass.BestEffort;
  /// Resources given to the runtime, by container ID.
  applied: Map<string, AppliedResources> = new Map();
  /// Values last written to the pod cgroup; null when unknown (after an agent restart).
  podApplied: LinuxResources | null = null;
  /// Requests admitted per container name (`allocatedResources`).
  allocated: Map<string, ResourceQuantity[]> = new Map();
  resizePendingMessage: string = "";
  /// Containers or the pod cgroup still being resized.
  resizeInProgress: bool = false;
  /// Set up, mounted, refresh and retry state of the pod's volumes.
  volumes: PodVolumes = new PodVolumes();

  constructor(uid: string, namespace: string, name: string) {
    super();
    this.uid = uid;
    this.namespace = namespace;
    this.name = name;
  }

  setSpec(spec: PodSpec): void {
    // A pod first known by its spec has mounted nothing unless it has volumes (they may be
    // there from before an agent restart); one first found in the runtime may have anything.
    if (this.lastSpec === null && this.containers.length == 0 && this.sandboxes.length == 0) this.volumes.mounted = usedVolumeCount(spec) > 0;
    this.spec = spec;
    this.lastSpec = spec;
    this.namespace = spec.namespace;
    this.name = spec.name;
    const hashes: string[] = [];
    for (let i = 0; i < spec.containers.length; i++) hashes.push(containerSpecHash(spec.containers[i]));
    this.hashes = hashes;
    const initHashes: string[] = [];
    for (let i = 0; i < spec.initContainers.length; i++) initHashes.push(containerSpecHash(spec.initContainers[i]));
    this.initHashes = initHashes;
    // QoS class and cgroup parent are the pod's for life (a resize cannot change them).
    if (this.cgroupParent.length == 0) {
      this.cgroupParent = podCgroupParent(spec);
      this.qos = qosClassOf(spec);
    }
    // Finished before, as the apiserver says: never started again.
    if (spec.hasReportedTerminalPhase) this.terminal = true;
    this.dirty = true;
  }

  /// True when `spec` asks for exactly what the current spec asks for.
  sameSpec(spec: PodSpec): bool {
    const current = this.spec;
    if (current === null) return false;
    if (current.restartPolicy != spec.restartPolicy || current.hostNetwork != spec.hostNetwork) return false;
    if (current.hasGracePeriod != spec.hasGracePeriod || current.terminationGracePeriodSeconds != spec.terminationGracePeriodSeconds) return false;
    if (current.hasReportedTerminalPhase != spec.hasReportedTerminalPhase || current.reportedTerminalPhase != spec.reportedTerminalPhase) return false;
    if (current.beingDeleted != spec.beingDeleted || current.deletionGracePeriodSeconds != spec.deletionGracePeriodSeconds) return false;
    if (current.namespace != spec.namespace || current.name != spec.name) return false;
    if (current.priority != spec.priority || current.staticPod != spec.staticPod || current.toleratesMemoryPressure != spec.toleratesMemoryPressure) return false;
    if (current.hasActiveDeadline != spec.hasActiveDeadline || current.activeDeadlineSeconds != spec.activeDeadlineSeconds) return false;
    if (volumesKey(current) != volumesKey(spec)) return false;
    if (current.readinessGates.length != spec.readinessGates.length) return false;
    for (let i = 0; i < spec.readinessGates.length; i++) {
      if (current.readinessGates[i].conditionType != spec.readinessGates[i].conditionType || current.readinessGates[i].status != spec.readinessGates[i].status) return false;
    }
    if (current.containers.length != spec.containers.length) return false;
    if (current.initContainers.length != spec.initContainers.length) return false;
    if (current.ephemeralContainers.length != spec.ephemeralContainers.length) return false;
    for (let i = 0; i < spec.ephemeralContainers.length; i++) {
      const a = current.ephemeralContainers[i];
      const b = spec.ephemeralContainers[i];
      if (a.targetContainerName != b.targetContainerName || containerSpecHash(a) != containerSpecHash(b)) return false;
    }
    for (let i = 0; i < spec.initContainers.length; i++) {
      if (this.initHashes[i] != containerSpecHash(spec.initContainers[i]) || current.initContainers[i].restartPolicy != spec.initContainers[i].restartPolicy) return false;
    }
    for (let i = 0; i < spec.containers.length; i++) {
      if (this.hashes[i] != containerSpecHash(spec.containers[i])) return false;
      if (!sameQuantities(current.containers[i].requests, spec.containers[i].requests)) return false;
      if (!sameQuantities(current.containers[i].limits, spec.containers[i].limits)) return false;
      if (current.containers[i].restartOnResize.join(",") != spec.containers[i].restartOnResize.join(",")) return false;
    }
    return true;
  }

  gracePeriodSeconds(): i64 {
    const spec = this.lastSpec;
    if (this.graceOverrideSeconds >= 0) {
      // A deletion with a shorter grace still wins over an eviction's.
      if (spec !== null && spec.beingDeleted && spec.deletionGracePeriodSeconds < this.graceOverrideSeconds) return spec.deletionGracePeriodSeconds;
      return this.graceOverrideSeconds;
    }
    if (spec !== null && spec.beingDeleted) return spec.deletionGracePeriodSeconds;
    if (spec !== null) return spec.hasGracePeriod ? spec.terminationGracePeriodSeconds : DEFAULT_GRACE_PERIOD_SECONDS;
    return this.observedGracePeriodSeconds >= 0 ? this.observedGracePeriodSeconds : MINIMUM_GRACE_PERIOD_SECONDS;
  }

  /// Replaces or adds a container in the view by ID (a relist may already hold it).
  putContainer(container: ContainerObservation): void {
    for (let i = 0; i < this.containers.length; i++) {
      if (this.containers[i].id == container.id) {
        this.containers[i] = container;
        return;
      }
    }
    this.containers.push(container);
  }

  putSandbox(sandbox: SandboxObservation): void {
    for (let i = 0; i < this.sandboxes.length; i++) {
      if (this.sandboxes[i].id == sandbox.id) {
        this.sandboxes[i] = sandbox;
        return;
      }
    }
    this.sandboxes.push(sandbox);
  }

  findContainer(id: string): ContainerObservation | null {
    for (let i = 0; i < this.containers.length; i++) if (this.containers[i].id == id) return this.containers[i];
    return null;
  }

  findSandbox(id: string): SandboxObservation | null {
    for (let i = 0; i < this.sandboxes.length; i++) if (this.sandboxes[i].id == id) return this.sandboxes[i];
    return null;
  }

  dropContainer(id: string): void {
    const kept: ContainerObservation[] = [];
    for (let i = 0; i < this.containers.length; i++) if (this.containers[i].id != id) kept.push(this.containers[i]);
    this.containers = kept;
  }

  dropSandbox(id: string): void {
    const kept: SandboxObservation[] = [];
    for (let i = 0; i < this.sandboxes.length; i++) if (this.sandboxes[i].id != id) kept.push(this.sandboxes[i]);
    this.sandboxes = kept;
  }
}

function sameQuantities(a: ResourceQuantity[], b: ResourceQuantity[]): bool {
  if (a.length != b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i].name != b[i].name || a[i].quantity != b[i].quantity) return false;
  return true;
}
