// The pure interfaces through the real component on Node.js (jco bindings, as dist/core/library.js
// loads them): every case of cases.mjs, and the table's own shape.
import assert from "node:assert/strict";
import fs from "node:fs";
import { test } from "node:test";
import { loadLibrary } from "../../dist/core/library.js";
import { CASES, canonical, expected, runCase } from "./cases.mjs";
import { SIGNATURES } from "./abi-types.mjs";
import { directCaller, instantiateCoreModule } from "./core-module.mjs";

const library = await loadLibrary();

for (const c of CASES) {
  test(`node: ${c.id}`, () => {
    assert.equal(canonical(runCase(library, c)), canonical(expected(c)));
  });
}

test("every function of the pure interfaces has cases, and each that can fail has a bad one", () => {
  for (const [name, sig] of Object.entries(SIGNATURES)) {
    const mine = CASES.filter((c) => c.fn.join(".") === name);
    assert.ok(mine.some((c) => "ok" in c), `${name}: no valid case`);
    if (sig.result.k === "result") assert.ok(mine.some((c) => "err" in c), `${name}: no bad case`);
  }
  const exported = Object.entries(library).flatMap(([iface, fns]) => Object.keys(fns).map((fn) => `${iface}.${fn}`));
  assert.deepEqual(exported.sort(), Object.keys(SIGNATURES).sort());
});

test("case ids are unique", () => {
  assert.equal(new Set(CASES.map((c) => c.id)).size, CASES.length);
});

test("an input jco cannot lower is refused before the core sees it", () => {
  assert.throws(() => library.qos.podQosClass({ uid: "u", priority: 0, staticPod: false, containers: [{ name: "a", requests: [{ name: "cpu" }], limits: [] }] }));
  assert.throws(() => library.restart.shouldRestart("Always", false, { state: "sleeping", exitCode: 0 }));
});

test("every item of the WIT interface has a /// doc comment", () => {
  const witDir = new URL("../../wit/", import.meta.url);
  const missing = [];
  for (const name of fs.readdirSync(witDir).filter((n) => n.endsWith(".wit"))) {
    const lines = fs.readFileSync(new URL(name, witDir), "utf8").split("\n");
    lines.forEach((line, i) => {
      const text = line.trim();
      if (!text || text.startsWith("//") || text === "}" || /^(package|use|import|export) /.test(text)) return;
      let j = i - 1;
      while (j >= 0 && lines[j].trim() === "") j--;
      if (j < 0 || !lines[j].trim().startsWith("///")) missing.push(`${name}:${i + 1}: ${text}`);
    });
  }
  assert.deepEqual(missing, []);
});

test("the pure interfaces leak nothing: 3,000 rounds of every case on the core module keep its memory", async () => {
  const exports = await instantiateCoreModule();
  const calls = CASES.map((c) => directCaller(exports, SIGNATURES[c.fn.join(".")], c.args));
  const round = () => calls.forEach((call) => call());
  for (let i = 0; i < 300; i++) round(); // warm up: arenas and the collector find their sizes
  const before = exports.memory.buffer.byteLength;
  for (let i = 0; i < 3000; i++) round();
  assert.equal(exports.memory.buffer.byteLength, before);
});

test("the core module alone answers as the component does", async () => {
  const exports = await instantiateCoreModule();
  for (const c of CASES) {
    const tag = directCaller(exports, SIGNATURES[c.fn.join(".")], c.args)();
    const kind = SIGNATURES[c.fn.join(".")].result.k;
    if (kind === "result") assert.equal(tag, "err" in c ? 1 : 0, c.id);
    // A record (merge-hints) comes back whole by pointer: the wast host checks every field of it.
    else if (kind !== "record") assert.equal(tag, c.ok ? 1 : 0, c.id);
  }
});
