// Runtime events: containerd's task-exit and OOM envelopes read by hand (host/common/proto-wire.ts), and the source
// chosen in order (CRI's GetContainerEvents, then containerd's events, then none), with a broken
// stream opened again and the CRI stream given up after five breaks. The real streams on real
// runtimes: tests/e2e/nanolet.e2e.test.mjs (containerd 1.6), tests/e2e/containerd2.e2e.test.mjs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { RuntimeEvents, readTaskEvent } from "../../dist/cri/runtime-events.js";
import { bytesField as wireBytes, readBytesField, readVarintField, varint } from "../../dist/common/proto-wire.js";

/** Protobuf bytes: a length-delimited field, and a varint field. */
const bytesField = (field, body) => Buffer.concat([Buffer.from([(field << 3) | 2, body.length]), body]);
const varintField = (field, value) => Buffer.from([field << 3, value]);

function envelope(containerId) {
  const taskExit = Buffer.concat([bytesField(1, Buffer.from(containerId)), bytesField(2, Buffer.from(containerId)), varintField(3, 42), varintField(4, 137)]);
  const any = Buffer.concat([bytesField(1, Buffer.from("containerd.events.TaskExit")), bytesField(2, taskExit)]);
  return Buffer.concat([bytesField(2, Buffer.from("k8s.io")), bytesField(3, Buffer.from("/tasks/exit")), bytesField(4, any)]);
}

test("the container ID of a containerd task-exit envelope; malformed envelopes give none", () => {
  const containerId = (bytes) => readTaskEvent(bytes).containerId;
  assert.equal(containerId(envelope("abc123")), "abc123");
  assert.equal(containerId(Buffer.alloc(0)), "");
  assert.equal(containerId(Buffer.from([0x22, 0x50, 0x01])), "", "a length past the end");
  assert.equal(containerId(Buffer.from([0x23])), "", "an unknown wire type");
  assert.equal(readBytesField(Buffer.concat([varintField(1, 5), bytesField(2, Buffer.from("x"))]), 2).toString(), "x", "varint fields are skipped");
  assert.equal(readVarintField(Buffer.concat([bytesField(2, Buffer.from("x")), varintField(1, 5)]), 1), 5);
  assert.equal(readVarintField(bytesField(1, Buffer.from("x")), 1), undefined, "a field of another wire type");
  // The gRPC health check a probe sends and reads: HealthCheckRequest{service: "svc"}, HealthCheckResponse{status: SERVING}.
  assert.deepEqual(wireBytes(1, "svc"), Buffer.from([0x0a, 3, 0x73, 0x76, 0x63]));
  assert.equal(readVarintField(Buffer.from([0x08, 1]), 1), 1);
  // The writer is what the reader reads (lengths past 127 take two bytes).
  assert.equal(readBytesField(wireBytes(3, "y".repeat(300)), 3).toString(), "y".repeat(300));
});

/** A varint field of any size (the writer's varint). */
const bigVarintField = (field, value) => Buffer.concat([varint(field << 3), varint(value)]);

/** An envelope as containerd 1.6 sends it: TaskExit or TaskOOM inside an Any. */
function taskEnvelope(topic, type, fields) {
  const any = Buffer.concat([wireBytes(1, `containerd.events.${type}`), wireBytes(2, Buffer.concat(fields))]);
  return Buffer.concat([wireBytes(2, "k8s.io"), wireBytes(3, topic), wireBytes(4, any)]);
}
const exitedAt = (seconds, nanos) => wireBytes(5, Buffer.concat([bigVarintField(1, seconds), bigVarintField(2, nanos)]));

