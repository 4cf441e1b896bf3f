// Termination messages read as upstream reads them: the file (at most 4096 bytes, its end), or
// with FallbackToLogsOnError and a failure exit, the log's last lines (80, 2048 bytes).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ANNOTATION_LOG_FILE, ANNOTATION_TERMINATION_FILE, ANNOTATION_TERMINATION_POLICY, prepareTerminationMessageFile, terminationMessage } from "../../dist/logs/termination-message.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-tm-"));

test("the file's words; its last 4096 bytes when longer; writable by any user", () => {
  const file = prepareTerminationMessageFile(path.join(dir, "pods"), "uid-1", "app");
  assert.equal(fs.statSync(file).mode & 0o777, 0o666);
  assert.ok(file.startsWith(path.join(dir, "pods", "uid-1", "containers", "app") + path.sep));
  const annotations = { [ANNOTATION_TERMINATION_FILE]: file, [ANNOTATION_TERMINATION_POLICY]: "File" };
  assert.equal(terminationMessage(annotations, 1, "Error"), "");
  fs.writeFileSync(file, "x".repeat(5000) + "END");
  const message = terminationMessage(annotations, 1, "Error");
  assert.equal(Buffer.byteLength(message), 4096);
  assert.ok(message.endsWith("END"));
  assert.throws(() => prepareTerminationMessageFile(path.join(dir, "pods"), "..", "app"));
});

test("FallbackToLogsOnError: the log's end on a failure exit only, and only when the file is empty", () => {
  const log = path.join(dir, "0.log");
  const lines = Array.from({ length: 100 }, (_, i) => `2026-12-05T00:00:00Z stdout F line ${i}`);
  fs.writeFileSync(log, [...lines, "2026-12-05T00:00:00Z stderr P part", "2026-12-05T00:00:00Z stderr F ial", ""].join("\n"));
  const file = prepareTerminationMessageFile(path.join(dir, "pods"), "uid-2", "app");
  const annotations = { [ANNOTATION_TERMINATION_FILE]: file, [ANNOTATION_TERMINATION_POLICY]: "FallbackToLogsOnError", [ANNOTATION_LOG_FILE]: log };
  const tail = terminationMessage(annotations, 2, "Error").split("\n");
  assert.equal(tail.length, 80);
  assert.equal(tail.at(-1), "partial");
  assert.equal(tail[0], "line 21");
  assert.equal(terminationMessage(annotations, 0, "Completed"), "", "not on success");
  fs.writeFileSync(file, "from the file");
  assert.equal(terminationMessage(annotations, 2, "Error"), "from the file");
});
