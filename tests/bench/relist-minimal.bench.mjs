// Benchmark: the agent's relist path against a minimal diff of the same answers, to show how far
// the agent's path is from what any diff must do and where the rest goes. Both take
// the same wire bytes (ListPodSandbox, ListContainers; nanolet's labels and annotations; a new
// order every relist, as containerd lists; 10% of the containers changing state), in one process,
// one path after the other, at 1,000 and 10,000 containers. Columns, median ms per relist:
//   scan:     the host scanning the answers into rows (relist/list-scanning.ts);
//   pack:     packing the rows for the component (relist/wire-packing.ts);
//   core:     the component taking the packed relist (handle-relist-packed: jco copying it in,
//             the PLEG's diff, the views of the pods that changed);
//   copy:     the two answers copied into a WebAssembly module's memory, as jco copies a
//             list<u8> (the least a host can hand over);
//   minimal:  that module finding every object of the last relist by its ID and calling it changed
//             when its message's bytes hash differently (relist-minimal/minimal-diff.ts): no pods,
//             views, events or vanished objects;
//   walk:     the host walking the answers' top level only, each object's ID and state into a
//             reused array (what the Relister needs to choose the containers to inspect), for a
//             path where the component reads the rest. Not in `least`.
// agent = scan + pack + core, least = copy + minimal (sums of the medians); the ratio is
// agent / least. The minimal module checks itself: it must find exactly the containers that
// changed, or the bench stops.
//   npm run build && node tests/bench/relist-minimal.bench.mjs
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import v8 from "node:v8";
import vm from "node:vm";
import { CoreAgent, DEFAULT_CORE_CONFIG } from "../../dist/core/core.js";
import { scanContainerList, scanSandboxList } from "../../dist/relist/list-scanning.js";
import { WirePacker } from "../../dist/relist/wire-packing.js";
import { fresh, snapshot, wireAnswers } from "./pleg-snapshots.mjs";

// A full collection before each size's runs: encoding the answers leaves garbage (tens of MB),
// which would otherwise be collected inside the timed scans.
v8.setFlagsFromString("--expose-gc");
const collectGarbage = vm.runInNewContext("gc");

const here = path.dirname(new URL(import.meta.url).pathname);
const root = path.resolve(here, "../..");

/** The minimal module, compiled here with the project's asc (outside the project's asconfig). */
function compileMinimal() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "relist-minimal-"));
  fs.writeFileSync(path.join(dir, "asconfig.json"), "{}");
  const wasm = path.join(dir, "minimal-diff.wasm");
  execFileSync(process.execPath, [path.join(root, "node_modules/assemblyscript/bin/asc.js"), path.join(here, "relist-minimal/minimal-diff.ts"),
    "-O3", "--runtime", "incremental", "--noAssert", "-o", wasm], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
  const bytes = fs.readFileSync(wasm);
  fs.rmSync(dir, { recursive: true, force: true });
  return bytes;
}

const minimalBytes = compileMinimal();

/**
 * Each element's ID range and state (field 6 of a container; 3 of a sandbox) into `rows`, three
 * words per element, every other field skipped by its length; returns the element count. Assumes
 * lengths under 2^28 and well-formed answers (the bench's own).
 */
function walkTopLevel(bytes, stateTag, rows) {
  let at = 0;
  let count = 0;
  const end = bytes.length;
  while (at < end) {
    at++; // field 1, length-delimited
    let length = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = bytes[at++];
      length |= (byte & 0x7f) << shift;
      if (byte < 0x80) break;
    }
    const messageEnd = at + length;
    const row = count * 3;
    while (at < messageEnd) {
      const tag = bytes[at++];
      if ((tag & 7) === 2) {
        let fieldLength = 0;
        for (let shift = 0; ; shift += 7) {
          const byte = bytes[at++];
          fieldLength |= (byte & 0x7f) << shift;
          if (byte < 0x80) break;
        }
        if (tag === 0x0a) {
          rows[row] = at;
          rows[row + 1] = fieldLength;
        }
        at += fieldLength;
      } else {
        if (tag === stateTag) rows[row + 2] = bytes[at];
        while (bytes[at++] >= 0x80);
      }
    }
    count++;
  }
  return count;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const f = (ms) => ms.toFixed(3).padStart(9);

