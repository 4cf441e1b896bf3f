// Canonical-ABI lift/lower of the pod-spec family: env-var, resource-quantity, container-spec,
// pod-spec, pod-rejection. Offsets are the canonical ABI's (fields aligned to their own
// alignment, records padded to their largest); strings and lists are (ptr u32, len u32).
import { ContainerSpec, EnvSourceTag, EnvVar, EnvVarSource, PodRejection, PodSpec, ResourceQuantity, VolumeSpec } from "../core/model";
import { liftList, liftString, liftStringElement, lowerList, lowerString, lowerStringElement } from "./memory";
import { ContainerPort, ReadinessGate } from "../core/probe-types";
import {
  CONTAINER_PORT_SIZE,
  OPTION_PROBE_SIZE,
  READINESS_GATE_SIZE,
  liftContainerPort,
  liftOptionHandler,
  liftOptionProbe,
  liftReadinessGate,
  lowerContainerPort,
  lowerOptionHandler,
  lowerOptionProbe,
  lowerReadinessGate,
} from "./probes";

// env-var { name @0, value @8, value-from: option<env-var-source> @16 (tag u8; the variant @20:
//   tag u8, payload @24: field-ref string, or resource-field-selector { container-name @0,
//   resource @8, divisor @16 }) }: size 48, align 4.
export const ENV_VAR_SIZE: usize = 48;
export const RESOURCE_QUANTITY_SIZE: usize = 16;
// container-spec { name @0, image @8, command @16, args @24, env @32,
//   working-dir: option<string> @40 (tag u8, string @+4; 12 bytes), requests @52, limits @60,
//   restart-on-resize @68, ports @76, startup-probe: option<probe> @88 (96 bytes, align 8),
//   liveness-probe @184, readiness-probe @280, restart-policy @376,
//   post-start: option<probe-handler> @384 (56 bytes), pre-stop @440, image-pull-policy @496 }:
//   size 504, align 8.
export const CONTAINER_SPEC_SIZE: usize = 504;
const STARTUP_PROBE_AT: usize = 88;
// pod-spec { uid @0, namespace @8, name @16, restart-policy @24,
//   termination-grace-period-seconds: option<s64> @32 (tag u8, s64 @+8; 16 bytes),
//   host-network @48, containers @52, deletion-grace-period-seconds: option<s64> @64 (16 bytes),
//   reported-terminal-phase: option<pod-phase> @80 (tag u8, enum u8 @81), priority s32 @84,
//   static-pod u8 @88, tolerates-memory-pressure u8 @89, readiness-gates @92,
//   init-containers @100, active-deadline-seconds: option<s64> @112 (tag u8, s64 @120),
//   start-time-ms: option<u64> @128 (tag u8, u64 @136), volumes @144,
//   ephemeral-containers @152, overhead @160 }: size 168, align 8.
export const POD_SPEC_SIZE: usize = 168;
// ephemeral-container { container @0 (504, align 8), target-container-name @504 }: 512, align 8.
const EPHEMERAL_CONTAINER_SIZE: usize = 512;
// volume-spec { name @0, kind u8 @8, used u8 @9, source-version @12, size-limit @20 }: size 28, align 4.
export const VOLUME_SPEC_SIZE: usize = 28;
// pod-rejection { index u32 @0, uid @4, field @12, message @20 }: size 28, align 4.
export const POD_REJECTION_SIZE: usize = 28;

export function liftEnvVar(ptr: usize): EnvVar {
  const env = new EnvVar(liftString(ptr), liftString(ptr + 8));
  if (load<u8>(ptr + 16) != 0) {
    const source = new EnvVarSource();
    source.tag = load<u8>(ptr + 20);
    if (source.tag == EnvSourceTag.FieldRef) {
      source.fieldPath = liftString(ptr + 24);
    } else {
      assert(source.tag == EnvSourceTag.ResourceFieldRef, "abi: unknown env-var-source case");
      source.containerName = liftString(ptr + 24);
      source.resource = liftString(ptr + 32);
      source.divisor = liftString(ptr + 40);
    }
    env.valueFrom = source;
  }
  return env;
}

export function lowerEnvVar(ptr: usize, item: EnvVar): void {
  lowerString(ptr, item.name);
  lowerString(ptr + 8, item.value);
  const source = item.valueFrom;
  if (source === null) {
    store<u8>(ptr + 16, 0);
    return;
  }
  store<u8>(ptr + 16, 1);
  store<u8>(ptr + 20, <u8>source.tag);
  if (source.tag == EnvSourceTag.FieldRef) {
    lowerString(ptr + 24, source.fieldPath);
  } else {
    lowerString(ptr + 24, source.containerName);
    lowerString(ptr + 32, source.resource);
    lowerString(ptr + 40, source.divisor);
  }
}

export function liftResourceQuantity(ptr: usize): ResourceQuantity {
  return new ResourceQuantity(liftString(ptr), liftString(ptr + 8));
}

export function lowerResourceQuantity(ptr: usize, item: ResourceQuantity): void {
  lowerString(ptr, item.name);
  lowerString(ptr + 8, item.quantity);
}

