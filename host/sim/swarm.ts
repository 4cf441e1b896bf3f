// Random scenarios for swarm testing: a seed gives a whole scenario (pods, behaviours, faults,
// restarts, edits, deletions), written as the same YAML document a scenario file holds, so that
// `nanolet sim --seed N --dump` shows exactly what was run. Faults stop well before the end, so
// the run can check that every pod settled.
import { stringify } from "yaml";
import { formatDuration, parseDuration } from "./duration.js";
import { Prng } from "./prng.js";
import { CRI_CALLS, Scenario, readScenario } from "./scenario.js";

/** The last part of every swarm run is calm: no faults, time for back-offs to run out. */
const QUIET_MS = 10 * 60_000;
const IMAGES = ["docker.io/library/busybox:latest", "docker.io/library/alpine:3"];
const MISSING_IMAGE = "docker.io/library/does-not-exist:1";

type Doc = Record<string, unknown>;

function manifest(rng: Prng, name: string, containers: string[], image: () => string): Doc {
  const spec: Doc = {
    restartPolicy: rng.pick(["Always", "Always", "OnFailure", "Never"]),
    terminationGracePeriodSeconds: rng.pick([0, 1, 2, 5, 10, 30]),
    hostNetwork: true,
    containers: containers.map((c) => ({ name: c, image: image(), command: ["sh", "-c", `echo ${c}; sleep 3600`] })),
  };
  const metadata: Doc = { name };
  if (rng.chance(0.3)) metadata.uid = `uid-${name}-${rng.nextU32().toString(16)}`; // edited in place, like an API pod
  return { apiVersion: "v1", kind: "Pod", metadata, spec };
}

function behaviour(rng: Prng): Doc {
  const b: Doc = {};
  const r = rng.float();
  if (r < 0.35) {
    const low = rng.int(1, 30);
    b.exitAfter = `${low}s-${low + rng.int(0, 90)}s`;
    b.exitCode = rng.pick([0, 1, 1, 2]);
  } else if (r < 0.5) {
    b.exitAfter = `${rng.int(50, 900)}ms`; // crash-loops hard
    b.exitCode = rng.pick([0, 1]);
  }
  if (rng.chance(0.2)) b.stopAfter = `${rng.int(0, 8)}s`;
  if (rng.chance(0.1)) b.ignoreSigterm = true;
  return b;
}

