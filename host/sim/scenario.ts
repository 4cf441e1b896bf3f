// Scenario files: a YAML document describing a simulated node (pods, latencies), what happens to
// it over time (the timeline) and what must be true (expectations). See tests/sim/README.md.
// Every mistake is reported with the file and the field path, and nothing is guessed.
import { hardwareConfigOf, readHardware } from "./sim-hardware.js";
import { readImageGc } from "./scenario-images.js";
import fs from "node:fs";
import { parse } from "yaml";
import type { CoreConfig } from "../core/core.js";
import { hardMemoryThresholdBytes } from "../node/eviction-flags.js";
import type { DurationRange } from "./duration.js";
import { CRI_CALLS, POD_PHASES, type ContainerBehaviour, type CriCall, type Expectation, type Scenario, type ScenarioMemory, type ScenarioPod, type TimelineAction } from "./scenario-types.js";
import { Obj, Reader, ScenarioError, describe } from "./field-reader.js";

export { ScenarioError };
export * from "./scenario-types.js";

const DEFAULT_LATENCY: Record<string, string> = {
  default: "1ms-10ms",
  PullImage: "200ms-2s",
  StopContainer: "1ms-10ms",
};

function readBehaviour(r: Reader, value: unknown, field: string): ContainerBehaviour {
  const b = r.object(value, field);
  r.only(b, field, ["exitAfter", "exitCode", "stopAfter", "ignoreSigterm", "memory", "healthyFor", "startupAfter", "probeTimeouts"]);
  const probeTimeouts = b.probeTimeouts ?? 0;
  if (typeof probeTimeouts !== "number" || !(probeTimeouts >= 0 && probeTimeouts <= 1)) r.fail(`${field}.probeTimeouts`, `expected a number from 0 to 1, got ${describe(probeTimeouts)}`);
  const ignoreSigterm = b.ignoreSigterm ?? false;
  if (typeof ignoreSigterm !== "boolean") r.fail(`${field}.ignoreSigterm`, `expected true or false, got ${describe(ignoreSigterm)}`);
  return {
    exitAfter: b.exitAfter === undefined ? undefined : r.range(b.exitAfter, `${field}.exitAfter`),
    exitCode: b.exitCode === undefined ? 0 : r.int(b.exitCode, `${field}.exitCode`, 0, 255),
    stopAfter: r.range(b.stopAfter ?? "10ms", `${field}.stopAfter`),
    ignoreSigterm,
    memoryBytes: b.memory === undefined ? 1024 * 1024 : r.bytes(b.memory, `${field}.memory`),
    healthyFor: b.healthyFor === undefined ? undefined : r.range(b.healthyFor, `${field}.healthyFor`),
    startupAfter: b.startupAfter === undefined ? undefined : r.range(b.startupAfter, `${field}.startupAfter`),
    probeTimeouts,
  };
}

/** `shutdown: { gracePeriod: 30s, criticalPods: 10s }` or `shutdown: { byPriority: [{priority: 0, grace: 10s}] }`. */
function readShutdown(r: Reader, value: unknown): Scenario["shutdown"] {
  if (value === undefined) return undefined;
  const o = r.object(value, "shutdown");
  r.only(o, "shutdown", ["gracePeriod", "criticalPods", "byPriority"]);
  const seconds = (v: unknown, field: string) => Math.floor(r.duration(v ?? "0s", field) / 1000);
  return {
    gracePeriodSeconds: seconds(o.gracePeriod, "shutdown.gracePeriod"),
    criticalPodsSeconds: seconds(o.criticalPods, "shutdown.criticalPods"),
    byPodPriority: r.list(o.byPriority, "shutdown.byPriority").map((g, i) => {
      const e = r.object(g, `shutdown.byPriority[${i}]`);
      r.only(e, `shutdown.byPriority[${i}]`, ["priority", "grace"]);
      return { priority: r.int(e.priority ?? 0, `shutdown.byPriority[${i}].priority`, -2147483648, 2147483647), gracePeriodSeconds: seconds(e.grace, `shutdown.byPriority[${i}].grace`) };
    }),
  };
}

