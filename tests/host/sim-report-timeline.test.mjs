// The report's timeline from a trace, on small hand-written traces: what each line of the trace
// becomes on the page (host/sim/report/timeline.ts).
import assert from "node:assert/strict";
import { test } from "node:test";
import { timelineFromTrace } from "../../dist/sim/report/timeline.js";
import { traceDigest } from "../../dist/sim/report/digest.js";

const T0 = 1_767_225_600_000;
const status = (phase, containers, extra = {}) => ({ finished: false, phase, reason: "", message: "", containerStatuses: containers, ...extra });
const cs = (name, state, restartCount = 0, reason = "", exitCode = 0) => ({ name, state, reason, exitCode, restartCount });
const poll = (atS, uid, name, kind) => ({ t: T0 + atS * 1000, op: "poll", out: [{ id: "1", podUid: uid, podNamespace: "default", podName: name, kind }] });
const podStatus = (atS, uid, name, val) => poll(atS, uid, name, { tag: "pod-status-changed", val });
const sim = (atS, event, fields = {}) => ({ t: T0 + atS * 1000, op: "sim", event, ...fields });
const header = { t: T0, op: "header", format: "nanolet-trace/1", seed: 9, scenario: "hand-made" };
const create = { t: T0, op: "create", config: { node: { evictionHard: "memory.available<100Mi", memoryCapacityBytes: 1073741824 } } };

test("timeline: container states, restarts and back-off waits from status changes", () => {
  const t = timelineFromTrace([
    header,
    podStatus(0, "u1", "web", status("pending", [cs("app", "waiting", 0, "ContainerCreating")])),
    podStatus(2, "u1", "web", status("running", [cs("app", "running")])),
    podStatus(10, "u1", "web", status("running", [cs("app", "terminated", 0, "Error", 1)])),
    podStatus(11, "u1", "web", status("running", [cs("app", "waiting", 0, "CrashLoopBackOff")])),
    podStatus(21, "u1", "web", status("running", [cs("app", "running", 1)])),
    sim(30, "expect", { ok: true }),
  ]);
  assert.equal(t.scenario, "hand-made");
  assert.equal(t.seed, 9);
  assert.equal(t.durationMs, 30_000);
  assert.equal(t.restarts, 1);
  const [pod] = t.pods;
  assert.deepEqual(pod.phases.map((s) => [s.state, s.fromMs, s.toMs]), [["pending", 0, 2000], ["running", 2000, 30_000]]);
  assert.deepEqual(pod.containers[0].spans.map((s) => `${s.state}/${s.reason}@${s.fromMs / 1000}-${s.toMs / 1000}`), [
    "waiting/ContainerCreating@0-2", "running/@2-10", "terminated/Error@10-11", "waiting/CrashLoopBackOff@11-21", "running/@21-30",
  ]);
  assert.deepEqual(pod.containers[0].restarts.map((m) => [m.atMs, m.text]), [[21_000, "restart 1"]]);
});

test("timeline: evictions, pressure (ended by an agent restart), faults and the memory signal", () => {
  const t = timelineFromTrace([
    header,
    create,
    { t: T0 + 10_000, op: "stats", stats: { signals: [{ signal: "memory.available", available: "52428800", capacity: "1073741824" }], pods: [] } },
    poll(10, "", "", { tag: "node-pressure-changed", val: { memory: true, disk: false, pid: false } }),
    podStatus(10, "u2", "leaky", status("failed", [cs("app", "running")], { reason: "Evicted", message: "The node was low on resource: memory." })),
    podStatus(12, "u2", "leaky", status("failed", [cs("app", "terminated", 0, "Error", 137)], { reason: "Evicted" })),
    sim(20, "agent-restart", { downMs: 2000 }),
    // The restarted agent reports the evicted pod Failed without a reason: the apiserver keeps it.
    podStatus(23, "u2", "leaky", status("failed", [cs("app", "terminated", 0, "Error", 137)], { finished: true })),
    sim(25, "exit", { container: "c1", name: "app", pod: "u9", code: 1 }), // a container's own exit: no fault
    sim(26, "exit", { pod: "web", name: "app", code: 3, found: 1 }), // the timeline's: a fault
    sim(40, "expect", { ok: true }),
  ]);
  assert.equal(t.evictions, 1);
  const [pod] = t.pods;
  assert.deepEqual(pod.marks.map((m) => [m.kind, m.atMs]), [["Evicted", 10_000]]);
  assert.equal(pod.phases.at(-1).reason, "Evicted");
  assert.equal(pod.finishedAtMs, 23_000);
  assert.equal(pod.phases.at(-1).toMs, 23_000, "a finished pod's bars end when it finished");
  assert.deepEqual(t.pressure.memory.map((s) => [s.fromMs, s.toMs]), [[10_000, 20_000]]);
  assert.deepEqual(t.pressure.disk, []);
  assert.deepEqual(t.faults.map((f) => f.kind), ["agent-restart", "exit"]);
  assert.match(t.faults[1].text, /app of web made to exit with code 3/);
  assert.deepEqual(t.signals.map((s) => [s.signal, s.points.length, s.hardThreshold]), [["memory.available", 1, 104857600]]);
});

test("timeline: pods sharing a name are told apart; failed pods first, then by restarts", () => {
  const t = timelineFromTrace([
    header,
    podStatus(0, "aaaaaaaa-1111", "web", status("running", [cs("app", "running")])),
    podStatus(0, "calm-pod-uid", "calm", status("running", [cs("app", "running")])),
    podStatus(5, "aaaaaaaa-1111", "web", status("failed", [cs("app", "terminated", 0, "Error", 1)], { finished: true })),
    podStatus(6, "bbbbbbbb-2222", "web", status("running", [cs("app", "running", 2)])),
  ]);
  assert.deepEqual(t.pods.map((p) => p.name), ["web (aaaaaaaa)", "web (bbbbbbbb)", "calm"]);
  assert.equal(t.pods[0].finishedAtMs, 5000);
  assert.equal(t.restarts, 2);
});

test("trace digest: the same lines give the same digest, any change another", () => {
  const lines = ['{"t":1,"op":"header"}', '{"t":2,"op":"poll","out":[]}'];
  assert.equal(traceDigest(lines), traceDigest([...lines]));
  assert.match(traceDigest(lines), /^[0-9a-f]{16}$/);
  assert.notEqual(traceDigest(lines), traceDigest([lines[0], '{"t":3,"op":"poll","out":[]}']));
  assert.notEqual(traceDigest(lines), traceDigest([lines.join("")]));
});