/** The scenario document for `seed`. */
export function swarmDocument(seed: number): Doc {
  const rng = new Prng(seed, "swarm");
  // A stream of its own, so that the scenarios of earlier seeds stay as they were.
  const sourceRng = new Prng(seed, "swarm-source");
  const source = sourceRng.chance(0.5) ? "apiserver" : "file";
  const durationMs = rng.int(20, 40) * 60_000;
  const activeMs = durationMs - QUIET_MS;
  const image = () => (rng.chance(0.03) ? MISSING_IMAGE : rng.pick(IMAGES));
  const pods: Doc[] = [];
  const names: string[] = [];
  const newPod = (name: string): Doc => {
    const containerNames = ["app", "side", "log"].slice(0, rng.int(1, 3));
    const containers = Object.fromEntries(containerNames.map((c) => [c, behaviour(rng)]));
    return { manifest: manifest(rng, name, containerNames, image), containers };
  };
  const podCount = rng.chance(0.1) ? rng.int(20, 40) : rng.int(1, 10);
  /** Each pod's newest manifest, which an edit starts from. */
  const latest = new Map<string, Doc>();
  for (let i = 0; i < podCount; i++) {
    names.push(`p${i}`);
    pods.push(newPod(`p${i}`));
    latest.set(`p${i}`, pods[i]);
  }
  const alive = new Set(names);
  const deleted = new Set<string>();
  const events: Doc[] = [];
  const eventCount = rng.int(3, 25);
  const times = Array.from({ length: eventCount }, () => rng.int(0, activeMs)).sort((a, b) => a - b);
  let added = podCount;
  for (const atMs of times) {
    const at = formatDuration(atMs);
    const r = rng.float();
    const some = (set: Set<string>) => (set.size > 0 ? rng.pick([...set].sort()) : undefined);
    const target = some(alive);
    if (r < 0.2 && target) events.push({ at, exit: { pod: target, container: "app", code: rng.pick([0, 1, 137]) } });
    else if (r < 0.35) {
      const fault: Doc = { call: rng.pick(["*", ...CRI_CALLS]), for: `${rng.int(5, 180)}s` };
      const kind = rng.float();
      if (kind < 0.5) fault.error = rng.pick([0.1, 0.3, 0.7, 1]);
      else if (kind < 0.75) fault.timeout = rng.pick([0.1, 0.5]);
      else fault.slow = rng.pick([0.3, 1]);
      events.push({ at, fault });
    } else if (r < 0.43) events.push({ at, relistFault: { lose: rng.pick([0, 0.2, 0.5]), duplicate: rng.pick([0, 0.3, 0.8]), for: `${rng.int(5, 120)}s` } });
    else if (r < 0.51) events.push({ at, runtimeRestart: { down: `${rng.int(0, 40)}s` } });
    else if (r < 0.59) events.push({ at, agentRestart: { down: `${rng.int(0, 20)}s` } });
    else if (r < 0.71 && target) {
      const current = latest.get(target)!;
      const uid = ((current.manifest as Doc).metadata as Doc).uid;
      let edited: Doc;
      if (uid) {
        // A pod with a uid is edited in place, and Kubernetes lets an edit change only images.
        edited = structuredClone(current);
        for (const c of ((edited.manifest as Doc).spec as Doc).containers as Doc[]) c.image = image();
      } else edited = newPod(target); // a static pod's new manifest is a new pod
      latest.set(target, edited);
      events.push({ at, update: edited });
    } else if (r < 0.8 && source === "apiserver" && deleted.size > 0 && sourceRng.chance(0.2)) {
      // Deleted again, sooner: the pod may still be stopping with its first grace period.
      events.push({ at, delete: { pod: some(deleted)!, grace: sourceRng.int(0, 5) } });
    } else if (r < 0.8 && target) {
      // From an apiserver, a deletion may come with its own (never longer) grace period.
      const grace = source === "apiserver" && sourceRng.chance(0.5) ? sourceRng.int(0, 40) : undefined;
      events.push({ at, delete: grace === undefined ? target : { pod: target, grace } });
      alive.delete(target);
      deleted.add(target);
    } else if (r < 0.9) {
      const back = some(deleted);
      if (back && rng.chance(0.5)) {
        events.push({ at, add: latest.get(back)! });
        deleted.delete(back);
        alive.add(back);
      } else {
        const name = `p${added++}`;
        latest.set(name, newPod(name));
        events.push({ at, add: latest.get(name)! });
        alive.add(name);
      }
    } else events.push({ at, suspend: `${rng.int(1, 120)}m` });
  }
  const doc: Doc = {
    name: `swarm-${seed}`,
    description: "A random scenario from a seed.",
    duration: formatDuration(durationMs),
    relistPeriod: "1s",
    latency: { default: `1ms-${rng.int(2, 50)}ms`, PullImage: "100ms-3s" },
    images: { missing: [MISSING_IMAGE] },
    source,
    pods,
    timeline: events,
  };
  addMemory(doc, seed, activeMs, names);
  addVolumes(doc, seed);
  addRuntimeEvents(doc, seed);
  addListOrder(doc, seed);
  addImageGc(doc, seed, activeMs);
  addNodeShutdown(doc, seed, activeMs);
  addHardware(doc, seed);
  return doc;
}

/**
 * A machine with the static CPU policy, a topology policy and a device plugin for some seeds, from
 * a stream of its own: some pods become Guaranteed with whole CPUs (init containers too) and some
 * ask for devices; agent restarts give the state back from the "files". The hardware invariants
 * check every state written (a CPU or device held once, the reserved CPU never given).
 */
function addHardware(doc: Doc, seed: number): void {
  const rng = new Prng(seed, "swarm-hardware");
  if (!rng.chance(0.2)) return;
  const cpus = rng.int(2, 8);
  doc.hardware = {
    cpus, numaNodes: rng.int(1, Math.min(2, cpus)), cpuPolicy: "static", reservedCpus: "0",
    topologyPolicy: rng.pick(["none", "best-effort", "restricted", "single-numa-node"]), topologyScope: rng.pick(["container", "pod"]),
    devices: { "example.com/dev": rng.int(0, 4) },
  };
  const manifests = [...(doc.pods as Doc[]), ...(doc.timeline as Doc[]).map((e) => (e.add ?? e.update) as Doc | undefined).filter((m): m is Doc => m !== undefined)];
  for (const pod of manifests) {
    const spec = (pod.manifest as Doc).spec as Doc;
    const guaranteed = rng.chance(0.4);
    const devices = rng.chance(0.3) ? rng.int(1, 2) : 0;
    const cpu = String(rng.int(1, 2));
    for (const c of [...((spec.initContainers as Doc[] | undefined) ?? []), ...(spec.containers as Doc[])]) {
      const limits: Doc = {};
      if (guaranteed) Object.assign(limits, { cpu, memory: "256Mi" });
      if (devices > 0 && c === (spec.containers as Doc[])[0]) limits["example.com/dev"] = String(devices);
      if (Object.keys(limits).length > 0) c.resources = { limits };
    }
  }
}