function readMemory(r: Reader, value: unknown): ScenarioMemory | undefined {
  if (value === undefined) return undefined;
  const m = r.object(value, "memory");
  r.only(m, "memory", ["capacity", "system", "evictionHard", "evictionSoft", "evictionSoftGracePeriod", "evictionMinimumReclaim", "interval", "transitionPeriod", "maxPodGracePeriod"]);
  const text = (v: unknown, field: string) => (v === undefined ? "" : r.string(v, `memory.${field}`));
  return {
    capacityBytes: r.bytes(m.capacity ?? "4Gi", "memory.capacity"),
    systemBytes: r.bytes(m.system ?? "300Mi", "memory.system"),
    evictionHard: m.evictionHard === undefined ? "memory.available<100Mi" : text(m.evictionHard, "evictionHard"),
    evictionSoft: text(m.evictionSoft, "evictionSoft"),
    evictionSoftGracePeriod: text(m.evictionSoftGracePeriod, "evictionSoftGracePeriod"),
    evictionMinimumReclaim: text(m.evictionMinimumReclaim, "evictionMinimumReclaim"),
    intervalMs: r.duration(m.interval ?? "10s", "memory.interval"),
    transitionPeriodMs: r.duration(m.transitionPeriod ?? "5m", "memory.transitionPeriod"),
    maxPodGracePeriodSeconds: m.maxPodGracePeriod === undefined ? 0 : r.int(m.maxPodGracePeriod, "memory.maxPodGracePeriod", 0, 3600),
  };
}

function readPod(r: Reader, value: unknown, field: string): ScenarioPod {
  const entry = r.object(value, field);
  // Either a bare Pod manifest, or { manifest, containers } with the containers' behaviour.
  const bare = entry.kind !== undefined;
  if (!bare) r.only(entry, field, ["manifest", "containers", "copies"]);
  const manifest = bare ? entry : r.object(entry.manifest, `${field}.manifest`);
  const metadata = r.object(manifest.metadata, `${bare ? field : `${field}.manifest`}.metadata`);
  const key = r.string(metadata.name, `${bare ? field : `${field}.manifest`}.metadata.name`);
  const behaviour: Record<string, ContainerBehaviour> = {};
  if (!bare && entry.containers !== undefined) {
    const containers = r.object(entry.containers, `${field}.containers`);
    for (const [name, b] of Object.entries(containers)) behaviour[name] = readBehaviour(r, b, `${field}.containers.${name}`);
  }
  return { key, manifest, behaviour };
}

const ACTIONS = ["exit", "sandboxDies", "fault", "relistFault", "runtimeRestart", "agentRestart", "add", "update", "delete", "suspend", "memory", "diskUsed", "nodeShutdown"];

