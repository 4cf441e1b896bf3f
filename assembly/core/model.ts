// AssemblyScript mirrors of the WIT types in wit/types.wit. Field order and meaning follow the
// WIT records one to one; the canonical-ABI code in assembly/abi/ moves them across the boundary.

import { unitsEqual, utf8EqualsUnits } from "./units";
import { ContainerPort, HookRequest, Probe, ProbeHandler, ProbeRequest, ReadinessGate } from "./probe-types";

export { ContainerPort, GrpcAction, HandlerTag, HookRequest, HookType, HttpGetAction, HttpHeader, Probe, ProbeHandler, ProbeOutcome, ProbeRequest, ProbeResult, ProbeType, ReadinessGate, TcpSocketAction } from "./probe-types";

export class EnvVar {
  /// `valueFrom`, or null for a literal value.
  valueFrom: EnvVarSource | null = null;
  constructor(public name: string = "", public value: string = "") {}
}

/// Case numbers of the WIT variant `env-var-source`.
export const enum EnvSourceTag {
  FieldRef = 0,
  ResourceFieldRef = 1,
}

/// WIT `env-var-source`: a fieldRef path, or a resourceFieldRef (container, resource, divisor).
export class EnvVarSource {
  tag: i32 = EnvSourceTag.FieldRef;
  fieldPath: string = "";
  containerName: string = "";
  resource: string = "";
  divisor: string = "";
}

export class ResourceQuantity {
  constructor(public name: string = "", public quantity: string = "") {}
}

export class ContainerSpec {
  name: string = "";
  image: string = "";
  command: string[] = [];
  args: string[] = [];
  env: EnvVar[] = [];
  workingDir: string | null = null;
  requests: ResourceQuantity[] = [];
  limits: ResourceQuantity[] = [];
  /// Resources whose resizePolicy is RestartContainer.
  restartOnResize: string[] = [];
  ports: ContainerPort[] = [];
  startupProbe: Probe | null = null;
  livenessProbe: Probe | null = null;
  readinessProbe: Probe | null = null;
  /// "Always" for a sidecar (an init container that keeps running); "" otherwise.
  restartPolicy: string = "";
  postStart: ProbeHandler | null = null;
  preStop: ProbeHandler | null = null;
  imagePullPolicy: string = "";
  /// For an ephemeral container: `targetContainerName` (whose process namespace it joins); "" for
  /// the pod's own, and for every other container.
  targetContainerName: string = "";

  get isSidecar(): bool {
    return this.restartPolicy == "Always";
  }

  /// The probe of `type` (a `ProbeType`), or null.
  probe(type: i32): Probe | null {
    return type == 0 ? this.startupProbe : type == 1 ? this.livenessProbe : this.readinessProbe;
  }
}

export class PodSpec {
  uid: string = "";
  namespace: string = "";
  name: string = "";
  restartPolicy: string = "";
  hasGracePeriod: bool = false;
  terminationGracePeriodSeconds: i64 = 0;
  hostNetwork: bool = false;
  containers: ContainerSpec[] = [];
  /// Set once the apiserver marked the pod for deletion.
  beingDeleted: bool = false;
  deletionGracePeriodSeconds: i64 = 0;
  /// Set when the apiserver already shows the pod Succeeded or Failed.
  hasReportedTerminalPhase: bool = false;
  reportedTerminalPhase: i32 = 0;
  priority: i32 = 0;
  staticPod: bool = false;
  toleratesMemoryPressure: bool = false;
  readinessGates: ReadinessGate[] = [];
  initContainers: ContainerSpec[] = [];
  hasActiveDeadline: bool = false;
  activeDeadlineSeconds: i64 = 0;
  /// `status.startTime` from the apiserver (ms since the epoch), when it has one.
  hasStartTime: bool = false;
  startTimeMs: u64 = 0;
  volumes: VolumeSpec[] = [];
  /// `spec.ephemeralContainers`: started once, never restarted, not part of phase or readiness.
  ephemeralContainers: ContainerSpec[] = [];
}