test("a task-exit event says how the container's main process exited; an exec'd process's exit and an OOM kill are told apart", () => {
  const id = "c".repeat(64);
  const exit = taskEnvelope("/tasks/exit", "TaskExit", [wireBytes(1, id), wireBytes(2, id), bigVarintField(3, 4242), bigVarintField(4, 137), exitedAt(1_764_000_000, 123_456_789)]);
  assert.deepEqual(readTaskEvent(exit), { kind: "exit", containerId: id, exit: { exitCode: 137, finishedAtNs: 1_764_000_000_123_456_789n } });
  // exit_status 0 is not written (proto3 leaves defaults out): a clean exit.
  const clean = taskEnvelope("/tasks/exit", "TaskExit", [wireBytes(1, id), wireBytes(2, id), bigVarintField(3, 4242), exitedAt(1_764_000_001, 0)]);
  assert.deepEqual(readTaskEvent(clean).exit, { exitCode: 0, finishedAtNs: 1_764_000_001_000_000_000n });
  // A probe's ExecSync runs a process of its own in the container: its end is not the container's.
  const exec = taskEnvelope("/tasks/exit", "TaskExit", [wireBytes(1, id), wireBytes(2, "exec-1"), bigVarintField(3, 99), bigVarintField(4, 1), exitedAt(1_764_000_002, 5)]);
  assert.deepEqual(readTaskEvent(exec), { kind: "exec-exit", containerId: id });
  assert.deepEqual(readTaskEvent(taskEnvelope("/tasks/oom", "TaskOOM", [wireBytes(1, id)])), { kind: "oom", containerId: id });
  // Without process ID or time: only "this container's task exited" (the CRI tells the rest).
  assert.deepEqual(readTaskEvent(envelope("abc123")), { kind: "exit", containerId: "abc123" });
  assert.deepEqual(readTaskEvent(taskEnvelope("/tasks/exit", "TaskExit", [wireBytes(1, id), wireBytes(2, id)])), { kind: "exit", containerId: id });
  assert.deepEqual(readTaskEvent(Buffer.from([0x22, 0x50, 0x01])), { kind: "exit", containerId: "" });
});

test("any bytes read as some task event, never a throw: every cut of a real envelope, and random bytes", () => {
  const id = "d".repeat(64);
  const whole = taskEnvelope("/tasks/exit", "TaskExit", [wireBytes(1, id), wireBytes(2, id), bigVarintField(3, 7), bigVarintField(4, 1), exitedAt(1_764_000_000, 999_999_999)]);
  const kinds = new Set(["exit", "oom", "exec-exit"]);
  for (let end = 0; end <= whole.length; end++) assert.ok(kinds.has(readTaskEvent(whole.subarray(0, end)).kind));
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24;
  for (let i = 0; i < 2000; i++) {
    const bytes = Buffer.from(Array.from({ length: next() % 64 }, next));
    const event = readTaskEvent(bytes);
    assert.ok(kinds.has(event.kind));
    if (event.kind === "exit" && event.exit) assert.equal(typeof event.exit.finishedAtNs, "bigint");
  }
});

/** A stream as grpc-js gives it: an emitter with cancel(). */
function fakeStream() {
  const s = new EventEmitter();
  s.cancel = () => {
    s.cancelled = true;
  };
  return s;
}

/** Both sources as fake streams; `opened` holds every stream each was asked for, in order. */
function fakeStreams() {
  const opened = { cri: [], containerd: [] };
  const streams = {
    containerEvents: () => opened.cri[opened.cri.push(fakeStream()) - 1],
    containerdTaskExits: () => opened.containerd[opened.containerd.push(fakeStream()) - 1],
  };
  return { opened, streams };
}