export function liftContainerSpec(ptr: usize): ContainerSpec {
  const spec = new ContainerSpec();
  spec.name = liftString(ptr);
  spec.image = liftString(ptr + 8);
  spec.command = liftList<string>(ptr + 16, 8, liftStringElement);
  spec.args = liftList<string>(ptr + 24, 8, liftStringElement);
  spec.env = liftList<EnvVar>(ptr + 32, ENV_VAR_SIZE, liftEnvVar);
  spec.workingDir = load<u8>(ptr + 40) != 0 ? liftString(ptr + 44) : null;
  spec.requests = liftList<ResourceQuantity>(ptr + 52, RESOURCE_QUANTITY_SIZE, liftResourceQuantity);
  spec.limits = liftList<ResourceQuantity>(ptr + 60, RESOURCE_QUANTITY_SIZE, liftResourceQuantity);
  spec.restartOnResize = liftList<string>(ptr + 68, 8, liftStringElement);
  spec.ports = liftList<ContainerPort>(ptr + 76, CONTAINER_PORT_SIZE, liftContainerPort);
  spec.startupProbe = liftOptionProbe(ptr + STARTUP_PROBE_AT);
  spec.livenessProbe = liftOptionProbe(ptr + STARTUP_PROBE_AT + OPTION_PROBE_SIZE);
  spec.readinessProbe = liftOptionProbe(ptr + STARTUP_PROBE_AT + 2 * OPTION_PROBE_SIZE);
  spec.restartPolicy = liftString(ptr + 376);
  spec.postStart = liftOptionHandler(ptr + 384);
  spec.preStop = liftOptionHandler(ptr + 440);
  spec.imagePullPolicy = liftString(ptr + 496);
  return spec;
}

export function lowerContainerSpec(ptr: usize, spec: ContainerSpec): void {
  lowerString(ptr, spec.name);
  lowerString(ptr + 8, spec.image);
  lowerList<string>(ptr + 16, spec.command, 8, lowerStringElement);
  lowerList<string>(ptr + 24, spec.args, 8, lowerStringElement);
  lowerList<EnvVar>(ptr + 32, spec.env, ENV_VAR_SIZE, lowerEnvVar);
  const workingDir = spec.workingDir;
  if (workingDir !== null) {
    store<u8>(ptr + 40, 1);
    lowerString(ptr + 44, workingDir);
  } else {
    store<u8>(ptr + 40, 0);
  }
  lowerList<ResourceQuantity>(ptr + 52, spec.requests, RESOURCE_QUANTITY_SIZE, lowerResourceQuantity);
  lowerList<ResourceQuantity>(ptr + 60, spec.limits, RESOURCE_QUANTITY_SIZE, lowerResourceQuantity);
  lowerList<string>(ptr + 68, spec.restartOnResize, 8, lowerStringElement);
  lowerList<ContainerPort>(ptr + 76, spec.ports, CONTAINER_PORT_SIZE, lowerContainerPort);
  lowerOptionProbe(ptr + STARTUP_PROBE_AT, spec.startupProbe);
  lowerOptionProbe(ptr + STARTUP_PROBE_AT + OPTION_PROBE_SIZE, spec.livenessProbe);
  lowerOptionProbe(ptr + STARTUP_PROBE_AT + 2 * OPTION_PROBE_SIZE, spec.readinessProbe);
  lowerString(ptr + 376, spec.restartPolicy);
  lowerOptionHandler(ptr + 384, spec.postStart);
  lowerOptionHandler(ptr + 440, spec.preStop);
  lowerString(ptr + 496, spec.imagePullPolicy);
}

export function liftPodSpec(ptr: usize): PodSpec {
  const pod = new PodSpec();
  pod.uid = liftString(ptr);
  pod.namespace = liftString(ptr + 8);
  pod.name = liftString(ptr + 16);
  pod.restartPolicy = liftString(ptr + 24);
  pod.hasGracePeriod = load<u8>(ptr + 32) != 0;
  pod.terminationGracePeriodSeconds = pod.hasGracePeriod ? load<i64>(ptr + 40) : 0;
  pod.hostNetwork = load<u8>(ptr + 48) != 0;
  pod.containers = liftList<ContainerSpec>(ptr + 52, CONTAINER_SPEC_SIZE, liftContainerSpec);
  pod.beingDeleted = load<u8>(ptr + 64) != 0;
  pod.deletionGracePeriodSeconds = pod.beingDeleted ? load<i64>(ptr + 72) : 0;
  pod.hasReportedTerminalPhase = load<u8>(ptr + 80) != 0;
  pod.reportedTerminalPhase = pod.hasReportedTerminalPhase ? load<u8>(ptr + 81) : 0;
  pod.priority = load<i32>(ptr + 84);
  pod.staticPod = load<u8>(ptr + 88) != 0;
  pod.toleratesMemoryPressure = load<u8>(ptr + 89) != 0;
  pod.readinessGates = liftList<ReadinessGate>(ptr + 92, READINESS_GATE_SIZE, liftReadinessGate);
  pod.initContainers = liftList<ContainerSpec>(ptr + 100, CONTAINER_SPEC_SIZE, liftContainerSpec);
  pod.hasActiveDeadline = load<u8>(ptr + 112) != 0;
  pod.activeDeadlineSeconds = pod.hasActiveDeadline ? load<i64>(ptr + 120) : 0;
  pod.hasStartTime = load<u8>(ptr + 128) != 0;
  pod.startTimeMs = pod.hasStartTime ? load<u64>(ptr + 136) : 0;
  pod.volumes = liftList<VolumeSpec>(ptr + 144, VOLUME_SPEC_SIZE, liftVolumeSpec);
  pod.ephemeralContainers = liftList<ContainerSpec>(ptr + 152, EPHEMERAL_CONTAINER_SIZE, liftEphemeralContainer);
  pod.overhead = liftList<ResourceQuantity>(ptr + 160, RESOURCE_QUANTITY_SIZE, liftResourceQuantity);
  return pod;
}

