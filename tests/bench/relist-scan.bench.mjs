// Benchmark: the relist's two CRI answers (ListPodSandbox, ListContainers; two labelled and
// annotated containers per sandbox, as nanolet creates them) read into rows, at 110, 1,000 and
// 10,000 containers, median ms per relist, all interleaved in one process:
//   scan:     the relist's scanners (relist/list-scanning.ts: the fast scanners, the general ones
//             for what they leave);
//   general:  the same scan with the general scanners on every object (`fast: false`: the scan
//             before the fast scanners);
//   decode:   the answers decoded into records (cri/list-decoding.ts), as the relist did before
//             it scanned.
// Eight different answers take turns, so that each is read from memory rather than the cache,
// as a relist's fresh answer is.
//   npm run build && node tests/bench/relist-scan.bench.mjs
import { performance } from "node:perf_hooks";
import { fresh, snapshot, wireAnswers } from "./pleg-snapshots.mjs";
import { scanContainerList, scanSandboxList } from "../../dist/relist/list-scanning.js";
import { decodeContainerList, decodeSandboxList } from "../../dist/cri/list-decoding.js";

const variants = {
  scan: (a) => {
    scanSandboxList(a.sandboxBytes);
    scanContainerList(a.containerBytes);
  },
  general: (a) => {
    scanSandboxList(a.sandboxBytes, false);
    scanContainerList(a.containerBytes, false);
  },
  decode: (a) => {
    decodeSandboxList(a.sandboxBytes);
    decodeContainerList(a.containerBytes);
  },
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const f = (ms) => ms.toFixed(3).padStart(9);

console.log("Relist answers read into rows, median ms per relist (eight answers taking turns)");
console.log("containers      bytes      scan   general    decode  scan/general  scan/decode");
for (const n of [110, 1000, 10_000]) {
  const base = snapshot(n, false);
  const answers = [];
  for (let k = 0; k < 8; k++) answers.push(await wireAnswers(fresh(base, true)));
  const iterations = n >= 10_000 ? 120 : n >= 1000 ? 400 : 2000;
  const samples = { scan: [], general: [], decode: [] };
  // The two scans interleaved; decoding after them, apart: the garbage it leaves (every string
  // and record of the answers) would make the collector run during the scans.
  for (const names of [["scan", "general"], ["decode"]]) {
    for (let i = 0; i < iterations + 8; i++) {
      const a = answers[i % answers.length];
      // A different variant first each time: none always reads what another just brought in.
      for (let k = 0; k < names.length; k++) {
        const name = names[(i + k) % names.length];
        const t = performance.now();
        variants[name](a);
        if (i >= 8) samples[name].push(performance.now() - t);
      }
    }
  }
  const r = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
  const bytes = answers[0].sandboxBytes.length + answers[0].containerBytes.length;
  console.log(`${String(n).padStart(10)} ${String(bytes).padStart(10)} ${f(r.scan)} ${f(r.general)} ${f(r.decode)} ${(r.scan / r.general).toFixed(2).padStart(12)}x ${(r.scan / r.decode).toFixed(2).padStart(11)}x`);
}
