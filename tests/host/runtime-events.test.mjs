// Runtime events: the containerd task-exit envelope's container ID read by hand (host/proto-wire.ts), and the source
// chosen in order (CRI's GetContainerEvents, then containerd's events, then none), with a broken
// stream opened again. The real streams on a real containerd are in tests/e2e/nanolet.e2e.test.mjs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { RuntimeEvents, taskExitContainerId } from "../../dist/cri/runtime-events.js";
import { bytesField as wireBytes, readBytesField, readVarintField } from "../../dist/proto-wire.js";

/** Protobuf bytes: a length-delimited field, and a varint field. */
const bytesField = (field, body) => Buffer.concat([Buffer.from([(field << 3) | 2, body.length]), body]);
const varintField = (field, value) => Buffer.from([field << 3, value]);

function envelope(containerId) {
  const taskExit = Buffer.concat([bytesField(1, Buffer.from(containerId)), bytesField(2, Buffer.from(containerId)), varintField(3, 42), varintField(4, 137)]);
  const any = Buffer.concat([bytesField(1, Buffer.from("containerd.events.TaskExit")), bytesField(2, taskExit)]);
  return Buffer.concat([bytesField(2, Buffer.from("k8s.io")), bytesField(3, Buffer.from("/tasks/exit")), bytesField(4, any)]);
}

test("the container ID of a containerd task-exit envelope; malformed envelopes give none", () => {
  assert.equal(taskExitContainerId(envelope("abc123")), "abc123");
  assert.equal(taskExitContainerId(Buffer.alloc(0)), "");
  assert.equal(taskExitContainerId(Buffer.from([0x22, 0x50, 0x01])), "", "a length past the end");
  assert.equal(taskExitContainerId(Buffer.from([0x23])), "", "an unknown wire type");
  assert.equal(readBytesField(Buffer.concat([varintField(1, 5), bytesField(2, Buffer.from("x"))]), 2).toString(), "x", "varint fields are skipped");
  assert.equal(readVarintField(Buffer.concat([bytesField(2, Buffer.from("x")), varintField(1, 5)]), 1), 5);
  assert.equal(readVarintField(bytesField(1, Buffer.from("x")), 1), undefined, "a field of another wire type");
  // The gRPC health check a probe sends and reads: HealthCheckRequest{service: "svc"}, HealthCheckResponse{status: SERVING}.
  assert.deepEqual(wireBytes(1, "svc"), Buffer.from([0x0a, 3, 0x73, 0x76, 0x63]));
  assert.equal(readVarintField(Buffer.from([0x08, 1]), 1), 1);
  // The writer is what the reader reads (lengths past 127 take two bytes).
  assert.equal(readBytesField(wireBytes(3, "y".repeat(300)), 3).toString(), "y".repeat(300));
});

/** A stream as grpc-js gives it: an emitter with cancel(). */
function fakeStream() {
  const s = new EventEmitter();
  s.cancel = () => {
    s.cancelled = true;
  };
  return s;
}

test("CRI events first; UNIMPLEMENTED moves to containerd's; a broken stream is opened again", async () => {
  const opened = { cri: [], containerd: [] };
  const streams = {
    containerEvents: () => opened.cri[opened.cri.push(fakeStream()) - 1],
    containerdTaskExits: () => opened.containerd[opened.containerd.push(fakeStream()) - 1],
  };
  const exits = [];
  const sources = [];
  const events = new RuntimeEvents(streams, { onExit: (id) => exits.push(id), onSource: (source, reason) => sources.push(`${source}: ${reason}`) });
  events.start();
  assert.equal(opened.cri.length, 1);
  opened.cri[0].emit("data", { containerId: "c1", containerEventType: "CONTAINER_STARTED_EVENT" });
  opened.cri[0].emit("data", { containerId: "c1", containerEventType: "CONTAINER_STOPPED_EVENT" });
  assert.deepEqual(exits, ["c1"], "only stops are exits");
  assert.equal(events.source, "cri");

  // A runtime without CRI events (containerd 1.6).
  opened.cri[0].emit("error", Object.assign(new Error("unknown method"), { code: 12, details: "unknown method GetContainerEvents" }));
  assert.equal(events.source, "containerd");
  assert.equal(opened.containerd.length, 1);
  opened.containerd[0].emit("data", envelope("c2"));
  assert.deepEqual(exits, ["c1", "c2"]);

  // containerd restarted: the stream breaks and is opened again after the back-off (1 s).
  opened.containerd[0].emit("error", Object.assign(new Error("unavailable"), { code: 14, details: "connection reset" }));
  opened.containerd[0].emit("end");
  assert.equal(opened.containerd.length, 1, "not at once");
  await new Promise((r) => setTimeout(r, 1100));
  assert.equal(opened.containerd.length, 2, "opened again, once");
  opened.containerd[1].emit("data", envelope("c3"));
  assert.deepEqual(exits, ["c1", "c2", "c3"]);

  // Neither: relists only.
  opened.containerd[1].emit("error", Object.assign(new Error("unimplemented"), { code: 12, details: "unknown service" }));
  assert.equal(events.source, "none");
  assert.ok(sources.some((s) => s.startsWith("none: containerd events")), sources.join("\n"));
  events.stop();
});
