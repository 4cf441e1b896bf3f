// A real trap of the core component: a host bug (a packed snapshot whose string lies outside its
// text) breaks an invariant; the core reports why through the diagnostics import, the instance
// is dead afterwards, and a new instance works.
import { test } from "node:test";
import assert from "node:assert/strict";
import { CoreAgent, CoreTrapError, DEFAULT_CORE_CONFIG } from "../../dist/core/core.js";

const broken = () => ({
  listedAtMs: 5n,
  text: new Uint8Array([0x61, 0x62]),
  sandboxes: new Uint32Array([0, 2, 0, 2, 0, 1, 0, 1, /* attempt */ 0, /* flags */ 1]),
  sandboxNumbers: new BigInt64Array([0n, 0n]),
  // The container's id claims 50 bytes of a 2-byte text.
  containers: new Uint32Array([0, 50, 0, 2, 0, 2, 0, 1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1]),
  containerNumbers: new BigInt64Array([0n, 0n, 0n, 0n]),
  uninspectedPodUids: [],
});

test("a broken invariant traps with the core's own reason; the instance is then dead", async () => {
  const core = await CoreAgent.create({ nodeName: "n", ...DEFAULT_CORE_CONFIG });
  assert.throws(
    () => core.handleRelistPacked(10, broken()),
    (e) => e instanceof CoreTrapError && e.call === "handle-relist-packed" && /a string lies outside the text/.test(e.reason) && /packed\.ts/.test(e.reason),
  );
  assert.throws(() => core.pollActions(11), CoreTrapError);
  const fresh = await CoreAgent.create({ nodeName: "n", ...DEFAULT_CORE_CONFIG });
  assert.equal(fresh.pollActions(12)[0].kind.tag, "relist");
});

test("the host's own mistakes are not mistaken for traps", async () => {
  const core = await CoreAgent.create({ nodeName: "n", ...DEFAULT_CORE_CONFIG });
  assert.throws(() => core.pollActions(-1), RangeError);
  assert.throws(() => core.pollActions(1.5), RangeError);
  assert.equal(core.pollActions(1).length, 1, "still alive");
});
