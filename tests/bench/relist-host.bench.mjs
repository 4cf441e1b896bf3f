// Benchmark: the host's whole relist into the core at 110, 1,000 and 10,000 containers: the
// Relister reading the two list answers (wire bytes as containerd sends them, labelled and
// annotated as nanolet creates its pods), ContainerStatus for the containers whose state changed
// (answered from memory), and the core taking the relist. Every relist lists the objects in a new
// order (containerd's) and 10% of the containers change state. Columns, median ms per relist:
//   relist:   this tree's Relister (answers scanned, packed as they came);
//   core:     the core taking that relist (handle-relist-packed);
//   baseline: the same answers decoded into records, mapped to observations as the Relister
//             did before (its bookkeeping left out) and packed from records (core/snapshot-packing.ts);
//   other:    with OTHER=<a built checkout>, that checkout's Relister and core on the same answers.
// All run interleaved in one process.
//   npm run build && node tests/bench/relist-host.bench.mjs
//   OTHER=/path/to/older/checkout node tests/bench/relist-host.bench.mjs
import { performance } from "node:perf_hooks";
import path from "node:path";
import { pathToFileURL } from "node:url";
import * as protoLoader from "@grpc/proto-loader";
import { snapshot } from "./pleg-snapshots.mjs";
import { Prng } from "../../dist/sim/prng.js";

const here = new URL("../../", import.meta.url).pathname;
const load = async (root) => ({
  relist: await import(pathToFileURL(path.join(root, "dist/relist/relister.js")).href),
  core: await import(pathToFileURL(path.join(root, "dist/core/core.js")).href),
  decoding: await import(pathToFileURL(path.join(root, "dist/cri/list-decoding.js")).href),
});
const self = await load(here);
const scanning = await import("../../dist/relist/list-scanning.js");
const { packSnapshot } = await import("../../dist/core/snapshot-packing.js");
const other = process.env.OTHER ? await load(path.resolve(process.env.OTHER)) : undefined;

const service = protoLoader.loadSync(path.join(here, "host/cri/runtime-v1.proto"), { keepCase: false, longs: String, enums: String, defaults: true })["runtime.v1.RuntimeService"];
const CRI_STATES = { created: "CONTAINER_CREATED", running: "CONTAINER_RUNNING", exited: "CONTAINER_EXITED", unknown: "CONTAINER_UNKNOWN" };
const order = new Prng(23, "relist-host-bench");

/** One relist's answers, in a new order, with nanolet's labels and annotations. */
function answers(snap) {
  const sandboxes = order.shuffled(snap.sandboxes).map((s) => ({
    id: s.id, metadata: { name: s.podName, uid: s.podUid, namespace: s.podNamespace, attempt: s.attempt }, state: "SANDBOX_READY", createdAt: String(s.createdAtNs),
    labels: { "nanolet.io/managed": "true", "io.kubernetes.pod.uid": s.podUid, "io.kubernetes.pod.name": s.podName, "io.kubernetes.pod.namespace": s.podNamespace },
    annotations: { "io.kubernetes.pod.terminationGracePeriod": "30" },
  }));
  const containers = order.shuffled(snap.containers).map((c) => ({
    id: c.id, podSandboxId: c.sandboxId, metadata: { name: c.name, attempt: c.attempt }, image: { image: c.image }, imageRef: "sha256:0123456789abcdef",
    state: CRI_STATES[c.state], createdAt: String(c.createdAtNs),
    labels: { "nanolet.io/managed": "true", "io.kubernetes.pod.uid": c.podUid, "io.kubernetes.pod.name": "pod", "io.kubernetes.pod.namespace": "default", "io.kubernetes.container.name": c.name },
    annotations: { "io.kubernetes.container.hash": c.specHash, "io.kubernetes.container.restartCount": "0" },
  }));
  const details = new Map(snap.containers.map((c) => [c.id, c]));
  return { sandboxBytes: service.ListPodSandbox.responseSerialize({ items: sandboxes }), containerBytes: service.ListContainers.responseSerialize({ containers }), details };
}

