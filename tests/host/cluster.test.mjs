// The cluster side of the host against the strict fake apiserver: the pod reflector (bookmarks,
// 410 Gone, reconnects), the status manager (patch shape, versions, retries, deletion), status
// conversion, node conditions and events.
import assert from "node:assert/strict";
import test from "node:test";
import { ApiClient } from "../../dist/cluster/api-client.js";
import { apiPodStatus, statusPatch } from "../../dist/cluster/api-status.js";
import { EventRecorder } from "../../dist/cluster/events.js";
import { readyCondition } from "../../dist/cluster/node-object.js";
import { PodReflector } from "../../dist/cluster/pod-reflector.js";
import { StatusManager } from "../../dist/cluster/status-manager.js";
import { FakeApiServer } from "../apiserver/fake-apiserver.mjs";

import { NODE, coreStatus, pod, quiet, tokens, until } from "./cluster-fixtures.mjs";

test("reflector: lists with the node's field selector, follows the watch, relists on 410 Gone; after an outage it watches on from where it was", async (t) => {
  const api = await FakeApiServer.start({ tokens });
  t.after(() => api.stop());
  api.seed("pods", pod("mine"));
  api.seed("pods", pod("other", "n2"));
  const client = new ApiClient({ server: api.url, token: "node" });
  t.after(() => client.close());
  let seen = [];
  const reflector = new PodReflector({ client, nodeName: NODE, log: quiet, onPods: (pods) => (seen = pods.map((p) => p.metadata.name).sort()) });
  reflector.start();
  t.after(() => reflector.stop());
  await until("first list", () => seen.length === 1);
  assert.deepEqual(seen, ["mine"], "only pods bound to this node");
  api.seed("pods", pod("second"));
  await until("watch delivers a new pod", () => seen.includes("second"));
  // Another node's pod moves the store on without this node's watch seeing it; history is then
  // compacted and the watch cut: the next watch, from the older version, gets 410 Gone and the
  // reflector lists again.
  const listsBefore = reflector.listCount;
  api.seed("pods", pod("elsewhere", "n2"));
  api.compact();
  for (const w of api.watches) w.end();
  await until("relist after 410", () => reflector.listCount > listsBefore);
  // An outage: pods stay as they were; a pod added meanwhile is seen after reconnecting.
  await api.stop();
  api.seed("pods", pod("third"));
  await until("reflector notices the outage", () => !reflector.connected);
  assert.deepEqual(seen, ["mine", "second"]);
  const listsBeforeOutageEnd = reflector.listCount;
  const requestsBefore = api.requests.length;
  await api.start();
  await until("reconnected: the pod added meanwhile seen", () => seen.includes("third"), 15_000);
  await until("connected again", () => reflector.connected);
  // The window was still there: the watch went on from its resourceVersion, nothing listed again.
  assert.equal(reflector.listCount, listsBeforeOutageEnd);
  assert.ok(api.requests.slice(requestsBefore).every((r) => r.path.includes("watch=1")), "only watches after the outage");
});

