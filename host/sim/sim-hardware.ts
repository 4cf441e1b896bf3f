// The simulated node's hardware: a machine of N CPUs over NUMA nodes, the static CPU policy, the
// topology policy and device plugins' resources, as a scenario's `hardware:` block describes them;
// the state files the host would write (given back to the core after an agent restart); and the
// rules every written state must keep: exclusive CPUs held once (init containers' CPUs handed on
// within their pod), never reserved, the shared pool the rest; a device held once.
import type { Core, HardwareConfig, HardwareState } from "../core/core.js";
import type { DeviceState } from "../devices/device-manager.js";
import type { Reader } from "./field-reader.js";
import type { Invariants } from "./invariants.js";
import { cpuList } from "../hardware/machine-topology.js";

export interface ScenarioHardware {
  cpus: number;
  numaNodes: number;
  cpuPolicy: "none" | "static";
  reservedCpus: string;
  topologyPolicy: HardwareConfig["topologyPolicy"];
  topologyScope: HardwareConfig["topologyScope"];
  /** Each device plugin's resource: how many devices, spread over the NUMA nodes in turn. */
  devices: Record<string, number>;
}

type Obj = Record<string, unknown>;

/** `hardware: { cpus: 8, numaNodes: 2, cpuPolicy: static, reservedCpus: "0", topologyPolicy: restricted, devices: { example.com/dev: 4 } }`. */
export function readHardware(r: Reader, value: unknown): ScenarioHardware | undefined {
  if (value === undefined) return undefined;
  const o = r.object(value, "hardware");
  r.only(o, "hardware", ["cpus", "numaNodes", "cpuPolicy", "reservedCpus", "topologyPolicy", "topologyScope", "devices"]);
  const pick = <T extends string>(v: unknown, field: string, allowed: readonly T[], fallback: T): T => {
    if (v === undefined) return fallback;
    const s = r.string(v, field);
    if (!allowed.includes(s as T)) r.fail(field, `expected one of ${allowed.join(", ")}`);
    return s as T;
  };
  const devices: Record<string, number> = {};
  const d = o.devices === undefined ? {} : r.object(o.devices, "hardware.devices");
  for (const [name, count] of Object.entries(d as Obj)) devices[name] = r.int(count, `hardware.devices.${name}`, 0, 256);
  const cpus = r.int(o.cpus ?? 4, "hardware.cpus", 1, 256);
  return {
    cpus,
    numaNodes: r.int(o.numaNodes ?? 1, "hardware.numaNodes", 1, Math.min(8, cpus)),
    cpuPolicy: pick(o.cpuPolicy, "hardware.cpuPolicy", ["none", "static"] as const, "none"),
    reservedCpus: o.reservedCpus === undefined ? "0" : r.string(o.reservedCpus, "hardware.reservedCpus"),
    topologyPolicy: pick(o.topologyPolicy, "hardware.topologyPolicy", ["none", "best-effort", "restricted", "single-numa-node"] as const, "none"),
    topologyScope: pick(o.topologyScope, "hardware.topologyScope", ["container", "pod"] as const, "container"),
    devices,
  };
}

/** The core's settings: CPU n on core n (one thread each), NUMA node by blocks. */
export function hardwareConfigOf(h: ScenarioHardware): HardwareConfig {
  const perNode = Math.ceil(h.cpus / h.numaNodes);
  const cpus = Array.from({ length: h.cpus }, (_, id) => ({ id, core: id, socket: 0, numaNode: Math.floor(id / perNode) }));
  return {
    cpus, numaMemory: [], cpuPolicy: h.cpuPolicy, reservedCpus: h.reservedCpus, reservedCpuCount: 0, fullPcpusOnly: false,
    cpuReconcilePeriodMs: 10_000n, memoryPolicy: "none", reservedMemory: [], topologyPolicy: h.topologyPolicy, topologyScope: h.topologyScope,
  };
}

export class SimHardware {
  /** What the host's state files hold: the last state the core said changed. */
  private saved: HardwareState | undefined;
  writes = 0;

  constructor(private h: ScenarioHardware, private invariants: Invariants) {}

  /** A new core (start or agent restart): the state files, then every plugin's devices. */
  restoreInto(core: Core, nowMs: number): void {
    if (this.saved) core.restoreHardware?.(this.saved);
    for (const [resource, count] of Object.entries(this.h.devices)) {
      const devices: DeviceState[] = Array.from({ length: count }, (_, i) => ({ id: `${resource.split("/").pop()}-${i}`, healthy: true, numaNodes: [i % this.h.numaNodes] }));
      core.handleDevices?.(nowMs, resource, devices);
    }
  }

  /** `hardware-state-changed`: the host writes the files; the rules are checked on what it writes. */
  onStateChanged(core: Core, nowMs: number): void {
    const state = core.hardwareState?.();
    if (!state) return;
    this.saved = state;
    this.writes++;
    const reserved = new Set(cpuList(this.h.reservedCpus));
    const holder = new Map<number, string>();
    const exclusive = new Set<number>();
    for (const a of state.cpus) {
      for (const cpu of cpuList(a.cpus)) {
        exclusive.add(cpu);
        if (reserved.has(cpu)) this.invariants.violate(nowMs, "hardware-reserved-cpu", `reserved CPU ${cpu} given to ${a.podUid}/${a.containerName}`);
        const other = holder.get(cpu);
        // Init containers hand their CPUs to their pod's app containers: one pod may hold a CPU twice.
        if (other !== undefined && other !== a.podUid) this.invariants.violate(nowMs, "hardware-cpu-held-once", `CPU ${cpu} held by pods ${other} and ${a.podUid}`);
        holder.set(cpu, a.podUid);
      }
    }
    const shared = new Set(cpuList(state.defaultCpus));
    for (let cpu = 0; cpu < this.h.cpus; cpu++) {
      if (shared.has(cpu) === exclusive.has(cpu)) this.invariants.violate(nowMs, "hardware-shared-pool", `CPU ${cpu} is ${shared.has(cpu) ? "both shared and exclusive" : "neither shared nor exclusive"}`);
    }
    const devices = new Map<string, string>();
    for (const a of state.devices) {
      for (const id of a.deviceIds) {
        const key = `${a.resource}/${id}`;
        const other = devices.get(key);
        if (other !== undefined && other !== a.podUid) this.invariants.violate(nowMs, "hardware-device-held-once", `${key} held by pods ${other} and ${a.podUid}`);
        devices.set(key, a.podUid);
      }
    }
  }
}