function readAction(r: Reader, entry: Obj, field: string, podKeys: Set<string>): TimelineAction {
  const present = ACTIONS.filter((a) => entry[a] !== undefined);
  if (present.length !== 1) r.fail(field, `expected exactly one of: ${ACTIONS.join(", ")}`);
  const type = present[0];
  const at = `${field}.${type}`;
  const v = entry[type];
  const knownPod = (name: string, where: string) => {
    if (!podKeys.has(name)) r.fail(where, `no pod named "${name}" in pods or earlier adds`);
    return name;
  };
  switch (type) {
    case "exit": {
      const o = r.object(v, at);
      r.only(o, at, ["pod", "container", "code"]);
      return { type, pod: knownPod(r.string(o.pod, `${at}.pod`), `${at}.pod`), container: r.string(o.container, `${at}.container`), code: o.code === undefined ? 1 : r.int(o.code, `${at}.code`, 0, 255) };
    }
    case "sandboxDies": {
      const o = r.object(v, at);
      r.only(o, at, ["pod"]);
      return { type, pod: knownPod(r.string(o.pod, `${at}.pod`), `${at}.pod`) };
    }
    case "fault": {
      const o = r.object(v, at);
      r.only(o, at, ["call", "error", "timeout", "slow", "for"]);
      const call = r.string(o.call, `${at}.call`);
      if (call !== "*" && !(CRI_CALLS as readonly string[]).includes(call)) r.fail(`${at}.call`, `unknown CRI call "${call}" (expected * or one of: ${CRI_CALLS.join(", ")})`);
      return {
        type,
        fault: {
          call: call as CriCall | "*",
          error: r.probability(o.error, `${at}.error`),
          timeout: r.probability(o.timeout, `${at}.timeout`),
          slow: r.probability(o.slow, `${at}.slow`),
          forMs: r.duration(o.for ?? "1m", `${at}.for`),
        },
      };
    }
    case "relistFault": {
      const o = r.object(v, at);
      r.only(o, at, ["lose", "duplicate", "for"]);
      return { type, lose: r.probability(o.lose, `${at}.lose`), duplicate: r.probability(o.duplicate, `${at}.duplicate`), forMs: r.duration(o.for ?? "1m", `${at}.for`) };
    }
    case "runtimeRestart":
    case "agentRestart": {
      const o = v === true ? {} : r.object(v, at);
      r.only(o, at, ["down"]);
      return { type, downMs: r.duration(o.down ?? "2s", `${at}.down`) };
    }
    case "add":
    case "update": {
      const pod = readPod(r, v, at);
      if (type === "update") knownPod(pod.key, `${at}.manifest.metadata.name`);
      podKeys.add(pod.key);
      return { type, pod };
    }
    case "delete": {
      if (typeof v === "string") return { type, pod: knownPod(v, at) };
      const o = r.object(v, at);
      r.only(o, at, ["pod", "grace"]);
      // Seconds, as `kubectl delete --grace-period` takes them.
      const graceSeconds = o.grace === undefined ? undefined : r.int(o.grace, `${at}.grace`, 0, 3600);
      return { type, pod: knownPod(r.string(o.pod, `${at}.pod`), `${at}.pod`), graceSeconds };
    }
    case "suspend":
      return { type, forMs: r.duration(v, at) };
    case "memory": {
      // A container's working set changes (a leak, a load): it holds from now on.
      const o = r.object(v, at);
      r.only(o, at, ["pod", "container", "usage"]);
      return { type, pod: knownPod(r.string(o.pod, `${at}.pod`), `${at}.pod`), container: r.string(o.container, `${at}.container`), bytes: r.bytes(o.usage, `${at}.usage`) };
    }
    case "diskUsed":
      return { type, bytes: r.bytes(v, at) };
    case "nodeShutdown":
      // logind's PrepareForShutdown: true, a shutdown is coming; false, it was cancelled.
      if (typeof v !== "boolean") return r.fail(at, "expected true (a shutdown is coming) or false (cancelled)");
      return { type, active: v };
  }
  return r.fail(field, "unreachable");
}

function readCounts(r: Reader, value: unknown, field: string): Record<string, number> | undefined {
  if (value === undefined) return undefined;
  const o = r.object(value, field);
  return Object.fromEntries(Object.entries(o).map(([k, n]) => [k, r.int(n, `${field}.${k}`)]));
}

