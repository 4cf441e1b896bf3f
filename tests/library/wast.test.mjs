// The pure interfaces on the core module alone, under wabt's spectest-interp (Debian `wabt`):
// no component model and no JavaScript between the cases and the core. The generated driver
// must pass every case, and must fail when a case expects something else.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { CASES } from "./cases.mjs";
import { generateWast } from "./wast-driver.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const core = fs.readFileSync(path.join(root, "build/out/core.renamed.wasm"));

/** Runs the cases under spectest-interp; returns the ids of those that did not pass. */
function runWast(cases, name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-wast-"));
  const wast = path.join(dir, `${name}.wast`);
  fs.writeFileSync(wast, generateWast(core, cases));
  execFileSync("wast2json", [wast, "-o", path.join(dir, `${name}.json`)]);
  let output;
  try {
    output = execFileSync("spectest-interp", [path.join(dir, `${name}.json`)], { encoding: "utf8" });
  } catch (e) {
    output = `${e.stdout ?? ""}${e.stderr ?? ""}`;
  }
  const lines = fs.readFileSync(wast, "utf8").split("\n");
  const failed = [...output.matchAll(/\.wast:(\d+): (.*)/g)].map((m) => `${lines[Number(m[1]) - 1].split(";; ")[1]}: ${m[2]}`);
  const total = /(\d+)\/(\d+) tests passed/.exec(output);
  assert.ok(total, `spectest-interp printed no summary:\n${output}`);
  fs.rmSync(dir, { recursive: true, force: true });
  return { failed, passed: Number(total[1]), commands: Number(total[2]) };
}

test("wast: every case passes on the core module under spectest-interp", () => {
  const { failed, passed } = runWast(CASES, "library");
  assert.deepEqual(failed, []);
  // One assert_return per case, plus the three module commands.
  assert.equal(passed, CASES.length + 3);
});

test("wast: the driver catches a wrong expectation", () => {
  const wrong = ["oom/burstable", "qos/bad-quantity", "in-back-off/within"].map((id) => structuredClone(CASES.find((c) => c.id === id)));
  wrong[0].ok[1].oomScoreAdj = 998;
  wrong[1].err = wrong[1].err.replace("12x", "12y");
  wrong[2].ok = false;
  const { failed } = runWast(wrong, "wrong");
  assert.equal(failed.length, 3, failed.join("\n"));
});
