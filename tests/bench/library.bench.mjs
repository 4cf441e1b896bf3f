// Benchmark: the core as a library. Sizes of what a host ships (the component, its core module
// alone, the jco bindings, the report page's bundle; raw and gzip -9), then calls per second of
// each pure interface through jco (JavaScript values lowered and lifted by the bindings) against
// calling the core module's export directly (the arguments pre-lowered once into an image that
// each call copies in and relocates, the result left in memory: the least a host can do).
// Both run in this process, alternating, so a noisy machine slows both alike.
//   npm run build && node tests/bench/library.bench.mjs
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { loadLibrary } from "../../dist/core/library.js";
import { CASES } from "../library/cases.mjs";
import { SIGNATURES } from "../library/abi-types.mjs";
import { directCaller, instantiateCoreModule } from "../library/core-module.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const out = path.join(root, "build/out");
const COMPONENT_TARGET_GZIP = 128 * 1024;

function sizes() {
  const file = (rel) => fs.readFileSync(path.join(out, rel));
  const bindingsDir = path.join(out, "core-js");
  const bindings = Buffer.concat(fs.readdirSync(bindingsDir).filter((n) => n.endsWith(".js")).map((n) => fs.readFileSync(path.join(bindingsDir, n))));
  const rows = [
    ["component (nanolet-core.wasm)", file("nanolet-core.wasm")],
    ["core module alone (core.renamed.wasm)", file("core.renamed.wasm")],
    ["jco bindings (core-js/*.js)", bindings],
    ["report page bundle (report/browser.js)", file("report/browser.js")],
  ];
  console.log("what a host ships                            bytes     gzip -9");
  for (const [name, bytes] of rows) {
    console.log(`${name.padEnd(42)} ${String(bytes.length).padStart(8)} ${String(zlib.gzipSync(bytes, { level: 9 }).length).padStart(10)}`);
  }
  const componentGzip = zlib.gzipSync(file("nanolet-core.wasm"), { level: 9 }).length;
  console.log(`component gzip ${(componentGzip / 1024).toFixed(1)} KiB: target <= 128 KiB ${componentGzip <= COMPONENT_TARGET_GZIP ? "met" : "NOT met"}\n`);
}

/** Calls per second of `call`, over about `ms` milliseconds. */
function rate(call, ms) {
  let n = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ms) {
    for (let i = 0; i < 50; i++) call();
    n += 50;
    now = performance.now();
  }
  return (n * 1000) / (now - start);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

sizes();
const library = await loadLibrary();
const exports = await instantiateCoreModule();
console.log("calls per second (median of 5 alternating rounds of 200 ms)");
console.log(`${"function (case)".padEnd(58)}       jco    core module   jco/direct`);
for (const name of Object.keys(SIGNATURES)) {
  const sig = SIGNATURES[name];
  const c = CASES.find((x) => x.fn.join(".") === name && "ok" in x);
  const [iface, fn] = c.fn;
  const viaJco = () => library[iface][fn](...c.args);
  const direct = directCaller(exports, sig, c.args);
  viaJco();
  direct();
  const jcoRates = [];
  const directRates = [];
  for (let round = 0; round < 5; round++) {
    jcoRates.push(rate(viaJco, 200));
    directRates.push(rate(direct, 200));
  }
  const j = median(jcoRates);
  const d = median(directRates);
  console.log(`${`${name} (${c.id})`.padEnd(58)} ${Math.round(j).toLocaleString("en").padStart(9)} ${Math.round(d).toLocaleString("en").padStart(14)} ${(j / d).toFixed(2).padStart(12)}`);
}
