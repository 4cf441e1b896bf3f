// The manifest directory's shapes: files, symlinks (to files, to each other, to themselves, to
// nowhere, out of the directory), fifos, directories named like manifests, empty and large
// files, beside one good manifest. Properties: the scan never throws or blocks; the good pod is
// read; every problem names an entry of the directory; a link to the good file reads it again.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { scanManifestDir } from "../../../dist/sources/static-pods.js";
import { GOOD_YAML } from "./manifest-text.mjs";

const names = fc.constantFrom("a.yaml", "b.yml", "c.json", "d.YAML", ".hidden.yaml", "e.txt", "f.yaml", "g.yaml");
const entry = fc.oneof(
  fc.record({ kind: fc.constant("file"), name: names, content: fc.oneof(fc.string({ maxLength: 200 }), fc.constant(GOOD_YAML.replace("good", "other")), fc.constant("")) }),
  fc.record({ kind: fc.constant("symlink"), name: names, to: fc.oneof(names, fc.constantFrom("good.yaml", "missing.yaml", "../outside.yaml", "/dev/null", "/proc/self/fd/0", ".", "..", "/")) }),
  fc.record({ kind: fc.constant("fifo"), name: names }),
  fc.record({ kind: fc.constant("dir"), name: names }),
  fc.record({ kind: fc.constant("big"), name: names, bytes: fc.integer({ min: 200_000, max: 400_000 }) }),
);

export const arbitrary = fc.array(entry, { maxLength: 8 });

export async function setup() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-fuzz-dir-"));
  fs.writeFileSync(path.join(root, "outside.yaml"), GOOD_YAML.replace("good", "outside"));
  return { root, n: 0 };
}

export async function teardown(ctx) {
  fs.rmSync(ctx.root, { recursive: true, force: true });
}

export async function property(entries, ctx) {
  const dir = path.join(ctx.root, `d${ctx.n++}`);
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, "good.yaml"), GOOD_YAML);
  const made = new Set(["good.yaml"]);
  for (const e of entries) {
    if (made.has(e.name)) continue;
    made.add(e.name);
    const at = path.join(dir, e.name);
    if (e.kind === "file") fs.writeFileSync(at, e.content);
    else if (e.kind === "symlink") fs.symlinkSync(e.to, at);
    else if (e.kind === "fifo") execFileSync("mkfifo", [at]);
    else if (e.kind === "dir") fs.mkdirSync(at);
    else fs.writeFileSync(at, Buffer.alloc(e.bytes, 0x23));
  }
  try {
    const { pods, problems, failed } = scanManifestDir(dir, "fuzz");
    if (failed !== undefined) throw new Error(`the scan failed as a whole: ${failed}`);
    if (!pods.some((p) => p.spec.name === "good-fuzz" && p.origin === path.join(dir, "good.yaml"))) throw new Error("the good pod was not read");
    for (const p of problems) {
      if (path.dirname(p.origin.split("#")[0]) !== dir) throw new Error(`a problem names something outside the directory: ${p.origin}`);
      if (!p.message) throw new Error(`a problem without words: ${JSON.stringify(p)}`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
