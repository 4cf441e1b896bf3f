// subPath resolution against a tree that changes while it is resolved (issue 36). A volume holds
// a random tree of directories, files and symlinks (inside the volume, out of it, dangling, in
// loops); a swapper process keeps renaming one entry between a directory and a symlink out of
// the volume for the whole run. For a random subPath, the volume manager's safe make-dir and
// bind run as for a container. Properties: nothing is ever created outside the volume; a bind
// that is made shows a directory or file of the volume (every outside directory carries a
// marker, every outside file says "outside"); a refusal is a SubPathError; clean-up leaves no
// mount behind.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { SubPathError, bindSubPath, cleanSubPaths, safeMakeDir } from "../../../dist/volumes/subpath.js";
import { mountsUnder } from "../../../dist/volumes/mounts.js";

const component = fc.constantFrom("a", "b", "c", "swap", "etc", "..data", "x y", "deep");
const entry = fc.oneof(
  fc.record({ kind: fc.constant("dir"), at: fc.array(component, { minLength: 1, maxLength: 3 }) }),
  fc.record({ kind: fc.constant("file"), at: fc.array(component, { minLength: 1, maxLength: 3 }) }),
  fc.record({ kind: fc.constant("link"), at: fc.array(component, { minLength: 1, maxLength: 3 }), to: fc.constantFrom("OUT", "OUT/etc", "a", "../a", "../../..", "/", "/proc/self/root", "missing", "swap", ".") }),
);
export const arbitrary = fc.record({
  entries: fc.array(entry, { maxLength: 10 }),
  subPath: fc.array(component, { minLength: 1, maxLength: 4 }).map((parts) => parts.filter((p) => p !== "..").join("/") || "a"),
  make: fc.boolean(),
});

export async function setup() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-fuzz-subpath-"));
  const outside = path.join(root, "outside");
  for (const d of ["", "etc", "a", "deep", "X"]) {
    fs.mkdirSync(path.join(outside, d), { recursive: true });
    fs.writeFileSync(path.join(outside, d, ".outside"), "outside");
  }
  fs.writeFileSync(path.join(outside, "etc", "file"), "outside");
  const volume = path.join(root, "pods", "uid", "volumes", "v");
  fs.mkdirSync(volume, { recursive: true });
  const snapshot = listOutside(outside);
  // `swap` in the volume: a directory, then a symlink out, then a directory, for the whole run.
  const swapper = spawn(process.execPath, ["-e", `
    const fs = require("fs"); const v = ${JSON.stringify(volume)}; const out = ${JSON.stringify(outside)};
    for (;;) { try { fs.mkdirSync(v + "/.sd"); } catch {} try { fs.symlinkSync(out, v + "/.sl"); } catch {}
      try { fs.renameSync(v + "/.sd", v + "/swap"); } catch {} try { fs.renameSync(v + "/swap", v + "/.sd"); } catch {}
      try { fs.renameSync(v + "/.sl", v + "/swap"); } catch {} try { fs.renameSync(v + "/swap", v + "/.sl"); } catch {} }`], { stdio: "ignore" });
  return { root, outside, volume, snapshot, swapper, podDir: path.join(root, "pods", "uid"), n: 0 };
}

export async function teardown(ctx) {
  ctx.swapper.kill("SIGKILL");
  for (const m of mountsUnder(ctx.root)) spawn("umount", [m]);
  await new Promise((r) => setTimeout(r, 100));
  fs.rmSync(ctx.root, { recursive: true, force: true });
}

function listOutside(dir) {
  const out = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      out.push(path.relative(dir, path.join(d, e.name)));
      if (e.isDirectory()) walk(path.join(d, e.name));
    }
  };
  walk(dir);
  return out.sort().join("\n");
}

/** Whether each of `parts` below `base` is a directory (made when missing), none a link. */
function realDirectories(base, parts) {
  let at = base;
  for (const part of parts) {
    at = path.join(at, part);
    try {
      const st = fs.lstatSync(at);
      if (!st.isDirectory()) return false;
    } catch {
      fs.mkdirSync(at);
    }
  }
  return true;
}

export async function property(input, ctx) {
  const { volume, outside, podDir } = ctx;
  // A fresh tree in the volume (the swapper's entries are left to it).
  for (const name of fs.readdirSync(volume)) if (!name.startsWith(".s") && name !== "swap") fs.rmSync(path.join(volume, name), { recursive: true, force: true });
  for (const e of input.entries) {
    // The tree is made without going through a link (or the swapped entry): the harness itself
    // must not write outside.
    if (e.at.includes("swap") || !realDirectories(volume, e.at.slice(0, -1))) continue;
    const at = path.join(volume, ...e.at);
    try {
      if (e.kind === "dir") fs.mkdirSync(at, { recursive: true });
      else if (e.kind === "file") fs.writeFileSync(at, "inside");
      else fs.symlinkSync(e.to === "OUT" ? outside : e.to === "OUT/etc" ? path.join(outside, "etc") : e.to, at);
    } catch {
      // an entry where a file or link already is: the tree is what it is
    }
  }
  const request = { podDir, volumeName: "v", containerName: "c", mountIndex: ctx.n++ % 4, volumePath: volume, subPath: input.subPath };
  try {
    if (input.make) safeMakeDir(volume, input.subPath, 0o755);
    const target = bindSubPath(request);
    const st = fs.statSync(target);
    if (st.isDirectory() && fs.existsSync(path.join(target, ".outside"))) throw new Error(`the bind of ${input.subPath} shows a directory outside the volume`);
    if (st.isFile() && fs.readFileSync(target, "utf8") === "outside") throw new Error(`the bind of ${input.subPath} shows a file outside the volume`);
  } catch (error) {
    if (!(error instanceof SubPathError)) throw error;
  } finally {
    cleanSubPaths(podDir);
  }
  if (mountsUnder(podDir).length > 0) throw new Error("a mount was left behind");
  const now = listOutside(outside);
  if (now !== ctx.snapshot) throw new Error(`something was made outside the volume:\n${now}`);
}
