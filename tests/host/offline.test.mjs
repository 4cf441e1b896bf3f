// Offline autonomy inside one process: checkpoints on this machine's disk (durable writes, modes,
// every kind of corrupt file skipped and reported), and an agent restarted while the (fake)
// apiserver is down running its pods from them, then reconciling when the apiserver returns.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { AgentLoop } from "../../dist/agent/agent-loop.js";
import { ApiClient } from "../../dist/cluster/api-client.js";
import { ClusterAgent } from "../../dist/cluster/cluster-agent.js";
import { PodCheckpoints } from "../../dist/cluster/pod-checkpoints.js";
import { CheckpointStore } from "../../dist/checkpoint/checkpoint-store.js";
import { CoreAgent, DEFAULT_CORE_CONFIG } from "../../dist/core/core.js";
import { FakeRuntime } from "../../dist/cri/fake-runtime.js";
import { MemoryLogger } from "../../dist/common/log.js";
import { PodTable } from "../../dist/agent/pod-table.js";
import { podFromManifest } from "../../dist/sources/manifest.js";
import { ObjectStore } from "../../dist/volumes/object-store.js";
import { TokenManager } from "../../dist/volumes/token-manager.js";
import { FakeApiServer } from "../apiserver/fake-apiserver.mjs";

/** This file's own pod log directory: test files run side by side and share /tmp. */
const LOGS_DIR = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-test-logs-"));

const NODE = "edge-1";
const tmp = (prefix) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));