test("CRI events first; UNIMPLEMENTED moves to containerd's; a broken stream is opened again", async () => {
  const { opened, streams } = fakeStreams();
  const exits = [];
  const changes = [];
  const streaming = [];
  const sources = [];
  const ooms = [];
  const exitCodes = [];
  const events = new RuntimeEvents(streams, {
    onExit: (id, exit) => {
      exits.push(id);
      exitCodes.push(exit?.exitCode);
    },
    onOomKill: (id) => ooms.push(id),
    onChange: (id, kind) => changes.push(`${kind} ${id}`),
    onEventStream: (up) => streaming.push(up),
    onSource: (source, reason) => sources.push(`${source}: ${reason}`),
  });
  events.start();
  assert.equal(opened.cri.length, 1);
  assert.deepEqual(streaming, [], "not up before the runtime answers");
  opened.cri[0].emit("data", { containerId: "c1", containerEventType: "CONTAINER_STARTED_EVENT" });
  opened.cri[0].emit("data", { containerId: "c1", containerEventType: "CONTAINER_STOPPED_EVENT" });
  assert.deepEqual(changes, ["started c1", "stopped c1"], "every kind of change");
  assert.deepEqual(exits, [], "CRI events are changes the CRI shows already, not task exits");
  assert.deepEqual(streaming, [true]);
  assert.equal(events.source, "cri");

  // A runtime without CRI events (containerd 1.6).
  opened.cri[0].emit("error", Object.assign(new Error("unknown method"), { code: 12, details: "unknown method GetContainerEvents" }));
  assert.equal(events.source, "containerd");
  assert.deepEqual(streaming, [true, false], "the configured relist period is back");
  assert.equal(opened.containerd.length, 1);
  opened.containerd[0].emit("data", envelope("c1"));
  opened.containerd[0].emit("data", envelope("c2"));
  assert.deepEqual(exits, ["c1", "c2"]);
  // The OOM killer, then the exit it caused; an exec'd process's end is no exit of the container.
  opened.containerd[0].emit("data", taskEnvelope("/tasks/oom", "TaskOOM", [wireBytes(1, "c4")]));
  opened.containerd[0].emit("data", taskEnvelope("/tasks/exit", "TaskExit", [wireBytes(1, "c4"), wireBytes(2, "exec-7"), bigVarintField(4, 1), exitedAt(1_764_000_000, 1)]));
  opened.containerd[0].emit("data", taskEnvelope("/tasks/exit", "TaskExit", [wireBytes(1, "c4"), wireBytes(2, "c4"), bigVarintField(4, 137), exitedAt(1_764_000_000, 2)]));
  assert.deepEqual(ooms, ["c4"]);
  assert.deepEqual(exits, ["c1", "c2", "c4"]);
  assert.deepEqual(exitCodes, [undefined, undefined, 137]);

  // containerd restarted: the stream breaks and is opened again after the back-off (1 s).
  opened.containerd[0].emit("error", Object.assign(new Error("unavailable"), { code: 14, details: "connection reset" }));
  opened.containerd[0].emit("end");
  assert.equal(opened.containerd.length, 1, "not at once");
  await new Promise((r) => setTimeout(r, 1100));
  assert.equal(opened.containerd.length, 2, "opened again, once");
  opened.containerd[1].emit("data", envelope("c3"));
  assert.deepEqual(exits, ["c1", "c2", "c4", "c3"]);
  assert.deepEqual(streaming, [true, false], "containerd's exits never slow the relist");

  // Neither: relists only.
  opened.containerd[1].emit("error", Object.assign(new Error("unimplemented"), { code: 12, details: "unknown service" }));
  assert.equal(events.source, "none");
  assert.ok(sources.some((s) => s.startsWith("none: containerd events")), sources.join("\n"));
  events.stop();
});

test("a CRI stream that breaks relists at the configured period until it streams again; the fifth break gives it up", async () => {
  const { opened, streams } = fakeStreams();
  const streaming = [];
  const sources = [];
  const events = new RuntimeEvents(streams, {
    onExit: () => {},
    onChange: () => {},
    onEventStream: (up) => streaming.push(up),
    onSource: (source, reason) => sources.push(`${source}: ${reason}`),
    firstRetryMs: 5,
  });
  events.start();
  const waitOpened = async (n) => {
    while (opened.cri.length < n) await new Promise((r) => setTimeout(r, 5));
  };
  for (let i = 0; i < 4; i++) {
    opened.cri[i].emit("metadata", {}); // headers: the stream is up
    assert.equal(streaming.at(-1), true, `stream ${i + 1} up`);
    opened.cri[i].emit("error", Object.assign(new Error("unavailable"), { code: 14, details: "connection reset" }));
    assert.equal(streaming.at(-1), false, `break ${i + 1}: periodic relists again`);
    await waitOpened(i + 2);
  }
  assert.deepEqual(streaming, [true, false, true, false, true, false, true, false]);
  assert.equal(events.source, "cri", "four breaks: still tried");
  opened.cri[4].emit("data", { containerId: "c", containerEventType: "CONTAINER_CREATED_EVENT" });
  opened.cri[4].emit("end");
  assert.equal(events.criFailures, 5);
  assert.equal(events.source, "containerd", "the fifth break gives the CRI stream up");
  assert.equal(opened.containerd.length, 1, "containerd's exits are listened to instead");
  assert.equal(streaming.at(-1), false);
  assert.ok(sources.some((s) => /containerd: GetContainerEvents broke 5 times, given up/.test(s)), sources.join("\n"));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(opened.cri.length, 5, "not opened again");
  events.stop();
});

test("a CRI stream with no message yet is up once open a moment on a connected channel, not before the runtime answers", async () => {
  const opened = [];
  let connected = false;
  const streams = {
    containerEvents: () => opened[opened.push(fakeStream()) - 1],
    containerdTaskExits: () => fakeStream(),
    connected: () => connected,
  };
  const streaming = [];
  const events = new RuntimeEvents(streams, { onExit: () => {}, onChange: () => {}, onEventStream: (up) => streaming.push(up) });
  events.start();
  await new Promise((r) => setTimeout(r, 1200));
  assert.deepEqual(streaming, [], "the runtime is not connected: not up");
  connected = true;
  await new Promise((r) => setTimeout(r, 700));
  assert.deepEqual(streaming, [true], "open and connected, no event yet (containerd sends no headers before one)");
  events.stop();
});
