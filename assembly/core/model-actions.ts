// AssemblyScript mirrors of wit/actions.wit: what the core asks the host to do, and the outcomes.
// Field order and meaning follow the WIT records one to one; assembly/abi/ moves them across
// the boundary.
import { ContainerSpec } from "./model-pod-spec";
import { PodStatus } from "./model-pod-status";
import { HookRequest, ProbeRequest } from "./probe-types";
import { DeviceAssignment } from "./hardware/assignments";

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
  /// The CPU manager's cpuset (`0-3`); empty leaves the runtime's choice.
  cpusetCpus: string = "";
  /// The memory manager's NUMA nodes (`cpuset.mems`); empty for every node.
  cpusetMems: string = "";
  /// The devices the device manager gave the container, by resource.
  devices: DeviceAssignment[] = [];
}

/// Rewrite a running container's cpuset (the CPU manager's reconcile).
export class ContainerCpuset {
  constructor(public containerId: string = "", public containerName: string = "", public cpusetCpus: string = "", public cpusetMems: string = "") {}
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
  ReclaimNodeResources = 18,
  ShutdownInhibitLock = 19,
  UpdateContainerCpuset = 20,
  HardwareStateChanged = 21,
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
  /// `shutdown-inhibit-lock`: hold the lock (true) or let it go (false).
  flag: bool = false;
  cpuset: ContainerCpuset | null = null;

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