test("status manager: one strategic merge patch with the uid per version, never a GET; retried after an outage; deletion after the final status", async (t) => {
  const api = await FakeApiServer.start({ tokens });
  t.after(() => api.stop());
  const stored = api.seed("pods", pod("web"));
  const client = new ApiClient({ server: api.url, token: "node" });
  t.after(() => client.close());
  const target = { namespace: "default", name: "web", uid: stored.metadata.uid, deleting: false, hostNetwork: true, generation: stored.metadata.generation };
  const sent = [];
  const manager = new StatusManager({
    client,
    log: quiet,
    targetOf: (uid) => (uid === "core-uid" ? target : undefined),
    context: () => ({ nodeIp: "10.0.0.5", runtimeName: "containerd", imageRefOf: () => "sha256:feed" }),
    onSent: (_uid, version) => sent.push(version),
  });
  t.after(() => manager.stop());
  const unready = { conditions: [{ conditionType: "ready", status: false, reason: "ContainersNotReady", message: "containers with unready status: [app]", lastTransitionMs: 1_764_000_000_000n }] };
  manager.setStatus("core-uid", coreStatus(1n, unready));
  await until("patched", () => sent.length === 1);
  assert.equal(api.get("pods", "default", "web").status.conditions.find((c) => c.type === "Ready").reason, "ContainersNotReady");
  manager.setStatus("core-uid", coreStatus(2n, unready));
  manager.setStatus("core-uid", coreStatus(3n)); // same turn: only the newest goes
  manager.setStatus("core-uid", coreStatus(1n)); // older: ignored
  await until("patched", () => sent.length === 2);
  assert.deepEqual(sent, [1n, 3n]);
  const ready = api.get("pods", "default", "web").status.conditions.find((c) => c.type === "Ready");
  assert.equal(ready.status, "True");
  assert.equal(ready.reason, undefined, "the reason of the unready condition is gone");
  assert.equal(ready.message, undefined);
  const status = api.get("pods", "default", "web").status;
  assert.equal(status.phase, "Running");
  assert.equal(status.hostIP, "10.0.0.5");
  assert.equal(status.podIP, "10.0.0.5");
  assert.equal(status.containerStatuses[0].containerID, "containerd://abc");
  assert.equal(status.containerStatuses[0].imageID, "sha256:feed");
  assert.equal(status.containerStatuses[0].lastState.terminated.exitCode, 3);
  assert.equal(status.conditions.find((c) => c.type === "Ready").status, "True");
  assert.equal(stored.metadata.generation, 1);
  assert.equal(status.observedGeneration, 1, "the spec generation the status was made for");
  assert.equal(status.conditions.find((c) => c.type === "Ready").observedGeneration, 1);
  const patches = api.requests.filter((r) => r.method === "PATCH");
  assert.equal(patches.length, 2);
  assert.ok(patches.every((r) => r.metadataOnly), "the patched pod's metadata is all the answer brings back");
  assert.ok(!api.requests.some((r) => r.method === "GET"), "no read before the patch");

  // An outage: the status waits and goes out once the apiserver is back.
  await api.stop();
  manager.setStatus("core-uid", coreStatus(4n, { phase: "failed" }));
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(manager.pendingCount, 1);
  await api.start();
  manager.requestFlush(); // what the reflector's reconnect does
  await until("sent after the outage", () => sent.includes(4n));
  assert.equal(api.get("pods", "default", "web").status.phase, "Failed");

  // Deletion: marked by the apiserver, then the final status, then a grace-0 delete with the uid.
  await new ApiClient({ server: api.url, token: "admin" }).request("DELETE", "/api/v1/namespaces/default/pods/web", { gracePeriodSeconds: 30 });
  target.deleting = true;
  manager.setStatus("core-uid", coreStatus(5n, { phase: "failed", finished: true }));
  await until("deleted", () => api.get("pods", "default", "web") === undefined);
  const del = api.requests.filter((r) => r.method === "DELETE" && r.user === `system:node:${NODE}`);
  assert.equal(del.length, 1);
});

