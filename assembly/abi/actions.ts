// Canonical-ABI lift/lower of the core's outputs: planned actions and everything they carry.
// Lowering is what the agent uses; lifting exists so that abi-check can echo every type.
import {
  ActionKind,
  ActionTag,
  ContainerCpuset,
  ContainerRef,
  ContainerStatus,
  CreateContainer,
  LinuxResources,
  NodePressure,
  PlannedAction,
  PodCgroupUpdate,
  ResourceQuantity,
  UpdateContainerResources,
  PodCondition,
  PodEvent,
  PodStatus,
  TerminatedState,
  SandboxSpec,
  StopContainer,
} from "../core/model";
import { liftList, liftString, liftStringElement, lowerList, lowerString, lowerStringElement } from "./memory";
import { HookRequest, ProbeRequest } from "../core/probe-types";
import { DeviceAssignment } from "../core/hardware/assignments";
import { DEVICE_ASSIGNMENT_SIZE, liftDeviceAssignment, lowerDeviceAssignment } from "./hardware";
import { liftHookRequest, liftProbeRequest, lowerHookRequest, lowerProbeRequest } from "./probes";
import { RESOURCE_QUANTITY_SIZE, liftContainerSpec, liftResourceQuantity, lowerContainerSpec, lowerResourceQuantity } from "./pod-spec";

// linux-resources { cpu-shares u64 @0, cpu-weight u64 @8, cpu-quota-us s64 @16, cpu-period-us u64 @24,
//   memory-limit-bytes s64 @32, oom-score-adj s32 @40 }: 48, align 8.
const LINUX_RESOURCES_SIZE: usize = 48;
// sandbox-spec { pod-uid @0, pod-name @8, pod-namespace @16, attempt u32 @24, host-network u8 @28,
//   termination-grace-period-seconds s64 @32, cgroup-parent @40, pod-resources @48 (48) }: 96, align 8.
const SANDBOX_SPEC_SIZE: usize = 96;
// create-container { sandbox-id @0, sandbox @8 (96), attempt u32 @104, spec-hash @108,
//   container @120 (504, align 8), resources @624 (48), target-container-id @672, cpuset-cpus @680,
//   cpuset-mems @688, devices @696 }: 704, align 8.
// update-container-resources { container-id @0, container-name @8, resources @16 }: 64, align 8.
// pod-cgroup-update { cgroup-parent @0, resources @8 }: 56, align 8.
// node-pressure { memory u8 @0, disk u8 @1, pid u8 @2 }: 3, align 1.
// container-ref { container-id @0, container-name @8 }: 16, align 4.
// stop-container { container-id @0, container-name @8, timeout-seconds s64 @16 }: 24, align 8.
// container-status { name @0, container-id @8, image @16, state u8 @24, reason @28, message @36,
//   exit-code s32 @44, restart-count u32 @48, ready u8 @52, started-at-ns @56, finished-at-ns @64,
//   started u8 @72, last-state: option<terminated-state> @80 (tag u8, payload @+8),
//   allocated-resources @136, resource-requests @144, resource-limits @152 }: 160, align 8.
const CONTAINER_STATUS_SIZE: usize = 160;
// terminated-state { container-id @0, exit-code s32 @8, reason @12, message @20,
//   started-at-ns @32, finished-at-ns @40 }: 48, align 8.
// pod-condition { condition-type u8 @0, status u8 @1, reason @4, message @12,
//   last-transition-ms u64 @24 }: 32, align 8.
const POD_CONDITION_SIZE: usize = 32;
// pod-status { phase u8 @0, reason @4, message @12, sandbox-id @20, container-statuses @28,
//   version u64 @40, conditions @48, start-time-ms u64 @56, init-container-statuses @64,
//   finished u8 @72, ephemeral-container-statuses @76 }: 88, align 8.
// pod-event { container-name @0, event-type u8 @8, reason @12, message @20 }: 28, align 4.
// container-cpuset { container-id @0, container-name @8, cpuset-cpus @16, cpuset-mems @24 }: 32, align 4.
// action-kind: tag u8 @0, payload @8 (largest case create-container, 704): 712, align 8.
const ACTION_PAYLOAD_OFFSET: usize = 8;
// planned-action { id u64 @0, pod-uid @8, pod-namespace @16, pod-name @24, kind @32 }: 744, align 8.
export const PLANNED_ACTION_SIZE: usize = 744;

