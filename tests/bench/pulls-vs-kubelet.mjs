// Pulls through a real registry, nanolet beside the upstream kubelet (KUBEBUILDER_ASSETS/kubelet,
// standalone, static pods): a pod's first start with its image pulled (manifest written -> its
// container running), and 20 pods written at once that share one new image (-> the last
// running), with the bytes and requests the registry served for each. The registry is Debian's
// docker-registry with TLS and htpasswd (build/registry.mjs); each agent has its own containerd
// trusting it and the node's credentials in its root directory's config.json. Every phase pulls
// an image of its own (fresh random content, so no containerd has a layer of it). Agents take
// turns, ROUNDS (3) times, alternating who goes first; printed: each round's figures, then the
// medians and the ratio nanolet / kubelet. A benchmark, not a test: CI does not run it.
//   npm run build && KUBEBUILDER_ASSETS=... node tests/bench/pulls-vs-kubelet.mjs
// ROUNDS, LAYER_MIB (8: the image's own layer), PODS (20).
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { ensurePackages, PrivateContainerd, smallImageArchive } from "../../build/containerd.mjs";
import { PrivateRegistry } from "../../build/registry.mjs";
import { GrpcRuntime } from "../../dist/cri/grpc-runtime.js";
import { controlPlaneSkipReason } from "../e2e/control-plane.mjs";
import { Nanolet, podManifest, tempDir, waitFor } from "../e2e/harness.mjs";
import { UpstreamKubelet } from "../e2e/upstream-kubelet.mjs";

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const LAYER_MIB = Number(process.env.LAYER_MIB ?? 8);
const PODS = Number(process.env.PODS ?? 20);
const POLL_MS = 20;
const skip = controlPlaneSkipReason();
if (skip) {
  console.log(`pulls-vs-kubelet: skipped: ${skip}`);
  process.exit(0);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const step = (what) => console.error(`${new Date().toISOString()} ${what}`);

const work = tempDir("nanolet-pulls-bench-");
ensurePackages();
const registry = await new PrivateRegistry(path.join(work, "registry")).start();
const nodeConfig = JSON.stringify({ auths: { [registry.host]: { auth: Buffer.from(`puller:right-password`).toString("base64") } } });

/** A new image in the registry: busybox and LAYER_MIB of random bytes (no containerd has any of it). */
function newImage(name) {
  const tar = smallImageArchive(`localhost/${name}`, { payload: crypto.randomBytes(LAYER_MIB * 1024 * 1024) }, path.join(work, `${name.replace(/[/:]/g, "_")}.tar`));
  return registry.push(tar, name);
}

/**
 * What the registry's log says from line `from` on: blob bytes served, manifest GETs, and
 * resolves (HEAD of a manifest: one per CRI PullImage that reached the registry).
 */
function served(from) {
  const lines = registry.log().split("\n").slice(from);
  let blobBytes = 0;
  let manifests = 0;
  let resolves = 0;
  for (const line of lines) {
    const m = /"(GET|HEAD) \/v2\/\S+\/(blobs|manifests)\/\S+ HTTP\/[\d.]+" 200 (\d+)/.exec(line);
    if (!m) continue;
    if (m[1] === "HEAD") resolves += m[2] === "manifests" ? 1 : 0;
    else if (m[2] === "blobs") blobBytes += Number(m[3]);
    else manifests++;
  }
  return { blobBytes, manifests, resolves };
}
const logLength = () => registry.log().split("\n").length;

async function startAgent(agent, dir) {
  const manifests = path.join(dir, "manifests");
  fs.mkdirSync(manifests, { recursive: true });
  const root = path.join(dir, "root"); // the kubelet's --root-dir too (UpstreamKubelet)
  fs.mkdirSync(root, { recursive: true });
  fs.writeFileSync(path.join(root, "config.json"), nodeConfig, { mode: 0o600 });
  if (agent === "nanolet") {
    const containerd = new PrivateContainerd(path.join(dir, "containerd"));
    await containerd.start();
    registry.trustFrom(containerd.certsDir);
    const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir: manifests, rootDir: root, logsDir: path.join(dir, "logs"), node: "bench-nanolet" }).start(["--v", "info"]);
    await waitFor("nanolet answers", async () => (await nanolet.pods().catch(() => undefined)) !== undefined, 60_000, 200);
    return { manifests, containerd, stop: async () => (await nanolet.stop(), await containerd.stop()) };
  }
  const kubelet = await UpstreamKubelet.start(dir, { node: "bench-kubelet", config: { staticPodPath: manifests } });
  registry.trustFrom(kubelet.containerd.certsDir);
  return { manifests, containerd: kubelet.containerd, stop: () => kubelet.stop() };
}

