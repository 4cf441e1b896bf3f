// Benchmark: one eviction decision under memory pressure for 110, 1,000 and 10,000 pods through
// the component (handle-node-stats: the stats lifted across the boundary, the candidates built,
// the thresholds checked, the pods ranked, one evicted) against the same ranking in plain
// TypeScript (host/sim/eviction-reference.ts, which the simulator's invariants also use) over the
// same stats. Then a full stats pass over 110 pods on this machine's real cgroup files: 110 pod
// cgroups (and one container cgroup each) made under kubepods/besteffort for the run and removed
// after, with a log directory per pod; CPU time (user + system) of the pass.
//   npm run build && node tests/bench/eviction.bench.mjs
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { CoreAgent, DEFAULT_CORE_CONFIG } from "../../dist/core/core.js";
import { StatsCollector } from "../../dist/node/stats.js";
import { CgroupManager } from "../../dist/node/cgroup-manager.js";
import { rankMemoryPressure } from "../../dist/sim/eviction-reference.js";

const MI = 1024 * 1024;

function median(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function pods(n) {
  return Array.from({ length: n }, (_, i) => {
    const requestMi = i % 3 === 0 ? 0 : 16 + (i % 64);
    return {
      uid: `2f1c6a9e-bench-${String(i).padStart(6, "0")}`,
      namespace: "default",
      name: `pod-${i}`,
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30n,
      hostNetwork: true,
      containers: [{
        name: "app", image: "busybox", command: [], args: [], env: [], workingDir: undefined,
        requests: requestMi ? [{ name: "memory", quantity: `${requestMi}Mi` }] : [], limits: [], restartOnResize: [], ports: [], restartPolicy: "", imagePullPolicy: "",
      }],
      deletionGracePeriodSeconds: undefined,
      reportedTerminalPhase: undefined,
      priority: i % 5 === 0 ? 1000 : 0,
      staticPod: false,
      toleratesMemoryPressure: false, readinessGates: [], initContainers: [], volumes: [], ephemeralContainers: [],
      requestBytes: requestMi * MI,
    };
  });
}

/** A stats pass: the node under its threshold, every pod with a working set (a few without stats). */
function stats(list, round) {
  return {
    signals: [{ signal: "memory.available", available: BigInt(50 * MI), capacity: BigInt(64 * 1024 * MI) }],
    pods: list.filter((_, i) => i % 50 !== 7).map((p, i) => {
      const bytes = BigInt(((i * 7919 + round * 104729) % 200) * MI + 4096);
      return { uid: p.uid, memoryWorkingSetBytes: bytes, ephemeralStorageBytes: 0n, processCount: 1n, containers: [{ name: "app", memoryWorkingSetBytes: bytes }] };
    }),
    volumes: [],
  };
}

/** The same decision in plain TypeScript: candidates from the specs and the stats, ranked. */
function rankInTypeScript(list, s, evicted) {
  const usage = new Map();
  for (const p of s.pods) usage.set(p.uid, Number(p.memoryWorkingSetBytes));
  const candidates = [];
  for (const p of list) {
    if (evicted.has(p.uid)) continue;
    candidates.push({ uid: p.uid, priority: p.priority, hasStats: usage.has(p.uid), usageBytes: usage.get(p.uid) ?? 0, requestBytes: p.requestBytes });
  }
  return rankMemoryPressure(candidates)[0];
}

const NODE = {
  memoryCapacityBytes: 64 * 1024 * MI, allocatableMemoryBytes: 64 * 1024 * MI - 100 * MI, allocatableCpuMilli: 64_000,
  evictionHard: "memory.available<100Mi", evictionSoft: "", evictionSoftGracePeriod: "", evictionMinimumReclaim: "",
  evictionPressureTransitionPeriodMs: 300_000, evictionMaxPodGracePeriodSeconds: 0, evictionIntervalMs: 10_000,
};

/**
 * One node of `n` pods under memory pressure, one stats pass per sample: each pass ranks the
 * pods and evicts the first. An evicted pod stays (Failed, as in a cluster until a controller
 * deletes it), and a new pod joins after each pass, so every pass ranks `n` candidates. A few
 * passes first warm the call path and the core's per-spec facts, as on a running node.
 */
async function measure(n, path) {
  const iterations = n >= 10_000 ? 30 : n >= 1000 ? 100 : 300;
  const list = pods(n + iterations + 10);
  const live = list.slice(0, n);
  let joined = n;
  const core = await CoreAgent.create({ nodeName: "bench", ...DEFAULT_CORE_CONFIG, node: NODE });
  let now = 1_000_000;
  core.handlePods(now, live);
  const evicted = new Set();
  const samples = { core: [], ts: [] };
  for (let i = 0; i < iterations + 5; i++) {
    const candidates = list.slice(0, joined).filter((p) => !evicted.has(p.uid));
    const s = stats(candidates, i);
    now += 31_000; // past the interval and the wait for the last evicted pod
    let t0 = performance.now();
    const expected = rankInTypeScript(candidates, s, evicted);
    const tTs = performance.now() - t0;
    t0 = performance.now();
    if (path === "packed") core.handleNodeStats(now, s);
    else core.handleNodeStatsTyped(now, s);
    const tCore = performance.now() - t0;
    // Outside the timing: what the core evicted must be what the baseline ranked first.
    const event = core.pollActions(now).find((a) => a.kind.tag === "pod-event" && a.kind.val.reason === "Evicted");
    if (event?.podUid !== expected.uid) throw new Error(`the core evicted ${event?.podUid}, the baseline ranks ${expected.uid} first`);
    evicted.add(event.podUid);
    joined++;
    core.handlePods(now, list.slice(0, joined));
    if (i >= 5) {
      samples.core.push(tCore);
      samples.ts.push(tTs);
    }
  }
  return { core: median(samples.core), ts: median(samples.ts) };
}

const f = (ms) => ms.toFixed(3).padStart(9);
console.log("Eviction under memory pressure: one stats pass that ranks the pods and evicts one, median ms");
console.log("      pods     packed      typed  TypeScript  packed/TS");
for (const n of [110, 1000, 10_000]) {
  const packed = await measure(n, "packed");
  const typed = await measure(n, "typed");
  console.log(`${String(n).padStart(10)} ${f(packed.core)}  ${f(typed.core)}   ${f(packed.ts)} ${(packed.core / packed.ts).toFixed(2).padStart(9)}x`);
}

// --- a stats pass over 110 pods on real cgroup files -------------------------------------------
const root = "/sys/fs/cgroup";
const manager = new CgroupManager(root);
const logs = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-stats-bench-"));
const made = [];
const podList = [];
try {
  for (let i = 0; i < 110; i++) {
    const uid = `5e1d0c4b-stats-bench-${String(i).padStart(4, "0")}`;
    const parent = `/kubepods/besteffort/pod${uid}`;
    manager.ensurePod(parent, { cpuShares: 2n, cpuWeight: 1n, cpuQuotaUs: 0n, cpuPeriodUs: 100_000n, memoryLimitBytes: 0n, oomScoreAdj: 0 });
    const cid = `c${String(i).padStart(63, "0")}`;
    for (const ctrl of manager.version === 1 ? ["cpu", "memory", "pids"] : [""]) {
      const dir = path.join(root, ctrl, parent, cid);
      fs.mkdirSync(dir, { recursive: true });
      made.push(dir, path.join(root, ctrl, parent));
    }
    const logDir = path.join(logs, `default_pod-${i}_${uid}`);
    fs.mkdirSync(path.join(logDir, "app"), { recursive: true });
    fs.writeFileSync(path.join(logDir, "app", "0.log"), "x".repeat(4096));
    podList.push({ uid, logDir, containers: [{ id: cid, name: "app" }] });
  }
  const collector = new StatsCollector({ cgroupRoot: root, nodefsPath: logs, imagefsPath: logs, allocatableMemoryBytes: os.totalmem() - 100 * MI });
  const cpu = [];
  const wall = [];
  for (let i = 0; i < 55; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const s = collector.collect(podList);
    const dt = performance.now() - t0;
    const c = process.cpuUsage(c0);
    if (s.pods.length !== 110) throw new Error(`stats for ${s.pods.length} pods, want 110`);
    if (i >= 5) {
      cpu.push((c.user + c.system) / 1000);
      wall.push(dt);
    }
  }
  console.log(`\nStats pass over 110 pods (real cgroup v${manager.version} files, log directories): median ${median(cpu).toFixed(2)} ms CPU, ${median(wall).toFixed(2)} ms wall (target: at most 20 ms of CPU)`);
} finally {
  for (const dir of made) {
    try {
      fs.rmdirSync(dir);
    } catch {
      // a parent listed twice is gone already
    }
  }
  fs.rmSync(logs, { recursive: true, force: true });
}