function liftLinuxResources(ptr: usize): LinuxResources {
  const r = new LinuxResources();
  r.cpuShares = load<u64>(ptr);
  r.cpuWeight = load<u64>(ptr + 8);
  r.cpuQuotaUs = load<i64>(ptr + 16);
  r.cpuPeriodUs = load<u64>(ptr + 24);
  r.memoryLimitBytes = load<i64>(ptr + 32);
  r.oomScoreAdj = load<i32>(ptr + 40);
  return r;
}

function lowerLinuxResources(ptr: usize, r: LinuxResources): void {
  store<u64>(ptr, r.cpuShares);
  store<u64>(ptr + 8, r.cpuWeight);
  store<i64>(ptr + 16, r.cpuQuotaUs);
  store<u64>(ptr + 24, r.cpuPeriodUs);
  store<i64>(ptr + 32, r.memoryLimitBytes);
  store<i32>(ptr + 40, r.oomScoreAdj);
}

function liftSandboxSpec(ptr: usize): SandboxSpec {
  const spec = new SandboxSpec();
  spec.podUid = liftString(ptr);
  spec.podName = liftString(ptr + 8);
  spec.podNamespace = liftString(ptr + 16);
  spec.attempt = load<u32>(ptr + 24);
  spec.hostNetwork = load<u8>(ptr + 28) != 0;
  spec.terminationGracePeriodSeconds = load<i64>(ptr + 32);
  spec.cgroupParent = liftString(ptr + 40);
  spec.podResources = liftLinuxResources(ptr + 48);
  return spec;
}

function lowerSandboxSpec(ptr: usize, spec: SandboxSpec): void {
  lowerString(ptr, spec.podUid);
  lowerString(ptr + 8, spec.podName);
  lowerString(ptr + 16, spec.podNamespace);
  store<u32>(ptr + 24, spec.attempt);
  store<u8>(ptr + 28, <u8>(spec.hostNetwork ? 1 : 0));
  store<i64>(ptr + 32, spec.terminationGracePeriodSeconds);
  lowerString(ptr + 40, spec.cgroupParent);
  lowerLinuxResources(ptr + 48, spec.podResources);
}

function liftCreateContainer(ptr: usize): CreateContainer {
  const create = new CreateContainer();
  create.sandboxId = liftString(ptr);
  create.sandbox = liftSandboxSpec(ptr + 8);
  create.attempt = load<u32>(ptr + 8 + SANDBOX_SPEC_SIZE);
  create.specHash = liftString(ptr + 108);
  create.container = liftContainerSpec(ptr + 120);
  create.resources = liftLinuxResources(ptr + 624);
  create.targetContainerId = liftString(ptr + 672);
  create.cpusetCpus = liftString(ptr + 680);
  create.cpusetMems = liftString(ptr + 688);
  create.devices = liftList<DeviceAssignment>(ptr + 696, DEVICE_ASSIGNMENT_SIZE, liftDeviceAssignment);
  return create;
}

function lowerCreateContainer(ptr: usize, create: CreateContainer): void {
  lowerString(ptr, create.sandboxId);
  lowerSandboxSpec(ptr + 8, create.sandbox);
  store<u32>(ptr + 8 + SANDBOX_SPEC_SIZE, create.attempt);
  lowerString(ptr + 108, create.specHash);
  lowerContainerSpec(ptr + 120, create.container);
  lowerLinuxResources(ptr + 624, create.resources);
  lowerString(ptr + 672, create.targetContainerId);
  lowerString(ptr + 680, create.cpusetCpus);
  lowerString(ptr + 688, create.cpusetMems);
  lowerList<DeviceAssignment>(ptr + 696, create.devices, DEVICE_ASSIGNMENT_SIZE, lowerDeviceAssignment);
}

