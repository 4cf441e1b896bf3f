// AssemblyScript mirrors of wit/node.wit: the agent's configuration, the node, its stats passes.
// Field order and meaning follow the WIT records one to one; assembly/abi/ moves them across
// the boundary.
import { VolumeUsage } from "./model-pod-spec";
import { unitsEqual, utf8EqualsUnits } from "./units";

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
