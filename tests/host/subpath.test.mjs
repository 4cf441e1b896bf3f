// subPath resolution against a tree that changes while it is resolved (issue 36): another process
// swaps a volume entry between a directory and a symlink out of the volume as fast as it can,
// while the volume manager opens and bind-mounts subPaths through it. Every bind must show the
// volume's directory or be refused; nothing may be created outside. Real mounts (root).
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { bindSubPath, cleanSubPaths, safeMakeDir, safeOpen, SubPathError } from "../../dist/volumes/subpath.js";
import { mountsUnder, removeUnmountedTree } from "../../dist/volumes/mounts.js";
import { applyFsGroup, diskUsageBytes } from "../../dist/volumes/volume-manager.js";

const roots = [];
function tempDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-subpath-"));
  roots.push(dir);
  return dir;
}
after(() => {
  for (const root of roots) {
    for (const m of mountsUnder(root)) spawn("umount", [m]);
  }
});

/** A volume with `real/etc/marker` = inside, and a host directory with the same tree = outside. */
function layout() {
  const root = tempDir();
  const volume = path.join(root, "pods", "uid", "volumes", "v");
  const outside = path.join(root, "outside");
  fs.mkdirSync(path.join(volume, "real", "etc"), { recursive: true });
  fs.mkdirSync(path.join(outside, "etc"), { recursive: true });
  fs.writeFileSync(path.join(volume, "real", "etc", "marker"), "inside");
  fs.writeFileSync(path.join(outside, "etc", "marker"), "outside");
  return { root, podDir: path.join(root, "pods", "uid"), volume, outside };
}

test("safeOpen refuses a symlink anywhere on the path, and `..`", () => {
  const { volume, outside } = layout();
  fs.symlinkSync(outside, path.join(volume, "link"));
  const fd = safeOpen(volume, "real/etc");
  assert.equal(fs.readlinkSync(`/proc/self/fd/${fd}`), path.join(fs.realpathSync(volume), "real", "etc"));
  fs.closeSync(fd);
  assert.throws(() => safeOpen(volume, "link/etc"), (e) => e instanceof SubPathError && /unexpected symlink found/.test(e.message));
  assert.throws(() => safeOpen(volume, "link"), (e) => e instanceof SubPathError && /unexpected symlink found/.test(e.message));
  assert.throws(() => safeOpen(volume, "real/../../x"), SubPathError);
});

test("safeMakeDir makes missing directories inside the volume with its mode, and nothing outside", () => {
  const { volume, outside } = layout();
  fs.chmodSync(volume, 0o777);
  safeMakeDir(volume, "a/b/c", 0o777);
  const made = fs.statSync(path.join(volume, "a/b/c"));
  assert.ok(made.isDirectory());
  assert.equal(made.mode & 0o777, 0o777, "the volume's mode, not narrowed by the umask");
  fs.symlinkSync(outside, path.join(volume, "tmpl"));
  assert.throws(() => safeMakeDir(volume, "tmpl/X/deeper", 0o755), (e) => e instanceof SubPathError && /outside of allowed base/.test(e.message));
  assert.equal(fs.existsSync(path.join(outside, "X")), false, "nothing made through the link");
  // A link inside the volume to a directory inside it is followed, as upstream's does.
  fs.symlinkSync("a", path.join(volume, "alias"));
  safeMakeDir(volume, "alias/new", 0o755);
  assert.ok(fs.statSync(path.join(volume, "a/new")).isDirectory());
});

test("a directory swapped with a symlink while subPaths are bound: every bind shows the volume or is refused", { timeout: 120_000 }, async () => {
  const { podDir, volume, outside } = layout();
  fs.mkdirSync(path.join(volume, "stash"));
  fs.symlinkSync(outside, path.join(volume, "stash", "link"));
  // The swapper: rename(2) only, so `real` is always either the directory or the link.
  const swapper = spawn(process.execPath, ["-e", `
    const fs = require("fs"), path = require("path");
    const v = ${JSON.stringify(volume)}, deadline = Date.now() + 60000;
    const real = path.join(v, "real"), dir = path.join(v, "stash", "dir"), link = path.join(v, "stash", "link");
    while (Date.now() < deadline) {
      fs.renameSync(real, dir); fs.renameSync(link, real);
      fs.renameSync(real, link); fs.renameSync(dir, real);
    }`], { stdio: "ignore" });
  await new Promise((r) => setTimeout(r, 200));
  let bound = 0;
  let refused = 0;
  try {
    // Until 100 binds were made: on a busy machine the swapper may win most races, and the test is
    // about every bind made, not about how many the machine's load lets through.
    for (let i = 0; i < 5000 && bound < 100; i++) {
      let target;
      try {
        target = bindSubPath({ podDir, volumeName: "v", containerName: "c", mountIndex: i % 8, volumePath: volume, subPath: "real/etc" });
      } catch (error) {
        assert.ok(error instanceof SubPathError, String(error));
        refused++;
        continue;
      }
      bound++;
      // Read through the bind after the swapper moved on: it must still be the volume's directory.
      await new Promise((r) => setImmediate(r));
      assert.equal(fs.readFileSync(path.join(target, "marker"), "utf8"), "inside", `bind ${i} shows the volume`);
    }
  } finally {
    swapper.kill();
  }
  assert.ok(bound > 0, `some binds were made (${bound} bound, ${refused} refused)`);
  cleanSubPaths(podDir);
  assert.deepEqual(mountsUnder(podDir), []);
  removeUnmountedTree(podDir);
  assert.equal(fs.readFileSync(path.join(outside, "etc", "marker"), "utf8"), "outside");
});

