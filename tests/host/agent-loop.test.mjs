// The host's agent loop with the real core component on the in-memory FakeRuntime: what the host
// adds around the core (image checks, relist inspection, executor, trap recovery).
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { AgentLoop } from "../../dist/agent/agent-loop.js";
import { CoreAgent, CoreTrapError, DEFAULT_CORE_CONFIG } from "../../dist/core/core.js";
import { FakeRuntime } from "../../dist/cri/fake-runtime.js";
import { MemoryLogger } from "../../dist/common/log.js";
import { PodTable } from "../../dist/agent/pod-table.js";
import { RuntimeError } from "../../dist/cri/runtime.js";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** This file's own pod log directory: test files run side by side and share /tmp. */
const LOGS_DIR = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-test-logs-"));

const pod = (name, { image = "busybox", containers = ["app"], policy = "Always", pull = "" } = {}) => ({
  origin: `${name}.yaml`,
  spec: {
    uid: `uid-${name}`, namespace: "default", name, restartPolicy: policy, terminationGracePeriodSeconds: 1n, hostNetwork: true,
    containers: containers.map((c) => ({ name: c, image, command: ["sleep", "60"], args: [], env: [], workingDir: undefined, requests: [], limits: [], restartOnResize: [], ports: [], restartPolicy: "", imagePullPolicy: pull })),
    priority: 0, staticPod: true, toleratesMemoryPressure: false, readinessGates: [], initContainers: [], volumes: [], ephemeralContainers: [],
  },
});

