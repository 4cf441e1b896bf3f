// AssemblyScript mirrors of wit/pod-status.wit: the status the core publishes of a pod.
// Field order and meaning follow the WIT records one to one; assembly/abi/ moves them across
// the boundary.
import { ResourceQuantity } from "./model-pod-spec";

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
