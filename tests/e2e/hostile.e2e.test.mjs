// Hostile manifests dropped into a running agent's directory on a real containerd: what the
// issue saw at dcdf406 (the agent exiting on a symlink loop, an alias bomb or a self-referring
// anchor; a restart with such a file present stopping every adopted static pod and never
// scanning again; a `../` uid writing outside the log directory) must leave the good pods'
// containers untouched, and a restarted agent must adopt them and keep scanning.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { Nanolet, privateContainerdForFile, podManifest, runtimeContainers, tempDir, waitFor } from "./harness.mjs";

const work = tempDir("nanolet-hostile-");
const containerd = privateContainerdForFile(path.join(work, "containerd"));

/** Each hostile file by name, with what its refusal must say. */
function writeHostileFiles(dir) {
  const at = (name) => path.join(dir, name);
  fs.symlinkSync("self.yaml", at("self.yaml"));
  fs.symlinkSync("pong.yaml", at("ping.yaml"));
  fs.symlinkSync("ping.yaml", at("pong.yaml"));
  const letters = "abcdefghij";
  const bomb = ["a: &a [x,x,x,x,x,x,x,x,x,x]"];
  for (let i = 1; i < 9; i++) bomb.push(`${letters[i]}: &${letters[i]} [${Array(10).fill(`*${letters[i - 1]}`).join(",")}]`);
  fs.writeFileSync(at("bomb.yaml"), bomb.join("\n") + "\n");
  fs.writeFileSync(at("cycle.yaml"), "apiVersion: v1\nkind: Pod\nmetadata: &m {name: x, self: *m}\n");
  fs.writeFileSync(at("escape.yaml"), podManifest("escape").replace("  name: escape\n", "  name: escape\n  uid: ../../escaped\n"));
  fs.writeFileSync(at("packed.yaml"), zlib.gzipSync(podManifest("packed")));
  fs.writeFileSync(at("binary.yaml"), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3]));
  execFileSync("mkfifo", [at("fifo.yaml")]);
  return {
    "self.yaml": /symlink loop/,
    "ping.yaml": /symlink loop/,
    "pong.yaml": /symlink loop/,
    "bomb.yaml": /Too many (aliases|values)/,
    "cycle.yaml": /refers to itself|invalid YAML/,
    "escape.yaml": /metadata\.uid/,
    "packed.yaml": /gzip/,
    "binary.yaml": /binary/,
    "fifo.yaml": /fifo/,
  };
}

async function waitRefusals(nanolet, dir, expected, fromLine) {
  for (const [file, pattern] of Object.entries(expected)) {
    await waitFor(`refusal of ${file}`, () =>
      nanolet.lines.slice(fromLine).find((l) => /msg="Refused pod manifest"/.test(l) && l.includes(path.join(dir, file)) && pattern.test(l)), 30_000);
  }
}

const containerIds = (pods) => Object.fromEntries(pods.map((p) => [p.name, p.containers.map((c) => c.containerId)]));

test("hostile manifests beside running pods: refused by name, the pods keep their containers, a restart adopts them and keeps scanning", { timeout: 240_000 }, async () => {
  const dir = path.join(work, "manifests");
  const logsDir = path.join(work, "logs");
  fs.mkdirSync(dir, { recursive: true });
  const options = { endpoint: containerd.endpoint, manifestDir: dir, rootDir: path.join(work, "root"), logsDir };
  let nanolet = new Nanolet(options);
  try {
    fs.writeFileSync(path.join(dir, "a.yaml"), podManifest("a"));
    fs.writeFileSync(path.join(dir, "b.yaml"), podManifest("b"));
    nanolet.start();
    await nanolet.waitPod("a", (p) => p.phase === "Running", "Running");
    await nanolet.waitPod("b", (p) => p.phase === "Running", "Running");
    const before = containerIds(await nanolet.pods());

    const expected = writeHostileFiles(dir);
    await waitRefusals(nanolet, dir, expected, 0);
    // The scan goes on: a manifest added after the hostile ones runs.
    fs.writeFileSync(path.join(dir, "c.yaml"), podManifest("c"));
    await nanolet.waitPod("c", (p) => p.phase === "Running", "Running beside the hostile files");
    assert.equal(nanolet.proc.exitCode, null, "the agent is still running");
    const during = containerIds(await nanolet.pods());
    for (const name of Object.keys(before)) assert.deepEqual(during[name], before[name], `${name} kept its container`);
    // Nothing was written outside the log directory under the escaping uid.
    assert.equal(fs.existsSync(path.join(work, "escaped")), false);
    assert.equal(fs.existsSync(path.resolve(logsDir, "../../escaped")), false);

    // Restarted with every hostile file present: the pods are adopted, not stopped or recreated.
    await nanolet.stop();
    nanolet = new Nanolet(options).start();
    await waitRefusals(nanolet, dir, expected, 0);
    for (const name of ["a", "b", "c"]) await nanolet.waitPod(name, (p) => p.phase === "Running" && p.containers[0]?.containerId, "adopted");
    const adopted = containerIds(await nanolet.pods());
    for (const name of Object.keys(during)) assert.deepEqual(adopted[name], during[name], `${name} was adopted with its container`);
    assert.equal(nanolet.logLines(/msg="Container created"/).length, 0, "nothing was created again");
    assert.equal(nanolet.logLines(/Pod removed from its source/).length, 0, "no adopted pod was stopped");
    fs.writeFileSync(path.join(dir, "d.yaml"), podManifest("d"));
    await nanolet.waitPod("d", (p) => p.phase === "Running", "Running after the restart");
    assert.equal(runtimeContainers(containerd).filter((c) => c.task === "RUNNING").length, 8, "four pods, each a sandbox and a container");
  } finally {
    for (const f of fs.readdirSync(dir)) fs.rmSync(path.join(dir, f));
    await waitFor("all pods removed", () => runtimeContainers(containerd).length === 0, 60_000).catch(() => {});
    await nanolet.stop();
  }
});
