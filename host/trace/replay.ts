// Replays a trace: a new core is fed exactly the recorded inputs at the recorded times, and each
// output is compared with the recorded one. The first difference is reported with its line, so a
// recording from a real node becomes a reproducible test of the core.
import fs from "node:fs";
import type { RuntimeSnapshot } from "../core/types.js";
import { Core, CoreAgent, CoreConfig, CoreTrapError } from "../core/core.js";
import { TraceFormatError, decodeCoreConfig, decodeHardwareState, decodePods, decodeProbeResults, decodeResults, decodeNodeStats, decodeSnapshot, encodeValue } from "./codec.js";

export interface Divergence {
  line: number;
  t: number;
  op: string;
  expected: string;
  actual: string;
}

export interface ReplayReport {
  lines: number;
  calls: number;
  divergence?: Divergence;
}

export interface ReplayOptions {
  createCore?: (config: CoreConfig) => Promise<Core>;
}

/** Where two encoded lists first differ, as "item N: expected ... got ...". */
function firstDifference(expected: unknown[], actual: unknown[]): { expected: string; actual: string } {
  const n = Math.max(expected.length, actual.length);
  for (let i = 0; i < n; i++) {
    const e = encodeValue(expected[i]);
    const a = encodeValue(actual[i]);
    if (e !== a) return { expected: `item ${i}: ${expected[i] === undefined ? "(none)" : e}`, actual: `item ${i}: ${actual[i] === undefined ? "(none)" : a}` };
  }
  return { expected: encodeValue(expected), actual: encodeValue(actual) };
}

export async function replayLines(lines: string[], options: ReplayOptions = {}): Promise<ReplayReport> {
  const create = options.createCore ?? CoreAgent.create;
  let core: Core | undefined;
  let previous: RuntimeSnapshot | undefined;
  let calls = 0;
  const report = (line: number, t: number, op: string, expected: string, actual: string): ReplayReport => ({
    lines: lines.length,
    calls,
    divergence: { line, t, op, expected, actual },
  });
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i].trim();
    if (text === "") continue;
    const lineNo = i + 1;
    let entry: Record<string, any>;
    try {
      entry = JSON.parse(text);
    } catch (error) {
      throw new TraceFormatError(`line ${lineNo}: not JSON: ${(error as Error).message}`);
    }
    if (entry === null || typeof entry !== "object" || Array.isArray(entry)) throw new TraceFormatError(`line ${lineNo}: not a trace entry (a JSON object)`);
    const { t, op } = entry;
    if (op === "header" || op === "sim") continue;
    if (op !== "create" && (typeof t !== "number" || !Number.isSafeInteger(t) || t < 0)) {
      throw new TraceFormatError(`line ${lineNo}: "t" must be a time in milliseconds, got ${JSON.stringify(t)}`);
    }
    if (op === "create") {
      try {
        core = await create(decodeCoreConfig(entry.config));
      } catch (error) {
        throw new TraceFormatError(`line ${lineNo}: not a valid "create" line: ${(error as Error).message}`);
      }
      previous = undefined;
      continue;
    }
    if (!core) throw new TraceFormatError(`line ${lineNo}: "${op}" before any "create" line`);
    // A call recorded as trapping is followed by its trap line.
    const expectTrap = lines[i + 1]?.includes('"op":"trap"') ?? false;
    calls++;
    let output: unknown;
    try {
      switch (op) {
        case "pods":
          output = core.handlePods(t, decodePods(entry.pods));
          break;
        case "relist": {
          const snapshot = entry.same ? (previous ? { ...previous, listedAtMs: BigInt(entry.listedAtMs) } : undefined) : decodeSnapshot(entry.snapshot);
          if (!snapshot) throw new TraceFormatError(`line ${lineNo}: "same" relist with no relist before it`);
          previous = snapshot;
          core.handleSnapshot(t, snapshot);
          break;
        }
        case "results":
          core.handleActionResults(t, decodeResults(entry.results));
          break;
        case "probes":
          core.handleProbeResults(t, decodeProbeResults(entry.results));
          break;
        case "stats":
          core.handleNodeStats(t, decodeNodeStats(entry.stats));
          break;
        case "poll":
          output = core.pollActions(t);
          break;
        case "backoffs":
          if (!Array.isArray(entry.entries)) throw new TraceFormatError(`line ${lineNo}: "backoffs" without entries`);
          core.restoreBackOffs?.(t, entry.entries);
          break;
        case "runtime-event":
          core.handleRuntimeEvent?.(t);
          break;
        case "event-stream":
          if (typeof entry.streaming !== "boolean") throw new TraceFormatError(`line ${lineNo}: "event-stream" without streaming`);
          core.handleEventStream?.(t, entry.streaming);
          break;
        case "node-shutdown":
          if (typeof entry.active !== "boolean") throw new TraceFormatError(`line ${lineNo}: "node-shutdown" without active`);
          core.handleNodeShutdown?.(t, entry.active);
          break;
        case "devices":
          if (typeof entry.resource !== "string" || !Array.isArray(entry.devices)) throw new TraceFormatError(`line ${lineNo}: "devices" without resource and devices`);
          core.handleDevices?.(t, entry.resource, entry.devices);
          break;
        case "hardware-restore":
          if (entry.state === null || typeof entry.state !== "object") throw new TraceFormatError(`line ${lineNo}: "hardware-restore" without state`);
          core.restoreHardware?.(decodeHardwareState(entry.state));
          break;
        case "trap":
          continue;
        default:
          throw new TraceFormatError(`line ${lineNo}: unknown op "${op}"`);
      }
    } catch (error) {
      if (error instanceof TraceFormatError) throw error;
      // A line whose values cannot be decoded (a cut number, a wrong type) is the trace's fault.
      if (!(error instanceof CoreTrapError)) throw new TraceFormatError(`line ${lineNo}: not a valid "${op}" line: ${(error as Error)?.message ?? error}`);
      if (expectTrap) {
        core = undefined;
        i++; // past the trap line
        continue;
      }
      return report(lineNo, t, op, "no trap", `trap: ${error.reason}`);
    }
    if (expectTrap) return report(lineNo, t, op, "a trap", "no trap");
    if ((op === "pods" || op === "poll") && entry.out !== null) {
      const recorded = entry.out as unknown[];
      const actual = output as unknown[];
      if (encodeValue(recorded) !== encodeValue(actual)) {
        const { expected, actual: got } = firstDifference(recorded, actual);
        return report(lineNo, t, op, expected, got);
      }
    }
  }
  return { lines: lines.length, calls };
}

export async function replayFile(file: string, options: ReplayOptions = {}): Promise<ReplayReport> {
  return replayLines(fs.readFileSync(file, "utf8").split("\n"), options);
}