/** Writes `count` manifests of `image` at once; ms until all their containers run. */
async function runPods(a, runtime, prefix, count, image) {
  const staging = `${a.manifests}.staging`;
  fs.mkdirSync(staging, { recursive: true });
  for (let i = 0; i < count; i++) {
    const manifest = podManifest(`${prefix}${i}`, { image, script: "exec sleep 3600" }).replace("imagePullPolicy: Always", "imagePullPolicy: IfNotPresent");
    fs.writeFileSync(path.join(staging, `${prefix}${i}.yaml`), manifest);
  }
  const t0 = Date.now();
  for (let i = 0; i < count; i++) fs.renameSync(path.join(staging, `${prefix}${i}.yaml`), path.join(a.manifests, `${prefix}${i}.yaml`));
  for (;;) {
    const running = (await runtime.listContainers({})).filter((c) => c.state === "running" && (c.labels["io.kubernetes.pod.name"] ?? "").startsWith(prefix)).length;
    if (running >= count) return Date.now() - t0;
    if (Date.now() - t0 > 300_000) throw new Error(`${count} pods of ${image} not running after 5 min (${running})`);
    await sleep(POLL_MS);
  }
}

async function phase(agent, round) {
  const dir = path.join(work, `${agent}-${round}`);
  step(`round ${round}: ${agent} starting`);
  const a = await startAgent(agent, dir);
  const runtime = new GrpcRuntime({ endpoint: a.containerd.endpoint });
  const f = {};
  try {
    // Warm: the agent and its first sandbox up before anything is timed.
    const single = newImage(`bench/${agent}-${round}-single:1`);
    const shared = newImage(`bench/${agent}-${round}-shared:1`);
    let from = logLength();
    f.first = await runPods(a, runtime, "one", 1, single);
    Object.assign(f, Object.fromEntries(Object.entries(served(from)).map(([k, v]) => [`first.${k}`, v])));
    from = logLength();
    f.shared = await runPods(a, runtime, "many", PODS, shared);
    Object.assign(f, Object.fromEntries(Object.entries(served(from)).map(([k, v]) => [`shared.${k}`, v])));
  } finally {
    runtime.close();
    await a.stop();
  }
  step(`round ${round}: ${agent} ${JSON.stringify(f)}`);
  return f;
}

const FIGURES = [
  ["first", "1 pod, new image -> container running", "ms"],
  ["first.blobBytes", "  bytes of blobs served", "B"],
  ["shared", `${PODS} pods, one new image -> last running`, "ms"],
  ["shared.blobBytes", "  bytes of blobs served", "B"],
  ["shared.manifests", "  manifest GETs", ""],
  ["shared.resolves", "  manifest HEADs (one per pull reaching the registry)", ""],
];
const results = { nanolet: [], kubelet: [] };
try {
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ["nanolet", "kubelet"] : ["kubelet", "nanolet"];
    for (const agent of order) results[agent].push(await phase(agent, round));
  }
} finally {
  await registry.stop();
}
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
console.log(`pulls through a registry, ${ROUNDS} rounds, image layer ${LAYER_MIB} MiB (medians; ratio nanolet / kubelet)`);
for (const [key, label, unit] of FIGURES) {
  const n = median(results.nanolet.map((r) => r[key]));
  const k = median(results.kubelet.map((r) => r[key]));
  console.log(`${label.padEnd(44)} nanolet ${String(n).padStart(10)} ${unit.padEnd(2)}  kubelet ${String(k).padStart(10)} ${unit.padEnd(2)}  ratio ${(n / k).toFixed(2)}`);
}
