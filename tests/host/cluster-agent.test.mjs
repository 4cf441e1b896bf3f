// The node in a cluster, end to end inside one process: the real core component and agent loop on
// the in-memory FakeRuntime, joined to the strict fake apiserver over HTTP with a node token.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import { AgentLoop } from "../../dist/agent/agent-loop.js";
import { ApiClient } from "../../dist/cluster/api-client.js";
import { ClusterAgent } from "../../dist/cluster/cluster-agent.js";
import { CoreAgent, DEFAULT_CORE_CONFIG } from "../../dist/core/core.js";
import { FakeRuntime } from "../../dist/cri/fake-runtime.js";
import { MemoryLogger } from "../../dist/common/log.js";
import { PodTable } from "../../dist/agent/pod-table.js";
import { podFromManifest } from "../../dist/sources/manifest.js";
import { FakeApiServer } from "../apiserver/fake-apiserver.mjs";
import path from "node:path";

/** This file's own pod log directory: test files run side by side and share /tmp. */
const LOGS_DIR = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-test-logs-"));

const NODE = "n1";

async function until(what, fn, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function setup(t) {
  const api = await FakeApiServer.start({
    tokens: { node: { name: `system:node:${NODE}`, groups: ["system:nodes"] }, admin: { name: "admin", groups: ["system:masters"] } },
  });
  const admin = new ApiClient({ server: api.url, token: "admin" });
  const runtime = new FakeRuntime();
  runtime.images.add("busybox");
  const log = new MemoryLogger();
  let handlePodsCalls = 0;
  let cluster;
  const loop = new AgentLoop({
    runtime, log, podTable: new PodTable(NODE), podLogsDir: LOGS_DIR, cgroupRoot: "/nonexistent",
    core: { nodeName: NODE, ...DEFAULT_CORE_CONFIG, relistPeriodMs: 50 },
    onAction: (a) => cluster?.onAction(a),
    createCore: async (config) => {
      const core = await CoreAgent.create(config);
      const handlePods = core.handlePods.bind(core);
      core.handlePods = (now, pods) => (handlePodsCalls++, handlePods(now, pods));
      return core;
    },
  });
  await loop.start();
  cluster = new ClusterAgent({ client: new ApiClient({ server: api.url, token: "node" }), nodeName: NODE, log, loop, runtime, rootDir: os.tmpdir(), nodeIps: ["10.1.2.3"] });
  cluster.start();
  t.after(async () => {
    cluster.stop();
    loop.stop();
    admin.close();
    await api.stop();
  });
  return { api, admin, runtime, log, loop, cluster, calls: () => handlePodsCalls };
}

const podObject = (name, spec = {}) => ({
  metadata: { name, namespace: "default" },
  spec: { nodeName: NODE, hostNetwork: true, terminationGracePeriodSeconds: 1, containers: [{ name: "app", image: "busybox", command: ["sleep", "60"] }], ...spec },
});

test("a pod from the apiserver runs; the node's own status patches coming back do not feed the core again", async (t) => {
  const { api, admin, calls, cluster } = await setup(t);
  await until("the first list", () => cluster.reflector.listCount === 1);
  const initial = calls();
  await admin.request("POST", "/api/v1/namespaces/default/pods", podObject("web"));
  await until("the pod given to the core", () => calls() === initial + 1);
  const before = calls();
  await until("Running in the apiserver", () => api.get("pods", "default", "web")?.status?.phase === "Running");
  await new Promise((r) => setTimeout(r, 200));
  const patches = api.requests.filter((r) => r.method === "PATCH" && r.path.endsWith("/web/status")).length;
  assert.ok(patches >= 2, `${patches} status patches (Pending, then Running) came back through the watch`);
  assert.equal(calls(), before, "status-only changes are not given to the core");
  await admin.request("POST", "/api/v1/namespaces/default/pods", podObject("second"));
  await until("a real change is", () => calls() > before);
  assert.equal(api.get("pods", "default", "web").status.hostIP, "10.1.2.3");
  // A pod gone from the apiserver leaves nothing behind in the status manager.
  await until("second has a status", () => api.get("pods", "default", "second")?.status?.phase === "Running");
  assert.equal(cluster.statuses.size, 2);
  await admin.request("DELETE", "/api/v1/namespaces/default/pods/web", { gracePeriodSeconds: 0 });
  await until("web forgotten", () => cluster.statuses.size === 1);
});

test("a pod nanolet cannot run fails with the field named, and an event says why", async (t) => {
  const { api, admin } = await setup(t);
  await admin.request("POST", "/api/v1/namespaces/default/pods", podObject("withvolume", { volumes: [{ name: "data", nfs: { server: "nas", path: "/" } }] }));
  await until("Failed", () => api.get("pods", "default", "withvolume")?.status?.phase === "Failed");
  const status = api.get("pods", "default", "withvolume").status;
  assert.equal(status.reason, "UnsupportedPodSpec");
  assert.match(status.message, /spec\.volumes\[0\]\.nfs/);
  await until("FailedCreate event", () => api.store.list("events").items.some((e) => e.reason === "FailedCreate" && e.involvedObject.name === "withvolume"));
});

test("a static pod gets a mirror pod owned by the Node, which carries its status", async (t) => {
  const { api, cluster } = await setup(t);
  const manifest = { apiVersion: "v1", kind: "Pod", metadata: { name: "static", labels: { app: "s" } }, spec: { hostNetwork: true, containers: [{ name: "app", image: "busybox", command: ["sleep", "60"] }] } };
  const spec = podFromManifest(manifest, { nodeName: NODE, source: "/etc/kubernetes/manifests/static.yaml", documentIndex: 0 });
  cluster.setStaticPods({ pods: [{ spec, origin: "static.yaml", manifest }], problems: [] });
  await until("mirror pod Running", () => api.get("pods", "default", `static-${NODE}`)?.status?.phase === "Running");
  const mirror = api.get("pods", "default", `static-${NODE}`);
  assert.equal(mirror.metadata.annotations["kubernetes.io/config.mirror"], spec.uid);
  assert.equal(mirror.metadata.labels.app, "s");
  const node = api.get("nodes", undefined, NODE);
  assert.deepEqual(mirror.metadata.ownerReferences, [{ apiVersion: "v1", kind: "Node", name: NODE, uid: node.metadata.uid, controller: true }]);
  // Someone deletes the mirror pod: the node removes it and makes a new one.
  const admin = new ApiClient({ server: api.url, token: "admin" });
  t.after(() => admin.close());
  await admin.request("DELETE", `/api/v1/namespaces/default/pods/static-${NODE}`, { gracePeriodSeconds: 30 });
  await until("a new mirror pod", () => {
    const p = api.get("pods", "default", `static-${NODE}`);
    return p && p.metadata.uid !== mirror.metadata.uid && !p.metadata.deletionTimestamp;
  });
  cluster.setStaticPods({ pods: [], problems: [] });
  await until("mirror pod deleted", () => api.get("pods", "default", `static-${NODE}`) === undefined);
});

test("the node registers Ready, with the node events Starting and NodeReady", async (t) => {
  const { api } = await setup(t);
  await until("Ready", () => api.get("nodes", undefined, NODE)?.status?.conditions?.find((c) => c.type === "Ready")?.status === "True");
  await until("node events", () => {
    const reasons = api.store.list("events").items.filter((e) => e.involvedObject.kind === "Node" && e.involvedObject.name === NODE).map((e) => e.reason);
    return reasons.includes("Starting") && reasons.includes("NodeReady");
  });
  const node = api.get("nodes", undefined, NODE);
  assert.deepEqual(node.status.addresses[0], { type: "InternalIP", address: "10.1.2.3" });
  assert.equal(node.status.nodeInfo.containerRuntimeVersion, "fake://0.0.0");
});

test("an update the node cannot honour leaves the running pod alone, says why, and a deletion still goes through", async (t) => {
  const { api, admin, runtime, log } = await setup(t);
  await admin.request("POST", "/api/v1/namespaces/default/pods", podObject("web"));
  await until("Running", () => api.get("pods", "default", "web")?.status?.phase === "Running");
  const running = () => [...runtime.containers.values()].filter((c) => c.state === "running").map((c) => c.id);
  const before = running();
  assert.equal(before.length, 1);
  const patch = (body) => admin.request("PATCH", "/api/v1/namespaces/default/pods/web", body, "application/merge-patch+json");
  // The host cannot read it (a field nanolet does not implement)...
  await patch({ spec: { os: { name: "windows" } } });
  await until("the first refusal told", () => api.store.list("events").items.filter((e) => e.reason === "UpdateNotApplied").length === 1);
  // ...and the core refuses it (a debugger aimed at no container).
  await patch({ spec: { os: null, ephemeralContainers: [{ name: "dbg", image: "busybox", targetContainerName: "nope" }] } });
  await until("the second refusal told", () => api.store.list("events").items.filter((e) => e.reason === "UpdateNotApplied").length === 2);
  const told = api.store.list("events").items.filter((e) => e.reason === "UpdateNotApplied").map((e) => e.message);
  assert.match(told[0], /spec\.os/);
  assert.match(told[1], /spec\.ephemeralContainers\[0\]\.targetContainerName: Not found/);
  await new Promise((r) => setTimeout(r, 300)); // several relists
  assert.deepEqual(running(), before, "the app was never stopped");
  assert.equal(api.get("pods", "default", "web").status.phase, "Running");
  assert.equal(log.find((l) => l.msg === "Pod update not applied; the pod keeps running as it was").length, 2, "logged once per refused version");
  await admin.request("DELETE", "/api/v1/namespaces/default/pods/web", { gracePeriodSeconds: 1 });
  await until("the pod stopped and gone", () => running().length === 0 && api.get("pods", "default", "web") === undefined, 15_000);
});