/// WIT `volume-kind`.
export const enum VolumeKind {
  EmptyDir = 0,
  HostPath = 1,
  ConfigMap = 2,
  Secret = 3,
  DownwardApi = 4,
  Projected = 5,
  PersistentVolumeClaim = 6,
}

/// WIT `volume-spec`: a volume's name, type and the version of what its files are made from.
export class VolumeSpec {
  constructor(public name: string = "", public kind: i32 = VolumeKind.EmptyDir, public sourceVersion: string = "", public used: bool = true, public sizeLimit: string = "") {}
}

/// WIT `volume-usage`.
export class VolumeUsage {
  constructor(public podUid: string = "", public volume: string = "", public usedBytes: i64 = 0) {}
}

export class PodRejection {
  constructor(
    public index: u32 = 0,
    public uid: string = "",
    public field: string = "",
    public message: string = "",
  ) {}
}

export const enum SandboxState {
  Ready = 0,
  NotReady = 1,
}

export class SandboxObservation {
  id: string = "";
  podUid: string = "";
  podName: string = "";
  podNamespace: string = "";
  attempt: u32 = 0;
  state: i32 = SandboxState.Ready;
  createdAtNs: i64 = 0;
  hasGracePeriod: bool = false;
  terminationGracePeriodSeconds: i64 = 0;
  /// The PLEG's serial of this sandbox's ID when read from a relist (see Pleg.sandboxSerialAt);
  /// 0 when made here. Lets the next relist find this object without comparing IDs.
  relistSerial: u64 = 0;
}

export const enum ContainerState {
  Created = 0,
  Running = 1,
  Exited = 2,
  Unknown = 3,
}

export class ContainerObservation {
  id: string = "";
  sandboxId: string = "";
  podUid: string = "";
  name: string = "";
  attempt: u32 = 0;
  state: i32 = ContainerState.Unknown;
  image: string = "";
  specHash: string = "";
  exitCode: i32 = 0;
  reason: string = "";
  message: string = "";
  createdAtNs: i64 = 0;
  startedAtNs: i64 = 0;
  finishedAtNs: i64 = 0;
  /// The PLEG's fingerprint of the container when read from a relist (never 0); 0 when made or
  /// changed here. A later relist with the same fingerprint keeps this object as it is.
  relistFingerprint: u64 = 0;
  /// The PLEG's serial of this container's ID when read from a relist (see
  /// Pleg.containerSerialAt); 0 when made here.
  relistSerial: u64 = 0;
}

export class RuntimeSnapshot {
  listedAtMs: u64 = 0;
  sandboxes: SandboxObservation[] = [];
  containers: ContainerObservation[] = [];
  uninspectedPodUids: string[] = [];
}

export const enum ErrorKind {
  Runtime = 0,
  ImagePull = 1,
  Timeout = 2,
  Other = 3,
  Config = 4,
  ImageNeverPull = 5,
}

export class ActionError {
  constructor(public kind: i32 = ErrorKind.Other, public grpcCode: u32 = 0, public message: string = "") {}
}

export class ActionResult {
  actionId: u64 = 0;
  /// Set when the action failed; `createdId` is meaningful only when this is null.
  error: ActionError | null = null;
  createdId: string = "";
}

export class SandboxSpec {
  podUid: string = "";
  podName: string = "";
  podNamespace: string = "";
  attempt: u32 = 0;
  hostNetwork: bool = false;
  terminationGracePeriodSeconds: i64 = 0;
  cgroupParent: string = "";
  podResources: LinuxResources = new LinuxResources();
}

/// Cgroup values of a container or a pod (WIT `linux-resources`).
export class LinuxResources {
  cpuShares: u64 = 2;
  cpuWeight: u64 = 1;
  /// 0: no CPU limit.
  cpuQuotaUs: i64 = 0;
  cpuPeriodUs: u64 = 100000;
  /// 0: no memory limit.
  memoryLimitBytes: i64 = 0;
  oomScoreAdj: i32 = 0;