function liftContainerStatus(ptr: usize): ContainerStatus {
  const status = new ContainerStatus();
  status.name = liftString(ptr);
  status.containerId = liftString(ptr + 8);
  status.image = liftString(ptr + 16);
  status.state = load<u8>(ptr + 24);
  status.reason = liftString(ptr + 28);
  status.message = liftString(ptr + 36);
  status.exitCode = load<i32>(ptr + 44);
  status.restartCount = load<u32>(ptr + 48);
  status.ready = load<u8>(ptr + 52) != 0;
  status.startedAtNs = load<i64>(ptr + 56);
  status.finishedAtNs = load<i64>(ptr + 64);
  status.started = load<u8>(ptr + 72) != 0;
  status.lastState = load<u8>(ptr + 80) != 0 ? liftTerminatedState(ptr + 88) : null;
  status.allocatedResources = liftList<ResourceQuantity>(ptr + 136, RESOURCE_QUANTITY_SIZE, liftResourceQuantity);
  status.resourceRequests = liftList<ResourceQuantity>(ptr + 144, RESOURCE_QUANTITY_SIZE, liftResourceQuantity);
  status.resourceLimits = liftList<ResourceQuantity>(ptr + 152, RESOURCE_QUANTITY_SIZE, liftResourceQuantity);
  return status;
}

function liftTerminatedState(ptr: usize): TerminatedState {
  const t = new TerminatedState();
  t.containerId = liftString(ptr);
  t.exitCode = load<i32>(ptr + 8);
  t.reason = liftString(ptr + 12);
  t.message = liftString(ptr + 20);
  t.startedAtNs = load<i64>(ptr + 32);
  t.finishedAtNs = load<i64>(ptr + 40);
  return t;
}

function lowerTerminatedState(ptr: usize, t: TerminatedState): void {
  lowerString(ptr, t.containerId);
  store<i32>(ptr + 8, t.exitCode);
  lowerString(ptr + 12, t.reason);
  lowerString(ptr + 20, t.message);
  store<i64>(ptr + 32, t.startedAtNs);
  store<i64>(ptr + 40, t.finishedAtNs);
}

function liftPodCondition(ptr: usize): PodCondition {
  return new PodCondition(load<u8>(ptr), load<u8>(ptr + 1) != 0, liftString(ptr + 4), liftString(ptr + 12), load<u64>(ptr + 24));
}

function lowerPodCondition(ptr: usize, c: PodCondition): void {
  store<u8>(ptr, <u8>(c.conditionType));
  store<u8>(ptr + 1, <u8>(c.status ? 1 : 0));
  lowerString(ptr + 4, c.reason);
  lowerString(ptr + 12, c.message);
  store<u64>(ptr + 24, c.lastTransitionMs);
}

function lowerContainerStatus(ptr: usize, status: ContainerStatus): void {
  lowerString(ptr, status.name);
  lowerString(ptr + 8, status.containerId);
  lowerString(ptr + 16, status.image);
  store<u8>(ptr + 24, <u8>(status.state));
  lowerString(ptr + 28, status.reason);
  lowerString(ptr + 36, status.message);
  store<i32>(ptr + 44, status.exitCode);
  store<u32>(ptr + 48, status.restartCount);
  store<u8>(ptr + 52, <u8>(status.ready ? 1 : 0));
  store<i64>(ptr + 56, status.startedAtNs);
  store<i64>(ptr + 64, status.finishedAtNs);
  store<u8>(ptr + 72, <u8>(status.started ? 1 : 0));
  const last = status.lastState;
  if (last !== null) {
    store<u8>(ptr + 80, 1);
    lowerTerminatedState(ptr + 88, last);
  } else {
    store<u8>(ptr + 80, 0);
  }
  lowerList<ResourceQuantity>(ptr + 136, status.allocatedResources, RESOURCE_QUANTITY_SIZE, lowerResourceQuantity);
  lowerList<ResourceQuantity>(ptr + 144, status.resourceRequests, RESOURCE_QUANTITY_SIZE, lowerResourceQuantity);
  lowerList<ResourceQuantity>(ptr + 152, status.resourceLimits, RESOURCE_QUANTITY_SIZE, lowerResourceQuantity);
}

function liftPodStatus(ptr: usize): PodStatus {
  const status = new PodStatus();
  status.phase = load<u8>(ptr);
  status.reason = liftString(ptr + 4);
  status.message = liftString(ptr + 12);
  status.sandboxId = liftString(ptr + 20);
  status.containerStatuses = liftList<ContainerStatus>(ptr + 28, CONTAINER_STATUS_SIZE, liftContainerStatus);
  status.version = load<u64>(ptr + 40);
  status.conditions = liftList<PodCondition>(ptr + 48, POD_CONDITION_SIZE, liftPodCondition);
  status.startTimeMs = load<u64>(ptr + 56);
  status.initContainerStatuses = liftList<ContainerStatus>(ptr + 64, CONTAINER_STATUS_SIZE, liftContainerStatus);
  status.finished = load<u8>(ptr + 72) != 0;
  status.ephemeralContainerStatuses = liftList<ContainerStatus>(ptr + 76, CONTAINER_STATUS_SIZE, liftContainerStatus);
  return status;
}

