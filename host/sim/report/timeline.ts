// A simulation run as a timeline, read from its trace (host/trace): every pod's phase, every
// container's states with restarts and back-off waits, evictions, injected faults and the node's
// pressure signals. Pure and DOM-free: `nanolet sim --report` and the report page's re-run in the
// browser both build it from a trace.
import { hardMemoryThresholdBytes } from "../../node/eviction-flags.js";

/** A stretch of time in one state. Times are milliseconds from the start of the run. */
export interface Span {
  fromMs: number;
  toMs: number;
  state: string;
  reason: string;
}

/** Something that happened at one moment. */
export interface Mark {
  atMs: number;
  kind: string;
  text: string;
}

export interface ContainerTrack {
  name: string;
  spans: Span[];
  restarts: Mark[];
}

export interface PodTrack {
  uid: string;
  /** The pod's name; with a short uid after it when another pod of the run had the same name. */
  name: string;
  namespace: string;
  phases: Span[];
  containers: ContainerTrack[];
  /** Evictions, kills and other pod events worth a flag. */
  marks: Mark[];
  /** When the agent reported the pod finished (all stopped, the pod gone); its bars end there. */
  finishedAtMs?: number;
}

/** One measured signal over time, with its hard threshold when known. */
export interface SignalSeries {
  signal: string;
  points: { atMs: number; available: number; capacity: number }[];
  /** The hard threshold in the signal's unit, when the agent was given one (memory only). */
  hardThreshold?: number;
}

export interface Timeline {
  scenario: string;
  seed: number;
  durationMs: number;
  pods: PodTrack[];
  /** Injected faults and restarts of the runtime or agent. */
  faults: Mark[];
  /** Spans during which the core reported each pressure condition. */
  pressure: { memory: Span[]; disk: Span[]; pid: Span[] };
  signals: SignalSeries[];
  evictions: number;
  restarts: number;
}

interface TraceLine {
  t: number;
  op: string;
  [field: string]: unknown;
}

interface StatusVal {
  finished: boolean;
  phase: string;
  reason: string;
  message: string;
  containerStatuses: { name: string; state: string; reason: string; exitCode: number; restartCount: number }[];
}

/** Which sim events are faults or disturbances worth showing. */
const FAULT_EVENTS = new Set([
  "fault", "fault-window", "relist-fault-window", "relist-lost", "relist-duplicated", "runtime-restart", "runtime-up",
  "agent-restart", "agent-start", "suspend", "exit",
]);

function faultText(event: string, line: TraceLine): string {
  switch (event) {
    case "fault": return `${line.call}: ${line.kind}`;
    case "exit": return `container ${line.name} of ${line.pod} made to exit with code ${line.code}`;
    case "suspend": return `node suspended for ${Math.round(Number(line.forMs) / 1000)} s`;
    case "runtime-restart": return `runtime restarts (down ${Math.round(Number(line.downMs) / 1000)} s)`;
    case "agent-restart": return `agent restarts (down ${Math.round(Number(line.downMs) / 1000)} s)`;
    case "fault-window": return `CRI faults on ${line.call} for ${Math.round(Number(line.forMs) / 1000)} s`;
    case "relist-fault-window": return `relist answers lost or repeated for ${Math.round(Number(line.forMs) / 1000)} s`;
    default: return event;
  }
}

/** Extends or starts the last span of `spans` at `atMs`. */
function enter(spans: Span[], atMs: number, state: string, reason: string): void {
  const last = spans[spans.length - 1];
  if (last && last.state === state && last.reason === reason) return;
  if (last) last.toMs = atMs;
  spans.push({ fromMs: atMs, toMs: atMs, state, reason });
}

function closeAll(spans: Span[], endMs: number): void {
  const last = spans[spans.length - 1];
  if (last) last.toMs = endMs;
}