test("status conversion: waiting with its reason, terminated with times; the apiserver's startTime and transition times win", () => {
  const ctx = { nodeIp: "10.0.0.5", runtimeName: "containerd", imageRefOf: () => undefined, hostNetwork: false };
  const waiting = coreStatus(1n);
  waiting.containerStatuses[0] = { ...waiting.containerStatuses[0], state: "waiting", reason: "CrashLoopBackOff", message: "back-off 10s", ready: false, started: false };
  const out = apiPodStatus(waiting, { ...ctx, current: { startTime: "2020-01-01T00:00:00Z", conditions: [{ type: "Ready", status: "True", lastTransitionTime: "2020-01-01T00:00:01Z" }] } });
  assert.deepEqual(out.containerStatuses[0].state, { waiting: { reason: "CrashLoopBackOff", message: "back-off 10s" } });
  assert.equal(out.startTime, "2020-01-01T00:00:00Z");
  assert.equal(out.conditions[0].lastTransitionTime, "2020-01-01T00:00:01Z");
  assert.equal(out.podIP, undefined, "a pod-network pod's IP is not the node's");
  const done = coreStatus(1n);
  done.containerStatuses[0] = { ...done.containerStatuses[0], state: "terminated", exitCode: 0, reason: "Completed", finishedAtNs: 1_764_000_001_500_000_000n, lastState: undefined };
  const t = apiPodStatus(done, ctx).containerStatuses[0];
  assert.deepEqual(t.state.terminated, { exitCode: 0, reason: "Completed", message: undefined, startedAt: "2025-11-24T16:00:00Z", finishedAt: "2025-11-24T16:00:01Z", containerID: "containerd://abc" });
  assert.deepEqual(t.lastState, {});
});

test("status conversion: allocated and applied resources; a resize condition the core dropped is deleted by the patch", () => {
  const ctx = { nodeIp: "10.0.0.5", runtimeName: "containerd", imageRefOf: () => undefined, hostNetwork: true };
  const out = apiPodStatus(coreStatus(1n), { ...ctx, current: { conditions: [{ type: "PodResizeInProgress", status: "True" }, { type: "Ready", status: "True" }] } });
  const c = out.containerStatuses[0];
  assert.deepEqual(c.allocatedResources, { memory: "64Mi" });
  assert.deepEqual(c.resources, { requests: { memory: "32Mi" }, limits: { memory: "64Mi", cpu: "500m" } });
  assert.equal(out.conditions.find((k) => k.type === "PodResizeInProgress"), undefined, "the status does not have it");
  const patch = statusPatch("u", out, { conditions: [{ type: "PodResizeInProgress", status: "True" }, { type: "Ready", status: "True" }] });
  assert.deepEqual(patch.status.conditions.find((k) => k.type === "PodResizeInProgress"), { type: "PodResizeInProgress", $patch: "delete" }, "the patch deletes it");
  assert.deepEqual(patch.status.hostIPs, [{ ip: "10.0.0.5" }, { $patch: "replace" }], "the node's IPs replace what the apiserver holds");
  const resizing = coreStatus(2n, { conditions: [{ conditionType: "pod-resize-in-progress", status: true, reason: "", message: "", lastTransitionMs: 1_764_000_000_000n }] });
  const held = apiPodStatus(resizing, { ...ctx, current: { conditions: [{ type: "PodResizeInProgress", status: "True" }] } });
  assert.equal(held.conditions.length, 1);
  assert.equal(held.conditions[0].status, "True");
  const evicted = coreStatus(3n, { phase: "failed", reason: "Evicted", message: "The node was low on resource: memory. ",
    conditions: [{ conditionType: "disruption-target", status: true, reason: "TerminationByKubelet", message: "The node was low on resource: memory. ", lastTransitionMs: 1_764_000_000_000n }] });
  const e = apiPodStatus(evicted, ctx);
  assert.equal(e.reason, "Evicted");
  assert.equal(e.conditions[0].type, "DisruptionTarget");
  assert.equal(e.conditions[0].reason, "TerminationByKubelet");
});

