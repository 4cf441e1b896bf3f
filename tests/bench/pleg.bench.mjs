// Benchmark: one relist's PLEG diff for 110, 1,000 and 10,000 containers through the component
// (handle-relist: ABI lift of the whole snapshot, PLEG diff, per-pod view update) against the
// same diff in plain JavaScript in this process. Every relist flips 10% of the containers
// between running and exited, so each one produces events. Prints medians and the ratio.
//   npm run build && node tests/bench/pleg.bench.mjs
import { performance } from "node:perf_hooks";
import { CoreAgent, DEFAULT_CORE_CONFIG } from "../../dist/core.js";
import { JsPleg } from "./pleg-baseline.mjs";

const CONTAINERS_PER_POD = 2;

function snapshot(containerCount, flip) {
  const pods = Math.ceil(containerCount / CONTAINERS_PER_POD);
  const sandboxes = [];
  const containers = [];
  for (let p = 0; p < pods; p++) {
    const podUid = `0b5c3f8e-pod-${String(p).padStart(6, "0")}`;
    sandboxes.push({ id: `sandbox-${p}-${"f".repeat(48)}`, podUid, podName: `pod-${p}`, podNamespace: "default", attempt: 0, state: "ready", createdAtNs: 1_764_000_000_000_000_000n, terminationGracePeriodSeconds: 30n });
    for (let c = 0; c < CONTAINERS_PER_POD && containers.length < containerCount; c++) {
      const i = containers.length;
      const exited = flip && i % 10 === 0;
      containers.push({
        id: `container-${i}-${"e".repeat(46)}`, sandboxId: sandboxes[p].id, podUid, name: `c${c}`, attempt: 0,
        state: exited ? "exited" : "running", image: "docker.io/library/busybox:latest", specHash: "00112233aabbccdd",
        exitCode: exited ? 1 : 0, reason: exited ? "Error" : "", message: "", createdAtNs: 1_764_000_000_000_000_000n,
        startedAtNs: 1_764_000_000_100_000_000n, finishedAtNs: exited ? 1_764_000_001_000_000_000n : 0n,
      });
    }
  }
  return { sandboxes, containers };
}

function median(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function measure(containerCount) {
  const iterations = containerCount >= 10_000 ? 40 : containerCount >= 1000 ? 200 : 1000;
  const a = snapshot(containerCount, false);
  const b = snapshot(containerCount, true);
  const core = await CoreAgent.create({ nodeName: "bench", ...DEFAULT_CORE_CONFIG });
  const js = new JsPleg();
  let now = 1_000_000;
  const componentMs = [];
  const jsMs = [];
  // Interleave the two so that machine noise hits both alike.
  for (let i = 0; i < iterations + 5; i++) {
    const snap = i % 2 === 0 ? a : b;
    now += 1000;
    const full = { listedAtMs: BigInt(now), sandboxes: snap.sandboxes, containers: snap.containers, uninspectedPodUids: [] };
    let t0 = performance.now();
    core.handleRelist(now, full);
    const tComponent = performance.now() - t0;
    t0 = performance.now();
    const events = js.relist(snap.sandboxes, snap.containers);
    const tJs = performance.now() - t0;
    if (events.length === 0 && i > 0) throw new Error("baseline saw no change: the benchmark is broken");
    if (i >= 5) {
      componentMs.push(tComponent);
      jsMs.push(tJs);
    }
  }
  return { containerCount, componentMs: median(componentMs), jsMs: median(jsMs) };
}

console.log("PLEG relist diff, median per relist (10% of containers change state each relist)");
console.log("containers   component (ms)   plain JS (ms)   component / JS");
for (const n of [110, 1000, 10_000]) {
  const r = await measure(n);
  console.log(`${String(n).padStart(10)}   ${r.componentMs.toFixed(3).padStart(14)}   ${r.jsMs.toFixed(3).padStart(13)}   ${(r.componentMs / r.jsMs).toFixed(2).padStart(14)}x`);
}
