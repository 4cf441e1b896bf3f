#!/usr/bin/env node
// The fuzzing harness (`npm run fuzz`): every surface that takes outside input, driven by
// fast-check from one seed. A run first replays every input that ever failed (the corpus under
// tests/fuzz/corpus/<target>/, each a regression test), then explores each target for its time
// budget. A failure prints the target, seed, path and input, saves the input to the corpus, and
// prints the command that replays it.
//
//   node tests/fuzz/run.mjs                          every target, 60 s each (FUZZ_SECONDS)
//   node tests/fuzz/run.mjs manifest-text --seconds 10 --seed 42
//   node tests/fuzz/run.mjs manifest-text --seed 42 --path 17:3   replay one fast-check run
//   node tests/fuzz/run.mjs --replay tests/fuzz/corpus/manifest-text/<file>.json
//   node tests/fuzz/run.mjs --corpus-only            only the regression corpus
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import fc from "fast-check";
import { decode, encode } from "./codec.mjs";
import { TARGETS } from "./targets/index.mjs";

const here = path.dirname(new URL(import.meta.url).pathname);
const corpusDir = path.join(here, "corpus");

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    seconds: { type: "string" },
    seed: { type: "string" },
    path: { type: "string" },
    replay: { type: "string" },
    "corpus-only": { type: "boolean", default: false },
    "no-save": { type: "boolean", default: false },
  },
});

const seconds = Number(values.seconds ?? process.env.FUZZ_SECONDS ?? 60);
const chosen = positionals.length > 0 ? positionals : Object.keys(TARGETS);
for (const name of chosen) if (!TARGETS[name]) throw new Error(`unknown fuzz target "${name}" (targets: ${Object.keys(TARGETS).join(", ")})`);

let passed = 0;
let failed = 0;

function preview(input) {
  const text = encode(input);
  return text.length > 2000 ? `${text.slice(0, 2000)}... (${text.length} characters)` : text;
}

function save(name, input) {
  if (values["no-save"]) return undefined;
  const text = encode(input);
  const file = path.join(corpusDir, name, `${crypto.createHash("sha256").update(text).digest("hex").slice(0, 16)}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text + "\n");
  return file;
}

async function replayOne(name, file) {
  const target = TARGETS[name];
  const ctx = await target.setup?.();
  try {
    await target.property(decode(fs.readFileSync(file, "utf8")), ctx);
    passed++;
    process.stdout.write(`ok   ${name} corpus ${path.relative(process.cwd(), file)}\n`);
  } catch (error) {
    failed++;
    process.stdout.write(`FAIL ${name} corpus ${path.relative(process.cwd(), file)}\n  ${(error?.stack ?? String(error)).split("\n").slice(0, 6).join("\n  ")}\n`);
  } finally {
    await target.teardown?.(ctx);
  }
}

async function explore(name) {
  const target = TARGETS[name];
  const seed = values.seed !== undefined ? Number(values.seed) : crypto.randomInt(0, 2 ** 31);
  const ctx = await target.setup?.();
  const started = Date.now();
  let details;
  try {
    details = await fc.check(
      fc.asyncProperty(target.arbitrary, async (input) => {
        await target.property(input, ctx);
      }),
      {
        seed,
        path: values.path,
        numRuns: values.path ? 1 : 1_000_000_000,
        interruptAfterTimeLimit: seconds * 1000,
        markInterruptAsFailure: false,
      },
    );
  } finally {
    await target.teardown?.(ctx);
  }
  const tookS = ((Date.now() - started) / 1000).toFixed(1);
  if (!details.failed) {
    passed++;
    process.stdout.write(`ok   ${name} seed=${seed} runs=${details.numRuns} in ${tookS}s\n`);
    return;
  }
  failed++;
  const input = details.counterexample?.[0];
  const file = save(name, input);
  const error = details.errorInstance ?? details.error;
  process.stdout.write(
    `FAIL ${name} seed=${seed} path=${details.counterexamplePath} after ${details.numRuns} runs\n` +
      `  ${String(error?.stack ?? error).split("\n").slice(0, 8).join("\n  ")}\n` +
      `  input: ${preview(input)}\n` +
      (file ? `  saved: ${path.relative(process.cwd(), file)}\n` : "") +
      `  reproduce: node tests/fuzz/run.mjs ${name} --seed ${seed} --path ${details.counterexamplePath}\n` +
      (file ? `  replay:    node tests/fuzz/run.mjs --replay ${path.relative(process.cwd(), file)}\n` : ""),
  );
}

if (values.replay) {
  const name = path.basename(path.dirname(values.replay));
  await replayOne(name, values.replay);
} else {
  for (const name of chosen) {
    const dir = path.join(corpusDir, name);
    const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith(".json")).sort() : [];
    for (const f of files) await replayOne(name, path.join(dir, f));
  }
  if (!values["corpus-only"]) for (const name of chosen) await explore(name);
}
process.stdout.write(`fuzz: ${passed} passed, ${failed} failed\n`);
process.exitCode = failed === 0 ? 0 : 1;
// Targets may leave sockets or servers behind on failure: do not wait for them.
setImmediate(() => process.exit(process.exitCode));
