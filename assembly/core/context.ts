// What a pod worker step needs from the agent: the time, the back-offs, and a place to put the
// actions it decides. Keeps the step functions free of the agent's bookkeeping.
import { Backoff } from "./backoff";
import {
  ActionKind,
  ActionTag,
  AgentConfig,
  ContainerCpuset,
  ContainerRef,
  ContainerSpec,
  CreateContainer,
  EventType,
  LinuxResources,
  NodePressure,
  PlannedAction,
  PodCgroupUpdate,
  NodeStats,
  PodUsageIn,
  ResourceQuantity,
  UpdateContainerResources,
  PodEvent,
  PodSpec,
  ProbeRequest,
  SandboxSpec,
  StopContainer,
} from "./model";
import { MINIMUM_GRACE_PERIOD_SECONDS, PodRecord } from "./pod-record";
import { HookRequest, HookType } from "./probe-types";
import { resolvePorts } from "./probe-manager";
import { containerResources, podResources } from "./resources";
import { HardwareManager } from "./hardware/hardware-manager";

/// What the agent remembers of an action until its result comes back.
export class InFlight {
  podUid: string = "";
  tag: i32 = ActionTag.Relist;
  containerName: string = "";
  /// Sandbox of the action (run: filled from the result; create: the target sandbox).
  sandboxId: string = "";
  containerId: string = "";
  attempt: u32 = 0;
  specHash: string = "";
  image: string = "";
  /// Create and resize: the values given, and the spec lists they came from.
  resources: LinuxResources | null = null;
  requests: ResourceQuantity[] = [];
  limits: ResourceQuantity[] = [];
  /// A lifecycle hook: which, the grace it was given and when it began (preStop).
  hookType: i32 = -1;
  graceSeconds: i64 = 0;
  startedAtMs: u64 = 0;
  /// A preStop hook is followed by the stop at once; not for a sidecar's, run at the start of the
  /// pod's termination while it waits for its turn to stop.
  stopAfterHook: bool = true;
}

/// The container `name` of `spec`, regular or init; null if none.
export function containerOfSpec(spec: PodSpec | null, name: string): ContainerSpec | null {
  if (spec === null) return null;
  for (let i = 0; i < spec.containers.length; i++) if (spec.containers[i].name == name) return spec.containers[i];
  for (let i = 0; i < spec.initContainers.length; i++) if (spec.initContainers[i].name == name) return spec.initContainers[i];
  for (let i = 0; i < spec.ephemeralContainers.length; i++) if (spec.ephemeralContainers[i].name == name) return spec.ephemeralContainers[i];
  return null;
}

export class WorkerContext {
  nowMs: u64 = 0;
  nextActionId: u64 = 1;
  queue: PlannedAction[] = [];
  inFlight: Map<u64, InFlight> = new Map();
  relistRequested: bool = false;
  /// The node's memory (`node-config`); 0 until configured.
  memoryCapacityBytes: i64 = 0;
  /// What pods may request (`node-config`); 0 means unknown, and no resize is infeasible.
  allocatableMemoryBytes: i64 = 0;
  allocatableCpuMilli: i64 = 0;
  /// The last stats pass, if any.
  lastStats: NodeStats | null = null;
  /// CPUs, memory NUMA nodes and devices held by containers (topology, CPU, memory, device managers).
  hardware: HardwareManager = new HardwareManager();

  /// A pod's use in the last stats pass; null without stats.
  usageOf(uid: string): PodUsageIn | null {
    const stats = this.lastStats;
    return stats === null ? null : stats.usageOf(uid);
  }

  constructor(
    public config: AgentConfig,
    public crashBackoff: Backoff,
    public imageBackoff: Backoff,
  ) {}

  private plan(rec: PodRecord | null, kind: ActionKind): PlannedAction {
    const action = new PlannedAction();
    action.id = this.nextActionId++;
    if (rec !== null) {
      action.podUid = rec.uid;
      action.podNamespace = rec.namespace;
      action.podName = rec.name;
    }
    action.kind = kind;
    this.queue.push(action);
    return action;
  }