test("a pod directory with a mount still under it is not removed", () => {
  const { podDir, volume } = layout();
  const target = bindSubPath({ podDir, volumeName: "v", containerName: "c", mountIndex: 0, volumePath: volume, subPath: "real" });
  assert.throws(() => removeUnmountedTree(podDir), /still under it/);
  assert.equal(fs.readFileSync(path.join(target, "etc", "marker"), "utf8"), "inside");
  cleanSubPaths(podDir);
  removeUnmountedTree(podDir);
  assert.equal(fs.existsSync(podDir), false);
});

test("fsGroup and usage walks go through what they opened: an entry swapped for a link to a host file never gets the group", { timeout: 120_000 }, async () => {
  const { root, volume, outside } = layout();
  const hostFile = path.join(outside, "etc", "marker");
  const before = fs.statSync(hostFile);
  fs.mkdirSync(path.join(volume, "stash"));
  fs.writeFileSync(path.join(volume, "stash", "file"), "inside");
  fs.symlinkSync(hostFile, path.join(volume, "stash", "link"));
  fs.symlinkSync(outside, path.join(volume, "stash", "dirlink"));
  // `real/etc/f` and `real/deep` swap between a file, a directory and links to the host.
  const swapper = spawn(process.execPath, ["-e", `
    const fs = require("fs"), v = ${JSON.stringify(volume)}, deadline = Date.now() + 60000;
    const at = v + "/real/etc/f", deep = v + "/real/deep";
    try { fs.mkdirSync(v + "/stash/dir"); } catch {}
    while (Date.now() < deadline) {
      try { fs.renameSync(v + "/stash/file", at); fs.renameSync(at, v + "/stash/file"); } catch {}
      try { fs.renameSync(v + "/stash/link", at); fs.renameSync(at, v + "/stash/link"); } catch {}
      try { fs.renameSync(v + "/stash/dir", deep); fs.renameSync(deep, v + "/stash/dir"); } catch {}
      try { fs.renameSync(v + "/stash/dirlink", deep); fs.renameSync(deep, v + "/stash/dirlink"); } catch {}
    }`], { stdio: "ignore" });
  await new Promise((r) => setTimeout(r, 200));
  try {
    for (let i = 0; i < 300; i++) {
      applyFsGroup(path.join(volume, "real"), 4242, "Always");
      diskUsageBytes(path.join(volume, "real"));
      if (i % 20 === 0) await new Promise((r) => setImmediate(r));
    }
  } finally {
    swapper.kill();
  }
  const after = fs.statSync(hostFile);
  assert.equal(after.gid, before.gid, "the host file kept its group");
  assert.equal(after.mode, before.mode, "and its mode");
  for (const f of fs.readdirSync(outside, { recursive: true })) assert.notEqual(fs.statSync(path.join(outside, f)).gid, 4242, `outside/${f} kept its group`);
  assert.equal(fs.statSync(path.join(volume, "real", "etc", "marker")).gid, 4242, "the volume's own files got the group");
  void root;
});

test("a root directory reached through a symlink: binds are found, reused and removed by where they really are", () => {
  const { root, volume } = layout();
  const linked = path.join(root, "linked-pods");
  fs.symlinkSync(path.join(root, "pods"), linked);
  const podDir = path.join(linked, "uid");
  const request = { podDir, volumeName: "v", containerName: "c", mountIndex: 0, volumePath: volume, subPath: "real" };
  const target = bindSubPath(request);
  assert.equal(bindSubPath(request), target, "the bind is found and reused, not stacked");
  assert.equal(mountsUnder(podDir).length, 1);
  assert.throws(() => removeUnmountedTree(podDir), /still under it/, "never removed through the mount");
  cleanSubPaths(podDir);
  assert.deepEqual(mountsUnder(podDir), []);
  assert.equal(fs.readFileSync(path.join(volume, "real", "etc", "marker"), "utf8"), "inside");
});
