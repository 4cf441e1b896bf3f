// The trace reader of `nanolet sim --replay`: random lines, and real trace lines cut, swapped,
// repeated and edited. Property: replay reports a divergence or a format error, never throws
// anything else, and never traps the core it replays on.
import fc from "fast-check";
import { replayLines } from "../../../dist/trace/replay.js";
import { TraceFormatError } from "../../../dist/trace/codec.js";
import { CoreTrapError } from "../../../dist/core/core.js";
import { Simulator } from "../../../dist/sim/simulator.js";
import { loadScenarioFile } from "../../../dist/sim/scenario.js";
import { someString } from "./pod-values.mjs";

let realLines;
async function traceLines() {
  if (realLines) return realLines;
  const lines = [];
  const scenario = loadScenarioFile(new URL("../../sim/crash-loop-backoff.yaml", import.meta.url).pathname);
  await Simulator.run({ scenario, seed: 1, trace: (line) => lines.push(line) });
  realLines = lines.flatMap((l) => l.split("\n")).filter(Boolean).slice(0, 400);
  return realLines;
}

const edit = fc.oneof(
  fc.record({ op: fc.constant("cut"), at: fc.nat(), keep: fc.nat({ max: 200 }) }),
  fc.record({ op: fc.constant("drop"), at: fc.nat() }),
  fc.record({ op: fc.constant("swap"), at: fc.nat(), with: fc.nat() }),
  fc.record({ op: fc.constant("replace"), at: fc.nat(), text: fc.oneof(someString, fc.json()) }),
  fc.record({ op: fc.constant("repeat"), at: fc.nat(), times: fc.integer({ min: 1, max: 20 }) }),
);

export const arbitrary = fc.record({ keep: fc.integer({ min: 0, max: 400 }), edits: fc.array(edit, { maxLength: 6 }) });

export async function setup() {
  return { lines: await traceLines() };
}

export async function property({ keep, edits }, ctx) {
  const lines = ctx.lines.slice(0, keep);
  for (const e of edits) {
    if (lines.length === 0) break;
    const i = e.at % lines.length;
    if (e.op === "cut") lines[i] = lines[i].slice(0, e.keep);
    else if (e.op === "drop") lines.splice(i, 1);
    else if (e.op === "swap") [lines[i], lines[e.with % lines.length]] = [lines[e.with % lines.length], lines[i]];
    else if (e.op === "replace") lines[i] = e.text;
    else lines.splice(i, 0, ...Array(e.times).fill(lines[i]));
  }
  try {
    await replayLines(lines);
  } catch (error) {
    if (error instanceof TraceFormatError) return;
    if (error instanceof CoreTrapError) throw new Error(`replay trapped the core: ${error.message}`);
    throw new Error(`replay threw ${error?.name}: ${error?.message}`);
  }
}
