// nanolet beside the upstream kubelet (KUBEBUILDER_ASSETS/kubelet, standalone, static pods), on
// every figure a user of a small node notices: agent CPU and RSS idle, time from manifests written
// to the first and the last container running, from a container killed to its replacement
// running, and from manifests removed to no container running. Each agent runs on its own
// private containerd with the same images and the same host-network busybox pods; the agents take
// turns, ROUNDS (3) times, alternating who goes first. Times are read from the runtime itself
// (CRI ListContainers on the agent's containerd, every POLL_MS), the same way for both agents.
// Printed: each round's figures, then min/median/max per figure and the ratio nanolet / kubelet
// of the medians. A benchmark, not a test: CI does not run it.
//   npm run build && KUBEBUILDER_ASSETS=... node tests/bench/vs-kubelet.mjs
// ROUNDS, KILLS (20), CPU_WINDOW_S (20), SETTLE_S (10), AGENTS=nanolet|kubelet (one alone),
// NANOLET_BIN (an artifact's bin/nanolet instead of the source tree's), CONTAINERD=2 (both agents
// on containerd 2.x from build/containerd2.mjs, whose CRI event stream nanolet's PLEG follows;
// the kubelet's EventedPLEG gate stays at its default, off).
import fs from "node:fs";
import path from "node:path";
import { ensurePackages, PrivateContainerd } from "../../build/containerd.mjs";
import { ensureContainerd2 } from "../../build/containerd2.mjs";
import { GrpcRuntime } from "../../dist/cri/grpc-runtime.js";
import { controlPlaneSkipReason } from "../e2e/control-plane.mjs";
import { Nanolet, nanoletBin, podManifest, tempDir, waitFor } from "../e2e/harness.mjs";
import { UpstreamKubelet } from "../e2e/upstream-kubelet.mjs";

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const KILLS = Number(process.env.KILLS ?? 20);
const CPU_WINDOW_S = Number(process.env.CPU_WINDOW_S ?? 20);
const SETTLE_S = Number(process.env.SETTLE_S ?? 10);
const POLL_MS = 20;
const skip = controlPlaneSkipReason();
if (skip) {
  console.log(`vs-kubelet: skipped: ${skip}`);
  process.exit(0);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cpuMs = (pid) => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime, USER_HZ 100
};
const statusMiB = (pid, field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024;
const rssMiB = (pid) => statusMiB(pid, "VmRSS");
/** RSS without file-backed pages (the executable's own code and data, shared and reclaimable). */
const anonMiB = (pid) => statusMiB(pid, "RssAnon");

/** A seeded generator (mulberry32): the kill delays are the same in every run. */
function seeded(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The figures, in the order printed; `unit` and how the value is shown. */
const FIGURES = [
  ["cpu50", "agent CPU, idle, 50 pods", "% of a core"],
  ["cpu100", "agent CPU, idle, 100 pods", "% of a core"],
  ["start50.last", "50 manifests -> last container running", "ms"],
  ["start100.last", "100 manifests -> last container running", "ms"],
  ["start50.first", "50 manifests -> first container running", "ms"],
  ["start100.first", "100 manifests -> first container running", "ms"],
  ["restart", `container killed -> replacement running (${KILLS} kills at 50 pods)`, "ms"],
  ["remove100", "100 manifests removed -> no container running (grace 2 s)", "ms"],
  ["remove40", "40 manifests removed, default grace 30 s, `sleep` ignoring SIGTERM", "ms"],
  ["rss0", "agent RSS, idle, 0 pods", "MiB"],
  ["rss10", "agent RSS, idle, 10 pods", "MiB"],
  ["rss50", "agent RSS, idle, 50 pods", "MiB"],
  ["rss100", "agent RSS, idle, 100 pods", "MiB"],
  ["anon50", "agent anonymous RSS (no executable pages), idle, 50 pods", "MiB"],
  ["anon100", "agent anonymous RSS (no executable pages), idle, 100 pods", "MiB"],
];

const work = tempDir("nanolet-vs-kubelet-");
ensurePackages();
const containerdBinDir = process.env.CONTAINERD === "2" ? await ensureContainerd2() : undefined;

/** One agent on its own containerd and manifest directory; `stop` ends both. */
async function startAgent(agent, dir) {
  const manifests = path.join(dir, "manifests");
  fs.mkdirSync(manifests, { recursive: true });
  if (agent === "nanolet") {
    const containerd = new PrivateContainerd(path.join(dir, "containerd"), { binDir: containerdBinDir });
    await containerd.start();
    const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir: manifests, rootDir: path.join(dir, "root"), logsDir: path.join(dir, "logs"), node: "bench-nanolet", bin: process.env.NANOLET_BIN ?? nanoletBin })
      .start(["--v", "info", "--max-pods", "120"]);
    await waitFor("nanolet answers", async () => (await nanolet.pods().catch(() => undefined)) !== undefined, 60_000, 200);
    return {
      pid: nanolet.proc.pid, manifests, containerd,
      stop: async () => {
        await nanolet.stop();
        await containerd.stop();
      },
    };
  }
  const kubelet = await UpstreamKubelet.start(dir, { node: "bench-kubelet", config: { staticPodPath: manifests, maxPods: 120 }, containerdBinDir });
  return { pid: kubelet.pid, manifests, containerd: kubelet.containerd, stop: () => kubelet.stop() };
}