  /// Queues a runtime action and remembers it until its result; the pod is busy meanwhile.
  private call(rec: PodRecord, kind: ActionKind, flight: InFlight): void {
    const action = this.plan(rec, kind);
    flight.podUid = rec.uid;
    flight.tag = kind.tag;
    this.inFlight.set(action.id, flight);
    rec.busyCount++;
  }

  relist(): u64 {
    const kind = new ActionKind();
    kind.tag = ActionTag.Relist;
    return this.plan(null, kind).id;
  }

  runSandbox(rec: PodRecord, attempt: u32): void {
    const spec = this.sandboxSpec(rec, attempt);
    const kind = new ActionKind();
    kind.tag = ActionTag.RunSandbox;
    kind.sandbox = spec;
    const flight = new InFlight();
    flight.attempt = attempt;
    flight.resources = spec.podResources;
    this.call(rec, kind, flight);
  }

  sandboxSpec(rec: PodRecord, attempt: u32): SandboxSpec {
    const spec = new SandboxSpec();
    spec.podUid = rec.uid;
    spec.podName = rec.name;
    spec.podNamespace = rec.namespace;
    spec.attempt = attempt;
    const pod = rec.lastSpec;
    spec.hostNetwork = pod !== null ? pod.hostNetwork : false;
    spec.terminationGracePeriodSeconds = rec.gracePeriodSeconds();
    spec.cgroupParent = rec.cgroupParent;
    if (pod !== null) spec.podResources = podResources(pod);
    return spec;
  }

  /// Creates `container` (a regular or an init container of the pod's spec) with spec hash `hash`.
  createContainer(rec: PodRecord, sandboxId: string, sandboxAttempt: u32, container: ContainerSpec, hash: string, attempt: u32, targetContainerId: string = ""): void {
    const pod = rec.lastSpec;
    assert(pod !== null, "create-container without a spec");
    const create = new CreateContainer();
    create.sandboxId = sandboxId;
    create.sandbox = this.sandboxSpec(rec, sandboxAttempt);
    create.attempt = attempt;
    create.specHash = hash;
    create.container = container;
    create.resources = containerResources(changetype<PodSpec>(pod), rec.qos, container, this.memoryCapacityBytes);
    create.targetContainerId = targetContainerId;
    const hardware = this.hardware.containerHardware(rec.uid, container.name);
    create.cpusetCpus = hardware.cpusetCpus;
    create.cpusetMems = hardware.cpusetMems;
    create.devices = hardware.devices;
    const kind = new ActionKind();
    kind.tag = ActionTag.CreateContainer;
    kind.create = create;
    const flight = new InFlight();
    flight.containerName = container.name;
    flight.sandboxId = sandboxId;
    flight.attempt = attempt;
    flight.specHash = create.specHash;
    flight.image = container.image;
    flight.resources = create.resources;
    flight.requests = container.requests;
    flight.limits = container.limits;
    this.call(rec, kind, flight);
  }

  startContainer(rec: PodRecord, containerId: string, containerName: string): void {
    const kind = new ActionKind();
    kind.tag = ActionTag.StartContainer;
    kind.ref = new ContainerRef(containerId, containerName);
    const flight = new InFlight();
    flight.containerId = containerId;
    flight.containerName = containerName;
    this.call(rec, kind, flight);
  }

  /// Kills a container as upstream's killContainer: a Killing event, then its preStop hook (if
  /// any, once per container, inside the grace period), then StopContainer with what is left of
  /// the grace. `graceSeconds`: a probe's own grace period, or -1 for the pod's.
  stopContainer(rec: PodRecord, containerId: string, containerName: string, reasonMessage: string, graceSeconds: i64 = -1): void {
    const grace = graceSeconds >= 0 ? graceSeconds : rec.gracePeriodSeconds();
    this.event(rec, containerName, EventType.Normal, "Killing", reasonMessage);
    if (this.runPreStop(rec, containerId, containerName, grace, true)) return;
    this.stopNow(rec, containerId, containerName, grace);
  }

