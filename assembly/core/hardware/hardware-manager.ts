// The topology manager and the admission of hardware: for each container (or once for the pod, in
// the pod scope) the device, CPU and memory managers give their NUMA hints, the policy merges them
// and admits or refuses (`TopologyAffinityError`), and each manager then allocates along the
// merged hint. Also the CPU manager's reconcile: which running containers' cpusets to rewrite.
import { ContainerSpec, PodSpec } from "../model";
import { QosClass } from "../qos";
import { parseQuantity } from "../quantity";
import { writtenRequest } from "../resources";
import { CpuAssignment, DeviceAssignment, HardwareRefusal, MemoryAssignment } from "./assignments";
import { contains, formatCpuSet, parseCpuSet, parseError } from "./cpuset";
import { CPU_POLICY_NONE, CPU_POLICY_STATIC, CpuManager } from "./cpu-manager";
import { takeByTopology, takeError } from "./cpu-take";
import { CpuInfo, CpuTopology } from "./cpu-topology";
import { DeviceInfo, DeviceManager } from "./device-manager";
import { MEMORY_POLICY_NONE, MEMORY_POLICY_STATIC, MemoryManager, NumaMemory } from "./memory-manager";
import { maskOf } from "./numa-mask";
import { POLICY_NONE, ResourceHints, mergeHints } from "./topology-hints";

export const SCOPE_CONTAINER = "container";
/** upstream's maximum of NUMA nodes the topology manager places over (2^8 candidate sets). */
export const MAX_NUMA_NODES: i32 = 8;
/** CPUs a machine may have (a cpuset names ids up to MAX_CPU_ID). */
export const MAX_CPUS: i32 = 8192;
export const SCOPE_POD = "pod";
const TOPOLOGY_AFFINITY_ERROR = "TopologyAffinityError";
const TOPOLOGY_AFFINITY_MESSAGE = "Resources cannot be allocated with Topology locality";

/// What a container is created with: its cpusets (empty: leave the runtime's) and devices.
export class ContainerHardware {
  cpusetCpus: string = "";
  cpusetMems: string = "";
  devices: DeviceAssignment[] = [];
}

/// A running container whose cpuset must be written again (the CPU manager's reconcile).
export class CpusetUpdate {
  constructor(public podUid: string, public containerId: string, public containerName: string, public cpus: string, public mems: string) {}
}

/// A container's whole CPU count when it may hold CPUs exclusively (upstream's guaranteedCPUs).
export function exclusiveCpus(qos: QosClass, container: ContainerSpec): i32 {
  if (qos != QosClass.Guaranteed) return 0;
  const milli = parseQuantity(writtenRequest(container, "cpu")).milliValue;
  if (milli <= 0 || milli % 1000 != 0) return 0;
  return <i32>(milli / 1000);
}

function memoryBytes(qos: QosClass, container: ContainerSpec): i64 {
  if (qos != QosClass.Guaranteed) return 0;
  const milli = parseQuantity(writtenRequest(container, "memory")).milliValue;
  return milli <= 0 ? 0 : (milli + 999) / 1000;
}

/// The `hardware-config` of the WIT, lifted.
export class HardwareConfig {
  cpus: CpuInfo[] = [];
  numaMemory: NumaMemory[] = [];
  cpuPolicy: string = CPU_POLICY_NONE;
  reservedCpus: string = "";
  reservedCpuCount: i32 = 0;
  fullPcpusOnly: bool = false;
  reconcilePeriodMs: u64 = 10000;
  memoryPolicy: string = MEMORY_POLICY_NONE;
  reservedMemory: NumaMemory[] = [];
  topologyPolicy: string = POLICY_NONE;
  topologyScope: string = SCOPE_CONTAINER;
}

export class HardwareManager {
  topologyPolicy: string = POLICY_NONE;
  topologyScope: string = SCOPE_CONTAINER;
  reconcilePeriodMs: u64 = 10000;
  cpu: CpuManager = new CpuManager();
  memory: MemoryManager = new MemoryManager();
  devices: DeviceManager = new DeviceManager();
  /// Bumped at each change of an assignment: the host writes the state files again.
  version: u64 = 0;
  /// The cpuset last written to each container, by pod uid and name (upstream's lastUpdateState).
  private applied: Map<string, string> = new Map();
  nextReconcileMs: u64 = 0;

