// Where the machine's CPU goes while PODS (50) static pods start, under the upstream kubelet
// (KUBEBUILDER_ASSETS/kubelet) and under nanolet, each on its own private containerd 1.6 with
// the same busybox pods, ROUNDS (2) times alternating who goes first. From the manifests renamed
// into place to the last container running (read from the CRI every 100 ms): seconds taken, the
// whole machine's busy CPU (/proc/stat), the agent's own and containerd's own (their
// /proc/<pid>/stat); the rest is the runtime's children (shims, runc, the pods) and the kernel.
// A benchmark, not a test: CI does not run it.
//   npm run build && KUBEBUILDER_ASSETS=... node tests/bench/start-cpu.mjs
import fs from "node:fs";
import path from "node:path";
import { ensurePackages, PrivateContainerd } from "../../build/containerd.mjs";
import { GrpcRuntime } from "../../dist/cri/grpc-runtime.js";
import { Nanolet, podManifest, tempDir } from "../e2e/harness.mjs";
import { UpstreamKubelet } from "../e2e/upstream-kubelet.mjs";

const PODS = Number(process.env.PODS ?? 50);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const USER_HZ_MS = 10;

/** CPU ms a process has used (utime + stime). */
function processCpuMs(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) * USER_HZ_MS;
}

/** CPU ms the whole machine has been busy, and in all (every core). */
function machineCpuMs() {
  const ticks = fs.readFileSync("/proc/stat", "utf8").split("\n")[0].split(/\s+/).slice(1).map(Number);
  const total = ticks.reduce((sum, t) => sum + t, 0);
  return { busy: (total - ticks[3] - ticks[4]) * USER_HZ_MS, total: total * USER_HZ_MS };
}

async function startAgent(agent, dir) {
  fs.mkdirSync(dir, { recursive: true });
  const manifests = path.join(dir, "manifests");
  fs.mkdirSync(manifests);
  if (agent === "nanolet") {
    const containerd = new PrivateContainerd(path.join(dir, "containerd"));
    await containerd.start();
    const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir: manifests, rootDir: path.join(dir, "root"), logsDir: path.join(dir, "logs"), node: "start-cpu" });
    nanolet.start(["--v", "info", "--max-pods", String(PODS + 10)]);
    await new Promise((r) => setTimeout(r, 3000));
    return { pid: nanolet.proc.pid, containerd, manifests, stop: async () => { await nanolet.stop(); await containerd.stop(); } };
  }
  const kubelet = await UpstreamKubelet.start(dir, { node: "start-cpu-kubelet", config: { staticPodPath: manifests, maxPods: PODS + 10 } });
  return { pid: kubelet.pid, containerd: kubelet.containerd, manifests, stop: () => kubelet.stop() };
}

async function round(agent, dir) {
  const a = await startAgent(agent, dir);
  const runtime = new GrpcRuntime({ endpoint: a.containerd.endpoint });
  try {
    const staging = `${a.manifests}.staging`;
    fs.mkdirSync(staging);
    for (let i = 0; i < PODS; i++) fs.writeFileSync(path.join(staging, `s${i}.yaml`), podManifest(`s${i}`, { script: "exec sleep 3600" }));
    const machine0 = machineCpuMs();
    const agent0 = processCpuMs(a.pid);
    const containerd0 = processCpuMs(a.containerd.child.pid);
    const t0 = Date.now();
    for (let i = 0; i < PODS; i++) fs.renameSync(path.join(staging, `s${i}.yaml`), path.join(a.manifests, `s${i}.yaml`));
    while ((await runtime.listContainers({})).filter((c) => c.state === "running").length < PODS) {
      if (Date.now() - t0 > 600_000) throw new Error(`${PODS} pods not running after 10 min`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const machine1 = machineCpuMs();
    return {
      seconds: (Date.now() - t0) / 1000,
      busy: (machine1.busy - machine0.busy) / 1000,
      total: (machine1.total - machine0.total) / 1000,
      agent: (processCpuMs(a.pid) - agent0) / 1000,
      containerd: (processCpuMs(a.containerd.child.pid) - containerd0) / 1000,
    };
  } finally {
    runtime.close();
    await a.stop();
  }
}

ensurePackages();
const work = tempDir("nanolet-start-cpu-");
const results = { kubelet: [], nanolet: [] };
for (let r = 1; r <= ROUNDS; r++) {
  for (const agent of r % 2 === 1 ? ["kubelet", "nanolet"] : ["nanolet", "kubelet"]) {
    const x = await round(agent, path.join(work, `${agent}-${r}`));
    results[agent].push(x);
    console.log(`round ${r} ${agent}: ${PODS} pods running in ${x.seconds.toFixed(1)} s; machine busy ${x.busy.toFixed(1)} of ${x.total.toFixed(1)} cpu-s; ` +
      `agent ${x.agent.toFixed(1)} cpu-s (${((100 * x.agent) / x.busy).toFixed(0)}%), containerd ${x.containerd.toFixed(1)} cpu-s (${((100 * x.containerd) / x.busy).toFixed(0)}%), ` +
      `the rest (shims, runc, pods, kernel) ${(x.busy - x.agent - x.containerd).toFixed(1)} cpu-s`);
  }
}
fs.rmSync(work, { recursive: true, force: true });