  equals(other: LinuxResources): bool {
    return this.cpuShares == other.cpuShares && this.cpuWeight == other.cpuWeight && this.cpuQuotaUs == other.cpuQuotaUs &&
      this.cpuPeriodUs == other.cpuPeriodUs && this.memoryLimitBytes == other.memoryLimitBytes && this.oomScoreAdj == other.oomScoreAdj;
  }
}

export class UpdateContainerResources {
  constructor(public containerId: string = "", public containerName: string = "", public resources: LinuxResources = new LinuxResources()) {}
}

export class PodCgroupUpdate {
  constructor(public cgroupParent: string = "", public resources: LinuxResources = new LinuxResources()) {}
}

export class NodePressure {
  constructor(public memory: bool = false, public disk: bool = false, public pid: bool = false) {}
}

export class CreateContainer {
  sandboxId: string = "";
  sandbox: SandboxSpec = new SandboxSpec();
  attempt: u32 = 0;
  specHash: string = "";
  container: ContainerSpec = new ContainerSpec();
  resources: LinuxResources = new LinuxResources();
  /// An ephemeral container's target: the runtime ID of the container whose PID namespace it joins.
  targetContainerId: string = "";
}

export class ContainerRef {
  constructor(public containerId: string = "", public containerName: string = "") {}
}

export class StopContainer {
  constructor(
    public containerId: string = "",
    public containerName: string = "",
    public timeoutSeconds: i64 = 0,
  ) {}
}

export const enum PodPhase {
  Pending = 0,
  Running = 1,
  Succeeded = 2,
  Failed = 3,
  Unknown = 4,
}

export const enum ContainerStatusState {
  Waiting = 0,
  Running = 1,
  Terminated = 2,
}

export class ContainerStatus {
  name: string = "";
  containerId: string = "";
  image: string = "";
  state: i32 = ContainerStatusState.Waiting;
  reason: string = "";
  message: string = "";
  exitCode: i32 = 0;
  restartCount: u32 = 0;
  ready: bool = false;
  startedAtNs: i64 = 0;
  finishedAtNs: i64 = 0;
  started: bool = false;
  lastState: TerminatedState | null = null;
  allocatedResources: ResourceQuantity[] = [];
  resourceRequests: ResourceQuantity[] = [];
  resourceLimits: ResourceQuantity[] = [];
}

export class TerminatedState {
  containerId: string = "";
  exitCode: i32 = 0;
  reason: string = "";
  message: string = "";
  startedAtNs: i64 = 0;
  finishedAtNs: i64 = 0;
}

/// Case numbers of the WIT enum `pod-condition-type`.
export const enum PodConditionType {
  PodScheduled = 0,
  PodReadyToStartContainers = 1,
  Initialized = 2,
  ContainersReady = 3,
  Ready = 4,
  DisruptionTarget = 5,
  PodResizePending = 6,
  PodResizeInProgress = 7,
}

export class PodCondition {
  constructor(
    public conditionType: i32 = PodConditionType.PodScheduled,
    public status: bool = false,
    public reason: string = "",
    public message: string = "",
    public lastTransitionMs: u64 = 0,
  ) {}
}

export class PodStatus {
  phase: i32 = PodPhase.Pending;
  reason: string = "";
  message: string = "";
  sandboxId: string = "";
  containerStatuses: ContainerStatus[] = [];
  version: u64 = 0;
  conditions: PodCondition[] = [];
  startTimeMs: u64 = 0;
  initContainerStatuses: ContainerStatus[] = [];
  finished: bool = false;
  ephemeralContainerStatuses: ContainerStatus[] = [];
}

export const enum EventType {
  Normal = 0,
  Warning = 1,
}

export class PodEvent {
  constructor(
    public containerName: string = "",
    public eventType: i32 = EventType.Normal,
    public reason: string = "",
    public message: string = "",
  ) {}
}

/// Case numbers of the WIT variant `action-kind`, in declaration order.
export const enum ActionTag {
  Relist = 0,
  RunSandbox = 1,
  StopSandbox = 2,
  RemoveSandbox = 3,
  CreateContainer = 4,
  StartContainer = 5,
  StopContainer = 6,
  RemoveContainer = 7,
  RemovePodCgroup = 8,
  PodStatusChanged = 9,
  PodEvent = 10,
  UpdateContainerResources = 11,
  UpdatePodCgroup = 12,
  NodePressureChanged = 13,
  RunProbe = 14,
  RunHook = 15,
  SetUpVolumes = 16,
  TearDownVolumes = 17,
}