function readExpectation(r: Reader, value: unknown, field: string, podKeys: Set<string>, durationMs: number): Expectation {
  const o = r.object(value, field);
  r.only(o, field, ["at", "by", "pod", "phase", "restarts", "minRestarts", "reason", "running", "notRunning", "gone", "podReason", "images"]);
  const images = o.images === undefined ? undefined : r.object(o.images, `${field}.images`);
  if (images) r.only(images, `${field}.images`, ["present", "gone"]);
  if ((o.at === undefined) === (o.by === undefined)) r.fail(field, "expected exactly one of: at, by");
  const atMs = o.at === undefined ? undefined : r.duration(o.at, `${field}.at`);
  const byMs = o.by === undefined ? undefined : r.duration(o.by, `${field}.by`);
  if ((atMs ?? byMs)! > durationMs) r.fail(field, "is later than the scenario's duration");
  const pod = r.string(o.pod, `${field}.pod`);
  if (!podKeys.has(pod)) r.fail(`${field}.pod`, `no pod named "${pod}"`);
  if (o.phase !== undefined && !(POD_PHASES as readonly unknown[]).includes(o.phase)) r.fail(`${field}.phase`, `expected one of: ${POD_PHASES.join(", ")}`);
  if (o.gone !== undefined && typeof o.gone !== "boolean") r.fail(`${field}.gone`, "expected true or false");
  let reason: Record<string, string> | undefined;
  if (o.reason !== undefined) {
    const m = r.object(o.reason, `${field}.reason`);
    reason = Object.fromEntries(Object.entries(m).map(([k, s]) => [k, typeof s === "string" ? s : r.fail(`${field}.reason.${k}`, "expected a string")]));
  }
  return {
    atMs,
    byMs,
    pod,
    phase: o.phase as string | undefined,
    restarts: readCounts(r, o.restarts, `${field}.restarts`),
    minRestarts: readCounts(r, o.minRestarts, `${field}.minRestarts`),
    reason,
    running: o.running === undefined ? undefined : r.strings(o.running, `${field}.running`),
    notRunning: o.notRunning === undefined ? undefined : r.strings(o.notRunning, `${field}.notRunning`),
    gone: o.gone as boolean | undefined,
    podReason: o.podReason === undefined ? undefined : typeof o.podReason === "string" ? o.podReason : r.fail(`${field}.podReason`, "expected a string"),
    imagesPresent: images?.present === undefined ? undefined : r.strings(images.present, `${field}.images.present`),
    imagesGone: images?.gone === undefined ? undefined : r.strings(images.gone, `${field}.images.gone`),
    text: `${field} (${o.at !== undefined ? `at ${o.at}` : `by ${o.by}`}, pod ${pod})`,
  };
}

