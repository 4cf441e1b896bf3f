// The /var/log/containers links log shippers read, in a directory of the test's own: upstream's
// names (cut to a file name's 255 bytes), made only to a log that exists, replaced whole, removed
// with the container, and swept when dangling unless the container still runs.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ContainerLogLinks, containerIdOfLink, logLinkName } from "../../dist/logs/log-links.js";

const quiet = { log() {} };
const id = "4f1c2a9e8b7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a3928170605f4e3";

function fresh() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-log-links-"));
  const dir = path.join(root, "containers");
  const logs = path.join(root, "pods/default_web_uid1/app");
  fs.mkdirSync(logs, { recursive: true });
  const logPath = path.join(logs, "0.log");
  fs.writeFileSync(logPath, "2026-12-07T00:00:00Z stdout F hello\n");
  return { root, dir, logPath, links: new ContainerLogLinks(quiet, dir) };
}

test("the link's name is upstream's, cut to 255 bytes, and gives its container ID back", () => {
  assert.equal(logLinkName("web", "default", "app", id), `web_default_app-${id}.log`);
  const long = logLinkName("p".repeat(253), "default", "app", id);
  assert.equal(long.length, 255);
  assert.ok(long.endsWith(".log"));
  assert.equal(containerIdOfLink(`web_default_app-${id}.log`), id);
  assert.equal(containerIdOfLink("web_default_app-abc.log"), undefined, "too short to name a container");
  assert.equal(containerIdOfLink("web_default_app.txt"), undefined);
});

test("a started container's log is linked; the link is replaced whole and removed with the container", () => {
  const { root, dir, logPath, links } = fresh();
  const names = { podName: "web", podNamespace: "default", containerName: "app", containerId: id };
  links.link(names, logPath);
  const link = path.join(dir, `web_default_app-${id}.log`);
  assert.equal(fs.readlinkSync(link), logPath);
  assert.match(fs.readFileSync(link, "utf8"), /hello/);
  // Linked again (an agent restarted between create and start): still one link, to the log.
  links.link(names, logPath);
  assert.deepEqual(fs.readdirSync(dir), [`web_default_app-${id}.log`]);
  links.unlink(names);
  assert.deepEqual(fs.readdirSync(dir), []);
  links.unlink(names); // already gone: nothing to say
  // A name at the file-name limit links too.
  const longNames = { ...names, podName: "p".repeat(253) };
  links.link(longNames, logPath);
  assert.equal(fs.readdirSync(dir)[0].length, 255);
  links.unlink(longNames);
  assert.deepEqual(fs.readdirSync(dir), []);
  // No link to a log that does not exist.
  links.link({ ...names, containerId: "a".repeat(64) }, path.join(root, "missing.log"));
  assert.deepEqual(fs.readdirSync(dir), []);
  fs.rmSync(root, { recursive: true, force: true });
});

test("the sweep removes dangling links, but not a running container's, a live link or a file", () => {
  const { root, dir, logPath, links } = fresh();
  const live = { podName: "web", podNamespace: "default", containerName: "app", containerId: id };
  links.link(live, logPath);
  const goneId = "b".repeat(64);
  const runningId = "c".repeat(64);
  fs.symlinkSync(path.join(root, "nowhere/0.log"), path.join(dir, `old_default_app-${goneId}.log`));
  fs.symlinkSync(path.join(root, "nowhere/1.log"), path.join(dir, `still_default_app-${runningId}.log`));
  fs.writeFileSync(path.join(dir, `someone-elses-file-${goneId}.log`), "not a link");
  assert.equal(links.sweepDangling(new Set([runningId])), 1);
  assert.deepEqual(fs.readdirSync(dir).sort(), [`someone-elses-file-${goneId}.log`, `still_default_app-${runningId}.log`, `web_default_app-${id}.log`].sort());
  fs.rmSync(root, { recursive: true, force: true });
  assert.equal(new ContainerLogLinks(quiet, path.join(root, "absent")).sweepDangling(new Set()), 0);
});

test("a removed container's log and rotated files go a minute after it, only regular files under the pod logs directory", async () => {
  const { RemovedLogs, REMOVED_LOG_KEPT_MS } = await import("../../dist/logs/removed-logs.js");
  const logs = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-removed-logs-"));
  const dir = path.join(logs, "default_web_uid", "app");
  fs.mkdirSync(dir, { recursive: true });
  for (const name of ["0.log", "0.log.20261207-101010", "0.log.20261207-090909.gz", "1.log"]) fs.writeFileSync(path.join(dir, name), "x\n");
  const outside = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-outside-"));
  fs.writeFileSync(path.join(outside, "0.log"), "keep\n");
  let now = 1_000;
  const removed = new RemovedLogs(logs, { log() {} }, () => now);
  removed.add(path.join(dir, "0.log"));
  removed.add(path.join(outside, "0.log")); // not under the pod logs directory: never touched
  now += REMOVED_LOG_KEPT_MS - 1;
  removed.sweep();
  assert.equal(fs.readdirSync(dir).length, 4, "kept for a minute");
  now += 1;
  removed.sweep();
  assert.deepEqual(fs.readdirSync(dir), ["1.log"]);
  assert.equal(fs.readFileSync(path.join(outside, "0.log"), "utf8"), "keep\n");
  assert.equal(removed.size, 0);
});
