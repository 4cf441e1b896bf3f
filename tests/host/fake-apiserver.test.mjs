// The fake apiserver the cluster tests use must refuse what the real one refuses: these tests
// hold it to the real one's rules (KUBELET-FACTS.md, "What a real kube-apiserver demands").
import assert from "node:assert/strict";
import test from "node:test";
import { FakeApiServer } from "../apiserver/fake-apiserver.mjs";

const TOKENS = {
  admin: { name: "admin", groups: ["system:masters"] },
  "node-a": { name: "system:node:a", groups: ["system:nodes", "system:authenticated"] },
  "node-b": { name: "system:node:b", groups: ["system:nodes", "system:authenticated"] },
  "not-a-node": { name: "system:node:a", groups: ["system:authenticated"] },
};

function client(api, token) {
  return async (method, path, body, contentType = "application/json") => {
    const res = await fetch(api.url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { "content-type": contentType } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { code: res.status, body: text ? JSON.parse(text) : undefined };
  };
}

const pod = (name, nodeName, extra = {}) => ({
  metadata: { name, namespace: "default", ...extra.metadata },
  spec: { nodeName, containers: [{ name: "app", image: "busybox" }], ...extra.spec },
});

async function setup(t, options = {}) {
  const api = await FakeApiServer.start({ tokens: TOKENS, ...options });
  t.after(() => api.stop());
  return { api, admin: client(api, "admin"), a: client(api, "node-a"), b: client(api, "node-b") };
}

test("authentication: no token or an unknown one is 401", async (t) => {
  const { api } = await setup(t);
  assert.equal((await fetch(`${api.url}/api/v1/nodes`)).status, 401);
  assert.equal((await client(api, "nope")("GET", "/api/v1/nodes")).code, 401);
  await api.stop();
});

test("a node lists and watches only its own pods, by field selector", async (t) => {
  const { api, admin, a } = await setup(t);
  await admin("POST", "/api/v1/namespaces/default/pods", pod("on-a", "a"));
  await admin("POST", "/api/v1/namespaces/default/pods", pod("on-b", "b"));
  const all = await a("GET", "/api/v1/pods");
  assert.equal(all.code, 403);
  assert.match(all.body.message, /can only list\/watch pods with spec.nodeName field selector/);
  assert.equal((await a("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Db")).code, 403);
  const mine = await a("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Da");
  assert.equal(mine.code, 200);
  assert.deepEqual(mine.body.items.map((p) => p.metadata.name), ["on-a"]);
  assert.equal(mine.body.kind, "PodList");
  assert.match(mine.body.metadata.resourceVersion, /^\d+$/);
  assert.equal((await a("GET", "/api/v1/pods?fieldSelector=spec.nodeNam%3Da")).code, 400);
  assert.equal((await a("GET", "/api/v1/namespaces/default/pods/on-b")).code, 403);
  assert.equal((await a("GET", "/api/v1/namespaces/default/pods/on-a")).code, 200);
  await api.stop();
});

test("a node modifies only its own Node; only nodes may act as nodes", async (t) => {
  const { api, a, b } = await setup(t);
  assert.equal((await a("POST", "/api/v1/nodes", { metadata: { name: "a" } })).code, 201);
  assert.equal((await b("POST", "/api/v1/nodes", { metadata: { name: "b" } })).code, 201);
  const other = await a("PATCH", "/api/v1/nodes/b/status", { status: { conditions: [{ type: "Ready", status: "True" }] } }, "application/strategic-merge-patch+json");
  assert.equal(other.code, 403);
  assert.match(other.body.message, /node "a" is not allowed to modify node "b"/);
  const own = await a("PATCH", "/api/v1/nodes/a/status", { status: { conditions: [{ type: "Ready", status: "True" }] } }, "application/strategic-merge-patch+json");
  assert.equal(own.code, 200);
  assert.equal(own.body.status.conditions[0].status, "True");
  assert.equal((await client(api, "not-a-node")("GET", "/api/v1/nodes/a")).code, 403);
  await api.stop();
});

test("status patches: by strategic merge, status only, with a uid precondition; a node cannot read pods/status", async (t) => {
  const { api, admin, a } = await setup(t);
  const created = (await admin("POST", "/api/v1/namespaces/default/pods", pod("web", "a"))).body;
  const uid = created.metadata.uid;
  const smp = "application/strategic-merge-patch+json";
  let r = await a("PATCH", "/api/v1/namespaces/default/pods/web/status", {
    metadata: { uid },
    status: { phase: "Running", conditions: [{ type: "Ready", status: "False" }, { type: "PodScheduled", status: "True" }] },
  }, smp);
  assert.equal(r.code, 200);
  r = await a("PATCH", "/api/v1/namespaces/default/pods/web/status", {
    metadata: { uid },
    spec: { nodeName: "elsewhere" },
    status: { "$setElementOrder/conditions": [{ type: "PodScheduled" }, { type: "Ready" }], conditions: [{ type: "Ready", status: "True" }] },
  }, smp);
  assert.equal(r.code, 200);
  assert.deepEqual(r.body.status.conditions, [{ type: "PodScheduled", status: "True" }, { type: "Ready", status: "True" }]);
  assert.equal(r.body.spec.nodeName, "a", "a status patch does not change the spec");
  assert.equal(r.body.status.phase, "Running");
  const wrongUid = await a("PATCH", "/api/v1/namespaces/default/pods/web/status", { metadata: { uid: "other" }, status: { phase: "Failed" } }, smp);
  assert.equal(wrongUid.code, 409);
  assert.match(wrongUid.body.message, /Precondition failed: UID in precondition: other/);
  assert.equal((await a("GET", "/api/v1/namespaces/default/pods/web/status")).code, 403);
  assert.equal((await admin("GET", "/api/v1/namespaces/default/pods/web/status")).code, 200);
  assert.equal((await a("PATCH", "/api/v1/namespaces/default/pods/web/status", [{ op: "add" }], "application/json-patch+json")).code, 415);
  assert.equal((await a("PATCH", "/api/v1/namespaces/default/pods/web", { metadata: { labels: { x: "y" } } }, smp)).code, 403);
  await api.stop();
});

test("status validation: IPs agree, container names exist, one state each, no way back from a terminal phase", async (t) => {
  const { api, admin, a } = await setup(t);
  await admin("POST", "/api/v1/namespaces/default/pods", pod("web", "a"));
  const smp = "application/strategic-merge-patch+json";
  const patch = (status) => a("PATCH", "/api/v1/namespaces/default/pods/web/status", { status }, smp);
  const name = (await api.get("pods", "default", "web")).spec.containers[0].name;
  const refusals = [
    [{ podIP: "10.0.0.1", podIPs: [{ ip: "10.0.0.2" }] }, /status\.podIPs\[0\]\.ip: Invalid value/],
    [{ hostIP: "10.0.0.1" }, /status\.hostIPs: Required value/],
    [{ containerStatuses: [{ name: "nope", restartCount: 0, state: {} }] }, /containerStatuses\[0\]\.name: Not found/],
    [{ containerStatuses: [{ name, restartCount: -1, state: {} }] }, /restartCount: Invalid value/],
    [{ containerStatuses: [{ name, restartCount: 0, state: { running: {}, waiting: {} } }] }, /more than 1 state type/],
  ];
  for (const [status, message] of refusals) {
    const r = await patch(status);
    assert.equal(r.code, 422, JSON.stringify(status));
    assert.match(r.body.message, message);
  }
  assert.equal((await patch({ phase: "Failed", hostIP: "10.0.0.1", hostIPs: [{ ip: "10.0.0.1" }] })).code, 200);
  const back = await patch({ phase: "Running" });
  assert.equal(back.code, 422);
  assert.match(back.body.message, /cannot transition from terminal phase Failed/);
  await api.stop();
});

test("resourceVersion: an update from a stale version is a conflict", async (t) => {
  const { api, a } = await setup(t);
  const lease = { metadata: { name: "a", namespace: "kube-node-lease" }, spec: { holderIdentity: "a", leaseDurationSeconds: 40 } };
  const created = await a("POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", lease);
  assert.equal(created.code, 201);
  const renewed = await a("PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/a", { ...created.body, spec: { ...created.body.spec, renewTime: "2026-12-03T00:00:00.000000Z" } });
  assert.equal(renewed.code, 200);
  assert.notEqual(renewed.body.metadata.resourceVersion, created.body.metadata.resourceVersion);
  const stale = await a("PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/a", { ...created.body, spec: { ...created.body.spec, renewTime: "2026-12-03T00:00:10.000000Z" } });
  assert.equal(stale.code, 409);
  assert.equal(stale.body.reason, "Conflict");
  await api.stop();
});

test("leases: only the node's own, only in kube-node-lease", async (t) => {
  const { api, a } = await setup(t);
  const lease = (name, namespace = "kube-node-lease") => ({ metadata: { name, namespace }, spec: { holderIdentity: name } });
  assert.equal((await a("POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", lease("b"))).code, 403);
  assert.equal((await a("POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases", lease("a", "default"))).code, 403);
  assert.equal((await a("POST", "/api/v1/namespaces/kube-node-lease/leases", lease("a"))).code, 404, "leases live in coordination.k8s.io");
  assert.equal((await a("POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", lease("a"))).code, 201);
  await api.stop();
});

test("mirror pods: a node may create only annotated pods bound to itself", async (t) => {
  const { api, a } = await setup(t);
  const plain = await a("POST", "/api/v1/namespaces/default/pods", pod("static-a", "a"));
  assert.equal(plain.code, 403);
  assert.match(plain.body.message, /can only create mirror pods/);
  const mirror = (node) => pod("static-a", node, { metadata: { annotations: { "kubernetes.io/config.mirror": "hash" } } });
  assert.equal((await a("POST", "/api/v1/namespaces/default/pods", mirror("b"))).code, 403);
  assert.equal((await a("POST", "/api/v1/namespaces/default/pods", mirror("a"))).code, 201);
  assert.equal((await a("POST", "/api/v1/namespaces/default/pods", mirror("a"))).code, 409);
  // An owner reference must be the node itself, as its controller; no service account.
  const node = (await a("POST", "/api/v1/nodes", { metadata: { name: "a" } })).body;
  const owned = (name, owner, spec = {}) => pod(name, "a", { metadata: { annotations: { "kubernetes.io/config.mirror": "h" }, ownerReferences: [owner] }, spec });
  const self = { apiVersion: "v1", kind: "Node", name: "a", uid: node.metadata.uid, controller: true };
  assert.equal((await a("POST", "/api/v1/namespaces/default/pods", owned("m1", self))).code, 201);
  assert.match((await a("POST", "/api/v1/namespaces/default/pods", owned("m2", { ...self, name: "b" }))).body.message, /owner reference set to itself/);
  assert.match((await a("POST", "/api/v1/namespaces/default/pods", owned("m3", { ...self, controller: false }))).body.message, /controller owner reference/);
  assert.match((await a("POST", "/api/v1/namespaces/default/pods", owned("m4", { ...self, uid: "other" }))).body.message, /does not match the current UID/);
  assert.match((await a("POST", "/api/v1/namespaces/default/pods", owned("m5", self, { serviceAccountName: "x" }))).body.message, /reference a service account/);
  await api.stop();
});

test("graceful deletion: a deletionTimestamp first, then the node deletes with grace 0 and a uid precondition", async (t) => {
  const { api, admin, a } = await setup(t);
  const created = (await admin("POST", "/api/v1/namespaces/default/pods", pod("web", "a", { spec: { terminationGracePeriodSeconds: 5 } }))).body;
  const graceful = await admin("DELETE", "/api/v1/namespaces/default/pods/web");
  assert.equal(graceful.code, 200);
  assert.equal(graceful.body.metadata.deletionGracePeriodSeconds, 5);
  assert.ok(graceful.body.metadata.deletionTimestamp);
  assert.ok(api.get("pods", "default", "web"), "still there until its kubelet finishes");
  const wrong = await a("DELETE", "/api/v1/namespaces/default/pods/web", { gracePeriodSeconds: 0, preconditions: { uid: "not-it" } });
  assert.equal(wrong.code, 409);
  const done = await a("DELETE", "/api/v1/namespaces/default/pods/web", { gracePeriodSeconds: 0, preconditions: { uid: created.metadata.uid } });
  assert.equal(done.code, 200);
  assert.equal(api.get("pods", "default", "web"), undefined);
  assert.equal((await a("DELETE", "/api/v1/namespaces/default/pods/web", { gracePeriodSeconds: 0 })).code, 403, "gone: no relationship left");
  await api.stop();
});

/** Opens a watch and collects its events until `stop`. */
function watch(api, token, path) {
  const events = [];
  const controller = new AbortController();
  const done = (async () => {
    const res = await fetch(api.url + path, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of res.body) {
        buffer += decoder.decode(chunk, { stream: true });
        let nl;
        while ((nl = buffer.indexOf("\n")) >= 0) {
          events.push(JSON.parse(buffer.slice(0, nl)));
          buffer = buffer.slice(nl + 1);
        }
      }
    } catch (error) {
      if (error.name !== "AbortError") throw error;
    }
  })();
  return { events, stop: () => controller.abort(), done };
}