test("node Ready: runtime down, network not ready and an unhealthy PLEG each say why", () => {
  const now = 1_000_000_000;
  assert.equal(readyCondition({ runtimeReady: true, networkReady: true, lastRelistOkMs: now - 1000 }, now).status, "True");
  const down = readyCondition({ lastRelistOkMs: now }, now);
  assert.equal(down.status, "False");
  assert.equal(down.reason, "KubeletNotReady");
  assert.match(down.message, /container runtime is down/);
  assert.match(readyCondition({ runtimeReady: true, networkReady: false, networkMessage: "NetworkPluginNotReady: cni plugin not initialized", lastRelistOkMs: now }, now).message, /container runtime network not ready/);
  assert.match(readyCondition({ runtimeReady: true, networkReady: true, lastRelistOkMs: now - 200_000 }, now).message, /PLEG is not healthy: pleg was last seen active 3m20s ago; threshold is 3m0s/);
  // While runtime events drive the relists (one every 5 min), upstream's evented threshold: 10 min.
  const evented = { runtimeReady: true, networkReady: true, plegThresholdMs: 600_000 };
  assert.equal(readyCondition({ ...evented, lastRelistOkMs: now - 400_000 }, now).status, "True");
  assert.match(readyCondition({ ...evented, lastRelistOkMs: now - 610_000 }, now).message, /PLEG is not healthy: pleg was last seen active 10m10s ago; threshold is 10m0s/);
});

test("events: repeats are aggregated into one Event with a count; a spamming event is cut off after its burst, others of the pod pass", async (t) => {
  const api = await FakeApiServer.start({ tokens });
  t.after(() => api.stop());
  const client = new ApiClient({ server: api.url, token: "node" });
  t.after(() => client.close());
  const recorder = new EventRecorder(client, NODE, quiet, () => 1_764_000_000_000);
  const e = { namespace: "default", podName: "web", podUid: "u1", containerName: "app", type: "Warning", reason: "BackOff", message: "Back-off restarting failed container app" };
  for (let i = 0; i < 3; i++) recorder.record(e);
  await until("sent", () => recorder.sentCount === 3);
  const events = api.store.list("events").items;
  assert.equal(events.length, 1);
  assert.equal(events[0].count, 3);
  assert.equal(events[0].involvedObject.fieldPath, "spec.containers{app}");
  assert.equal(events[0].source.host, NODE);
  for (let i = 0; i < 40; i++) recorder.record(e);
  await until("settled", () => recorder.sentCount + recorder.droppedCount === 43);
  assert.equal(recorder.droppedCount, 40 - 22, "25 of one kind per object (client-go's spam key): 3 used, 22 more, the rest dropped");
  assert.equal(api.store.list("events").items[0].count, 25);
  // Other events of the same pod are not held back by a spamming one.
  recorder.record({ ...e, type: "Normal", reason: "Killing", message: "Stopping container app" });
  await until("the other kind sent", () => recorder.sentCount === 26);
});

test("status manager: after the core is replaced, its statuses (versions from 1 again) are sent", async (t) => {
  const api = await FakeApiServer.start({ tokens });
  t.after(() => api.stop());
  const stored = api.seed("pods", pod("web"));
  const client = new ApiClient({ server: api.url, token: "node" });
  t.after(() => client.close());
  const sent = [];
  const manager = new StatusManager({
    client,
    log: quiet,
    targetOf: () => ({ namespace: "default", name: "web", uid: stored.metadata.uid, deleting: false, hostNetwork: true }),
    context: () => ({ nodeIp: "10.0.0.5", runtimeName: "containerd", imageRefOf: () => undefined }),
    onSent: (_uid, version) => sent.push(version),
  });
  t.after(() => manager.stop());
  manager.setStatus("u", coreStatus(7n));
  await until("first", () => sent.length === 1);
  manager.setStatus("u", coreStatus(1n, { phase: "failed" }));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(sent.length, 1, "an older version from the same core is ignored");
  manager.resetVersions();
  manager.setStatus("u", coreStatus(1n, { phase: "failed" }));
  await until("the new core's first status", () => sent.length === 2);
  assert.equal(api.get("pods", "default", "web").status.phase, "Failed");
});