async function until(what, fn, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Every loop made here is stopped when the file ends: a test that fails before its own stop
 * must not leave timers that keep the process (and the whole test run) alive. */
const loops = [];
after(() => loops.forEach((loop) => loop.stop()));

function harness(options = {}) {
  const runtime = new FakeRuntime();
  runtime.images.add("busybox");
  const log = new MemoryLogger();
  const table = new PodTable("n");
  const loop = new AgentLoop({
    runtime, log, podTable: table, podLogsDir: LOGS_DIR, cgroupRoot: "/nonexistent",
    core: { nodeName: "n", ...DEFAULT_CORE_CONFIG, relistPeriodMs: 50 },
    ...options,
  });
  loops.push(loop);
  const running = (name) => [...runtime.containers.values()].filter((c) => c.name === name && c.state === "running");
  const phase = (name) => table.snapshot().pods.find((p) => p.name === name)?.phase;
  return { runtime, log, table, loop, running, phase };
}

/** Relists until `count` containers named `name` run (with a long period only events bring relists). */
async function untilRunning(h, name, count) {
  await until(`${count} ${name} running`, () => {
    h.loop.runtimeEvent();
    return h.running(name).length === count;
  });
}

/** A few relists, each given time to land: whatever the runtime shows now is taken in. */
async function relistAFewTimes(h) {
  for (let i = 0; i < 3; i++) {
    h.loop.runtimeEvent();
    await new Promise((r) => setTimeout(r, 30));
  }
}

test("pods start on the runtime and their status reaches the pod table", async () => {
  const h = harness();
  await h.loop.start();
  h.loop.setPods({ pods: [pod("web", { containers: ["a", "b"] })], problems: [] });
  await until("both containers running", () => h.running("a").length === 1 && h.running("b").length === 1);
  await until("phase Running", () => h.phase("web") === "Running");
  const sandbox = [...h.runtime.sandboxes.values()][0];
  assert.equal(sandbox.labels["nanolet.io/managed"], "true");
  assert.equal(sandbox.labels["io.kubernetes.pod.uid"], "uid-web");
  assert.equal(sandbox.config.cgroupParent, "/kubepods/besteffort/poduid-web");
  assert.equal(sandbox.config.logDirectory, `${LOGS_DIR}/default_web_uid-web`);
  h.loop.stop();
});

test("IfNotPresent pulls an image only when ImageStatus says it is missing", async () => {
  const h = harness();
  h.runtime.pullable.add("other");
  await h.loop.start();
  h.loop.setPods({ pods: [pod("a", { pull: "IfNotPresent" }), pod("b", { image: "other", pull: "IfNotPresent" })], problems: [] });
  await until("both running", () => h.running("app").length === 2);
  assert.deepEqual(h.runtime.calls.filter((c) => c.startsWith("PullImage")), ["PullImage other"]);
  // One ImageStatus, which also says who the image runs as.
  assert.equal(h.runtime.calls.filter((c) => c === "ImageStatus busybox").length, 1);
  h.loop.stop();
});

test("Always pulls a present image (the default for an untagged one); Never refuses a missing one", async () => {
  const h = harness();
  await h.loop.start();
  h.loop.setPods({ pods: [pod("a"), pod("b", { image: "absent:1", pull: "Never" })], problems: [] });
  await until("a running", () => h.running("app").length === 1);
  assert.deepEqual(h.runtime.calls.filter((c) => c.startsWith("PullImage")), ["PullImage busybox"], "an untagged image defaults to Always");
  await until("ErrImageNeverPull in the table", () => h.table.snapshot().pods.find((p) => p.name === "b").containers[0]?.reason === "ErrImageNeverPull");
  assert.ok(h.log.find((l) => l.msg === 'Container image "absent:1" is not present with pull policy of Never').length >= 1);
  assert.ok(!h.runtime.calls.includes("PullImage absent:1"), "Never never pulls");
  h.loop.stop();
});

test("an image that cannot be pulled holds only its own pod back, with a clear error", async () => {
  const h = harness();
  await h.loop.start();
  h.loop.setPods({ pods: [pod("good"), pod("bad", { image: "nope:1" })], problems: [] });
  await until("good running", () => h.running("app").length === 1);
  await until("the pull error in the table", () => /ImagePull/.test(h.table.snapshot().pods.find((p) => p.name === "bad").containers[0]?.reason ?? ""));
  assert.ok(h.log.find((l) => l.msg.startsWith('Failed to pull image "nope:1"')).length >= 1);
  assert.equal(h.phase("bad"), "Pending");
  h.loop.stop();
});

test("relist inspects a container once per state change, not every relist", async () => {
  const h = harness();
  await h.loop.start();
  h.loop.setPods({ pods: [pod("web")], problems: [] });
  await until("running", () => h.running("app").length === 1);
  await new Promise((r) => setTimeout(r, 300)); // several relists at 50 ms
  const id = h.running("app")[0].id;
  const inspections = h.runtime.calls.filter((c) => c === `ContainerStatus ${id}`).length;
  assert.equal(inspections, 1);
  assert.ok(h.runtime.calls.filter((c) => c === "ListContainers").length >= 4);
  h.loop.stop();
});

test("a container exit is seen by the relist and restarted", async () => {
  const h = harness();
  await h.loop.start();
  h.loop.setPods({ pods: [pod("web")], problems: [] });
  await until("running", () => h.running("app").length === 1);
  h.runtime.exit(h.running("app")[0].id, 1);
  await until("restarted", () => h.running("app").length === 1 && h.running("app")[0].attempt === 1);
  // The table follows the relist that sees the replacement running.
  await until("the table says one restart", () => h.table.snapshot().pods[0]?.restarts === 1);
  h.loop.stop();
});

test("an exit the runtime pushes is asked about once: the relist it brings takes the exit watch's answer", async () => {
  // No periodic relist to speak of: only the runtime's events bring relists here.
  const h = harness({ core: { nodeName: "n", ...DEFAULT_CORE_CONFIG, relistPeriodMs: 600_000 } });
  await h.loop.start();
  h.loop.setPods({ pods: [pod("web")], problems: [] });
  await untilRunning(h, "app", 1);
  const id = h.running("app")[0].id;
  const asked = () => h.runtime.calls.filter((c) => c === `ContainerStatus ${id}`).length;
  await until("the running container inspected", () => {
    h.loop.runtimeEvent();
    return asked() === 1;
  });
  h.runtime.exit(id, 3);
  h.loop.runtimeEvent(id);
  await until("restarted", () => h.running("app").some((c) => c.attempt === 1));
  assert.equal(asked(), 2, "one ContainerStatus for the exit: the watch's, which the relist took");
  await until("the table says one restart", () => {
    h.loop.runtimeEvent();
    return h.table.snapshot().pods[0]?.restarts === 1;
  });
  assert.equal(asked(), 2);
  h.loop.stop();
});

test("an exit containerd announces is acted on before the CRI shows it; the CRI's own details take over once it does", async () => {
  const h = harness({ core: { nodeName: "n", ...DEFAULT_CORE_CONFIG, relistPeriodMs: 600_000 } });
  await h.loop.start();
  h.loop.setPods({ pods: [pod("web")], problems: [] });
  await untilRunning(h, "app", 1);
  const id = h.running("app")[0].id;
  // containerd 1.6: the task-exit event comes while its CRI still lists the container running.
  h.runtime.exitUnseen(id, 3);
  h.loop.runtimeEvent(id, { exitCode: 3, finishedAtNs: 1_764_000_000_000_000_000n });
  await until("the replacement running", () => h.running("app").some((c) => c.attempt === 1));
  assert.equal(h.runtime.containers.get(id).state, "running", "the CRI has not taken the exit in yet");
  await until("the table says one restart", () => h.table.snapshot().pods[0]?.restarts === 1);
  // The CRI takes it in: the same exit, nothing new happens.
  h.runtime.showExit(id);
  await relistAFewTimes(h);
  assert.equal([...h.runtime.containers.values()].filter((c) => c.name === "app").length, 2, "one replacement, no more");
  assert.equal(h.table.snapshot().pods[0].restarts, 1);
  h.loop.stop();
});

test("an announced exit reads as the CRI will report it: the exit code, Error or Completed, OOMKilled after containerd's OOM event", async () => {
  const h = harness({ core: { nodeName: "n", ...DEFAULT_CORE_CONFIG, relistPeriodMs: 600_000 } });
  await h.loop.start();
  // A second container keeps each pod running, so nothing stops the pods (a stop shows the exits).
  const pods = ["a", "b", "c"].map((n) => pod(n, { policy: "Never", containers: ["app", "side"] }));
  h.loop.setPods({ pods, problems: [] });
  await untilRunning(h, "app", 3);
  const byPod = {};
  for (const c of h.running("app")) byPod[[...h.runtime.sandboxes.values()].find((s) => s.id === c.sandboxId).podName] = c.id;
  h.runtime.exitUnseen(byPod.a, 2);
  h.runtime.exitUnseen(byPod.b, 0);
  h.runtime.exitUnseen(byPod.c, 137, "OOMKilled");
  h.loop.oomKill(byPod.c);
  h.loop.runtimeEvent(byPod.a, { exitCode: 2, finishedAtNs: 1n });
  h.loop.runtimeEvent(byPod.b, { exitCode: 0, finishedAtNs: 1n });
  h.loop.runtimeEvent(byPod.c, { exitCode: 137, finishedAtNs: 1n });
  const row = (name) => h.table.snapshot().pods.find((p) => p.name === name)?.containers.find((c) => c.name === "app");
  const seen = () => ["a", "b", "c"].map((n) => [row(n)?.state, row(n)?.exitCode, row(n)?.reason]);
  const expected = [["terminated", 2, "Error"], ["terminated", 0, "Completed"], ["terminated", 137, "OOMKilled"]];
  await until("all three terminated in the table", () => seen().every(([state]) => state === "terminated"));
  assert.deepEqual(seen(), expected);
  assert.equal(h.running("app").length, 3, "the CRI still lists them running");
  // The CRI takes them in: its details agree, nothing changes.
  for (const n of ["a", "b", "c"]) h.runtime.showExit(byPod[n]);
  await relistAFewTimes(h);
  assert.deepEqual(seen(), expected);
  h.loop.stop();
});

test("a failed runtime call is retried after the worker back-off, not in a tight loop", async () => {
  const h = harness({ core: { nodeName: "n", ...DEFAULT_CORE_CONFIG, relistPeriodMs: 50, workerErrorBackoffMs: 200 } });
  h.runtime.failNext.set("RunPodSandbox", new RuntimeError("RunPodSandbox: boom", 2, "RunPodSandbox"));
  await h.loop.start();
  h.loop.setPods({ pods: [pod("web")], problems: [] });
  await until("running after the retry", () => h.running("app").length === 1);
  assert.equal(h.runtime.calls.filter((c) => c.startsWith("RunPodSandbox")).length, 2);
  assert.ok(h.log.find((l) => l.fields.reason === "FailedCreatePodSandBox").length === 1);
  h.loop.stop();
});

test("a core trap is reported loudly; a new core adopts the running pods without duplicates", async () => {
  let trapOnce = true;
  const createCore = async (config) => {
    const core = await CoreAgent.create(config);
    const original = core.handleRelistPacked.bind(core);
    core.handleRelistPacked = (now, snapshot) => {
      if (trapOnce && snapshot.containers.length > 0) {
        trapOnce = false;
        throw new CoreTrapError("handle-relist-packed", "injected by the test", undefined);
      }
      return original(now, snapshot);
    };
    return core;
  };
  const h = harness({ createCore });
  await h.loop.start();
  h.loop.setPods({ pods: [pod("web")], problems: [] });
  await until("trap seen", () => h.loop.trapCount === 1);
  await until("running", () => h.running("app").length === 1);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal([...h.runtime.containers.values()].length, 1, "no duplicate container");
  assert.equal(h.runtime.sandboxes.size, 1, "no duplicate sandbox");
  const loud = h.log.find((l) => l.level === "error" && l.msg.startsWith("CORE TRAPPED"));
  assert.equal(loud.length, 1);
  assert.equal(loud[0].fields.reason, "injected by the test");
  h.loop.stop();
});

test("after a trap the new core's statuses (versions from 1 again) still reach the table and the cluster side", async () => {
  let relists = 0;
  let replaced = 0;
  const createCore = async (config) => {
    const core = await CoreAgent.create(config);
    const original = core.handleRelistPacked.bind(core);
    core.handleRelistPacked = (now, snapshot) => {
      if (++relists === 8) throw new CoreTrapError("handle-relist-packed", "injected late", undefined);
      return original(now, snapshot);
    };
    return core;
  };
  const h = harness({ createCore, onCoreReplaced: () => replaced++ });
  await h.loop.start();
  h.loop.setPods({ pods: [pod("web")], problems: [] });
  await until("running", () => h.phase("web") === "Running");
  await until("trap seen and core replaced", () => h.loop.trapCount === 1 && replaced === 1);
  try {
    h.runtime.exit(h.running("app")[0].id, 1);
    await until("the new core's restart shows in the table", () => h.table.snapshot().pods.find((p) => p.name === "web")?.restarts === 1);
  } finally {
    h.loop.stop();
  }
});

test("a removed pod is stopped and removed from the runtime and the table", async () => {
  const h = harness();
  await h.loop.start();
  h.loop.setPods({ pods: [pod("a"), pod("b")], problems: [] });
  await until("both running", () => h.running("app").length === 2);
  h.loop.setPods({ pods: [pod("a")], problems: [] });
  await until("b gone from the runtime", () => h.runtime.sandboxes.size === 1 && h.runtime.containers.size === 1);
  assert.deepEqual(h.table.snapshot().pods.map((p) => p.name), ["a"]);
  h.loop.stop();
});

test("a container that cannot be inspected keeps its pod's last view until the next relist", async () => {
  const h = harness();
  await h.loop.start();
  h.loop.setPods({ pods: [pod("web")], problems: [] });
  await until("running", () => h.running("app").length === 1);
  const id = h.running("app")[0].id;
  // The container exits, but ContainerStatus fails for it once: the pod is uninspected.
  h.runtime.failNext.set("ContainerStatus", new RuntimeError("ContainerStatus: transient", 14, "ContainerStatus"));
  h.runtime.exit(id, 1);
  await until("restarted after a later relist could inspect it", () => h.running("app").length === 1 && h.running("app")[0].attempt === 1);
  assert.equal(h.runtime.calls.filter((c) => c === `ContainerStatus ${id}`).length >= 2, true, "inspected again");
  assert.equal([...h.runtime.containers.values()].filter((c) => c.state === "running").length, 1, "never two running");
  h.loop.stop();
});

test("a recording of the agent loop (as `run --record` makes) replays without divergence", async () => {
  const { RecordingCore, TraceWriter } = await import("../../dist/trace/recording-core.js");
  const { replayLines } = await import("../../dist/trace/replay.js");
  const lines = [];
  const trace = new TraceWriter((line) => lines.push(line));
  trace.header(Date.now(), { recordedBy: "test" });
  const createCore = async (config) => RecordingCore.wrap(await CoreAgent.create(config), trace, Date.now(), config);
  const h = harness({ createCore });
  await h.loop.start();
  h.loop.setPods({ pods: [pod("web", { containers: ["a", "b"] })], problems: [] });
  await until("running", () => h.running("a").length === 1 && h.running("b").length === 1);
  // A steady relist (nothing changed) is recorded as `same`; wait for one rather than hoping one
  // falls between two changes, which a loaded machine may never give.
  await until("a steady relist recorded", () => lines.some((l) => l.includes('"op":"relist"') && l.includes('"same":true')));
  h.runtime.exit(h.running("a")[0].id, 1);
  await until("restarted", () => h.running("a").length === 1 && [...h.runtime.containers.values()].filter((c) => c.name === "a").length === 2);
  h.loop.setPods({ pods: [], problems: [] });
  await until("removed", () => h.runtime.sandboxes.size === 0);
  h.loop.stop();
  const report = await replayLines(lines);
  assert.equal(report.divergence, undefined, JSON.stringify(report.divergence));
  assert.ok(report.calls > 20);
});

test("held until its sources are ready, the agent neither relists nor stops a running pod it does not know yet", async () => {
  // An agent restart: the runtime already runs a pod that only the apiserver's (late) list names.
  const first = harness();
  await first.loop.start();
  first.loop.setPods({ pods: [pod("kept")], problems: [] });
  await until("kept running", () => first.running("app").length === 1);
  first.loop.stop();
  const second = harness({ runtime: first.runtime });
  second.loop.holdUntilSourcesReady(60_000);
  await second.loop.start();
  const callsBefore = first.runtime.calls.length;
  await new Promise((r) => setTimeout(r, 300)); // several relist periods
  assert.equal(first.runtime.calls.length, callsBefore, "no runtime call while the sources are not ready");
  second.loop.setPods({ pods: [pod("kept")], problems: [] });
  second.loop.markSourcesReady();
  await until("a relist", () => first.runtime.calls.slice(callsBefore).some((c) => c.startsWith("ListContainers")));
  await new Promise((r) => setTimeout(r, 300));
  assert.ok(!first.runtime.calls.slice(callsBefore).some((c) => c.startsWith("StopContainer")), "the running pod is adopted, not stopped");
  assert.equal(first.running("app").length, 1);
  second.loop.stop();
});

test("the node's sysctl admission: an unsafe sysctl is refused as SysctlForbidden, other pods run; an allowed one runs", async () => {
  const withSysctl = (name, sysctl) => ({ ...pod(name), manifest: { spec: { securityContext: { sysctls: [{ name: sysctl, value: "1" }] } } } });
  const h = harness({ allowedUnsafeSysctls: ["kernel.sem"] });
  await h.loop.start();
  const refusals = h.loop.setPods({ pods: [withSysctl("bad", "kernel.msgmax"), withSysctl("allowed", "kernel.sem"), pod("plain")], problems: [] });
  assert.deepEqual(refusals, [{ index: 0, origin: "bad.yaml", field: "spec.securityContext.sysctls[0].name", message: 'forbidden sysctl: "kernel.msgmax" not allowlisted', reason: "SysctlForbidden" }]);
  await until("the two others running", () => h.running("app").length === 2);
  assert.ok(![...h.runtime.sandboxes.values()].some((s) => s.podName === "bad"), "the refused pod got no sandbox");
  const allowed = [...h.runtime.sandboxes.values()].find((s) => s.podName === "allowed");
  assert.deepEqual(allowed.config.security.sysctls, { "kernel.sem": "1" });
  h.loop.stop();
});

test("nodeSelector and required node affinity are admitted against the node's labels; an admitted pod stays when a label goes", async () => {
  let labels = { "kubernetes.io/os": "linux", disk: "ssd" };
  const placed = (name, spec) => ({ ...pod(name), manifest: { spec } });
  const h = harness({ nodeLabels: () => labels });
  await h.loop.start();
  const pods = [
    placed("ssd", { nodeSelector: { disk: "ssd" } }),
    placed("hdd", { nodeSelector: { disk: "hdd" } }),
    placed("linux", { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [
      { matchExpressions: [{ key: "kubernetes.io/os", operator: "In", values: ["windows"] }] },
      { matchExpressions: [{ key: "kubernetes.io/os", operator: "In", values: ["linux"] }, { key: "gpu", operator: "DoesNotExist" }] },
    ] } } } }),
    placed("named", { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: "metadata.name", operator: "In", values: ["other"] }] }] } } } }),
  ];
  const refusals = h.loop.setPods({ pods, problems: [] });
  assert.deepEqual(refusals.map((r) => [r.origin, r.reason, r.message]), [
    ["hdd.yaml", "NodeAffinity", "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"],
    ["named.yaml", "NodeAffinity", "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"],
  ]);
  await until("ssd and linux running", () => h.running("app").length === 2);
  // The label goes: the admitted pods keep running (IgnoredDuringExecution).
  labels = { "kubernetes.io/os": "linux" };
  assert.deepEqual(h.loop.setPods({ pods, problems: [] }).map((r) => r.origin), ["hdd.yaml", "named.yaml"]);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(h.running("app").length, 2);
  h.loop.stop();
});

