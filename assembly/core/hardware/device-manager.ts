// The device manager's decisions: which devices of a plugin's resource a container gets. The host
// speaks to the plugins; the core knows each resource's devices (health, NUMA nodes) and who holds
// what. Choices are deterministic: a container's own init containers' devices first, then devices on
// the hinted NUMA nodes, then devices without topology, then the rest, each by id.
import { DeviceAssignment, HardwareRefusal, unexpected } from "./assignments";
import { allMasks, maskOf, maskCount } from "./numa-mask";
import { ResourceHints, TopologyHint } from "./topology-hints";

/// One device a plugin announced.
export class DeviceInfo {
  constructor(public id: string = "", public healthy: bool = true, public numaNodes: i32[] = []) {}
}

/// A plugin's resource and its devices as last announced.
export class DeviceResource {
  constructor(public name: string = "", public devices: DeviceInfo[] = []) {}

  healthyIds(): string[] {
    const out = new Array<string>();
    for (let i = 0; i < this.devices.length; i++) if (this.devices[i].healthy) out.push(this.devices[i].id);
    out.sort();
    return out;
  }

  find(id: string): DeviceInfo | null {
    for (let i = 0; i < this.devices.length; i++) if (this.devices[i].id == id) return this.devices[i];
    return null;
  }

  hasTopology(): bool {
    for (let i = 0; i < this.devices.length; i++) if (this.devices[i].numaNodes.length > 0) return true;
    return false;
  }
}

export class DeviceManager {
  resources: DeviceResource[] = [];
  assignments: DeviceAssignment[] = [];
  /// Devices of a pod's init containers its app containers may take again: pod uid + resource.
  private reusable: Map<string, string[]> = new Map();

  resource(name: string): DeviceResource | null {
    for (let i = 0; i < this.resources.length; i++) if (this.resources[i].name == name) return this.resources[i];
    return null;
  }

  /// A plugin's new list (ListAndWatch). A plugin that went away gives an empty list: its
  /// resource stays known (held devices stay held) with nothing to hand out.
  setDevices(name: string, devices: DeviceInfo[]): void {
    const existing = this.resource(name);
    if (existing !== null) existing.devices = devices;
    else this.resources.push(new DeviceResource(name, devices));
  }

  /// upstream's isDevicePluginResource: registered now, or held by someone.
  isDeviceResource(name: string): bool {
    if (this.resource(name) !== null) return true;
    for (let i = 0; i < this.assignments.length; i++) if (this.assignments[i].resource == name) return true;
    return false;
  }

  find(podUid: string, container: string, resource: string): DeviceAssignment | null {
    for (let i = 0; i < this.assignments.length; i++) {
      const a = this.assignments[i];
      if (a.podUid == podUid && a.container == container && a.resource == resource) return a;
    }
    return null;
  }

  heldIds(resource: string): string[] {
    const out = new Array<string>();
    for (let i = 0; i < this.assignments.length; i++) {
      const a = this.assignments[i];
      if (a.resource != resource) continue;
      for (let j = 0; j < a.ids.length; j++) if (out.indexOf(a.ids[j]) < 0) out.push(a.ids[j]);
    }
    return out;
  }

  /// Healthy devices nobody holds, plus those the pod's init containers may hand on; sorted.
  freeIds(podUid: string, resource: string): string[] {
    const r = this.resource(resource);
    const out = new Array<string>();
    const reuse = this.reusableOf(podUid, resource);
    for (let i = 0; i < reuse.length; i++) out.push(reuse[i]);
    if (r === null) return out;
    const held = this.heldIds(resource);
    const healthy = r.healthyIds();
    for (let i = 0; i < healthy.length; i++) if (held.indexOf(healthy[i]) < 0 && out.indexOf(healthy[i]) < 0) out.push(healthy[i]);
    out.sort();
    return out;
  }

