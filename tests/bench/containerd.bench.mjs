// Benchmark on a real containerd: 50 host-network pods run by the nanolet agent (a child
// process, as deployed), then
//   - one relist (ListPodSandbox + ListContainers, steady state) from this process, median of 30,
//     beside the two raw CRI list calls alone (the floor any agent pays);
//   - the agent's resident memory (VmRSS of the nanolet process) with the 50 pods running.
//   npm run build && node tests/bench/containerd.bench.mjs
import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { PrivateContainerd, ensurePackages } from "../../build/containerd.mjs";
import { GrpcRuntime } from "../../dist/cri/grpc-runtime.js";
import { MANAGED_SELECTOR, Relister } from "../../dist/relist/relister.js";
import { Nanolet, podManifest, tempDir, waitFor } from "../e2e/harness.mjs";

const PODS = Number(process.env.PODS ?? 50);
const work = tempDir("nanolet-bench-");
ensurePackages();
const containerd = new PrivateContainerd(path.join(work, "containerd"));
await containerd.start();
const manifestDir = path.join(work, "manifests");
fs.mkdirSync(manifestDir);
for (let i = 0; i < PODS; i++) fs.writeFileSync(path.join(manifestDir, `p${i}.yaml`), podManifest(`p${i}`));
const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir, rootDir: path.join(work, "root"), logsDir: path.join(work, "logs") }).start();
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

try {
  const started = performance.now();
  await waitFor(`${PODS} pods running`, async () => (await nanolet.pods()).filter((p) => p.phase === "Running").length === PODS, 300_000, 500);
  const startSeconds = (performance.now() - started) / 1000;
  await new Promise((r) => setTimeout(r, 3000)); // let it settle into steady relists

  const runtime = new GrpcRuntime({ endpoint: containerd.endpoint });
  const relister = new Relister(runtime, Date.now);
  await relister.relist(); // fills the inspection cache, as the agent's own relister has
  const relistMs = [];
  const listMs = [];
  for (let i = 0; i < 30; i++) {
    let t = performance.now();
    const snap = await relister.relist();
    relistMs.push(performance.now() - t);
    if (snap.counts.containers.running !== PODS) throw new Error(`relist saw ${snap.counts.containers.running} running containers`);
    t = performance.now();
    await Promise.all([runtime.listPodSandboxes(MANAGED_SELECTOR), runtime.listContainers(MANAGED_SELECTOR)]);
    listMs.push(performance.now() - t);
  }
  runtime.close();
  const status = fs.readFileSync(`/proc/${nanolet.proc.pid}/status`, "utf8");
  const rssMiB = Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]) / 1024;
  console.log(`${PODS} pods on containerd: all Running ${startSeconds.toFixed(1)} s after the agent started`);
  console.log(`one relist, median of 30: ${median(relistMs).toFixed(2)} ms; the two raw CRI list calls alone: ${median(listMs).toFixed(2)} ms (relist / raw = ${(median(relistMs) / median(listMs)).toFixed(2)}x)`);
  console.log(`agent RSS with ${PODS} pods running: ${rssMiB.toFixed(1)} MiB (target: at most 60 MB)`);
} finally {
  for (const f of fs.readdirSync(manifestDir)) fs.rmSync(path.join(manifestDir, f));
  await waitFor("pods removed", async () => (await nanolet.pods()).length === 0, 120_000).catch(() => {});
  await nanolet.stop();
  await containerd.stop();
}
