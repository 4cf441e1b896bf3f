// Benchmark: this tree's component against another checkout's on the same relists, in one
// process: each relist is packed once and handed to both agents' cores, in alternating order.
// 10% of the containers change state each relist (STEADY=1: none), shuffled as containerd lists
// (ORDER=same: the same order every relist). Prints the median ms per relist of each build and
// the ratio this / other. The other checkout needs its own `npm run build`.
//   npm run build && OTHER=../other-checkout node tests/bench/pleg-compare.mjs
//   CONTAINERS (10000), RELISTS (200)
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fresh, snapshot } from "./pleg-snapshots.mjs";

const other = process.env.OTHER;
if (!other) throw new Error("OTHER=<another checkout, built> is required");
const containers = Number(process.env.CONTAINERS ?? 10_000);
const relists = Number(process.env.RELISTS ?? 200);
const steady = process.env.STEADY === "1";
const shuffled = process.env.ORDER !== "same";

const here = await import("../../dist/core/core.js");
const there = await import(path.resolve(other, "dist/core/core.js"));
const { packSnapshot } = await import("../../dist/core/snapshot-packing.js");
const cores = [
  await here.CoreAgent.create({ nodeName: "bench", ...here.DEFAULT_CORE_CONFIG }),
  await there.CoreAgent.create({ nodeName: "bench", ...there.DEFAULT_CORE_CONFIG }),
];
const a = snapshot(containers, false);
const b = snapshot(containers, !steady);
const samples = [[], []];
let now = 1_000_000;
for (let i = 0; i < relists + 10; i++) {
  const snap = fresh(i % 2 === 0 ? a : b, shuffled);
  now += 1000;
  const packed = packSnapshot({ listedAtMs: BigInt(now), sandboxes: snap.sandboxes, containers: snap.containers, uninspectedPodUids: [] });
  // Each pair of relists starts with the other build, so that neither always finds the caches warm.
  for (const k of (i >> 1) % 2 === 0 ? [0, 1] : [1, 0]) {
    const t0 = performance.now();
    cores[k].handleRelistPacked(now, packed);
    if (i >= 10) samples[k].push(performance.now() - t0);
  }
}
const median = (xs) => [...xs].sort((x, y) => x - y)[xs.length >> 1];
const [mine, theirs] = samples.map(median);
console.log(`${containers} containers, ${shuffled ? "shuffled every relist" : "same order"}, ${steady ? "nothing changing" : "10% changing"}: ` +
  `this tree ${mine.toFixed(2)} ms, ${other} ${theirs.toFixed(2)} ms per relist (medians of ${relists}); this / other ${(mine / theirs).toFixed(2)}`);