  /// Applies the managers' settings; "" when applied, else upstream's reason and nothing changes.
  configure(config: HardwareConfig): string {
    if (config.cpus.length > MAX_CPUS) return "[cpumanager] more than " + MAX_CPUS.toString() + " CPUs";
    const topology = new CpuTopology(config.cpus);
    // Every subset of NUMA nodes is a candidate placement: upstream refuses more than 8 nodes too.
    let nodes = topology.numaNodes().length;
    const memoryNodes = new Array<i32>();
    for (let i = 0; i < config.numaMemory.length; i++) if (memoryNodes.indexOf(config.numaMemory[i].node) < 0) memoryNodes.push(config.numaMemory[i].node);
    if (memoryNodes.length > nodes) nodes = memoryNodes.length;
    if (nodes > MAX_NUMA_NODES && (config.topologyPolicy != POLICY_NONE || config.memoryPolicy == MEMORY_POLICY_STATIC)) {
      return "unsupported on machines with more than " + MAX_NUMA_NODES.toString() + " NUMA Nodes";
    }
    let reserved: i32[] = [];
    if (config.reservedCpus.length > 0) {
      const parsed = parseCpuSet(config.reservedCpus);
      if (parsed === null) return parseError;
      const all = topology.allIds();
      // The list is checked against the machine only where it places CPUs: under none the
      // topology is not read at all.
      for (let i = 0; config.cpuPolicy == CPU_POLICY_STATIC && i < parsed.length; i++) {
        if (!contains(all, parsed[i])) return "[cpumanager] reserved CPUs " + config.reservedCpus + " are not all on this machine (" + formatCpuSet(all) + ")";
      }
      reserved = parsed;
    } else if (config.reservedCpuCount > 0 && config.cpuPolicy == CPU_POLICY_STATIC) {
      // Only the static policy sets CPUs aside; under none the reservation is cgroup accounting alone.
      const taken = takeByTopology(topology, topology.allIds(), config.reservedCpuCount);
      if (taken === null) return "[cpumanager] unable to reserve the required amount of CPUs (" + config.reservedCpuCount.toString() + "): " + takeError;
      reserved = taken;
    }
    if (config.cpuPolicy == CPU_POLICY_STATIC && reserved.length == 0) {
      return "[cpumanager] the static policy requires systemreserved.cpu + kubereserved.cpu to be greater than zero";
    }
    if (config.cpuPolicy == CPU_POLICY_STATIC && topology.cpus.length == 0) return "[cpumanager] the static policy needs the machine's CPU topology";
    if (config.memoryPolicy == MEMORY_POLICY_STATIC && config.numaMemory.length == 0) return "[memorymanager] the Static policy needs the machine's NUMA memory";
    this.cpu.configure(config.cpuPolicy, topology, reserved, config.fullPcpusOnly);
    this.memory.configure(config.memoryPolicy, config.numaMemory, config.reservedMemory);
    this.topologyPolicy = config.topologyPolicy;
    this.topologyScope = config.topologyScope;
    this.reconcilePeriodMs = config.reconcilePeriodMs > 0 ? config.reconcilePeriodMs : 10000;
    this.version++;
    return "";
  }

  /// The devices a container requests (limits of plugin resources), in name order.
  private deviceRequests(container: ContainerSpec): string[] {
    const out = new Array<string>();
    for (let i = 0; i < container.limits.length; i++) {
      const name = container.limits[i].name;
      if (this.devices.isDeviceResource(name)) out.push(name);
    }
    out.sort();
    return out;
  }

  private deviceCount(container: ContainerSpec, resource: string): i32 {
    for (let i = 0; i < container.limits.length; i++) {
      if (container.limits[i].name == resource) return <i32>(parseQuantity(container.limits[i].quantity).milliValue / 1000);
    }
    return 0;
  }

  private numaNodes(): i32[] {
    const nodes = this.cpu.topology.numaNodes();
    const memoryNodes = this.memory.nodes();
    for (let i = 0; i < memoryNodes.length; i++) if (nodes.indexOf(memoryNodes[i]) < 0) nodes.push(memoryNodes[i]);
    nodes.sort((a: i32, b: i32): i32 => a - b);
    return nodes;
  }