/** The app containers (not sandboxes) the runtime runs now, by id, with their pod and name. */
async function runningContainers(runtime) {
  const list = await runtime.listContainers({});
  return list.filter((c) => c.state === "running");
}

/** Writes `count` manifests at once (grace `grace` s); resolves when all their containers run: ms to the first and the last. */
async function startPods(a, runtime, prefix, count, grace) {
  step(`${count} manifests written (${prefix})`);
  // Written beside the directory and renamed into it, as an operator's tools do: an agent never
  // reads a half-written file (which one of them might take as a broken manifest).
  const staging = `${a.manifests}.staging`;
  fs.mkdirSync(staging, { recursive: true });
  for (let i = 0; i < count; i++) {
    // `sleep` as the container's PID 1 ignores SIGTERM: every stop waits out the grace period.
    fs.writeFileSync(path.join(staging, `${prefix}${i}.yaml`), podManifest(`${prefix}${i}`, { grace, script: "exec sleep 3600" }));
  }
  const t0 = Date.now();
  for (let i = 0; i < count; i++) fs.renameSync(path.join(staging, `${prefix}${i}.yaml`), path.join(a.manifests, `${prefix}${i}.yaml`));
  let firstMs;
  for (;;) {
    const running = (await runningContainers(runtime)).length;
    const now = Date.now();
    if (running > 0 && firstMs === undefined) firstMs = now - t0;
    if (running >= count) return { firstMs, lastMs: now - t0 };
    if (now - t0 > 600_000) throw new Error(`${count} pods not running after 10 min (${running})`);
    await sleep(POLL_MS);
  }
}

/** Removes every manifest of `prefix`; resolves with the ms until no container runs. */
async function removePods(a, runtime, prefix) {
  step(`manifests removed (${prefix})`);
  const t0 = Date.now();
  for (const f of fs.readdirSync(a.manifests).filter((f) => f.startsWith(prefix))) fs.rmSync(path.join(a.manifests, f));
  for (;;) {
    if ((await runningContainers(runtime)).length === 0) return Date.now() - t0;
    if (Date.now() - t0 > 600_000) throw new Error("containers still running 10 min after their manifests were removed");
    await sleep(POLL_MS);
  }
}

/** SIGKILLs one container of each of `kills` pods in turn; ms from the kill to its replacement running. */
async function killAndWait(a, runtime, kills, random) {
  const out = [];
  const victims = (await runningContainers(runtime)).slice(0, kills);
  for (const victim of victims) {
    // A delay before each kill, so that kills land at every point of a relist period.
    await sleep(500 + Math.floor(random() * 1000));
    const t0 = Date.now();
    a.containerd.ctr("tasks", "kill", "-s", "SIGKILL", victim.id);
    for (;;) {
      const replacement = (await runningContainers(runtime)).find((c) => c.sandboxId === victim.sandboxId && c.name === victim.name && c.id !== victim.id);
      if (replacement) break;
      if (Date.now() - t0 > 120_000) throw new Error(`no replacement for ${victim.id} in 2 min`);
      await sleep(POLL_MS / 2);
    }
    out.push(Date.now() - t0);
  }
  return out;
}