/**
 * Graceful node shutdown for some seeds, from a stream of its own: random groups (or the plain
 * pair), a PrepareForShutdown at a random time among the other events, sometimes cancelled later
 * (the invariants hold through it: every stop within its grace, nothing restarted that was stopped).
 */
function addNodeShutdown(doc: Doc, seed: number, activeMs: number): void {
  const rng = new Prng(seed, "swarm-node-shutdown");
  if (!rng.chance(0.15)) return;
  doc.shutdown = rng.chance(0.5)
    ? { gracePeriod: `${rng.int(1, 60)}s`, criticalPods: `${rng.int(0, 1) === 0 ? 0 : rng.int(1, 20)}s` }
    : { byPriority: Array.from({ length: rng.int(1, 3) }, (_, i) => ({ priority: i * 1000, grace: `${rng.int(0, 30)}s` })) };
  const shutdown = doc.shutdown as Doc;
  if (shutdown.criticalPods !== undefined && parseDuration(String(shutdown.criticalPods), "c") > parseDuration(String(shutdown.gracePeriod), "g")) shutdown.criticalPods = shutdown.gracePeriod;
  const at = rng.int(0, activeMs);
  (doc.timeline as Doc[]).push({ at: formatDuration(at), nodeShutdown: true });
  if (rng.chance(0.5)) (doc.timeline as Doc[]).push({ at: formatDuration(at + rng.int(1000, 120_000)), nodeShutdown: false });
  (doc.timeline as Doc[]).sort((a, b) => parseDuration(String(a.at), "at") - parseDuration(String(b.at), "at"));
}

/**
 * Pushed runtime changes for some seeds, from a stream of their own (earlier seeds' scenarios
 * stay as they were otherwise): containerd 1.6's exits, some lost, or a CRI event stream; some
 * seeds' events come twice or late besides (a stream of its own again).
 */
function addRuntimeEvents(doc: Doc, seed: number): void {
  const rng = new Prng(seed, "swarm-events");
  const r = rng.nextU32() / 2 ** 32;
  const latency = `0ms-${rng.int(1, 300)}ms`;
  if (r < 0.3) doc.runtimeEvents = { source: "exits", lose: rng.pick([0, 0.1, 0.5]), latency };
  else if (r < 0.6) doc.runtimeEvents = { source: "stream", latency };
  else return;
  const odd = new Prng(seed, "swarm-events-odd");
  if (odd.chance(0.5)) {
    const events = doc.runtimeEvents as Record<string, unknown>;
    events.duplicate = odd.pick([0.1, 0.5]);
    events.late = odd.pick([0, 0.1, 0.3]);
  }
}

/** Half the seeds list in a new order every relist, as containerd does (a stream of its own). */
function addListOrder(doc: Doc, seed: number): void {
  if (new Prng(seed, "swarm-order").chance(0.5)) doc.listOrder = "shuffled";
}

/**
 * Volumes for some seeds, from a stream of their own (earlier seeds' scenarios stay as they
 * were otherwise): each pod mounts a scratch emptyDir and perhaps a downward API volume, and the
 * host's set-up is slow and fails now and then.
 */
function addVolumes(doc: Doc, seed: number): void {
  const rng = new Prng(seed, "swarm-volumes");
  if (!rng.chance(0.4)) return;
  doc.volumes = { latency: `${rng.int(1, 20)}ms-${rng.int(100, 3000)}ms`, failure: rng.pick([0, 0.1, 0.3]) };
  const withInfo = rng.chance(0.5);
  const dress = (entry: Doc) => {
    const spec = (entry.manifest as Doc).spec as Doc;
    spec.volumes = [{ name: "scratch", emptyDir: {} }, ...(withInfo ? [{ name: "info", downwardAPI: { items: [{ path: "labels", fieldRef: { fieldPath: "metadata.labels" } }] } }] : [])];
    const first = (spec.containers as Doc[])[0];
    first.volumeMounts = [{ name: "scratch", mountPath: "/scratch" }, ...(withInfo ? [{ name: "info", mountPath: "/etc/info" }] : [])];
  };
  for (const entry of doc.pods as Doc[]) dress(entry);
  for (const e of doc.timeline as Doc[]) for (const key of ["add", "update"]) if (e[key]) dress(e[key] as Doc);
}

/**
 * Memory for some seeds, from a stream of its own (earlier seeds' scenarios stay as they were):
 * the node's memory and eviction flags, each pod's requests, priority and working sets (the same
 * for every manifest of a name, so an edit is never a resize), and leaks on the timeline.
 */
