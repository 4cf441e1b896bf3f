// The OOM watcher on recorded kernel logs (/dev/kmsg records): which OOM kills become upstream's
// SystemOOM node event and with what words, and that a restarted agent neither repeats nor misses one.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { OomWatcher, OomParser, parseKmsgRecord, systemOomEvent } from "../../dist/node/oom-watcher.js";

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/kmsg");
const records = (name) => fs.readFileSync(path.join(fixtures, name), "utf8").split("\n").filter(Boolean);
const quiet = { log: () => {} };

function run(names, options = {}) {
  const seen = [];
  const watcher = new OomWatcher({ log: quiet, stateFile: options.stateFile ?? path.join(fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-oom-")), "position"), bootId: options.bootId ?? "boot-1", onOom: (i) => seen.push(i) });
  for (const name of names) for (const r of records(name)) watcher.record(r);
  return { seen, watcher };
}

test("a kernel OOM whose victim is in no cgroup is a SystemOOM with its process and pid", () => {
  const { seen } = run(["global-oom.txt"]);
  assert.equal(seen.length, 1);
  assert.deepEqual(systemOomEvent(seen[0]), { reason: "SystemOOM", message: "System OOM encountered, victim process: stress, pid: 2001" });
});

test("a container killed by its own limit is not a system OOM (its status says OOMKilled)", () => {
  const { seen } = run(["memcg-oom.txt"]);
  assert.equal(seen.length, 1);
  assert.equal(seen[0].victimContainerName, "/kubepods/burstable/pod7c1a/4be2");
  assert.equal(seen[0].pid, 5100);
  assert.equal(systemOomEvent(seen[0]), undefined);
  // The older kernels' "Task in ... killed as a result of limit of ..." line names the cgroups too.
  const legacy = run(["legacy-oom.txt"]).seen;
  assert.equal(legacy[0].victimContainerName, "/user.slice");
  assert.equal(systemOomEvent(legacy[0]), undefined);
});

test("records are read once: a restart in the same boot goes on after the last one seen; another boot starts over", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-oom-"));
  const stateFile = path.join(dir, "position");
  const first = run(["global-oom.txt"], { stateFile });
  first.watcher.stop();
  assert.equal(fs.readFileSync(stateFile, "utf8"), "boot-1 9006\n");
  assert.equal(run(["global-oom.txt", "memcg-oom.txt"], { stateFile }).seen.length, 1, "only the new report");
  assert.equal(run(["global-oom.txt"], { stateFile, bootId: "boot-2" }).seen.length, 1);
});

test("kmsg records are parsed bounded; a report that never ends is dropped", () => {
  assert.deepEqual(parseKmsgRecord("6,42,1000,-;hello\n SUBSYSTEM=x\n"), { seq: 42n, message: "hello" });
  assert.equal(parseKmsgRecord("garbage"), undefined);
  const parser = new OomParser();
  parser.feed("x invoked oom-killer: gfp_mask=0");
  for (let i = 0; i < 1000; i++) parser.feed("noise");
  assert.equal(parser.feed("Killed process 1 (x) total-vm:1kB"), undefined);
});
