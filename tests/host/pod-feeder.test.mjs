// The pod feeder gives the core new pods in bounded steps: the same answer as one call, a pod the
// core holds is never left out of a step, and large new pods never arrive all at once.
import { test } from "node:test";
import assert from "node:assert/strict";
import { PodFeeder, STEP_WEIGHT, specWeight } from "../../dist/agent/pod-feeder.js";

function pod(name, { envCount = 0, uid = name, badEnv = false } = {}) {
  const env = Array.from({ length: envCount }, (_, i) => ({ name: `V${i}`, value: "x" }));
  if (badEnv) env.push({ name: "A=B", value: "x" });
  return {
    uid, namespace: "default", name, restartPolicy: "Always", hostNetwork: true, priority: 0, staticPod: true, toleratesMemoryPressure: false, readinessGates: [], initContainers: [], volumes: [], ephemeralContainers: [],
    containers: [{ name: "c", image: "busybox", command: [], args: [], env, requests: [], limits: [], restartOnResize: [], ports: [], restartPolicy: "", imagePullPolicy: "" }],
  };
}

/** A core that refuses bad env names and later duplicates of a name, and remembers what it holds. */
function fakeCore() {
  const calls = [];
  const handle = (specs) => {
    calls.push(specs.map((s) => s.uid));
    const out = [];
    const names = new Set();
    specs.forEach((s, index) => {
      if (s.containers.some((c) => c.env.some((e) => e.name.includes("=")))) out.push({ index, uid: s.uid, field: "spec.containers[0].env", message: "bad" });
      else if (names.has(s.name)) out.push({ index, uid: s.uid, field: "metadata.name", message: "Duplicate value" });
      else names.add(s.name);
    });
    return out;
  };
  return { calls, handle };
}

test("small pods go in one call, as before", () => {
  const core = fakeCore();
  const specs = [pod("a"), pod("b", { badEnv: true }), pod("c")];
  const rejections = new PodFeeder().feed(specs, core.handle);
  assert.equal(core.calls.length, 1);
  assert.deepEqual(rejections.map((r) => [r.index, r.uid]), [[1, "b"]]);
});

test("large new pods arrive in steps beside the pods the core already holds, and refusals keep their indices", () => {
  const feeder = new PodFeeder();
  const first = fakeCore();
  const small = [pod("keep1"), pod("keep2")];
  feeder.feed(small, first.handle);
  const big = Array.from({ length: 8 }, (_, i) => pod(`big${i}`, { envCount: 7000, badEnv: i % 2 === 0 }));
  assert.ok(specWeight(big[0]) > STEP_WEIGHT / 4, "a big pod weighs a good part of a step");
  const specs = [small[0], ...big, small[1]];
  const core = fakeCore();
  const rejections = feeder.feed(specs, core.handle);
  assert.ok(core.calls.length > 1, "more than one step");
  let heldBefore = new Set(["keep1", "keep2"]);
  for (const call of core.calls) {
    assert.ok(call.includes("keep1") && call.includes("keep2"), "held pods are in every step");
    for (const uid of heldBefore) if (!uid.startsWith("big0") && !["big2", "big4", "big6"].includes(uid)) assert.ok(call.includes(uid), `${uid}, accepted in an earlier step, is in every later one`);
    const fresh = call.filter((uid) => !heldBefore.has(uid)).map((uid) => specs.find((s) => s.uid === uid));
    const weight = fresh.reduce((w, s) => w + specWeight(s), 0);
    assert.ok(fresh.length === 1 || weight <= STEP_WEIGHT, `a step's new pods weigh at most a step (${weight})`);
    heldBefore = new Set([...heldBefore, ...fresh.map((s) => s.uid)]);
  }
  // Same answer as one call.
  const once = fakeCore().handle(specs).map((r) => r.index);
  assert.deepEqual(rejections.map((r) => r.index), once);
  assert.deepEqual(rejections.map((r) => r.uid), ["big0", "big2", "big4", "big6"]);
  // What the core holds now is in every step of the next feed; only the refused ones come anew.
  const again = fakeCore();
  feeder.feed(specs, again.handle);
  for (const call of again.calls) for (const uid of ["keep1", "keep2", "big1", "big3", "big5", "big7"]) assert.ok(call.includes(uid));
});

test("a new pod that displaces a held one by name is answered as one call would answer", () => {
  const feeder = new PodFeeder();
  const held = pod("web", { uid: "old" });
  feeder.feed([held], fakeCore().handle);
  const newer = pod("web", { uid: "new", envCount: 20000 });
  const specs = [newer, held];
  const core = fakeCore();
  const rejections = feeder.feed(specs, core.handle);
  assert.deepEqual(rejections.map((r) => [r.index, r.uid, r.field]), [[1, "old", "metadata.name"]]);
});

test("no core: the feed ends with no answer", () => {
  assert.deepEqual(new PodFeeder().feed([pod("a")], () => undefined), []);
});