function liftEphemeralContainer(ptr: usize): ContainerSpec {
  const c = liftContainerSpec(ptr);
  c.targetContainerName = liftString(ptr + CONTAINER_SPEC_SIZE);
  return c;
}

function lowerEphemeralContainer(ptr: usize, c: ContainerSpec): void {
  lowerContainerSpec(ptr, c);
  lowerString(ptr + CONTAINER_SPEC_SIZE, c.targetContainerName);
}

export function liftVolumeSpec(ptr: usize): VolumeSpec {
  const kind = load<u8>(ptr + 8);
  assert(kind <= 7, "abi: unknown volume-kind case");
  return new VolumeSpec(liftString(ptr), kind, liftString(ptr + 12), load<u8>(ptr + 9) != 0, liftString(ptr + 20));
}

export function lowerVolumeSpec(ptr: usize, item: VolumeSpec): void {
  lowerString(ptr, item.name);
  store<u8>(ptr + 8, <u8>item.kind);
  store<u8>(ptr + 9, <u8>(item.used ? 1 : 0));
  lowerString(ptr + 12, item.sourceVersion);
  lowerString(ptr + 20, item.sizeLimit);
}

export function lowerPodSpec(ptr: usize, pod: PodSpec): void {
  lowerString(ptr, pod.uid);
  lowerString(ptr + 8, pod.namespace);
  lowerString(ptr + 16, pod.name);
  lowerString(ptr + 24, pod.restartPolicy);
  store<u8>(ptr + 32, <u8>(pod.hasGracePeriod ? 1 : 0));
  store<i64>(ptr + 40, pod.hasGracePeriod ? pod.terminationGracePeriodSeconds : 0);
  store<u8>(ptr + 48, <u8>(pod.hostNetwork ? 1 : 0));
  lowerList<ContainerSpec>(ptr + 52, pod.containers, CONTAINER_SPEC_SIZE, lowerContainerSpec);
  store<u8>(ptr + 64, <u8>(pod.beingDeleted ? 1 : 0));
  store<i64>(ptr + 72, pod.beingDeleted ? pod.deletionGracePeriodSeconds : 0);
  store<u8>(ptr + 80, <u8>(pod.hasReportedTerminalPhase ? 1 : 0));
  store<u8>(ptr + 81, <u8>(pod.hasReportedTerminalPhase ? pod.reportedTerminalPhase : 0));
  store<i32>(ptr + 84, pod.priority);
  store<u8>(ptr + 88, <u8>(pod.staticPod ? 1 : 0));
  store<u8>(ptr + 89, <u8>(pod.toleratesMemoryPressure ? 1 : 0));
  lowerList<ReadinessGate>(ptr + 92, pod.readinessGates, READINESS_GATE_SIZE, lowerReadinessGate);
  lowerList<ContainerSpec>(ptr + 100, pod.initContainers, CONTAINER_SPEC_SIZE, lowerContainerSpec);
  store<u8>(ptr + 112, <u8>(pod.hasActiveDeadline ? 1 : 0));
  store<i64>(ptr + 120, pod.hasActiveDeadline ? pod.activeDeadlineSeconds : 0);
  store<u8>(ptr + 128, <u8>(pod.hasStartTime ? 1 : 0));
  store<u64>(ptr + 136, pod.hasStartTime ? pod.startTimeMs : 0);
  lowerList<VolumeSpec>(ptr + 144, pod.volumes, VOLUME_SPEC_SIZE, lowerVolumeSpec);
  lowerList<ContainerSpec>(ptr + 152, pod.ephemeralContainers, EPHEMERAL_CONTAINER_SIZE, lowerEphemeralContainer);
  lowerList<ResourceQuantity>(ptr + 160, pod.overhead, RESOURCE_QUANTITY_SIZE, lowerResourceQuantity);
}

export function liftPodRejection(ptr: usize): PodRejection {
  return new PodRejection(load<u32>(ptr), liftString(ptr + 4), liftString(ptr + 12), liftString(ptr + 20));
}

export function lowerPodRejection(ptr: usize, item: PodRejection): void {
  store<u32>(ptr, item.index);
  lowerString(ptr + 4, item.uid);
  lowerString(ptr + 12, item.field);
  lowerString(ptr + 20, item.message);
}
