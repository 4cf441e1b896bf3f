// The status manager's pacing against the strict fake apiserver: a pod's statuses close together
// go as one patch, and a status between the steps of a start waits for the start to finish.
import assert from "node:assert/strict";
import test from "node:test";
import { ApiClient } from "../../dist/cluster/api-client.js";
import { StatusManager } from "../../dist/cluster/status-manager.js";
import { apiPodStatus, statusPatch } from "../../dist/cluster/api-status.js";
import { FakeApiServer } from "../apiserver/fake-apiserver.mjs";
import { coreStatus, pod, quiet, tokens, until } from "./cluster-fixtures.mjs";

/**
 * A status manager on its own clock (`clock.now`) for one seeded pod `web`, reporting what it sent;
 * `starting` says whether the pod is being started.
 */
async function pacedManager(t, { starting = () => false } = {}) {
  const api = await FakeApiServer.start({ tokens });
  t.after(() => api.stop());
  const stored = api.seed("pods", pod("web"));
  const client = new ApiClient({ server: api.url, token: "node" });
  t.after(() => client.close());
  const clock = { now: 1_000_000 };
  const sent = [];
  const target = { namespace: "default", name: "web", uid: stored.metadata.uid, deleting: false, hostNetwork: true };
  const manager = new StatusManager({
    client,
    log: quiet,
    targetOf: () => target,
    starting,
    context: () => ({ nodeIp: "10.0.0.5", runtimeName: "containerd", imageRefOf: () => undefined }),
    onSent: (_uid, version) => sent.push(version),
    nowMs: () => clock.now,
  });
  t.after(() => manager.stop());
  return { api, manager, target, sent, clock };
}

test("status manager: statuses closer together than half a second go as one patch, the newest; a pod being deleted is never held", async (t) => {
  const { api, manager, target, sent, clock } = await pacedManager(t);
  manager.setStatus("u", coreStatus(1n));
  await until("the first status, at once", () => sent.length === 1);
  // A start's next steps, 100 ms apart on the manager's clock: held, not sent.
  for (const version of [2n, 3n, 4n]) {
    clock.now += 100;
    manager.setStatus("u", coreStatus(version));
    await new Promise((r) => setImmediate(r));
  }
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(sent, [1n]);
  // Half a second after the first patch: the newest goes, the ones between never do.
  clock.now += 250;
  manager.requestFlush();
  await until("the newest sent", () => sent.length === 2);
  assert.deepEqual(sent, [1n, 4n]);
  assert.equal(api.requests.filter((r) => r.method === "PATCH").length, 2);
  // A pod being deleted: its statuses go at once.
  target.deleting = true;
  clock.now += 10;
  manager.setStatus("u", coreStatus(5n, { phase: "failed" }));
  await until("sent while deleting", () => sent.includes(5n));
});

test("status manager: while the pod's sandbox or containers are being started its newer status waits for them, 5 s at most", async (t) => {
  let starting = true;
  const { manager, sent, clock } = await pacedManager(t, { starting: () => starting });
  manager.setStatus("u", coreStatus(1n));
  await until("the first status goes though the pod is starting", () => sent.length === 1);
  clock.now += 1000;
  manager.setStatus("u", coreStatus(2n));
  await new Promise((r) => setTimeout(r, 250)); // a few rechecks, the start still under way
  assert.deepEqual(sent, [1n]);
  starting = false;
  await until("sent once the start is done", () => sent.length === 2);
  assert.deepEqual(sent, [1n, 2n]);
  // A start that lasts (a long pull): the status goes after 5 s all the same.
  starting = true;
  clock.now += 1000;
  manager.setStatus("u", coreStatus(3n));
  await new Promise((r) => setTimeout(r, 150));
  assert.deepEqual(sent, [1n, 2n]);
  clock.now += 5_000;
  await until("sent after 5 s of starting", () => sent.length === 3);
});

test("status patch: only what differs from the apiserver's copy goes; nothing differing, nothing is sent", () => {
  const ctx = { nodeIp: "10.0.0.5", runtimeName: "containerd", imageRefOf: () => "sha256:feed", hostNetwork: true };
  const status = apiPodStatus(coreStatus(1n), ctx);
  // The apiserver's JSON of what was sent: empty values left out, nulls gone.
  const held = JSON.parse(JSON.stringify(status, (_k, v) => (v === null || v === "" ? undefined : v)));
  const same = statusPatch("u", status, held);
  assert.deepEqual(same.status, {});
  // The container becomes unready: the Ready condition and the (atomic) container list go, nothing else.
  const unready = apiPodStatus(coreStatus(2n, {
    conditions: [{ conditionType: "ready", status: false, reason: "ContainersNotReady", message: "containers with unready status: [app]", lastTransitionMs: 1_764_000_100_000n }],
    containerStatuses: coreStatus(2n).containerStatuses.map((c) => ({ ...c, ready: false })),
  }), ctx);
  const diff = statusPatch("u", unready, held);
  assert.deepEqual(Object.keys(diff.status).sort(), ["conditions", "containerStatuses"]);
  assert.deepEqual(diff.status.conditions.map((c) => [c.type, c.status]), [["Ready", "False"]]);
  assert.equal(diff.status.containerStatuses[0].ready, false);
  assert.deepEqual(diff.metadata, { uid: "u" });
  // A reason the apiserver holds and the status clears goes as null; one it does not hold, not at all.
  const cleared = statusPatch("u", { ...status, reason: null }, { ...held, reason: "Evicted" });
  assert.equal(cleared.status.reason, null);
  assert.equal("reason" in statusPatch("u", { ...status, reason: null }, held).status, false);
  // An empty object is something the apiserver keeps (the pod's `resources: {}`), not nothing.
  const { resources: _r, ...withoutResources } = held;
  assert.deepEqual(statusPatch("u", { ...status, resources: {} }, withoutResources).status, { resources: {} });
  // Nothing known of the apiserver's copy: everything goes, the IP lists replacing.
  const full = statusPatch("u", status);
  assert.equal(full.status.phase, "Running");
  assert.deepEqual(full.status.hostIPs, [{ ip: "10.0.0.5" }, { $patch: "replace" }]);
});