  /// Runs the container's preStop hook (if it has one, once per container, when there is time
  /// left) with `grace` as its timeout; `thenStop`: the stop follows the hook with what is left.
  /// Returns whether a hook was started.
  runPreStop(rec: PodRecord, containerId: string, containerName: string, grace: i64, thenStop: bool): bool {
    const container = containerOfSpec(rec.lastSpec, containerName);
    if (container !== null && container.preStop !== null && grace > 0 && !rec.preStopRun.has(containerId)) {
      rec.preStopRun.add(containerId);
      const request = new HookRequest();
      request.containerId = containerId;
      request.containerName = containerName;
      request.hookType = HookType.PreStop;
      request.handler = resolvePorts(container.preStop!, container);
      request.timeoutSeconds = grace;
      const kind = new ActionKind();
      kind.tag = ActionTag.RunHook;
      kind.hook = request;
      const flight = new InFlight();
      flight.containerId = containerId;
      flight.containerName = containerName;
      flight.hookType = HookType.PreStop;
      flight.graceSeconds = grace;
      flight.startedAtMs = this.nowMs;
      flight.stopAfterHook = thenStop;
      this.call(rec, kind, flight);
      return true;
    }
    return false;
  }

  /// CRI StopContainer with `grace` seconds (at least upstream's minimal shutdown window: never
  /// a bare SIGKILL).
  stopNow(rec: PodRecord, containerId: string, containerName: string, grace: i64): void {
    const kind = new ActionKind();
    kind.tag = ActionTag.StopContainer;
    const timeoutSeconds = grace < MINIMUM_GRACE_PERIOD_SECONDS ? MINIMUM_GRACE_PERIOD_SECONDS : grace;
    rec.stopTimeoutSeconds = timeoutSeconds;
    kind.stop = new StopContainer(containerId, containerName, timeoutSeconds);
    const flight = new InFlight();
    flight.containerId = containerId;
    flight.containerName = containerName;
    this.call(rec, kind, flight);
  }

  /// Runs the container's postStart hook; the container counts as running once it succeeds.
  runPostStart(rec: PodRecord, containerId: string, container: ContainerSpec): void {
    const request = new HookRequest();
    request.containerId = containerId;
    request.containerName = container.name;
    request.hookType = HookType.PostStart;
    request.handler = resolvePorts(container.postStart!, container);
    const kind = new ActionKind();
    kind.tag = ActionTag.RunHook;
    kind.hook = request;
    const flight = new InFlight();
    flight.containerId = containerId;
    flight.containerName = container.name;
    flight.hookType = HookType.PostStart;
    rec.postStartRunning.add(containerId);
    this.call(rec, kind, flight);
  }

  removeContainer(rec: PodRecord, containerId: string, containerName: string): void {
    const kind = new ActionKind();
    kind.tag = ActionTag.RemoveContainer;
    kind.ref = new ContainerRef(containerId, containerName);
    const flight = new InFlight();
    flight.containerId = containerId;
    flight.containerName = containerName;
    this.call(rec, kind, flight);
  }

  stopSandbox(rec: PodRecord, sandboxId: string): void {
    this.sandboxCall(rec, ActionTag.StopSandbox, sandboxId);
  }

  removeSandbox(rec: PodRecord, sandboxId: string): void {
    this.sandboxCall(rec, ActionTag.RemoveSandbox, sandboxId);
  }

  private sandboxCall(rec: PodRecord, tag: i32, sandboxId: string): void {
    const kind = new ActionKind();
    kind.tag = tag;
    kind.text = sandboxId;
    const flight = new InFlight();
    flight.sandboxId = sandboxId;
    this.call(rec, kind, flight);
  }

  /// CRI UpdateContainerResources of a running container (in-place resize).
  updateContainerResources(rec: PodRecord, containerId: string, containerName: string, resources: LinuxResources,
    requests: ResourceQuantity[], limits: ResourceQuantity[]): void {
    const kind = new ActionKind();
    kind.tag = ActionTag.UpdateContainerResources;
    kind.update = new UpdateContainerResources(containerId, containerName, resources);
    const flight = new InFlight();
    flight.containerId = containerId;
    flight.containerName = containerName;
    flight.resources = resources;
    flight.requests = requests;
    flight.limits = limits;
    this.call(rec, kind, flight);
  }

