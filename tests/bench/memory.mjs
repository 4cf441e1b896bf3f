// Where nanolet's memory goes: RSS after each part is loaded (Node.js itself, grpc-js, the CRI
// proto, YAML, the component with one agent, the host's modules), under each set of Node.js
// flags in FLAG_SETS, each in a fresh process, RUNS (3) times interleaved; median per step and
// the growth each part adds. The agent's RSS with pods is vs-kubelet.mjs's. A benchmark, not a
// test: CI does not run it.
//   npm run build && node tests/bench/memory.mjs
import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const RUNS = Number(process.env.RUNS ?? 3);
/** The first is bin/nanolet's own (its shebang line); the others are what was tried against it. */
const FLAG_SETS = [
  ["--max-semi-space-size=1"],
  [],
  // (--lite-mode and --jitless would save a little more, but they turn WebAssembly off.)
  ["--max-semi-space-size=1", "--wasm-lazy-compilation"],
  ["--max-semi-space-size=1", "--single-threaded"],
  ["--max-semi-space-size=1", "--wasm-lazy-compilation", "--single-threaded", "--no-opt"],
];

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results = FLAG_SETS.map(() => []);
for (let run = 0; run < RUNS; run++) {
  for (let i = 0; i < FLAG_SETS.length; i++) {
    const out = execFileSync(process.execPath, ["--expose-gc", ...FLAG_SETS[i], path.join(here, "memory-steps.mjs")], { encoding: "utf8", env: { ...process.env, MALLOC_MMAP_THRESHOLD_: "131072" } });
    results[i].push(JSON.parse(out.trim().split("\n").pop()));
  }
}

const baseline = results[0];
for (let i = 0; i < FLAG_SETS.length; i++) {
  const runs = results[i];
  const parts = runs[0].steps.map((s) => s.part);
  const rss = parts.map((_, k) => median(runs.map((r) => r.steps[k].rssMiB)));
  const base = parts.map((_, k) => median(baseline.map((r) => r.steps[k].rssMiB)));
  console.log(`\nflags: ${FLAG_SETS[i].join(" ") || "(none)"}  (median of ${RUNS} runs; RSS MiB, +growth, ratio to the first flag set)`);
  for (let k = 0; k < parts.length; k++) {
    const grew = k === 0 ? rss[0] : rss[k] - rss[k - 1];
    console.log(`  ${parts[k].padEnd(28)} ${rss[k].toFixed(1).padStart(6)}  +${grew.toFixed(1).padStart(5)}  ${(rss[k] / base[k]).toFixed(2)}`);
  }
  const spaces = runs[0].heapSpacesMiB;
  console.log(`  V8 heap spaces used (MiB): ${Object.entries(spaces).map(([k, v]) => `${k} ${v}`).join(", ")}`);
}