/// The WIT variant `action-kind`: `tag` picks which payload field is set.
export class ActionKind {
  tag: i32 = ActionTag.Relist;
  sandbox: SandboxSpec | null = null;
  text: string = "";
  create: CreateContainer | null = null;
  ref: ContainerRef | null = null;
  stop: StopContainer | null = null;
  status: PodStatus | null = null;
  event: PodEvent | null = null;
  update: UpdateContainerResources | null = null;
  podCgroup: PodCgroupUpdate | null = null;
  pressure: NodePressure | null = null;
  probe: ProbeRequest | null = null;
  hook: HookRequest | null = null;
  /// `set-up-volumes`: the names of the volumes.
  names: string[] = [];

  /// True for the actions whose outcome the host reports back with `handle-action-results`.
  needsResult(): bool {
    return (this.tag >= ActionTag.RunSandbox && this.tag <= ActionTag.RemoveContainer) ||
      this.tag == ActionTag.UpdateContainerResources || this.tag == ActionTag.UpdatePodCgroup || this.tag == ActionTag.RunHook ||
      this.tag == ActionTag.SetUpVolumes || this.tag == ActionTag.TearDownVolumes;
  }
}

export class PlannedAction {
  id: u64 = 0;
  podUid: string = "";
  podNamespace: string = "";
  podName: string = "";
  kind: ActionKind = new ActionKind();
}

export class AgentConfig {
  nodeName: string = "";
  relistPeriodMs: u64 = 1000;
  backoffInitialMs: u64 = 10000;
  backoffMaxMs: u64 = 300000;
  workerErrorBackoffMs: u64 = 10000;
  maxPods: u32 = 110;
}

/// WIT `node-config`: the node's resources and its eviction flags.
export class NodeConfig {
  memoryCapacityBytes: u64 = 0;
  allocatableMemoryBytes: u64 = 0;
  allocatableCpuMilli: u64 = 0;
  evictionHard: string = "";
  evictionSoft: string = "";
  evictionSoftGracePeriod: string = "";
  evictionMinimumReclaim: string = "";
  evictionPressureTransitionPeriodMs: u64 = 300000;
  evictionMaxPodGracePeriodSeconds: i64 = 0;
  evictionIntervalMs: u64 = 10000;
}

export class SignalObservation {
  constructor(public signal: string = "", public available: i64 = 0, public capacity: i64 = 0) {}
}

export class ContainerUsage {
  constructor(public name: string = "", public memoryWorkingSetBytes: i64 = 0) {}
}

export class PodUsageIn {
  uid: string = "";
  memoryWorkingSetBytes: i64 = 0;
  ephemeralStorageBytes: i64 = 0;
  processCount: i64 = 0;
  containers: ContainerUsage[] = [];
  /// Packed stats: the containers stay in `packed` (entries from `containerStart`) until asked.
  packed: PackedContainers | null = null;
  containerStart: i32 = 0;
  containerCount: i32 = 0;

  /// The containers' use; unpacked on the first ask when the stats came packed (few pods ever
  /// need it: the one evicted, those with a resize waiting).
  usages(): ContainerUsage[] {
    const packed = this.packed;
    if (packed === null) return this.containers;
    const out = new Array<ContainerUsage>(this.containerCount);
    for (let j = 0; j < this.containerCount; j++) out[j] = packed.at(this.containerStart + j);
    this.containers = out;
    this.packed = null;
    return out;
  }
}

/// The containers of a packed stats pass, copied out of the call's arguments: the text and
/// three values per container (name start, name length, working set).
export class PackedContainers {
  constructor(public text: StaticArray<u8>, public values: StaticArray<i64>) {}