async function measure(containerCount) {
  const iterations = containerCount >= 10_000 ? 60 : 300;
  const { instance } = await WebAssembly.instantiate(minimalBytes, { env: { abort: () => { throw new Error("minimal-diff aborted"); } } });
  const minimal = instance.exports;
  const a = snapshot(containerCount, false);
  const b = snapshot(containerCount, true);
  // Six answers taking turns (alternately a and b, each in its own order): each relist reads
  // bytes the last one did not.
  const sets = [];
  for (let k = 0; k < 6; k++) sets.push(await wireAnswers(fresh(k % 2 === 0 ? a : b, true)));
  const changing = a.containers.filter((c, i) => c.state !== b.containers[i].state).length;
  const core = await CoreAgent.create({ nodeName: "bench", ...DEFAULT_CORE_CONFIG });
  const packer = new WirePacker();
  minimal.reserveObjects(a.sandboxes.length + a.containers.length);
  const sandboxAt = minimal.reserveBytes(Math.max(...sets.map((s) => s.sandboxBytes.length)));
  const containerAt = minimal.reserveBytes(Math.max(...sets.map((s) => s.containerBytes.length)));
  const samples = { scan: [], pack: [], core: [], copy: [], minimal: [], walk: [] };
  const walkRows = new Uint32Array((a.sandboxes.length + a.containers.length) * 3);
  collectGarbage();
  let now = 1_000_000;
  // The two run apart, the agent's path first: taking turns with the minimal path made the
  // agent's scan twice as slow at 10,000 containers (6.4 against 3.4-3.5 ms run apart;
  // relist-scan.bench.mjs, which runs the scan alone, finds 3.0-3.1).
  for (let i = 0; i < iterations + 6; i++) {
    const answers = sets[i % sets.length];
    now += 1000;
    let t = performance.now();
    const sandboxes = scanSandboxList(answers.sandboxBytes);
    const containers = scanContainerList(answers.containerBytes);
    const tScan = performance.now() - t;
    t = performance.now();
    const packed = packer.pack(BigInt(now), sandboxes, containers, answers.facts, []);
    const tPack = performance.now() - t;
    t = performance.now();
    core.handleRelistPacked(now, packed);
    const tCore = performance.now() - t;
    if (i < 6) continue;
    samples.scan.push(tScan);
    samples.pack.push(tPack);
    samples.core.push(tCore);
  }
  collectGarbage();
  for (let i = 0; i < iterations + 6; i++) {
    const answers = sets[i % sets.length];
    let t = performance.now();
    // A fresh view each time: memory may have grown (jco makes one per call too).
    new Uint8Array(minimal.memory.buffer, sandboxAt, answers.sandboxBytes.length).set(answers.sandboxBytes);
    new Uint8Array(minimal.memory.buffer, containerAt, answers.containerBytes.length).set(answers.containerBytes);
    const tCopy = performance.now() - t;
    t = performance.now();
    const changed = minimal.diff(sandboxAt, answers.sandboxBytes.length, i + 1) + minimal.diff(containerAt, answers.containerBytes.length, i + 1);
    const tMinimal = performance.now() - t;
    const expected = i === 0 ? a.sandboxes.length + a.containers.length : changing;
    if (changed !== expected) throw new Error(`minimal diff found ${changed} changed objects in relist ${i}, not ${expected}`);
    if (i < 6) continue;
    samples.copy.push(tCopy);
    samples.minimal.push(tMinimal);
  }
  for (let i = 0; i < iterations + 6; i++) {
    const answers = sets[i % sets.length];
    const t = performance.now();
    const walked = walkTopLevel(answers.sandboxBytes, 0x18, walkRows) + walkTopLevel(answers.containerBytes, 0x30, walkRows);
    const tWalk = performance.now() - t;
    if (walked !== a.sandboxes.length + a.containers.length) throw new Error(`the walk found ${walked} objects`);
    if (i >= 6) samples.walk.push(tWalk);
  }
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
}

console.log("The agent's relist against a minimal diff of the same answers, median ms per relist (new order every relist, 10% of containers changing)");
console.log("containers      scan      pack      core     agent      copy   minimal     least  agent/least      walk");
for (const n of [1000, 10_000]) {
  const r = await measure(n);
  const agent = r.scan + r.pack + r.core;
  const least = r.copy + r.minimal;
  console.log(`${String(n).padStart(10)} ${f(r.scan)} ${f(r.pack)} ${f(r.core)} ${f(agent)} ${f(r.copy)} ${f(r.minimal)} ${f(least)} ${(agent / least).toFixed(2).padStart(11)}x ${f(r.walk)}`);
}