test("status manager: the periodic sync sends a status again when the apiserver's copy says otherwise", async (t) => {
  const api = await FakeApiServer.start({ tokens });
  t.after(() => api.stop());
  const stored = api.seed("pods", pod("web"));
  const client = new ApiClient({ server: api.url, token: "node" });
  const admin = new ApiClient({ server: api.url, token: "admin" });
  t.after(() => (client.close(), admin.close()));
  let now = 1_000_000;
  const target = { namespace: "default", name: "web", uid: stored.metadata.uid, deleting: false, hostNetwork: true };
  const manager = new StatusManager({ client, log: quiet, targetOf: () => target, context: () => ({ nodeIp: "10.0.0.5", runtimeName: "containerd", imageRefOf: () => undefined }), nowMs: () => now });
  t.after(() => manager.stop());
  manager.setStatus("u", coreStatus(1n));
  await until("sent", () => manager.patchCount === 1);
  target.current = api.get("pods", "default", "web").status;
  now += 11_000;
  manager.sync();
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(manager.patchCount, 1, "the apiserver says what was sent: nothing to do");
  // Someone else rewrites the status.
  await admin.request("PATCH", "/api/v1/namespaces/default/pods/web/status", { status: { phase: "Pending", containerStatuses: [] } }, "application/merge-patch+json");
  target.current = api.get("pods", "default", "web").status;
  now += 11_000;
  manager.sync();
  await until("sent again", () => manager.patchCount === 2);
  assert.equal(api.get("pods", "default", "web").status.phase, "Running");
});

test("reflector: a watch silent past its idle limit is given up and opened again from where it was, not listed again", async (t) => {
  const api = await FakeApiServer.start({ tokens }); // bookmarks only every minute: the watch stays silent
  t.after(() => api.stop());
  api.seed("pods", pod("mine"));
  const client = new ApiClient({ server: api.url, token: "node" });
  t.after(() => client.close());
  const reflector = new PodReflector({ client, nodeName: NODE, log: quiet, onPods: () => {}, watchIdleTimeoutMs: 150 });
  reflector.start();
  t.after(() => reflector.stop());
  await until("watched again after a silent watch", () => api.requests.filter((r) => r.path.includes("watch=1")).length >= 2, 5_000);
  const watches = api.requests.filter((r) => r.path.includes("watch=1"));
  const listed = api.requests.find((r) => !r.path.includes("watch=1"));
  assert.ok(listed, "one list first");
  const from = (r) => new URL(r.path, "http://x").searchParams.get("resourceVersion");
  assert.equal(from(watches[1]), from(watches[0]), "the second watch goes on from the first one's resourceVersion");
  assert.equal(reflector.listCount, 1);
  assert.equal(api.requests.filter((r) => !r.path.includes("watch=1")).length, 1, "no second list");
});