test("while runtime events drive the relists, the loop relists on each change only, and the PLEG may be quiet for 10 minutes", async () => {
  const h = harness(); // relist period 50 ms
  await h.loop.start();
  h.loop.setPods({ pods: [pod("web")], problems: [] });
  await until("running", () => h.running("app").length === 1);
  assert.equal(h.loop.plegThresholdMs, 180_000);
  h.loop.eventStream(true);
  assert.equal(h.loop.plegThresholdMs, 600_000, "upstream's evented relist threshold");
  const lists = () => h.runtime.calls.filter((c) => c === "ListContainers").length;
  await until("the relist the stream's start asks for", () => h.log.find((l) => l.msg === "Runtime events drive the relist").length === 1);
  await new Promise((r) => setTimeout(r, 100));
  const quietFrom = lists();
  await new Promise((r) => setTimeout(r, 400)); // eight periods of 50 ms
  assert.equal(lists(), quietFrom, "no periodic relist while the stream is up");
  const id = h.running("app")[0].id;
  h.runtime.exit(id, 1);
  h.loop.runtimeChange(id, "stopped");
  await until("restarted through the event", () => h.running("app").length === 1 && h.running("app")[0].attempt === 1);
  h.loop.eventStream(false);
  assert.equal(h.loop.plegThresholdMs, 180_000);
  const from = lists();
  await until("periodic relists again", () => lists() >= from + 3);
  h.loop.stop();
});

test("a pod the core refuses is logged as refused, never as added by its source", async () => {
  const h = harness();
  await h.loop.start();
  const first = pod("web");
  const twin = { ...pod("web"), origin: "/m/twin.yaml", spec: { ...pod("web").spec, uid: "uid-twin" } };
  h.loop.setPods({ pods: [first, twin], problems: [] });
  const added = h.log.find((l) => l.msg === "Pod added by its source").map((l) => l.fields.uid);
  assert.deepEqual(added, ["uid-web"]);
  const refused = h.log.find((l) => l.msg === "Refused pod manifest");
  assert.equal(refused.length, 1);
  assert.match(String(refused[0].fields.error), /Duplicate value/);
});