function addMemory(doc: Doc, seed: number, activeMs: number, names: string[]): void {
  const rng = new Prng(seed, "swarm-memory");
  if (!rng.chance(0.4)) return;
  const memory: Doc = { capacity: rng.pick(["1Gi", "2Gi"]), system: `${rng.int(100, 400)}Mi`, evictionHard: "memory.available<100Mi", interval: "10s" };
  if (rng.chance(0.3)) {
    memory.evictionSoft = "memory.available<300Mi";
    memory.evictionSoftGracePeriod = `memory.available=${rng.int(0, 60)}s`;
    memory.maxPodGracePeriod = rng.int(0, 30);
  }
  if (rng.chance(0.3)) memory.evictionMinimumReclaim = `memory.available=${rng.int(0, 200)}Mi`;
  doc.memory = memory;
  const shapes = new Map<string, { requests?: Doc; limits?: Doc; priority: number; usage: number }>();
  const shapeOf = (name: string) => {
    if (!shapes.has(name)) {
      const r = new Prng(seed, `swarm-memory-${name}`);
      const qos = r.pick(["BestEffort", "Burstable", "Burstable", "Guaranteed"]);
      const mib = r.int(8, 128);
      const shape =
        qos === "BestEffort" ? {} : qos === "Burstable" ? { requests: { memory: `${mib}Mi` } } : { requests: { memory: `${mib}Mi`, cpu: "100m" }, limits: { memory: `${mib}Mi`, cpu: "100m" } };
      shapes.set(name, { ...shape, priority: r.pick([0, 0, 1000, 100000, 2000000000]), usage: r.int(1, 96) });
    }
    return shapes.get(name)!;
  };
  const dress = (entry: Doc) => {
    const manifest = entry.manifest as Doc;
    const name = String((manifest.metadata as Doc).name);
    const shape = shapeOf(name);
    const spec = manifest.spec as Doc;
    spec.priority = shape.priority;
    for (const c of spec.containers as Doc[]) {
      const resources: Doc = {};
      if (shape.requests) resources.requests = shape.requests;
      if (shape.limits) resources.limits = shape.limits;
      c.resources = resources;
    }
    const behaviours = (entry.containers ?? {}) as Record<string, Doc>;
    for (const b of Object.values(behaviours)) b.memory = `${shape.usage}Mi`;
  };
  for (const entry of doc.pods as Doc[]) dress(entry);
  const events = doc.timeline as Doc[];
  for (const e of events) for (const key of ["add", "update"]) if (e[key]) dress(e[key] as Doc);
  for (let i = rng.int(1, 4); i > 0; i--) {
    events.push({ at: formatDuration(rng.int(0, activeMs)), memory: { pod: rng.pick(names), container: "app", usage: `${rng.int(50, 1500)}Mi` } });
  }
  events.sort((a, b) => parseDuration(a.at, "at") - parseDuration(b.at, "at"));
}

export function swarmScenario(seed: number): Scenario {
  return readScenario(swarmDocument(seed), `swarm:${seed}`);
}

export function swarmYaml(seed: number): string {
  return stringify(swarmDocument(seed));
}

/**
 * An image filesystem and collector for some seeds, from a stream of its own: small, often near
 * its thresholds, with the images' sizes drawn and the other files changing on the timeline, so
 * that plans remove images, unused ones while pods come and go (the simulator checks each plan).
 */
function addImageGc(doc: Doc, seed: number, activeMs: number): void {
  const rng = new Prng(seed, "swarm-image-gc");
  if (!rng.chance(0.3)) return;
  const sizes = Object.fromEntries(IMAGES.map((image) => [image, `${rng.int(5, 200)}Mi`]));
  const gc: Doc = {
    capacity: "1Gi", used: `${rng.int(300, 900)}Mi`, sizes,
    highThreshold: rng.int(60, 95), minimumAge: `${rng.int(0, 180)}s`, period: `${rng.int(1, 10)}m`,
  };
  gc.lowThreshold = rng.int(10, (gc.highThreshold as number) - 1);
  if (rng.chance(0.3)) gc.maximumAge = `${rng.int(5, 60)}m`;
  (doc.images as Doc).gc = gc;
  for (let i = 0, n = rng.int(0, 3); i < n; i++) (doc.timeline as Doc[]).push({ at: formatDuration(rng.int(0, activeMs)), diskUsed: `${rng.int(100, 1000)}Mi` });
  (doc.timeline as Doc[]).sort((a, b) => parseDuration(String(a.at), "at") - parseDuration(String(b.at), "at"));
}