async function until(what, fn, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test("checkpoints: durable, root-only, unchanged items not rewritten, every corrupt file skipped and reported", () => {
  const dir = path.join(tmp("nanolet-ckpt-"), "pods");
  const log = new MemoryLogger();
  const problems = [];
  const store = new CheckpointStore(dir, "pod", log, (p) => problems.push(p));
  assert.equal(store.write("a", { n: 1 }), true);
  assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
  const file = path.join(dir, "a.json");
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  const inode = fs.statSync(file).ino;
  store.write("a", { n: 1 });
  assert.equal(fs.statSync(file).ino, inode, "the same content is not written again");
  store.write("a", { n: 2 });
  assert.notEqual(fs.statSync(file).ino, inode, "a change is a new file renamed over the old");
  assert.deepEqual(new CheckpointStore(dir, "pod", log).read("a"), { n: 2 });
  store.write("odd/name:x", { n: 3 });
  assert.deepEqual([...new CheckpointStore(dir, "pod", log).readAll().keys()].sort(), ["a", "odd/name:x"]);

  // Every way a file can be bad; the good one beside them still reads.
  const whole = fs.readFileSync(file, "utf8");
  const bad = {
    "truncated.json": whole.slice(0, whole.length - 7),
    "empty.json": "",
    "garbage.json": "\u0000\u0001not json",
    "version.json": JSON.stringify({ ...JSON.parse(whole), version: 99 }),
    "checksum.json": JSON.stringify({ ...JSON.parse(whole), data: { n: 666 } }),
    "kind.json": JSON.stringify({ ...JSON.parse(whole), kind: "token" }),
    "null.json": "null",
  };
  for (const [name, text] of Object.entries(bad)) fs.writeFileSync(path.join(dir, name), text);
  fs.writeFileSync(path.join(dir, "a.json.tmp"), "half a write");
  const items = new CheckpointStore(dir, "pod", log, (p) => problems.push(p)).readAll();
  assert.deepEqual([...items.keys()].sort(), ["a", "odd/name:x"]);
  assert.deepEqual(problems.map((p) => path.basename(p.file)).sort(), Object.keys(bad).sort());
  assert.match(problems.find((p) => p.file.endsWith("version.json")).reason, /version 99, expected 1/);
  assert.match(problems.find((p) => p.file.endsWith("checksum.json")).reason, /checksum/);
  assert.match(problems.find((p) => p.file.endsWith("truncated.json")).reason, /not JSON \(truncated\?\)/);
  assert.equal(fs.existsSync(path.join(dir, "a.json.tmp")), false, "an interrupted write's leftover is removed");
  assert.ok(log.lines.some((l) => l.msg.includes("Skipping a pod checkpoint that cannot be trusted")));
});

/** One run of the agent (a process lifetime): loop, core and cluster side on `runtime`. */
async function agent(api, runtime, checkpointDir, log = new MemoryLogger()) {
  let cluster;
  const loop = new AgentLoop({
    runtime, log, podTable: new PodTable(NODE), podLogsDir: LOGS_DIR, cgroupRoot: "/nonexistent",
    core: { nodeName: NODE, ...DEFAULT_CORE_CONFIG, relistPeriodMs: 50 },
    onAction: (a) => cluster?.onAction(a),
  });
  loop.holdUntilSourcesReady(60_000);
  await loop.start();
  cluster = new ClusterAgent({
    client: new ApiClient({ server: api.url, token: "node" }), nodeName: NODE, log, loop, runtime, rootDir: os.tmpdir(), nodeIps: ["10.1.2.3"],
    checkpoints: new PodCheckpoints(new CheckpointStore(checkpointDir, "pod", log)),
    restoreAfterMs: 60_000, // the test's outages are refused connections: restored at the first error
  });
  cluster.setStaticPods({ pods: [], problems: [] });
  cluster.start();
  return { loop, cluster, log, stop: () => (cluster.stop(), loop.stop()) };
}

const podObject = (name) => ({
  metadata: { name, namespace: "default" },
  spec: { nodeName: NODE, hostNetwork: true, terminationGracePeriodSeconds: 1, containers: [{ name: "app", image: "busybox", command: ["sleep", "3600"] }] },
});

const running = (runtime, podName) =>
  [...runtime.containers.values()].filter((c) => c.state === "running" && c.labels?.["io.kubernetes.pod.name"] === podName);

test("an agent restarted with the apiserver down runs its pods from checkpoints; back online, nothing unchanged restarts", async (t) => {
  const api = await FakeApiServer.start({
    tokens: { node: { name: `system:node:${NODE}`, groups: ["system:nodes"] }, admin: { name: "admin", groups: ["system:masters"] } },
  });
  const admin = new ApiClient({ server: api.url, token: "admin" });
  const checkpointDir = path.join(tmp("nanolet-offline-"), "pods");
  const runtime = new FakeRuntime();
  runtime.images.add("busybox");
  let current;
  t.after(async () => {
    current?.stop();
    admin.close();
    await api.stop();
  });

  // A first life of the agent: three pods run and are checkpointed.
  current = await agent(api, runtime, checkpointDir);
  for (const name of ["web", "db", "gone"]) await admin.request("POST", "/api/v1/namespaces/default/pods", podObject(name));
  await until("three pods Running", () => ["web", "db", "gone"].every((n) => api.get("pods", "default", n)?.status?.phase === "Running"));
  assert.equal(fs.readdirSync(checkpointDir).length, 3);
  const idsBefore = Object.fromEntries(["web", "db"].map((n) => [n, running(runtime, n).map((c) => c.id)]));
  current.stop();

  // While no agent runs, "gone" is deleted; then the apiserver goes away.
  await admin.request("DELETE", "/api/v1/namespaces/default/pods/gone");
  await api.stop();

  // A reboot: every container is gone (a new runtime), and the agent starts without an apiserver.
  const rebooted = new FakeRuntime();
  rebooted.images.add("busybox");
  current = await agent(api, rebooted, checkpointDir);
  await until("every checkpointed pod running again", () => ["web", "db", "gone"].every((n) => running(rebooted, n).length === 1));
  assert.ok(current.log.lines.some((l) => l.msg === "Running the checkpointed pods until the apiserver answers"));
  current.stop();

  // An agent restart (containers kept), still offline: the pods are adopted, not restarted.
  current = await agent(api, runtime, checkpointDir);
  await until("sources ready from checkpoints", () => current.log.lines.some((l) => l.msg === "Running the checkpointed pods until the apiserver answers"));
  await until("a relist after the restore", () => current.loop.lastRelistOkMs > 0);
  await new Promise((r) => setTimeout(r, 300));
  for (const name of ["web", "db"]) assert.deepEqual(running(runtime, name).map((c) => c.id), idsBefore[name], `${name} kept its container`);

  // The apiserver returns: unchanged pods keep their containers; the pod deleted meanwhile stops.
  await api.start();
  await until("gone stopped and removed", () => running(runtime, "gone").length === 0 && api.get("pods", "default", "gone") === undefined);
  await until("statuses reported again", () => ["web", "db"].every((n) => api.get("pods", "default", n)?.status?.containerStatuses?.[0]?.ready === true));
  for (const name of ["web", "db"]) {
    assert.deepEqual(running(runtime, name).map((c) => c.id), idsBefore[name], `${name} was not restarted or recreated`);
    assert.equal(api.get("pods", "default", name).status.containerStatuses[0].restartCount, 0);
  }
  await until("the deleted pod's checkpoint removed", () => fs.readdirSync(checkpointDir).length === 2);
});

test("configMaps and tokens read before an outage answer from checkpoints after a restart without the apiserver", async () => {
  const dir = tmp("nanolet-offline-objects-");
  const log = new MemoryLogger();
  let online = true;
  const client = {
    request: async (_method, pathname) => {
      if (!online) throw new Error("connect ECONNREFUSED");
      if (pathname.endsWith("/configmaps/settings")) return { metadata: { name: "settings", namespace: "default", resourceVersion: "7" }, data: { mode: "fast" } };
      throw new Error(`unexpected ${pathname}`);
    },
  };
  const ref = { resource: "configmaps", namespace: "default", name: "settings" };
  const objects = new ObjectStore({ client, log, strategy: "Get", checkpoints: new CheckpointStore(path.join(dir, "objects"), "object", log) });
  assert.equal((await objects.get(ref)).data.mode, "fast");
  online = false;
  const restarted = new ObjectStore({ client, log, strategy: "Get", checkpoints: new CheckpointStore(path.join(dir, "objects"), "object", log) });
  assert.equal((await restarted.get(ref)).data.mode, "fast", "the checkpointed copy answers");
  await assert.rejects(restarted.get({ ...ref, name: "never-seen" }), /ECONNREFUSED/, "an object never read has no copy: the error stands");
  assert.ok(log.lines.some((l) => /Using the checkpointed configmap/.test(l.msg)));
  restarted.sweepCheckpoints();
  assert.equal(fs.readdirSync(path.join(dir, "objects")).length, 0, "objects no registered pod uses are swept");

  // Tokens: one asked for before; after a restart offline the last one is used, even expired.
  let now = Date.now();
  const tokenDir = path.join(dir, "tokens");
  const offlineClient = { request: async () => { throw new Error("connect ECONNREFUSED"); } };
  const onlineClient = { request: async () => ({ status: { token: "tok-1", expirationTimestamp: new Date(now + 3_600_000).toISOString() } }) };
  const spec = { namespace: "default", serviceAccountName: "default", audience: "", expirationSeconds: 3600, podName: "web", podUid: "uid-web" };
  assert.equal(await new TokenManager(onlineClient, () => now, new CheckpointStore(tokenDir, "token", log)).token(spec), "tok-1");
  now += 2 * 3_600_000;
  const tokens = new TokenManager(offlineClient, () => now, new CheckpointStore(tokenDir, "token", log));
  assert.equal(await tokens.token(spec), "tok-1");
  await assert.rejects(tokens.token({ ...spec, podUid: "uid-other" }), /failed to fetch token/);
  tokens.sweepCheckpoints(new Set(["uid-other"]));
  assert.equal(fs.readdirSync(tokenDir).length, 0, "tokens of pods no longer desired are swept");
});

test("the crash-loop back-off survives an agent restart (checkpointed after each relist)", async (t) => {
  const runtime = new FakeRuntime();
  runtime.images.add("busybox");
  const dir = path.join(tmp("nanolet-backoff-"), "back-off");
  const core = { nodeName: NODE, ...DEFAULT_CORE_CONFIG, relistPeriodMs: 50, backoffInitialMs: 1000, backoffMaxMs: 60_000 };
  const pod = { spec: podFromManifestLike("crashy"), origin: "test" };
  const start = async () => {
    const loop = new AgentLoop({ runtime, log: new MemoryLogger(), podTable: new PodTable(NODE), podLogsDir: LOGS_DIR, cgroupRoot: "/nonexistent", core, backOffCheckpoints: new CheckpointStore(dir, "back-off", new MemoryLogger()) });
    await loop.start();
    loop.setPods({ pods: [pod], problems: [] });
    return loop;
  };
  const app = () => [...runtime.containers.values()].filter((c) => c.name === "app").sort((a, b) => a.attempt - b.attempt);
  const newestRunning = () => app().at(-1)?.state === "running" ? app().at(-1) : undefined;
  let loop = await start();
  t.after(() => loop.stop());
  // Three crashes: restarted at once, then after 1 s; the third waits 2 s.
  for (let crash = 1; crash <= 3; crash++) {
    await until(`attempt ${crash - 1} running`, () => newestRunning()?.attempt === crash - 1);
    runtime.exit(newestRunning().id, 1);
  }
  const exitedAtMs = Date.now();
  await until("the 2 s wait checkpointed", () => {
    const saved = new CheckpointStore(dir, "back-off", new MemoryLogger()).read("crash-loop-back-off");
    return Array.isArray(saved) && saved.some((e) => e.durationMs === 2000);
  });
  loop.stop();
  // A new agent (a new core): without the checkpoint it would restart the container at once.
  loop = await start();
  await until("attempt 3 running", () => newestRunning()?.attempt === 3);
  const waitedMs = Date.now() - exitedAtMs;
  assert.ok(waitedMs >= 1900, `the restarted agent waited out the back-off (${waitedMs} ms after the exit)`);
});

/** A minimal core pod spec through the manifest reader, as a static file would give it. */
function podFromManifestLike(name) {
  return podFromManifest({ apiVersion: "v1", kind: "Pod", metadata: { name, namespace: "default", uid: `uid-${name}` }, spec: { restartPolicy: "Always", hostNetwork: true, containers: [{ name: "app", image: "busybox", command: ["sleep", "3600"] }] } }, { nodeName: NODE, source: `/etc/kubernetes/manifests/${name}.yaml`, documentIndex: 0 });
}