/** Reads a scenario from parsed YAML; `file` names it in errors. */
export function readScenario(doc: unknown, file: string): Scenario {
  const r = new Reader(file);
  const o = r.object(doc, "");
  r.only(o, "", ["name", "description", "duration", "node", "relistPeriod", "backoff", "latency", "criTimeout", "images", "source", "memory", "pods", "timeline", "expect", "stopsHoldSlots", "volumes", "runtimeEvents", "listOrder", "shutdown", "hardware"]);
  const events = o.runtimeEvents === undefined ? {} : r.object(o.runtimeEvents, "runtimeEvents");
  r.only(events, "runtimeEvents", ["source", "lose", "latency", "duplicate", "late", "lateLatency"]);
  const probability = (value: unknown, field: string): number => {
    if (value === undefined) return 0;
    if (typeof value !== "number" || !(value >= 0 && value <= 1)) r.fail(field, `expected a number from 0 to 1, got ${describe(value)}`);
    return value as number;
  };
  const eventDuplicate = probability(events.duplicate, "runtimeEvents.duplicate");
  const eventLate = probability(events.late, "runtimeEvents.late");
  const eventSource = events.source ?? "none";
  if (eventSource !== "none" && eventSource !== "exits" && eventSource !== "stream") r.fail("runtimeEvents.source", `expected none, exits or stream, got ${describe(eventSource)}`);
  const eventLoss = events.lose ?? 0;
  if (typeof eventLoss !== "number" || !(eventLoss >= 0 && eventLoss <= 1)) r.fail("runtimeEvents.lose", `expected a number from 0 to 1, got ${describe(eventLoss)}`);
  if (eventSource === "stream" && eventLoss !== 0) r.fail("runtimeEvents.lose", "a stream loses no event while up (a lost one waits for the five-minute relist); use source: exits");
  const volumes = o.volumes === undefined ? {} : r.object(o.volumes, "volumes");
  r.only(volumes, "volumes", ["latency", "failure"]);
  const volumeFailure = volumes.failure ?? 0;
  if (typeof volumeFailure !== "number" || !(volumeFailure >= 0 && volumeFailure <= 1)) r.fail("volumes.failure", `expected a number from 0 to 1, got ${describe(volumeFailure)}`);
  if (o.stopsHoldSlots !== undefined && typeof o.stopsHoldSlots !== "boolean") r.fail("stopsHoldSlots", `expected true or false, got ${describe(o.stopsHoldSlots)}`);
  const listOrder = o.listOrder ?? "stable";
  if (listOrder !== "stable" && listOrder !== "shuffled") r.fail("listOrder", `expected stable or shuffled, got ${describe(listOrder)}`);
  const source = o.source ?? "file";
  if (source !== "file" && source !== "apiserver") r.fail("source", `expected file or apiserver, got ${describe(source)}`);
  const durationMs = r.duration(o.duration ?? "10m", "duration");
  const backoff = o.backoff === undefined ? {} : r.object(o.backoff, "backoff");
  r.only(backoff, "backoff", ["initial", "max", "workerError"]);
  const latencyIn = { ...DEFAULT_LATENCY, ...(o.latency === undefined ? {} : r.object(o.latency, "latency")) };
  const latency: Record<string, DurationRange> = {};
  for (const [call, text] of Object.entries(latencyIn)) {
    if (call !== "default" && !(CRI_CALLS as readonly string[]).includes(call)) r.fail(`latency.${call}`, `unknown CRI call (expected default or one of: ${CRI_CALLS.join(", ")})`);
    latency[call] = r.range(text, `latency.${call}`);
  }
  const images = o.images === undefined ? {} : r.object(o.images, "images");
  r.only(images, "images", ["missing", "preloaded", "gc"]);
  // `copies: N` on an entry stands for N pods named <name>-0 .. <name>-(N-1).
  const pods = r.list(o.pods, "pods").flatMap((p, i) => {
    const field = `pods[${i}]`;
    const entry = r.object(p, field);
    if (entry.copies === undefined) return [readPod(r, p, field)];
    const { copies, ...rest } = entry;
    const n = r.int(copies, `${field}.copies`, 1, 10_000);
    const template = readPod(r, rest, field);
    return Array.from({ length: n }, (_, k) => {
      const manifest = structuredClone(template.manifest);
      (manifest.metadata as Obj).name = `${template.key}-${k}`;
      return { key: `${template.key}-${k}`, manifest, behaviour: template.behaviour };
    });
  });
  const podKeys = new Set<string>();
  for (const [i, p] of pods.entries()) {
    if (podKeys.has(p.key)) r.fail(`pods[${i}].metadata.name`, `duplicate pod name "${p.key}"`);
    podKeys.add(p.key);
  }
  const timeline = r.list(o.timeline, "timeline").flatMap((e, i) => {
    const field = `timeline[${i}]`;
    const entry = r.object(e, field);
    const atMs = r.duration(entry.at, `${field}.at`);
    if (atMs > durationMs) r.fail(`${field}.at`, "is later than the scenario's duration");
    const { at: _at, ...rest } = entry;
    // `delete: { copiesOf: stop }` deletes every pod of a `copies` entry (stop-0, stop-1, ...) at once.
    const del = rest.delete;
    const many = typeof del === "object" && del !== null && !Array.isArray(del) ? (del as Obj).copiesOf : undefined;
    if (many !== undefined) {
      const prefix = `${r.string(many, `${field}.delete.copiesOf`)}-`;
      const keys = [...podKeys].filter((k) => k.startsWith(prefix) && /^\d+$/.test(k.slice(prefix.length)));
      if (keys.length === 0) r.fail(`${field}.delete.copiesOf`, `no pods named ${prefix}<n>`);
      const { copiesOf: _c, ...one } = rest.delete as Obj;
      return keys.map((pod) => ({ atMs, action: readAction(r, { delete: { ...one, pod } }, field, podKeys) }));
    }
    return [{ atMs, action: readAction(r, rest, field, podKeys) }];
  });
  for (let i = 1; i < timeline.length; i++) {
    if (timeline[i].atMs < timeline[i - 1].atMs) r.fail(`timeline[${i}].at`, "the timeline must be in time order");
  }
  return {
    name: o.name === undefined ? file : r.string(o.name, "name"),
    description: typeof o.description === "string" ? o.description : "",
    file,
    durationMs,
    nodeName: o.node === undefined ? "sim" : r.string(o.node, "node"),
    relistPeriodMs: r.duration(o.relistPeriod ?? "1s", "relistPeriod"),
    backoffInitialMs: r.duration(backoff.initial ?? "10s", "backoff.initial"),
    backoffMaxMs: r.duration(backoff.max ?? "5m", "backoff.max"),
    workerErrorBackoffMs: r.duration(backoff.workerError ?? "10s", "backoff.workerError"),
    latency,
    criTimeoutMs: r.duration(o.criTimeout ?? "2m", "criTimeout"),
    source: source as "file" | "apiserver",
    memory: readMemory(r, o.memory),
    shutdown: readShutdown(r, o.shutdown),
    hardware: readHardware(r, o.hardware),
    missingImages: r.strings(images.missing, "images.missing"),
    preloadedImages: images.preloaded === undefined || images.preloaded === "all" ? "all" : r.strings(images.preloaded, "images.preloaded"),
    imageGc: readImageGc(r, images.gc),
    pods,
    timeline,
    expect: r.list(o.expect, "expect").map((e, i) => readExpectation(r, e, `expect[${i}]`, podKeys, durationMs)),
    stopsHoldSlots: o.stopsHoldSlots === true,
    volumes: { latency: r.range(volumes.latency ?? "5ms-50ms", "volumes.latency"), failure: volumeFailure as number },
    runtimeEvents: {
      source: eventSource as "none" | "exits" | "stream",
      lose: eventLoss as number,
      latency: r.range(events.latency ?? "0ms-100ms", "runtimeEvents.latency"),
      duplicate: eventDuplicate,
      late: eventLate,
      lateLatency: r.range(events.lateLatency ?? "1s-30s", "runtimeEvents.lateLatency"),
    },
    listOrder: listOrder as "stable" | "shuffled",
  };
}