/** CRI answered from memory: the current relist's bytes, decoded or scanned by the tree asking. */
function memoryRuntime(tree, current) {
  return {
    listPodSandboxes: async () => tree.decoding.decodeSandboxList(current().sandboxBytes),
    listContainers: async () => tree.decoding.decodeContainerList(current().containerBytes),
    listPodSandboxBytes: async () => current().sandboxBytes,
    listContainersBytes: async () => current().containerBytes,
    // An OTHER tree from before the relist scanned the answers itself asks for rows.
    scanPodSandboxes: async () => scanning.scanSandboxList(current().sandboxBytes),
    scanContainers: async () => scanning.scanContainerList(current().containerBytes),
    podSandboxIp: async () => "",
    containerStatus: async (id) => {
      const c = current().details.get(id);
      return { ...c, labels: {}, annotations: {} };
    },
  };
}

/** The Relister's mapping before scanning, without its bookkeeping: decode, map, pack. */
function baseline(a) {
  const sandboxes = self.decoding.decodeSandboxList(a.sandboxBytes).map((s) => ({
    id: s.id, podUid: s.labels["io.kubernetes.pod.uid"] ?? s.podUid, podName: s.podName, podNamespace: s.podNamespace, attempt: s.attempt, state: s.state,
    createdAtNs: s.createdAtNs, terminationGracePeriodSeconds: BigInt(s.annotations["io.kubernetes.pod.terminationGracePeriod"]),
  }));
  const containers = self.decoding.decodeContainerList(a.containerBytes).map((c) => {
    const d = a.details.get(c.id);
    return {
      id: c.id, sandboxId: c.sandboxId, podUid: c.labels["io.kubernetes.pod.uid"] ?? "", name: c.name, attempt: c.attempt, state: c.state, image: c.image,
      specHash: c.annotations["io.kubernetes.container.hash"] ?? "", exitCode: d.exitCode, reason: d.reason, message: d.message, createdAtNs: c.createdAtNs,
      startedAtNs: d.startedAtNs, finishedAtNs: d.finishedAtNs,
    };
  });
  return packSnapshot({ listedAtMs: 1n, sandboxes, containers, uninspectedPodUids: [] });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function measure(containerCount) {
  const iterations = containerCount >= 10_000 ? 30 : containerCount >= 1000 ? 150 : 600;
  const variants = [];
  for (let k = 0; k < 6; k++) variants.push(answers(snapshot(containerCount, k % 2 === 1)));
  let current = variants[0];
  const contenders = [["relist", self], ...(other ? [["other", other]] : [])].map(([name, tree]) => ({
    name, tree, relister: new tree.relist.Relister(memoryRuntime(tree, () => current), () => 1000), core: undefined,
  }));
  for (const c of contenders) c.core = await c.tree.core.CoreAgent.create({ nodeName: "bench", ...c.tree.core.DEFAULT_CORE_CONFIG });
  const samples = { relist: [], core: [], baseline: [], other: [], otherCore: [] };
  let now = 1_000_000;
  for (let i = 0; i < iterations + 4; i++) {
    current = variants[i % variants.length];
    now += 1000;
    for (const c of i % 2 === 0 ? contenders : [...contenders].reverse()) {
      let t = performance.now();
      const result = await c.relister.relist();
      const tRelist = performance.now() - t;
      t = performance.now();
      if (result.packed) c.core.handleSnapshot(now, result.snapshot, result.packed);
      else c.core.handleSnapshot(now, result);
      const tCore = performance.now() - t;
      if (i >= 4) {
        samples[c.name === "relist" ? "relist" : "other"].push(tRelist);
        samples[c.name === "relist" ? "core" : "otherCore"].push(tCore);
      }
    }
    const t = performance.now();
    baseline(current);
    if (i >= 4) samples.baseline.push(performance.now() - t);
  }
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, v.length ? median(v) : NaN]));
}

const f = (ms) => (Number.isNaN(ms) ? "" : ms.toFixed(3)).padStart(9);
console.log("Host relist into the core, median ms per relist (answers in a new order every relist, 10% of containers changing state)");
console.log(`containers    relist      core  baseline  relist/baseline${other ? "     other  otherCore  (relist+core)/(other+otherCore)" : ""}`);
for (const n of [110, 1000, 10_000]) {
  const r = await measure(n);
  const line = `${String(n).padStart(10)} ${f(r.relist)} ${f(r.core)} ${f(r.baseline)} ${(r.relist / r.baseline).toFixed(2).padStart(15)}x`;
  console.log(other ? `${line} ${f(r.other)} ${f(r.otherCore).padStart(10)} ${((r.relist + r.core) / (r.other + r.otherCore)).toFixed(2).padStart(30)}x` : line);
}
