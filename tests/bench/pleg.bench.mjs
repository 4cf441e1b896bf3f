// Benchmark: one relist's PLEG diff for 110, 1,000 and 10,000 containers through the component
// against the same diff in plain JavaScript in this process. Every relist flips 10% of the
// containers between running and exited, so each one produces events. Measured per relist:
//   packed:  handle-relist-packed, the path the agent uses (block copies in, PLEG diff on the
//            packed form, views rebuilt for the pods that changed);
//   pack:    the host packing the snapshot into typed arrays (core/snapshot-packing.ts);
//   typed:   handle-relist with the record list (a call per string to lower);
//   wire:    the agent's own path since the relist is packed from the runtime's answers: the two
//            answers' wire bytes scanned and packed as they came (relist/list-scanning.ts,
//            relist/wire-packing.ts; their encoding is not timed);
//   wcore:   handle-relist-packed on that packed form;
//   JS:      the same PLEG diff in plain JavaScript on the same objects;
//   JSw:     plain JavaScript from the same wire bytes as wire+wcore: the answers decoded by the
//            host's own decoder (cri/list-decoding.ts, the fastest the project has), then that
//            diff. The fair rival of wire+wcore: both start from what the runtime sent.
// Each relist gets freshly made strings, as a real relist does (gRPC decodes new strings every
// time); reusing one set of string objects would let V8 skip hashing them, which no real relist
// can. Making the copies is not timed. Each table is measured twice: with the objects listed in
// the same order every relist, and shuffled every relist, as containerd lists them (it walks a Go
// map, whose order changes from one walk to the next).
//   npm run build && node tests/bench/pleg.bench.mjs
import { performance } from "node:perf_hooks";
import { CoreAgent, DEFAULT_CORE_CONFIG } from "../../dist/core/core.js";
import { packSnapshot } from "../../dist/core/snapshot-packing.js";
import { JsPleg } from "./pleg-baseline.mjs";
import { fresh, snapshot, wireAnswers } from "./pleg-snapshots.mjs";
import { scanContainerList, scanSandboxList } from "../../dist/relist/list-scanning.js";
import { WirePacker } from "../../dist/relist/wire-packing.js";
import { decodeContainerList, decodeSandboxList } from "../../dist/cri/list-decoding.js";