  /// New values for the pod's cgroup (in-place resize).
  updatePodCgroup(rec: PodRecord, resources: LinuxResources): void {
    const kind = new ActionKind();
    kind.tag = ActionTag.UpdatePodCgroup;
    kind.podCgroup = new PodCgroupUpdate(rec.cgroupParent, resources);
    const flight = new InFlight();
    flight.resources = resources;
    this.call(rec, kind, flight);
  }

  /// Rewrite a running container's cpuset (the CPU manager's reconcile). No result needed: a
  /// failed write is tried again at the next reconcile, as the host forgets it was made.
  updateContainerCpuset(rec: PodRecord, containerId: string, containerName: string, cpus: string, mems: string): void {
    const kind = new ActionKind();
    kind.tag = ActionTag.UpdateContainerCpuset;
    kind.cpuset = new ContainerCpuset(containerId, containerName, cpus, mems);
    this.plan(rec, kind);
  }

  /// Node-wide: an assignment of CPUs, memory or devices changed; the host writes the state files.
  hardwareStateChanged(): void {
    const kind = new ActionKind();
    kind.tag = ActionTag.HardwareStateChanged;
    this.plan(null, kind);
  }

  /// Node-wide: the pressure conditions changed. No result needed.
  nodePressureChanged(memory: bool, disk: bool, pid: bool): void {
    const kind = new ActionKind();
    kind.tag = ActionTag.NodePressureChanged;
    kind.pressure = new NodePressure(memory, disk, pid);
    this.plan(null, kind);
  }

  /// Node-wide: disk pressure on `signal`; the host frees node-level resources. No result needed.
  reclaimNodeResources(signal: string): void {
    const kind = new ActionKind();
    kind.tag = ActionTag.ReclaimNodeResources;
    kind.text = signal;
    this.plan(null, kind);
  }

  /// Node-wide: logind's delay lock may go (`false`: every shutdown group is done) or must be
  /// taken again (`true`: a cancelled shutdown was applied). No result needed.
  shutdownInhibitLock(hold: bool): void {
    const kind = new ActionKind();
    kind.tag = ActionTag.ShutdownInhibitLock;
    kind.flag = hold;
    this.plan(null, kind);
  }

  /// Pod cgroups are removed by the host; the core only says when. No result needed.
  /// Set up (or refresh) these volumes of the pod; `key` describes the volumes of the spec.
  setUpVolumes(rec: PodRecord, names: string[], key: string): void {
    const kind = new ActionKind();
    kind.tag = ActionTag.SetUpVolumes;
    kind.names = names;
    const flight = new InFlight();
    flight.specHash = key;
    this.call(rec, kind, flight);
  }

  tearDownVolumes(rec: PodRecord): void {
    const kind = new ActionKind();
    kind.tag = ActionTag.TearDownVolumes;
    this.call(rec, kind, new InFlight());
  }

  removePodCgroup(rec: PodRecord): void {
    const kind = new ActionKind();
    kind.tag = ActionTag.RemovePodCgroup;
    kind.text = rec.uid;
    this.plan(rec, kind);
  }

  /// Queues one probe run; its outcome comes back through handle-probe-results. Returns the
  /// action's ID. The pod is not busy meanwhile: probes run beside the pod's worker.
  runProbe(rec: PodRecord, request: ProbeRequest): u64 {
    const kind = new ActionKind();
    kind.tag = ActionTag.RunProbe;
    kind.probe = request;
    return this.plan(rec, kind).id;
  }

  event(rec: PodRecord, containerName: string, type: i32, reason: string, message: string): void {
    const kind = new ActionKind();
    kind.tag = ActionTag.PodEvent;
    kind.event = new PodEvent(containerName, type, reason, message);
    this.plan(rec, kind);
  }

  publishStatus(rec: PodRecord): void {
    const kind = new ActionKind();
    kind.tag = ActionTag.PodStatusChanged;
    kind.status = rec.status;
    this.plan(rec, kind);
  }
}