  /// upstream's device topology hints for `count` devices of `resource`.
  hints(podUid: string, container: string, resource: string, count: i32, nodes: i32[]): ResourceHints {
    const out = new ResourceHints(resource, true);
    const r = this.resource(resource);
    if (r === null || count == 0 || !r.hasTopology()) return out;
    out.noPreference = false;
    const own = this.find(podUid, container, resource);
    if (own !== null && own.ids.length != count) return out;
    const free = own !== null ? own.ids : this.freeIds(podUid, resource);
    if (free.length < count) return out;
    const masks = allMasks(nodes);
    let minSize = nodes.length;
    for (let m = 0; m < masks.length; m++) {
      let inMask: i32 = 0;
      for (let i = 0; i < r.devices.length; i++) if ((maskOf(r.devices[i].numaNodes) & masks[m]) != 0) inMask++;
      if (inMask >= count && maskCount(masks[m]) < minSize) minSize = maskCount(masks[m]);
      let matching: i32 = 0;
      for (let i = 0; i < free.length; i++) {
        const d = r.find(free[i]);
        if (d !== null && (maskOf(d.numaNodes) & masks[m]) != 0) matching++;
      }
      if (matching < count) continue;
      out.hints.push(new TopologyHint(masks[m], false));
    }
    for (let i = 0; i < out.hints.length; i++) out.hints[i].preferred = maskCount(out.hints[i].mask) == minSize;
    return out;
  }

  /// Gives `container` `count` devices of `resource`, aligned with `mask` first; null when done.
  allocate(podUid: string, container: string, resource: string, count: i32, mask: u64, isInit: bool): HardwareRefusal | null {
    if (count == 0) return null;
    const own = this.find(podUid, container, resource);
    if (own !== null) {
      if (own.ids.length == count) return null;
      return unexpected("pod " + podUid + " container " + container + " changed request for resource " + resource +
        " from " + own.ids.length.toString() + " to " + count.toString());
    }
    const r = this.resource(resource);
    if (r === null) return unexpected("can't allocate unregistered device " + resource);
    const reuse = this.reusableOf(podUid, resource);
    const free = this.freeIds(podUid, resource);
    if (free.length < count) {
      return unexpected("requested number of devices unavailable for " + resource + ". Requested: " + count.toString() +
        ", Available: " + free.length.toString());
    }
    const picked = new Array<string>();
    // Reused first, then aligned, then without topology, then anything.
    for (let pass = 0; pass < 4 && picked.length < count; pass++) {
      for (let i = 0; i < free.length && picked.length < count; i++) {
        const id = free[i];
        if (picked.indexOf(id) >= 0) continue;
        const d = r.find(id);
        const nodes = d === null ? 0 : maskOf(d.numaNodes);
        const fits = pass == 0 ? reuse.indexOf(id) >= 0
          : pass == 1 ? mask != 0 && (nodes & mask) != 0
          : pass == 2 ? nodes == 0
          : true;
        if (fits) picked.push(id);
      }
    }
    picked.sort();
    this.assignments.push(new DeviceAssignment(podUid, container, resource, picked));
    const key = podUid + "\n" + resource;
    if (isInit) {
      const next = reuse.slice(0);
      for (let i = 0; i < picked.length; i++) if (next.indexOf(picked[i]) < 0) next.push(picked[i]);
      this.reusable.set(key, next);
    } else {
      const next = new Array<string>();
      for (let i = 0; i < reuse.length; i++) if (picked.indexOf(reuse[i]) < 0) next.push(reuse[i]);
      this.reusable.set(key, next);
    }
    return null;
  }

  private reusableOf(podUid: string, resource: string): string[] {
    const key = podUid + "\n" + resource;
    return this.reusable.has(key) ? this.reusable.get(key) : [];
  }

  /// The devices of one container, every resource.
  containerAssignments(podUid: string, container: string): DeviceAssignment[] {
    const out = new Array<DeviceAssignment>();
    for (let i = 0; i < this.assignments.length; i++) {
      const a = this.assignments[i];
      if (a.podUid == podUid && a.container == container) out.push(a);
    }
    return out;
  }

  releasePod(podUid: string): bool {
    const kept = new Array<DeviceAssignment>();
    for (let i = 0; i < this.assignments.length; i++) if (this.assignments[i].podUid != podUid) kept.push(this.assignments[i]);
    const keys = this.reusable.keys();
    for (let i = 0; i < keys.length; i++) if (keys[i].startsWith(podUid + "\n")) this.reusable.delete(keys[i]);
    if (kept.length == this.assignments.length) return false;
    this.assignments = kept;
    return true;
  }

  restore(entries: DeviceAssignment[]): void {
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i];
      if (e.ids.length == 0 || this.find(e.podUid, e.container, e.resource) !== null) continue;
      const ids = e.ids.slice(0);
      ids.sort();
      this.assignments.push(new DeviceAssignment(e.podUid, e.container, e.resource, ids));
    }
  }
}