const until = async (what, fn, ms = 3000) => {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

test("watch: events from a version for the node's pods, bookmarks, and 410 Gone after compaction", async (t) => {
  const { api, admin } = await setup(t, { bookmarkIntervalMs: 50 });
  const first = (await admin("POST", "/api/v1/namespaces/default/pods", pod("one", "a"))).body;
  const list = (await admin("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Da")).body;
  const w = watch(api, "node-a", `/api/v1/pods?fieldSelector=spec.nodeName%3Da&watch=1&allowWatchBookmarks=true&resourceVersion=${list.metadata.resourceVersion}`);
  await new Promise((r) => setTimeout(r, 20));
  await admin("POST", "/api/v1/namespaces/default/pods", pod("two", "a"));
  await admin("POST", "/api/v1/namespaces/default/pods", pod("elsewhere", "b"));
  await admin("DELETE", "/api/v1/namespaces/default/pods/one");
  await until("events", () => w.events.filter((e) => e.type !== "BOOKMARK").length >= 2 && w.events.some((e) => e.type === "BOOKMARK"));
  const changes = w.events.filter((e) => e.type !== "BOOKMARK").map((e) => `${e.type} ${e.object.metadata.name}`);
  assert.deepEqual(changes, ["ADDED two", "MODIFIED one"], "graceful delete of a bound pod is a modification");
  const bookmark = w.events.find((e) => e.type === "BOOKMARK");
  assert.equal(bookmark.object.kind, "Pod");
  assert.match(bookmark.object.metadata.resourceVersion, /^\d+$/);
  w.stop();
  await w.done;
  api.compact();
  const old = watch(api, "node-a", `/api/v1/pods?fieldSelector=spec.nodeName%3Da&watch=1&resourceVersion=${first.metadata.resourceVersion}`);
  await old.done;
  assert.equal(old.events.length, 1);
  assert.equal(old.events[0].type, "ERROR");
  assert.equal(old.events[0].object.code, 410);
  assert.equal(old.events[0].object.reason, "Expired");
  await api.stop();
});

test("an outage: stopped, nothing answers; started, the same port and objects are back", async (t) => {
  const { api, admin } = await setup(t);
  await admin("POST", "/api/v1/nodes", { metadata: { name: "a" } });
  const w = watch(api, "admin", "/api/v1/nodes?watch=1");
  await until("the initial ADDED", () => w.events.length === 1);
  const url = api.url;
  await api.stop();
  await w.done.catch(() => {});
  await assert.rejects(fetch(`${url}/api/v1/nodes`, { headers: { authorization: "Bearer admin" } }));
  await api.start();
  assert.equal(api.url, url);
  assert.equal((await admin("GET", "/api/v1/nodes/a")).code, 200);
  await api.stop();
});