test("reflector: a broken watch stream and a pod update that fails are contained", async (t) => {
  const http = await import("node:http");
  let lists = 0;
  const server = http.createServer((req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    if (!req.url.includes("watch=1")) {
      lists++;
      return res.end(JSON.stringify({ metadata: { resourceVersion: "1" }, items: [{ metadata: { name: "no-uid" } }, { metadata: { name: "ok", uid: "u1" } }] }));
    }
    res.write('{"type":"ADDED","object":{"metadata":{"name":"x","uid":"u2","resourceVersion":"2"}}}\n');
    res.end("this is not JSON\n");
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  t.after(() => server.close());
  const client = new ApiClient({ server: `http://127.0.0.1:${server.address().port}`, token: "node" });
  t.after(() => client.close());
  const seen = [];
  const reflector = new PodReflector({
    client, nodeName: NODE, log: quiet,
    onPods: (pods) => {
      seen.push(pods.map((p) => p.metadata.uid).sort().join(","));
      if (pods.length === 2) throw new Error("a bug in the consumer");
    },
  });
  reflector.start();
  t.after(() => reflector.stop());
  await until("listed again after the bad stream", () => lists >= 2, 5_000);
  assert.equal(seen[0], "u1", "the pod without a uid is left out");
  assert.ok(seen.includes("u1,u2"), "the watch event before the bad line was applied");
});

test("status manager: a replaced sandbox's new IP replaces the old one in the apiserver, whatever it held", async (t) => {
  const api = await FakeApiServer.start({ tokens });
  t.after(() => api.stop());
  const stored = api.seed("pods", pod("sbx"));
  const client = new ApiClient({ server: api.url, token: "node" });
  t.after(() => client.close());
  const ipOf = { sb1: "10.91.0.14", sb2: "10.91.0.15" };
  // No `current`: as after an agent start while the apiserver was away.
  const target = { namespace: "default", name: "sbx", uid: stored.metadata.uid, deleting: false, hostNetwork: false };
  const manager = new StatusManager({ client, log: quiet, targetOf: () => target, context: () => ({ nodeIp: "10.0.0.5", runtimeName: "containerd", imageRefOf: () => undefined, podIpOf: (id) => ipOf[id] }) });
  t.after(() => manager.stop());
  manager.setStatus("u", coreStatus(1n, { sandboxId: "sb1" }));
  await until("first IP in", () => api.get("pods", "default", "sbx").status?.podIP === "10.91.0.14");
  manager.setStatus("u", coreStatus(2n, { sandboxId: "sb2" }));
  await until("second patch answered", () => manager.patchCount + manager.refusalCount + manager.failureCount >= 2);
  const status = api.get("pods", "default", "sbx").status;
  assert.equal(manager.refusalCount, 0, "the apiserver accepted it");
  assert.equal(status.podIP, "10.91.0.15");
  assert.deepEqual(status.podIPs, [{ ip: "10.91.0.15" }], "one IP per family: the old one is gone");
  assert.deepEqual(status.hostIPs, [{ ip: "10.0.0.5" }]);
});

test("status manager: a refused patch is re-read and rebuilt once, then waits for a change instead of being retried blindly", async (t) => {
  const api = await FakeApiServer.start({ tokens });
  t.after(() => api.stop());
  const stored = api.seed("pods", pod("web"));
  const client = new ApiClient({ server: api.url, token: "node" });
  const admin = new ApiClient({ server: api.url, token: "admin" });
  t.after(() => (client.close(), admin.close()));
  // The apiserver holds a terminal phase the watch has not shown yet: Running is refused.
  await admin.request("PATCH", "/api/v1/namespaces/default/pods/web/status", { status: { phase: "Failed", reason: "Evicted" } }, "application/merge-patch+json");
  let now = 1_000_000;
  const logged = [];
  const target = { namespace: "default", name: "web", uid: stored.metadata.uid, deleting: false, hostNetwork: true, current: { phase: "Pending" }, resourceVersion: stored.metadata.resourceVersion };
  const manager = new StatusManager({ client, log: { log: (level, msg, fields) => logged.push({ level, msg, ...fields }) }, targetOf: () => target, context: () => ({ nodeIp: "10.0.0.5", runtimeName: "containerd", imageRefOf: () => undefined }), nowMs: () => now });
  t.after(() => manager.stop());
  manager.setStatus("u", coreStatus(1n));
  await until("refused", () => manager.refusalCount === 1);
  const requests = () => api.requests.filter((r) => r.user === `system:node:${NODE}` && r.path.startsWith("/api/v1/namespaces/default/pods/web")).map((r) => r.method);
  assert.deepEqual(requests(), ["PATCH", "GET", "PATCH"], "one re-read, one more try");
  const refusal = logged.find((l) => l.level === "error");
  assert.match(refusal.error, /cannot transition from terminal phase Failed/);
  assert.equal(refusal.pod, "default/web");
  // Sync periods pass: nothing more is sent while neither the status nor the object changes.
  for (let i = 0; i < 5; i++) {
    now += 11_000;
    manager.sync();
  }
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(requests().length, 3, "not retried blindly");
  assert.equal(logged.filter((l) => l.level === "error").length, 1, "logged once");
  // A newer status is sent (and may be accepted).
  manager.setStatus("u", coreStatus(2n, { phase: "failed" }));
  await until("the newer status goes", () => manager.patchCount === 1);
  assert.equal(api.get("pods", "default", "web").status.phase, "Failed");
});

test("status from the spec: volume mounts with their read-only mode, and the pod's resources added up", async () => {
  const { podResourcesStatus, sumQuantities, volumeMountStatuses } = await import("../../dist/cluster/status-spec-fields.js");
  const spec = {
    initContainers: [
      { name: "setup", resources: { requests: { cpu: "2" } } }, // runs to completion: not counted
      { name: "proxy", restartPolicy: "Always", resources: { requests: { cpu: "50m", memory: "16Mi" } } },
    ],
    containers: [
      { name: "app", volumeMounts: [{ name: "data", mountPath: "/d" }, { name: "cfg", mountPath: "/c", readOnly: true }], resources: { requests: { cpu: "100m", memory: "32Mi" }, limits: { memory: "64Mi" } } },
      { name: "plain" },
    ],
  };
  assert.deepEqual(volumeMountStatuses(spec, "app"), [{ name: "data", mountPath: "/d" }, { name: "cfg", mountPath: "/c", readOnly: true, recursiveReadOnly: "Disabled" }]);
  assert.equal(volumeMountStatuses(spec, "plain"), undefined);
  // Nothing runs yet: the spec's values.
  assert.deepEqual(podResourcesStatus(spec, [], []), { limits: { memory: "64Mi" }, requests: { cpu: "150m", memory: "48Mi" } });
  // app runs resized: what it runs with counts.
  const app = { name: "app", containerId: "c1", resourceRequests: [{ name: "cpu", quantity: "200m" }, { name: "memory", quantity: "32Mi" }], resourceLimits: [{ name: "memory", quantity: "128Mi" }] };
  assert.deepEqual(podResourcesStatus(spec, [app], []), { limits: { memory: "128Mi" }, requests: { cpu: "250m", memory: "48Mi" } });
  assert.deepEqual(podResourcesStatus({ containers: [{ name: "a" }] }, [], []), {});
  assert.equal(sumQuantities("cpu", ["500m", "500m"]), "1");
  assert.equal(sumQuantities("memory", ["1G", "500M"]), "1500M");
  assert.equal(sumQuantities("memory", ["1Mi", "1000"]), "1049576");
});

test("mirror pods: one the apiserver refuses is not sent again until the static pod changes; the pod itself is untouched", async () => {
  const { MirrorPods } = await import("../../dist/cluster/mirror-pods.js");
  const { ApiStatusError } = await import("../../dist/cluster/api-client.js");
  const posts = [];
  const logged = [];
  const client = {
    async request(method, url, body) {
      if (method === "POST") {
        posts.push(body.metadata.annotations["kubernetes.io/config.mirror"]);
        throw new ApiStatusError(422, "Invalid", `Pod "${body.metadata.name}" is invalid: spec.containers[0].image: Required value`);
      }
      return {};
    },
  };
  const mirrors = new MirrorPods(client, NODE, { log: (level, msg) => logged.push(`${level} ${msg}`) }, () => "node-uid");
  const staticPod = (uid) => ({ spec: { uid, name: `web-${NODE}`, namespace: "default" }, origin: "web.yaml", manifest: { metadata: { name: "web" }, spec: { containers: [{ name: "app" }] } } });
  for (let i = 0; i < 3; i++) {
    mirrors.reconcile([staticPod("v1")], []);
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.deepEqual(posts, ["v1"], "refused once, not retried blindly");
  assert.equal(logged.filter((l) => l.startsWith("error Mirror pod refused")).length, 1);
  mirrors.reconcile([staticPod("v2")], []); // the file was edited: a new static pod, tried anew
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(posts, ["v1", "v2"]);
});
