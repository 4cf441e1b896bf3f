// The trace format: one JSON object per line, each a call into the core with its inputs and
// outputs at the host time the core was given (`t`, ms). Written by `nanolet run --record` and by
// the simulator, read by `nanolet sim --replay`. The bindings' 64-bit integers (bigint) are written
// as decimal strings; the decoders below know which fields they are.
import type { ActionResult, NodeStats, PlannedAction, PodRejection, PodSpec, ProbeResult, RuntimeSnapshot } from "../core/types.js";
import type { BackOffEntry, CoreConfig, HardwareConfig, HardwareState } from "../core/core.js";
import type { DeviceState } from "../devices/device-manager.js";

export const TRACE_FORMAT = "nanolet-trace/1";

/** The lines of a trace. `out: null` means the call trapped (a `trap` line follows). `sim` lines are what the simulator did to the world; replay skips them. */
export type TraceLine =
  | { t: number; op: "header"; format: string; [key: string]: unknown }
  | { t: number; op: "create"; config: CoreConfig }
  | { t: number; op: "pods"; pods: PodSpec[]; out: PodRejection[] | null }
  | { t: number; op: "relist"; snapshot: RuntimeSnapshot }
  | { t: number; op: "relist"; listedAtMs: bigint; same: true }
  | { t: number; op: "results"; results: ActionResult[] }
  | { t: number; op: "probes"; results: ProbeResult[] }
  | { t: number; op: "poll"; out: PlannedAction[] | null }
  | { t: number; op: "backoffs"; entries: BackOffEntry[] }
  | { t: number; op: "runtime-event" }
  | { t: number; op: "event-stream"; streaming: boolean }
  | { t: number; op: "node-shutdown"; active: boolean }
  | { t: number; op: "devices"; resource: string; devices: DeviceState[] }
  | { t: number; op: "hardware-restore"; state: unknown }
  | { t: number; op: "trap"; call: string; reason: string }
  | { t: number; op: "sim"; event: string; [key: string]: unknown };

function replacer(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}

/** One line of JSON, bigints as decimal strings. Same value, same bytes. */
export function encodeLine(line: object): string {
  return JSON.stringify(line, replacer);
}

/** The JSON of a value as it appears in a trace; used to compare outputs exactly. */
export function encodeValue(value: unknown): string {
  return JSON.stringify(value, replacer);
}

export class TraceFormatError extends Error {}

function big(value: unknown, where: string): bigint {
  if (typeof value === "string" && /^-?\d+$/.test(value)) return BigInt(value);
  if (typeof value === "number" && Number.isSafeInteger(value)) return BigInt(value);
  throw new TraceFormatError(`${where}: expected an integer, got ${JSON.stringify(value)}`);
}

function optionalBig(value: unknown, where: string): bigint | undefined {
  return value === undefined || value === null ? undefined : big(value, where);
}

function list(value: unknown, where: string): Record<string, unknown>[] {
  if (!Array.isArray(value)) throw new TraceFormatError(`${where}: expected a list`);
  return value as Record<string, unknown>[];
}

export function decodePods(value: unknown): PodSpec[] {
  return list(value, "pods").map((p, i) => ({
    ...(p as unknown as PodSpec),
    terminationGracePeriodSeconds: optionalBig(p.terminationGracePeriodSeconds, `pods[${i}].terminationGracePeriodSeconds`),
  }));
}