  at(index: i32): ContainerUsage {
    const start = <i32>this.values[index * 3];
    const length = <i32>this.values[index * 3 + 1];
    const name = length == 0 ? "" : String.UTF8.decodeUnsafe(changetype<usize>(this.text) + <usize>start, <usize>length);
    return new ContainerUsage(name, this.values[index * 3 + 2]);
  }
}

/// The pods of a packed stats pass, copied out of the call's arguments: the text of their uids
/// and container names, six values per pod (uid start, uid length, working set bytes, ephemeral
/// storage bytes, processes, containers) and where each pod's containers begin.
export class PackedPods {
  constructor(
    public text: StaticArray<u8>,
    public values: StaticArray<i64>,
    public containerStarts: StaticArray<i32>,
    public containers: PackedContainers,
  ) {}
}

/// A stats pass. Typed stats fill `pods`; packed stats keep `packed` and are read in place, with
/// a pod's record made only when someone asks for it (the ranking reads numbers, not records).
export class NodeStats {
  signals: SignalObservation[] = [];
  pods: PodUsageIn[] = [];
  volumes: VolumeUsage[] = [];
  packed: PackedPods | null = null;

  podCount(): i32 {
    const p = this.packed;
    return p === null ? this.pods.length : p.containerStarts.length;
  }

  uidAt(i: i32): string {
    const p = this.packed;
    if (p === null) return unchecked(this.pods[i]).uid;
    const length = <i32>unchecked(p.values[i * 6 + 1]);
    if (length == 0) return "";
    return String.UTF8.decodeUnsafe(changetype<usize>(p.text) + <usize>unchecked(p.values[i * 6]), <usize>length);
  }

  /// True when pod `i`'s uid is `uid`, without making a string of it.
  uidIs(i: i32, uid: string): bool {
    const p = this.packed;
    if (p === null) return unchecked(this.pods[i]).uid == uid;
    return this.uidRangeIs(i, changetype<usize>(uid), uid.length);
  }

  /// True when pod `i`'s uid is the `length` code units at `units`.
  uidRangeIs(i: i32, units: usize, length: i32): bool {
    const p = this.packed;
    if (p === null) {
      const uid = unchecked(this.pods[i]).uid;
      return uid.length == length && unitsEqual(changetype<usize>(uid), units, <u32>length);
    }
    const bytes = unchecked(p.values[i * 6 + 1]);
    return utf8EqualsUnits(units, <u32>length, changetype<usize>(p.text) + <usize>unchecked(p.values[i * 6]), <u32>bytes);
  }

  memoryWorkingSetBytesAt(i: i32): i64 {
    const p = this.packed;
    return p === null ? unchecked(this.pods[i]).memoryWorkingSetBytes : unchecked(p.values[i * 6 + 2]);
  }

  ephemeralStorageBytesAt(i: i32): i64 {
    const p = this.packed;
    return p === null ? unchecked(this.pods[i]).ephemeralStorageBytes : unchecked(p.values[i * 6 + 3]);
  }

  processCountAt(i: i32): i64 {
    const p = this.packed;
    return p === null ? unchecked(this.pods[i]).processCount : unchecked(p.values[i * 6 + 4]);
  }

  /// Pod `i` as a record (made on each ask when the stats came packed).
  podAt(i: i32): PodUsageIn {
    const p = this.packed;
    if (p === null) return unchecked(this.pods[i]);
    const pod = new PodUsageIn();
    pod.uid = this.uidAt(i);
    pod.memoryWorkingSetBytes = this.memoryWorkingSetBytesAt(i);
    pod.ephemeralStorageBytes = this.ephemeralStorageBytesAt(i);
    pod.processCount = this.processCountAt(i);
    pod.packed = p.containers;
    pod.containerStart = unchecked(p.containerStarts[i]);
    pod.containerCount = <i32>unchecked(p.values[i * 6 + 5]);
    return pod;
  }

  /// The use of the pod with `uid`; null when it has no stats in this pass.
  usageOf(uid: string): PodUsageIn | null {
    for (let i = 0, n = this.podCount(); i < n; i++) if (this.uidIs(i, uid)) return this.podAt(i);
    return null;
  }
}
