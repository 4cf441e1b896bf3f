// What a newcomer meets first on the command line: an unknown command is named as unknown, the
// launcher says to build before the first build instead of a module stack trace, and the version
// names the upstream kubelet release the defaults follow.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = path.join(here, "../../bin/nanolet");
const nanolet = (args, file = bin) => spawnSync(process.execPath, [file, ...args], { encoding: "utf8" });

test("an unknown command is named, with where the usage is, and exits 2; help exits 0", () => {
  const bogus = nanolet(["bogus"]);
  assert.equal(bogus.status, 2);
  assert.match(bogus.stderr, /^nanolet: unknown command "bogus"\n/);
  assert.match(bogus.stderr, /Run 'nanolet --help'/);
  assert.equal(bogus.stdout, "");
  const long = nanolet(["x".repeat(5000) + "\u001b[2J"]);
  assert.equal(long.status, 2);
  assert.ok(long.stderr.split("\n")[0].length < 100, "the echoed word is cut");
  for (const help of [[], ["help"], ["--help"], ["-h"]]) {
    const r = nanolet(help);
    assert.equal(r.status, 0, help.join(" "));
    assert.match(r.stdout, /^Usage:/);
  }
});

test("before the first build the launcher says how to build, not a stack trace", () => {
  const checkout = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-unbuilt-"));
  fs.mkdirSync(path.join(checkout, "bin"));
  fs.copyFileSync(bin, path.join(checkout, "bin/nanolet"));
  const r = nanolet(["pods"], path.join(checkout, "bin/nanolet"));
  fs.rmSync(checkout, { recursive: true, force: true });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /not built yet: run `npm run build`/);
  assert.doesNotMatch(r.stderr, /ERR_MODULE_NOT_FOUND|at .*\.js:\d+/);
});

test("version names the kubelet release whose defaults nanolet follows", () => {
  const r = nanolet(["version"]);
  assert.equal(r.status, 0);
  assert.match(r.stdout, /^nanolet \d+\.\d+\.\d+ \(kubelet v1\.36\.2\+nanolet; node v/);
});