  private hintsOf(uid: string, c: ContainerSpec, qos: QosClass): ResourceHints[] {
    const out = new Array<ResourceHints>();
    const nodes = this.numaNodes();
    const resources = this.deviceRequests(c);
    for (let i = 0; i < resources.length; i++) out.push(this.devices.hints(uid, c.name, resources[i], this.deviceCount(c, resources[i]), nodes));
    out.push(this.cpu.hints(uid, c.name, exclusiveCpus(qos, c)));
    out.push(this.memory.hints(uid, c.name, memoryBytes(qos, c)));
    return out;
  }

  /// The pod scope's hints: each manager asked for the pod's peak need, upstream's pod-level
  /// request: the largest of an init container's, or all app containers' and sidecars' together.
  private podHints(spec: PodSpec, qos: QosClass): ResourceHints[] {
    const out = new Array<ResourceHints>();
    const nodes = this.numaNodes();
    const resources = new Array<string>();
    const all = spec.initContainers.concat(spec.containers);
    for (let i = 0; i < all.length; i++) {
      const names = this.deviceRequests(all[i]);
      for (let j = 0; j < names.length; j++) if (resources.indexOf(names[j]) < 0) resources.push(names[j]);
    }
    resources.sort();
    for (let r = 0; r < resources.length; r++) {
      let initPeak: i64 = 0, together: i64 = 0;
      for (let i = 0; i < spec.initContainers.length; i++) {
        const c = spec.initContainers[i];
        const n = <i64>this.deviceCount(c, resources[r]);
        if (c.isSidecar) together += n;
        else if (n > initPeak) initPeak = n;
      }
      for (let i = 0; i < spec.containers.length; i++) together += <i64>this.deviceCount(spec.containers[i], resources[r]);
      out.push(this.devices.hints(spec.uid, "", resources[r], <i32>(initPeak > together ? initPeak : together), nodes));
    }
    let cpuInit: i64 = 0, cpuTogether: i64 = 0, memInit: i64 = 0, memTogether: i64 = 0;
    for (let i = 0; i < spec.initContainers.length; i++) {
      const c = spec.initContainers[i];
      const cpus = <i64>exclusiveCpus(qos, c), bytes = memoryBytes(qos, c);
      if (c.isSidecar) {
        cpuTogether += cpus;
        memTogether += bytes;
      } else {
        if (cpus > cpuInit) cpuInit = cpus;
        if (bytes > memInit) memInit = bytes;
      }
    }
    for (let i = 0; i < spec.containers.length; i++) {
      cpuTogether += <i64>exclusiveCpus(qos, spec.containers[i]);
      memTogether += memoryBytes(qos, spec.containers[i]);
    }
    out.push(this.cpu.hints(spec.uid, "", <i32>(cpuInit > cpuTogether ? cpuInit : cpuTogether)));
    out.push(this.memory.hints(spec.uid, "", memInit > memTogether ? memInit : memTogether));
    return out;
  }

  /// Admits a new pod's hardware, allocating as it goes; the refusal, or null. A refused pod
  /// keeps nothing.
  admit(spec: PodSpec, qos: QosClass): HardwareRefusal | null {
    const containers = new Array<ContainerSpec>();
    for (let i = 0; i < spec.initContainers.length; i++) containers.push(spec.initContainers[i]);
    for (let i = 0; i < spec.containers.length; i++) containers.push(spec.containers[i]);
    let podMask: u64 = 0;
    if (this.topologyScope == SCOPE_POD && this.topologyPolicy != POLICY_NONE) {
      // One hint for the whole pod, from what the pod needs at its peak (upstream's pod scope).
      const merged = mergeHints(this.topologyPolicy, maskOf(this.numaNodes()), this.podHints(spec, qos));
      if (!merged.admit) return new HardwareRefusal(TOPOLOGY_AFFINITY_ERROR, TOPOLOGY_AFFINITY_MESSAGE);
      podMask = merged.hint.mask;
    }
    for (let i = 0; i < containers.length; i++) {
      const c = containers[i];
      const isInit = i < spec.initContainers.length && !c.isSidecar;
      let mask = podMask;
      // The none policy places without hints (upstream's admitPolicyNone).
      if (this.topologyScope != SCOPE_POD && this.topologyPolicy != POLICY_NONE) {
        const merged = mergeHints(this.topologyPolicy, maskOf(this.numaNodes()), this.hintsOf(spec.uid, c, qos));
        if (!merged.admit) {
          this.releasePod(spec.uid);
          return new HardwareRefusal(TOPOLOGY_AFFINITY_ERROR, TOPOLOGY_AFFINITY_MESSAGE);
        }
        mask = merged.hint.mask;
      }
      const refusal = this.allocate(spec.uid, c, qos, mask, isInit);
      if (refusal !== null) {
        this.releasePod(spec.uid);
        return refusal;
      }
    }
    return null;
  }

