// A million calls of the pure interfaces with random arguments (the fuzz target's WIT-typed
// arbitraries, one seed), straight on the core module: none traps and its memory does not grow.
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { SIGNATURES } from "./abi-types.mjs";
import { directCaller, instantiateCoreModule } from "./core-module.mjs";
import { arbitrary } from "../fuzz/targets/wit-pure.mjs";

const SEED = 20261204;
const CALLS = 1_000_000;

test(`${CALLS.toLocaleString("en")} random calls on the core module: no trap, memory flat`, async () => {
  const exports = await instantiateCoreModule();
  const inputs = fc.sample(arbitrary, { seed: SEED, numRuns: 4000 });
  const calls = [];
  for (const { fn, args } of inputs) {
    try {
      calls.push(directCaller(exports, SIGNATURES[fn], args));
    } catch {
      // A value the canonical ABI cannot carry (jco would refuse it too): not a call.
    }
  }
  assert.ok(calls.length > 3000, `only ${calls.length} inputs could be lowered`);
  const warmUp = 100_000;
  for (let i = 0; i < warmUp; i++) calls[i % calls.length]();
  const before = exports.memory.buffer.byteLength;
  for (let i = warmUp; i < CALLS; i++) calls[i % calls.length]();
  assert.equal(exports.memory.buffer.byteLength, before, `memory grew from ${before} to ${exports.memory.buffer.byteLength} bytes (seed ${SEED})`);
});