function median(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function measure(containerCount, shuffled) {
  const iterations = containerCount >= 10_000 ? 40 : containerCount >= 1000 ? 200 : 1000;
  const a = snapshot(containerCount, false);
  const b = snapshot(containerCount, true);
  const packedCore = await CoreAgent.create({ nodeName: "bench", ...DEFAULT_CORE_CONFIG });
  const typedCore = await CoreAgent.create({ nodeName: "bench", ...DEFAULT_CORE_CONFIG });
  const wireCore = await CoreAgent.create({ nodeName: "bench", ...DEFAULT_CORE_CONFIG });
  const packer = new WirePacker();
  // The answers are encoded before the runs (six of them taking turns, each in its own order):
  // encoding one per relist left the collector work that landed in the timed steps.
  const wireSets = [];
  for (let k = 0; k < 6; k++) wireSets.push(await wireAnswers(fresh(k % 2 === 0 ? a : b, shuffled)));
  const js = new JsPleg();
  const wireJs = new JsPleg();
  let now = 1_000_000;
  const samples = { packed: [], pack: [], typed: [], js: [], wire: [], wcore: [], jsw: [] };
  // Interleave the variants so that machine noise hits all alike.
  for (let i = 0; i < iterations + 5; i++) {
    const snap = fresh(i % 2 === 0 ? a : b, shuffled);
    now += 1000;
    const full = { listedAtMs: BigInt(now), sandboxes: snap.sandboxes, containers: snap.containers, uninspectedPodUids: [] };
    let t0 = performance.now();
    const packed = packSnapshot(full);
    const tPack = performance.now() - t0;
    t0 = performance.now();
    packedCore.handleRelistPacked(now, packed);
    const tPacked = performance.now() - t0;
    t0 = performance.now();
    typedCore.handleRelist(now, full);
    const tTyped = performance.now() - t0;
    t0 = performance.now();
    const events = js.relist(snap.sandboxes, snap.containers);
    const tJs = performance.now() - t0;
    if (events.length === 0 && i > 0) throw new Error("baseline saw no change: the benchmark is broken");
    const answers = wireSets[i % wireSets.length];
    t0 = performance.now();
    const wire = packer.pack(BigInt(now), scanSandboxList(answers.sandboxBytes), scanContainerList(answers.containerBytes), answers.facts, []);
    const tWire = performance.now() - t0;
    t0 = performance.now();
    wireCore.handleRelistPacked(now, wire);
    const tWireCore = performance.now() - t0;
    t0 = performance.now();
    const sandboxes = decodeSandboxList(answers.sandboxBytes);
    const containers = decodeContainerList(answers.containerBytes);
    for (const c of containers) c.podUid = c.labels["io.kubernetes.pod.uid"] ?? "";
    wireJs.relist(sandboxes, containers);
    const tWireJs = performance.now() - t0;
    if (i >= 5) {
      samples.jsw.push(tWireJs);
      samples.wire.push(tWire);
      samples.wcore.push(tWireCore);
      samples.packed.push(tPacked);
      samples.pack.push(tPack);
      samples.typed.push(tTyped);
      samples.js.push(tJs);
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
}

const f = (ms) => ms.toFixed(3).padStart(9);
const ORDERS = [[false, "listed in the same order every relist"], [true, "shuffled every relist, as containerd lists"]];
for (const [shuffled, order] of ORDERS) {
  console.log(`PLEG relist diff, median ms per relist (10% of containers change state each relist; ${order})`);
  console.log("containers     packed      pack     typed        JS   packed/JS  (pack+packed)/JS      wire     wcore  (wire+wcore)/JS       JSw  (wire+wcore)/JSw");
  for (const n of [110, 1000, 10_000]) {
    const r = await measure(n, shuffled);
    console.log(`${String(n).padStart(10)} ${f(r.packed)} ${f(r.pack)} ${f(r.typed)} ${f(r.js)} ${(r.packed / r.js).toFixed(2).padStart(10)}x ${((r.pack + r.packed) / r.js).toFixed(2).padStart(16)}x ${f(r.wire)} ${f(r.wcore)} ${((r.wire + r.wcore) / r.js).toFixed(2).padStart(15)}x ${f(r.jsw)} ${((r.wire + r.wcore) / r.jsw).toFixed(2).padStart(16)}x`);
  }
  console.log("");
}

/** A steady node: the same relist again and again (fresh strings, same bytes). */
async function measureSteady(containerCount, shuffled) {
  const iterations = containerCount >= 10_000 ? 40 : containerCount >= 1000 ? 200 : 1000;
  const a = snapshot(containerCount, false);
  const core = await CoreAgent.create({ nodeName: "bench", ...DEFAULT_CORE_CONFIG });
  const js = new JsPleg();
  let now = 1_000_000;
  const samples = { packed: [], pack: [], js: [] };
  for (let i = 0; i < iterations + 5; i++) {
    const snap = fresh(a, shuffled);
    now += 1000;
    let t0 = performance.now();
    const packed = packSnapshot({ listedAtMs: BigInt(now), sandboxes: snap.sandboxes, containers: snap.containers, uninspectedPodUids: [] });
    const tPack = performance.now() - t0;
    t0 = performance.now();
    core.handleRelistPacked(now, packed);
    const tPacked = performance.now() - t0;
    t0 = performance.now();
    js.relist(snap.sandboxes, snap.containers);
    const tJs = performance.now() - t0;
    if (i >= 5) {
      samples.packed.push(tPacked);
      samples.pack.push(tPack);
      samples.js.push(tJs);
    }
  }
  return { packed: median(samples.packed), pack: median(samples.pack), js: median(samples.js) };
}

for (const [shuffled, order] of ORDERS) {
  console.log(`Steady node (nothing changes between relists; ${order}), median ms per relist`);
  console.log("containers     packed      pack        JS   packed/JS  (pack+packed)/JS");
  for (const n of [110, 1000, 10_000]) {
    const r = await measureSteady(n, shuffled);
    console.log(`${String(n).padStart(10)} ${f(r.packed)} ${f(r.pack)} ${f(r.js)} ${(r.packed / r.js).toFixed(2).padStart(10)}x ${((r.pack + r.packed) / r.js).toFixed(2).padStart(16)}x`);
  }
  console.log("");
}