export function loadScenarioFile(file: string): Scenario {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    throw new ScenarioError(file, "", `cannot read: ${(error as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (error) {
    throw new ScenarioError(file, "", `invalid YAML: ${(error as Error).message.split("\n")[0]}`);
  }
  return readScenario(doc, file);
}

/** The core's configuration for a scenario's node: its timings and, with memory, its resources and eviction flags. */
export function coreConfigOf(s: Scenario): CoreConfig {
  const config: CoreConfig = {
    nodeName: s.nodeName,
    relistPeriodMs: s.relistPeriodMs,
    backoffInitialMs: s.backoffInitialMs,
    backoffMaxMs: s.backoffMaxMs,
    workerErrorBackoffMs: s.workerErrorBackoffMs,
  };
  if (s.shutdown) config.nodeShutdown = s.shutdown;
  if (s.hardware) config.hardware = hardwareConfigOf(s.hardware);
  if (s.memory) {
    const m = s.memory;
    config.node = {
      memoryCapacityBytes: m.capacityBytes,
      allocatableMemoryBytes: Math.max(0, m.capacityBytes - hardMemoryThresholdBytes(m.evictionHard, m.capacityBytes)),
      allocatableCpuMilli: 4000,
      evictionHard: m.evictionHard,
      evictionSoft: m.evictionSoft,
      evictionSoftGracePeriod: m.evictionSoftGracePeriod,
      evictionMinimumReclaim: m.evictionMinimumReclaim,
      evictionPressureTransitionPeriodMs: m.transitionPeriodMs,
      evictionMaxPodGracePeriodSeconds: m.maxPodGracePeriodSeconds,
      evictionIntervalMs: m.intervalMs,
    };
  }
  return config;
}