export function decodeSnapshot(value: unknown): RuntimeSnapshot {
  const s = value as Record<string, unknown>;
  if (typeof s !== "object" || s === null) throw new TraceFormatError("snapshot: expected an object");
  return {
    listedAtMs: big(s.listedAtMs, "snapshot.listedAtMs"),
    sandboxes: list(s.sandboxes, "snapshot.sandboxes").map((x, i) => ({
      ...(x as unknown as RuntimeSnapshot["sandboxes"][number]),
      createdAtNs: big(x.createdAtNs, `sandboxes[${i}].createdAtNs`),
      terminationGracePeriodSeconds: optionalBig(x.terminationGracePeriodSeconds, `sandboxes[${i}].terminationGracePeriodSeconds`),
    })),
    containers: list(s.containers, "snapshot.containers").map((c, i) => ({
      ...(c as unknown as RuntimeSnapshot["containers"][number]),
      createdAtNs: big(c.createdAtNs, `containers[${i}].createdAtNs`),
      startedAtNs: big(c.startedAtNs, `containers[${i}].startedAtNs`),
      finishedAtNs: big(c.finishedAtNs, `containers[${i}].finishedAtNs`),
    })),
    uninspectedPodUids: (s.uninspectedPodUids as string[] | undefined) ?? [],
  };
}

export function decodeNodeStats(value: unknown): NodeStats {
  const s = value as Record<string, unknown>;
  if (typeof s !== "object" || s === null) throw new TraceFormatError("stats: expected an object");
  return {
    signals: list(s.signals, "stats.signals").map((x, i) => ({
      signal: String(x.signal),
      available: big(x.available, `signals[${i}].available`),
      capacity: big(x.capacity, `signals[${i}].capacity`),
    })),
    pods: list(s.pods, "stats.pods").map((p, i) => ({
      uid: String(p.uid),
      memoryWorkingSetBytes: big(p.memoryWorkingSetBytes, `pods[${i}].memoryWorkingSetBytes`),
      ephemeralStorageBytes: big(p.ephemeralStorageBytes, `pods[${i}].ephemeralStorageBytes`),
      processCount: big(p.processCount, `pods[${i}].processCount`),
      containers: list(p.containers, `pods[${i}].containers`).map((c, j) => ({
        name: String(c.name),
        memoryWorkingSetBytes: big(c.memoryWorkingSetBytes, `pods[${i}].containers[${j}].memoryWorkingSetBytes`),
      })),
    })),
    // Traces written before volumes were measured have none.
    volumes: (s.volumes === undefined ? [] : list(s.volumes, "stats.volumes")).map((v, i) => ({
      podUid: String(v.podUid),
      volume: String(v.volume),
      usedBytes: big(v.usedBytes, `volumes[${i}].usedBytes`),
    })),
  };
}

export function decodeProbeResults(value: unknown): ProbeResult[] {
  return list(value, "results").map((r, i) => ({ ...(r as unknown as ProbeResult), actionId: big(r.actionId, `results[${i}].actionId`) }));
}

export function decodeResults(value: unknown): ActionResult[] {
  return list(value, "results").map((r, i) => ({ ...(r as unknown as ActionResult), actionId: big(r.actionId, `results[${i}].actionId`) }));
}

/** The managers' state as a trace keeps it: lists and decimal strings instead of typed arrays and bigints. */
export function encodeHardwareState(state: HardwareState): unknown {
  return { ...state, memory: state.memory.map((m) => ({ ...m, numaNodes: Array.from(m.numaNodes), bytes: String(m.bytes) })) };
}

export function decodeHardwareState(value: unknown): HardwareState {
  const v = value as HardwareState & { memory: { numaNodes: number[]; bytes: string }[] };
  return { ...v, memory: (v.memory ?? []).map((m) => ({ ...m, numaNodes: Uint32Array.from(m.numaNodes), bytes: BigInt(m.bytes) })) } as HardwareState;
}

/** A recorded core configuration with its hardware settings' 64-bit numbers back as bigints. */
export function decodeCoreConfig(value: unknown): CoreConfig {
  const config = value as CoreConfig;
  const h = config.hardware as (HardwareConfig & Record<string, any>) | undefined;
  if (!h) return config;
  const memory = (list: { numaNode: number; bytes: unknown }[]) => (list ?? []).map((m) => ({ numaNode: m.numaNode, bytes: BigInt(m.bytes as string) }));
  return { ...config, hardware: { ...h, cpuReconcilePeriodMs: BigInt(h.cpuReconcilePeriodMs as unknown as string), numaMemory: memory(h.numaMemory), reservedMemory: memory(h.reservedMemory) } };
}
