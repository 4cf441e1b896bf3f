// The pure interfaces through the real component on Node.js (jco bindings, as dist/library.js
// loads them): every case of cases.mjs, and the table's own shape.
import assert from "node:assert/strict";
import { test } from "node:test";
import { loadLibrary } from "../../dist/library.js";
import { CASES, canonical, expected, runCase } from "./cases.mjs";
import { SIGNATURES } from "./abi-types.mjs";

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
  assert.throws(() => library.restart.shouldRestart("Always", { state: "sleeping", exitCode: 0 }));
});
