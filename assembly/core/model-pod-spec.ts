// AssemblyScript mirrors of wit/pod-spec.wit: a pod as the host gives it to the core.
// Field order and meaning follow the WIT records one to one; assembly/abi/ moves them across
// the boundary.
import { ContainerPort, Probe, ProbeHandler, ReadinessGate } from "./probe-types";

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
  /// `spec.overhead`: the RuntimeClass's cost beyond the containers.
  overhead: ResourceQuantity[] = [];
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
  Csi = 7,
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