function lowerPodStatus(ptr: usize, status: PodStatus): void {
  store<u8>(ptr, <u8>(status.phase));
  lowerString(ptr + 4, status.reason);
  lowerString(ptr + 12, status.message);
  lowerString(ptr + 20, status.sandboxId);
  lowerList<ContainerStatus>(ptr + 28, status.containerStatuses, CONTAINER_STATUS_SIZE, lowerContainerStatus);
  store<u64>(ptr + 40, status.version);
  lowerList<PodCondition>(ptr + 48, status.conditions, POD_CONDITION_SIZE, lowerPodCondition);
  store<u64>(ptr + 56, status.startTimeMs);
  lowerList<ContainerStatus>(ptr + 64, status.initContainerStatuses, CONTAINER_STATUS_SIZE, lowerContainerStatus);
  store<u8>(ptr + 72, <u8>(status.finished ? 1 : 0));
  lowerList<ContainerStatus>(ptr + 76, status.ephemeralContainerStatuses, CONTAINER_STATUS_SIZE, lowerContainerStatus);
}

function liftActionKind(ptr: usize): ActionKind {
  const kind = new ActionKind();
  const tag = load<u8>(ptr);
  const payload = ptr + ACTION_PAYLOAD_OFFSET;
  kind.tag = tag;
  switch (tag) {
    case ActionTag.Relist:
      break;
    case ActionTag.RunSandbox:
      kind.sandbox = liftSandboxSpec(payload);
      break;
    case ActionTag.StopSandbox:
    case ActionTag.RemoveSandbox:
    case ActionTag.RemovePodCgroup:
    case ActionTag.ReclaimNodeResources:
      kind.text = liftString(payload);
      break;
    case ActionTag.CreateContainer:
      kind.create = liftCreateContainer(payload);
      break;
    case ActionTag.StartContainer:
    case ActionTag.RemoveContainer:
      kind.ref = new ContainerRef(liftString(payload), liftString(payload + 8));
      break;
    case ActionTag.StopContainer:
      kind.stop = new StopContainer(liftString(payload), liftString(payload + 8), load<i64>(payload + 16));
      break;
    case ActionTag.PodStatusChanged:
      kind.status = liftPodStatus(payload);
      break;
    case ActionTag.PodEvent:
      kind.event = new PodEvent(
        liftString(payload), load<u8>(payload + 8), liftString(payload + 12), liftString(payload + 20));
      break;
    case ActionTag.UpdateContainerResources:
      kind.update = new UpdateContainerResources(liftString(payload), liftString(payload + 8), liftLinuxResources(payload + 16));
      break;
    case ActionTag.UpdatePodCgroup:
      kind.podCgroup = new PodCgroupUpdate(liftString(payload), liftLinuxResources(payload + 8));
      break;
    case ActionTag.NodePressureChanged:
      kind.pressure = new NodePressure(load<u8>(payload) != 0, load<u8>(payload + 1) != 0, load<u8>(payload + 2) != 0);
      break;
    case ActionTag.ShutdownInhibitLock:
      kind.flag = load<u8>(payload) != 0;
      break;
    case ActionTag.RunProbe:
      kind.probe = liftProbeRequest(payload);
      break;
    case ActionTag.RunHook:
      kind.hook = liftHookRequest(payload);
      break;
    case ActionTag.SetUpVolumes:
      kind.names = liftList<string>(payload, 8, liftStringElement);
      break;
    case ActionTag.TearDownVolumes:
    case ActionTag.HardwareStateChanged:
      break;
    case ActionTag.UpdateContainerCpuset:
      kind.cpuset = new ContainerCpuset(liftString(payload), liftString(payload + 8), liftString(payload + 16), liftString(payload + 24));
      break;
    default:
      assert(false, "abi: unknown action-kind case");
  }
  return kind;
}

