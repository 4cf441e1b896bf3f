// The trace file sink and codec: a size-limited recording stops at a line boundary and says so
// once; bad trace lines are named by line and field.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { FileTraceSink } from "../../dist/trace/file-sink.js";
import { TraceFormatError, decodeSnapshot } from "../../dist/trace/codec.js";
import { replayLines } from "../../dist/trace/replay.js";

test("a recording past its size limit stops at a line boundary and reports it once", () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-trace-")), "t.jsonl");
  const full = [];
  const sink = new FileTraceSink(file, { maxBytes: 1000, onFull: (bytes) => full.push(bytes) });
  for (let i = 0; i < 100; i++) sink.sink(JSON.stringify({ t: i, op: "sim", event: "x".repeat(20) }));
  sink.close();
  const text = fs.readFileSync(file, "utf8");
  assert.ok(text.length <= 1000 && text.length > 900, `${text.length} bytes`);
  assert.ok(text.endsWith("\n"));
  for (const line of text.trim().split("\n")) assert.equal(JSON.parse(line).op, "sim");
  assert.deepEqual(full, [text.length]);
});

test("bad trace lines are refused with their line and field", async () => {
  assert.throws(() => decodeSnapshot({ listedAtMs: "12", sandboxes: [], containers: [{ createdAtNs: "x" }] }), (e) => e instanceof TraceFormatError && /containers\[0\]\.createdAtNs: expected an integer/.test(e.message));
  await assert.rejects(replayLines(['{"t":1,"op":"poll","out":[]}']), /line 1: "poll" before any "create" line/);
  await assert.rejects(replayLines(["{not json"]), /line 1: not JSON/);
});