/** Progress on stderr (the figures go to stdout). */
const step = (what) => console.error(`${new Date().toISOString()} ${what}`);

async function cpuPercent(pid) {
  const before = cpuMs(pid);
  await sleep(CPU_WINDOW_S * 1000);
  return ((cpuMs(pid) - before) / (CPU_WINDOW_S * 1000)) * 100;
}

/** Every figure for one agent, in one run of it. */
async function phase(agent, round) {
  const dir = path.join(work, `${agent}-${round}`);
  step(`round ${round}: ${agent} starting`);
  const a = await startAgent(agent, dir);
  step(`round ${round}: ${agent} up`);
  current = a.stop;
  const runtime = new GrpcRuntime({ endpoint: a.containerd.endpoint });
  const f = {};
  try {
    await sleep(SETTLE_S * 1000);
    f.rss0 = rssMiB(a.pid);
    // Ten pods first: the agent and the image are warm for every measured start.
    await startPods(a, runtime, "w", 10, 2);
    await sleep(SETTLE_S * 1000);
    f.rss10 = rssMiB(a.pid);
    await removePods(a, runtime, "w");
    /** `count` pods started at once, then the agent idle with them: start times, memory, CPU. */
    const startAndIdle = async (prefix, count) => {
      const started = await startPods(a, runtime, prefix, count, 2);
      f[`start${count}.first`] = started.firstMs;
      f[`start${count}.last`] = started.lastMs;
      await sleep(SETTLE_S * 1000);
      f[`rss${count}`] = rssMiB(a.pid);
      f[`anon${count}`] = anonMiB(a.pid);
      f[`cpu${count}`] = await cpuPercent(a.pid);
    };
    await startAndIdle("a", 50);
    f.restart = await killAndWait(a, runtime, KILLS, seeded(round));
    await removePods(a, runtime, "a");
    await startAndIdle("b", 100);
    f.remove100 = await removePods(a, runtime, "b");
    await startPods(a, runtime, "c", 40, 30); // the default grace period
    f.remove40 = await removePods(a, runtime, "c");
  } finally {
    runtime.close();
    current = undefined;
    await a.stop();
  }
  const show = (v) => (Array.isArray(v) ? `${median(v).toFixed(0)} (${Math.min(...v)}-${Math.max(...v)})` : Number.isInteger(v) ? String(v) : v.toFixed(2));
  console.log(`round ${round} ${agent}: ${FIGURES.map(([k]) => `${k}=${show(f[k])}`).join(" ")}`);
  return f;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

// Interrupted: the running agent, its containerd and its pods are stopped before leaving.
let current;
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, async () => {
    await current?.();
    process.exit(130);
  });
}

const runs = { nanolet: [], kubelet: [] };
const agents = process.env.AGENTS ? process.env.AGENTS.split(",") : ["kubelet", "nanolet"];
for (let round = 1; round <= ROUNDS; round++) {
  const order = round % 2 === 1 ? ["kubelet", "nanolet"] : ["nanolet", "kubelet"];
  for (const agent of order.filter((x) => agents.includes(x))) runs[agent].push(await phase(agent, round));
}

const fmt = (v, unit) => (unit === "ms" ? `${(v / 1000).toFixed(2)} s` : unit === "MiB" ? `${v.toFixed(1)} MiB` : `${v.toFixed(2)}%`);
console.log(`\nruntime: ${containerdBinDir ? `containerd 2.x (${containerdBinDir})` : "the machine's containerd"}`);
console.log(`\n| figure (${ROUNDS} interleaved rounds: median (min-max)) | kubelet | nanolet | nanolet / kubelet |`);
console.log("|---|---|---|---|");
for (const [key, label, unit] of FIGURES) {
  const cell = (agent) => {
    // The kills are pooled over rounds: their median is of every kill.
    const values = runs[agent].flatMap((r) => (Array.isArray(r[key]) ? r[key] : [r[key]]));
    if (values.length === 0) return { text: "-", median: NaN };
    const m = median(values);
    return { text: `${fmt(m, unit)} (${fmt(Math.min(...values), unit)}-${fmt(Math.max(...values), unit)})`, median: m };
  };
  const k = cell("kubelet");
  const n = cell("nanolet");
  console.log(`| ${label} | ${k.text} | ${n.text} | ${(n.median / k.median).toFixed(2)} |`);
}
