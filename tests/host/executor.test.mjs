// The executor's slots: calls that wait on a container (StopContainer, up to its grace period)
// never take one, so a stop storm neither serialises the stops nor starves the other calls.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Executor } from "../../dist/agent/executor.js";
import { DEFAULT_ACTION_CONCURRENCY } from "../../dist/agent/action-slots.js";

const log = { log() {} };

/** A runtime whose StopContainer and StartContainer wait until released by the test. */
function blockingRuntime() {
  const waiting = { stop: [], start: [] };
  const hold = (kind) => new Promise((resolve) => waiting[kind].push(resolve));
  return {
    waiting,
    stopContainer: () => hold("stop"),
    startContainer: () => hold("start"),
  };
}

const action = (id, tag, val) => ({ id: BigInt(id), podUid: "u", podNamespace: "default", podName: "p", kind: { tag, val } });

test("forty stops run at once and a start still gets a slot", async () => {
  const runtime = blockingRuntime();
  const executor = new Executor({ runtime, podLogsDir: "/tmp", log });
  const stops = Array.from({ length: 40 }, (_, i) => executor.execute(action(i, "stop-container", { containerId: `c${i}`, timeoutSeconds: 30n })));
  const starts = Array.from({ length: DEFAULT_ACTION_CONCURRENCY }, (_, i) => executor.execute(action(100 + i, "start-container", { containerId: `s${i}` })));
  await new Promise((r) => setImmediate(r));
  assert.equal(runtime.waiting.stop.length, 40, "every stop reached the runtime");
  assert.equal(runtime.waiting.start.length, DEFAULT_ACTION_CONCURRENCY, "the slots are still free for other calls");
  // A ninth slotted call waits for a slot, as before.
  const extra = executor.execute(action(200, "start-container", { containerId: "s-extra" }));
  await new Promise((r) => setImmediate(r));
  assert.equal(runtime.waiting.start.length, DEFAULT_ACTION_CONCURRENCY);
  runtime.waiting.start.shift()();
  await new Promise((r) => setImmediate(r));
  assert.equal(runtime.waiting.start.length, DEFAULT_ACTION_CONCURRENCY);
  for (const release of [...runtime.waiting.stop, ...runtime.waiting.start]) release();
  runtime.waiting.start.splice(0).forEach((r) => r());
  await new Promise((r) => setImmediate(r));
  runtime.waiting.start.splice(0).forEach((r) => r());
  const results = await Promise.all([...stops, ...starts, extra]);
  assert.ok(results.every((r) => r.outcome.tag === "ok"));
});

test("a container of a pod whose sandbox is up gets the next free slot before new sandboxes", async () => {
  // Every RunPodSandbox and StartContainer waits until the test releases it, in call order.
  const calls = [];
  const hold = (what) => new Promise((resolve) => calls.push({ what, resolve }));
  const runtime = { runPodSandbox: (config) => hold(`sandbox ${config.podName}`).then(() => `id-${config.podName}`), startContainer: (id) => hold(`start ${id}`) };
  const executor = new Executor({ runtime, podLogsDir: "/tmp/nanolet-executor-test", log });
  const sandbox = (i) => action(i, "run-sandbox", { podUid: `u${i}`, podName: `p${i}`, podNamespace: "default", attempt: 0, hostNetwork: true, cgroupParent: "", terminationGracePeriodSeconds: 30n });
  const pending = Array.from({ length: 20 }, (_, i) => executor.execute(sandbox(i)));
  await new Promise((r) => setImmediate(r));
  assert.equal(calls.length, DEFAULT_ACTION_CONCURRENCY, "the first sandboxes take every slot");
  // The first pod's sandbox is up: its container's start waits behind 12 sandboxes in arrival order, but not by rank.
  const start = executor.execute(action(100, "start-container", { containerId: "c0" }));
  calls.shift().resolve();
  await new Promise((r) => setImmediate(r));
  assert.equal(calls.at(-1).what, "start c0", "the freed slot went to the container, not to the ninth sandbox");
  while (calls.length > 0) {
    calls.shift().resolve();
    await new Promise((r) => setImmediate(r));
  }
  const results = await Promise.all([...pending, start]);
  assert.ok(results.every((r) => r.outcome.tag === "ok"), JSON.stringify(results.find((r) => r.outcome.tag !== "ok")));
});