  /// upstream's order of hint providers: devices, CPUs, memory.
  private allocate(uid: string, c: ContainerSpec, qos: QosClass, mask: u64, isInit: bool): HardwareRefusal | null {
    const resources = this.deviceRequests(c);
    for (let i = 0; i < resources.length; i++) {
      const refusal = this.devices.allocate(uid, c.name, resources[i], this.deviceCount(c, resources[i]), mask, isInit);
      if (refusal !== null) return refusal;
      this.version++;
    }
    const cpus = exclusiveCpus(qos, c);
    if (cpus > 0 && this.cpu.isStatic) {
      const refusal = this.cpu.allocate(uid, c.name, cpus, mask, isInit);
      if (refusal !== null) return refusal;
      this.version++;
    }
    const bytes = memoryBytes(qos, c);
    if (bytes > 0 && this.memory.isStatic) {
      const refusal = this.memory.allocate(uid, c.name, bytes, mask);
      if (refusal !== null) return refusal;
      this.version++;
    }
    return null;
  }

  /// What a container is created with.
  containerHardware(uid: string, name: string): ContainerHardware {
    const out = new ContainerHardware();
    if (this.cpu.isStatic) {
      out.cpusetCpus = formatCpuSet(this.cpu.cpusetOf(uid, name));
      this.applied.set(uid + "\n" + name, out.cpusetCpus);
    }
    out.cpusetMems = formatCpuSet(this.memory.nodesOf(uid, name));
    out.devices = this.devices.containerAssignments(uid, name);
    return out;
  }

  /// A container's cpuset now differs from what it was last given: returns it, else null.
  reconcileOne(uid: string, containerId: string, name: string): CpusetUpdate | null {
    if (!this.cpu.isStatic) return null;
    const key = uid + "\n" + name;
    const cpus = formatCpuSet(this.cpu.cpusetOf(uid, name));
    if (cpus.length == 0 || (this.applied.has(key) && this.applied.get(key) == cpus)) return null;
    this.applied.set(key, cpus);
    return new CpusetUpdate(uid, containerId, name, cpus, formatCpuSet(this.memory.nodesOf(uid, name)));
  }

  releasePod(uid: string): void {
    const a = this.cpu.releasePod(uid);
    const b = this.devices.releasePod(uid);
    const c = this.memory.releasePod(uid);
    if (a || b || c) this.version++;
    const keys = this.applied.keys();
    for (let i = 0; i < keys.length; i++) if (keys[i].startsWith(uid + "\n")) this.applied.delete(keys[i]);
  }

  /// Every pod that holds something, sorted.
  heldPods(): string[] {
    const out = new Array<string>();
    for (let i = 0; i < this.cpu.assignments.length; i++) out.push(this.cpu.assignments[i].podUid);
    for (let i = 0; i < this.devices.assignments.length; i++) out.push(this.devices.assignments[i].podUid);
    for (let i = 0; i < this.memory.assignments.length; i++) out.push(this.memory.assignments[i].podUid);
    out.sort();
    const unique = new Array<string>();
    for (let i = 0; i < out.length; i++) if (unique.length == 0 || unique[unique.length - 1] != out[i]) unique.push(out[i]);
    return unique;
  }

  setDevices(resource: string, devices: DeviceInfo[]): void {
    this.devices.setDevices(resource, devices);
  }

  restore(cpus: CpuAssignment[], devices: DeviceAssignment[], memory: MemoryAssignment[]): void {
    this.cpu.restore(cpus);
    this.devices.restore(devices);
    this.memory.restore(memory);
  }

  /// Whether admission has anything to decide for this pod (a fast path for plain pods).
  concerns(spec: PodSpec, qos: QosClass): bool {
    if (qos == QosClass.Guaranteed && (this.cpu.isStatic || this.memory.isStatic)) return true;
    for (let i = 0; i < spec.containers.length; i++) if (this.deviceRequests(spec.containers[i]).length > 0) return true;
    for (let i = 0; i < spec.initContainers.length; i++) if (this.deviceRequests(spec.initContainers[i]).length > 0) return true;
    return false;
  }
}