function lowerActionKind(ptr: usize, kind: ActionKind): void {
  const payload = ptr + ACTION_PAYLOAD_OFFSET;
  store<u8>(ptr, <u8>(kind.tag));
  switch (kind.tag) {
    case ActionTag.Relist:
      break;
    case ActionTag.RunSandbox:
      lowerSandboxSpec(payload, changetype<SandboxSpec>(kind.sandbox));
      break;
    case ActionTag.StopSandbox:
    case ActionTag.RemoveSandbox:
    case ActionTag.RemovePodCgroup:
    case ActionTag.ReclaimNodeResources:
      lowerString(payload, kind.text);
      break;
    case ActionTag.CreateContainer:
      lowerCreateContainer(payload, changetype<CreateContainer>(kind.create));
      break;
    case ActionTag.StartContainer:
    case ActionTag.RemoveContainer: {
      const ref = changetype<ContainerRef>(kind.ref);
      lowerString(payload, ref.containerId);
      lowerString(payload + 8, ref.containerName);
      break;
    }
    case ActionTag.StopContainer: {
      const stop = changetype<StopContainer>(kind.stop);
      lowerString(payload, stop.containerId);
      lowerString(payload + 8, stop.containerName);
      store<i64>(payload + 16, stop.timeoutSeconds);
      break;
    }
    case ActionTag.PodStatusChanged:
      lowerPodStatus(payload, changetype<PodStatus>(kind.status));
      break;
    case ActionTag.PodEvent: {
      const event = changetype<PodEvent>(kind.event);
      lowerString(payload, event.containerName);
      store<u8>(payload + 8, <u8>(event.eventType));
      lowerString(payload + 12, event.reason);
      lowerString(payload + 20, event.message);
      break;
    }
    case ActionTag.UpdateContainerResources: {
      const update = changetype<UpdateContainerResources>(kind.update);
      lowerString(payload, update.containerId);
      lowerString(payload + 8, update.containerName);
      lowerLinuxResources(payload + 16, update.resources);
      break;
    }
    case ActionTag.UpdatePodCgroup: {
      const update = changetype<PodCgroupUpdate>(kind.podCgroup);
      lowerString(payload, update.cgroupParent);
      lowerLinuxResources(payload + 8, update.resources);
      break;
    }
    case ActionTag.NodePressureChanged: {
      const pressure = changetype<NodePressure>(kind.pressure);
      store<u8>(payload, <u8>(pressure.memory ? 1 : 0));
      store<u8>(payload + 1, <u8>(pressure.disk ? 1 : 0));
      store<u8>(payload + 2, <u8>(pressure.pid ? 1 : 0));
      break;
    }
    case ActionTag.ShutdownInhibitLock:
      store<u8>(payload, <u8>(kind.flag ? 1 : 0));
      break;
    case ActionTag.RunProbe:
      lowerProbeRequest(payload, changetype<ProbeRequest>(kind.probe));
      break;
    case ActionTag.RunHook:
      lowerHookRequest(payload, changetype<HookRequest>(kind.hook));
      break;
    case ActionTag.SetUpVolumes:
      lowerList<string>(payload, kind.names, 8, lowerStringElement);
      break;
    case ActionTag.TearDownVolumes:
    case ActionTag.HardwareStateChanged:
      break;
    case ActionTag.UpdateContainerCpuset: {
      const cpuset = changetype<ContainerCpuset>(kind.cpuset);
      lowerString(payload, cpuset.containerId);
      lowerString(payload + 8, cpuset.containerName);
      lowerString(payload + 16, cpuset.cpusetCpus);
      lowerString(payload + 24, cpuset.cpusetMems);
      break;
    }
    default:
      assert(false, "abi: unknown action-kind case");
  }
}

export function liftPlannedAction(ptr: usize): PlannedAction {
  const action = new PlannedAction();
  action.id = load<u64>(ptr);
  action.podUid = liftString(ptr + 8);
  action.podNamespace = liftString(ptr + 16);
  action.podName = liftString(ptr + 24);
  action.kind = liftActionKind(ptr + 32);
  return action;
}

export function lowerPlannedAction(ptr: usize, action: PlannedAction): void {
  store<u64>(ptr, action.id);
  lowerString(ptr + 8, action.podUid);
  lowerString(ptr + 16, action.podNamespace);
  lowerString(ptr + 24, action.podName);
  lowerActionKind(ptr + 32, action.kind);
}