/** Builds the timeline of a run from its trace lines (JSON text or parsed). */
export function timelineFromTrace(trace: (string | TraceLine)[]): Timeline {
  const lines = trace.map((l) => (typeof l === "string" ? (JSON.parse(l) as TraceLine) : l));
  const header = lines.find((l) => l.op === "header");
  const startMs = header?.t ?? lines[0]?.t ?? 0;
  const pods = new Map<string, PodTrack>();
  const timeline: Timeline = {
    scenario: String(header?.scenario ?? ""),
    seed: Number(header?.seed ?? 0),
    durationMs: 0,
    pods: [],
    faults: [],
    pressure: { memory: [], disk: [], pid: [] },
    signals: [],
    evictions: 0,
    restarts: 0,
  };
  const signals = new Map<string, SignalSeries>();
  const created = lines.find((l) => l.op === "create") as { config?: { node?: { evictionHard: string; memoryCapacityBytes: number } } } | undefined;
  const node = created?.config?.node;
  let endMs = 0;
  for (const line of lines) {
    const at = line.t - startMs;
    endMs = Math.max(endMs, at);
    // A container exiting by its own behaviour is not a fault; a timeline `exit` (it has `found`) is.
    const ownExit = line.event === "exit" && !("found" in line);
    if (line.op === "sim" && FAULT_EVENTS.has(String(line.event)) && !ownExit) {
      timeline.faults.push({ atMs: at, kind: String(line.event), text: faultText(String(line.event), line) });
      // The agent's process died: what it announced dies with it, and a new one starts with none.
      if (line.event === "agent-restart") for (const key of ["memory", "disk", "pid"] as const) enter(timeline.pressure[key], at, "", "");
    } else if (line.op === "stats") {
      for (const s of (line.stats as { signals: { signal: string; available: string; capacity: string }[] }).signals) {
        if (!signals.has(s.signal)) signals.set(s.signal, { signal: s.signal, points: [] });
        signals.get(s.signal)!.points.push({ atMs: at, available: Number(s.available), capacity: Number(s.capacity) });
      }
    } else if (line.op === "poll") {
      for (const action of line.out as { podUid: string; podName: string; podNamespace: string; kind: { tag: string; val?: unknown } }[]) {
        if (action.kind.tag === "node-pressure-changed") {
          const p = action.kind.val as { memory: boolean; disk: boolean; pid: boolean };
          for (const key of ["memory", "disk", "pid"] as const) enter(timeline.pressure[key], at, p[key] ? "pressure" : "", "");
          continue;
        }
        if (action.kind.tag !== "pod-status-changed" && action.kind.tag !== "pod-event") continue;
        let pod = pods.get(action.podUid);
        if (!pod) {
          pod = { uid: action.podUid, name: action.podName, namespace: action.podNamespace, phases: [], containers: [], marks: [] };
          pods.set(action.podUid, pod);
        }
        if (action.kind.tag === "pod-event") {
          const e = action.kind.val as { containerName: string; reason: string; message: string };
          // Evictions are read from the status (reason Evicted), which carries the message too.
          if (e.reason === "Killing" || e.reason === "BackOff") {
            pod.marks.push({ atMs: at, kind: e.reason, text: e.message });
          }
          continue;
        }
        applyStatus(pod, at, action.kind.val as StatusVal, timeline);
      }
    }
  }
  timeline.durationMs = endMs;
  const names = new Map<string, number>();
  for (const pod of pods.values()) names.set(pod.name, (names.get(pod.name) ?? 0) + 1);
  for (const pod of pods.values()) {
    const podEndMs = pod.finishedAtMs ?? endMs;
    closeAll(pod.phases, podEndMs);
    for (const c of pod.containers) closeAll(c.spans, podEndMs);
    if (names.get(pod.name)! > 1) pod.name = `${pod.name} (${pod.uid.slice(0, 8)})`;
  }
  for (const key of ["memory", "disk", "pid"] as const) {
    closeAll(timeline.pressure[key], endMs);
    timeline.pressure[key] = timeline.pressure[key].filter((s) => s.state === "pressure");
  }
  // Pods that something happened to first, then the rest, by name.
  timeline.pods = [...pods.values()].sort((a, b) => interest(b) - interest(a) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  timeline.signals = [...signals.values()];
  const memory = signals.get("memory.available");
  if (memory && node) memory.hardThreshold = hardMemoryThresholdBytes(node.evictionHard, Number(node.memoryCapacityBytes)) || undefined;
  return timeline;
}

/** Evicted pods first, then failed ones, then by restarts; steady pods last. */
function interest(pod: PodTrack): number {
  const evicted = pod.marks.some((m) => m.kind === "Evicted") ? 1_000_000 : 0;
  const failed = pod.phases.some((p) => p.state === "failed") ? 100_000 : 0;
  const restarts = pod.containers.reduce((n, c) => n + c.restarts.length, 0);
  const changes = pod.phases.length + pod.containers.reduce((n, c) => n + c.spans.length, 0);
  return evicted + failed + restarts * 100 + Math.min(changes, 99);
}

function applyStatus(pod: PodTrack, at: number, status: StatusVal, timeline: Timeline): void {
  const lastPhase = pod.phases[pod.phases.length - 1];
  if (status.reason === "Evicted" && lastPhase?.reason !== "Evicted") {
    timeline.evictions++;
    pod.marks.push({ atMs: at, kind: "Evicted", text: status.message });
  }
  // As the apiserver keeps a pod's reason when a status patch gives none (a restarted agent
  // reports an evicted pod Failed without it), so does the timeline.
  const keepsReason = !status.reason && lastPhase?.state === status.phase;
  enter(pod.phases, at, status.phase, keepsReason ? lastPhase.reason : status.reason);
  if (status.finished && pod.finishedAtMs === undefined) pod.finishedAtMs = at;
  if (!status.finished) pod.finishedAtMs = undefined; // the same uid came back
  for (const s of status.containerStatuses) {
    let track = pod.containers.find((c) => c.name === s.name);
    if (!track) {
      track = { name: s.name, spans: [], restarts: [] };
      pod.containers.push(track);
    }
    const before = track.restarts.length;
    if (s.restartCount > before) {
      for (let n = before + 1; n <= s.restartCount; n++) track.restarts.push({ atMs: at, kind: "restart", text: `restart ${n}` });
      timeline.restarts += s.restartCount - before;
    }
    const reason = s.state === "terminated" ? s.reason || `exit ${s.exitCode}` : s.reason;
    enter(track.spans, at, s.state, reason);
  }
}
