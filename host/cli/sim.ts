// `nanolet sim`: runs scenario files or random (swarm) scenarios on the simulator, prints the seed
// and what it derived, and for every failure the exact command that reproduces it. Also
// `nanolet sim --replay FILE` for recorded traces.
import { parseArgs } from "node:util";
import { replayFile } from "../trace/replay.js";
import { FileTraceSink } from "../trace/file-sink.js";
import { formatDuration } from "../sim/duration.js";
import { Scenario, loadScenarioFile } from "../sim/scenario.js";
import { SIM_EPOCH_MS, SimReport, Simulator } from "../sim/simulator.js";
import { swarmScenario, swarmYaml } from "../sim/swarm.js";
import { writeReport } from "../sim/report/write.js";

export const SIM_USAGE = `Usage:
  nanolet sim [SCENARIO.yaml...] [--seed N | --seeds A..B] [--trace FILE] [--report FILE.html] [--dump]
  nanolet sim --replay FILE

  With scenario files, runs each of them; without, runs random scenarios (a swarm), one per seed.
  --seed N          one seed (default: a random one, printed)
  --seeds A..B      every seed from A to B
  --trace FILE      write the trace of the run (JSON lines; one seed only)
  --report FILE     write a self-contained HTML page of the run: a timeline of every pod and
                    container, faults and node pressure; it can re-run the scenario in a browser
  --dump            print the scenario a swarm seed makes, as YAML, and do not run it
  --replay FILE     re-run the core on a trace from 'nanolet run --record' or '--trace'
  --quiet           print failures and the summary only
`;

export function parseSeeds(seed: string | undefined, seeds: string | undefined): number[] {
  if (seed !== undefined && seeds !== undefined) throw new Error("--seed and --seeds: give one of them");
  if (seeds !== undefined) {
    const m = /^(\d+)\.\.(\d+)$/.exec(seeds);
    if (!m || Number(m[2]) < Number(m[1])) throw new Error(`--seeds: expected A..B with A <= B, got "${seeds}"`);
    return Array.from({ length: Number(m[2]) - Number(m[1]) + 1 }, (_, i) => Number(m[1]) + i);
  }
  if (seed !== undefined) {
    if (!/^\d+$/.test(seed) || Number(seed) > 0xffffffff) throw new Error(`--seed: expected an integer from 0 to 4294967295, got "${seed}"`);
    return [Number(seed)];
  }
  return [Math.floor(Math.random() * 0xffffffff)];
}

export function reproduceCommand(seed: number, file?: string): string {
  return `./bin/nanolet sim --seed ${seed}${file ? ` ${file}` : ""}`;
}

function describeScenario(s: Scenario, seed: number): string {
  const latency = Object.entries(s.latency).map(([call, r]) => `${call}=${formatDuration(r.minMs)}-${formatDuration(r.maxMs)}`).join(",");
  return (
    `seed=${seed} scenario=${s.name} duration=${formatDuration(s.durationMs)} node=${s.nodeName} relist=${formatDuration(s.relistPeriodMs)} ` +
    `backoff=${formatDuration(s.backoffInitialMs)}..${formatDuration(s.backoffMaxMs)} workerErrorBackoff=${formatDuration(s.workerErrorBackoffMs)} ` +
    `criTimeout=${formatDuration(s.criTimeoutMs)} latency=${latency} pods=${s.pods.length} timeline=${s.timeline.length} expectations=${s.expect.length}` +
    (s.runtimeEvents.source === "none" ? "" : ` runtimeEvents=${s.runtimeEvents.source}${s.runtimeEvents.lose > 0 ? `(lose ${s.runtimeEvents.lose})` : ""}${s.runtimeEvents.duplicate > 0 ? `(twice ${s.runtimeEvents.duplicate})` : ""}${s.runtimeEvents.late > 0 ? `(late ${s.runtimeEvents.late})` : ""}`)
  );
}

function summarise(r: SimReport): string {
  const speed = r.wallMs > 0 ? Math.round(r.simulatedMs / r.wallMs) : 0;
  const s = r.stats;
  return (
    `${r.ok ? "ok  " : "FAIL"} seed=${r.seed} scenario=${r.scenario} simulated=${formatDuration(r.simulatedMs)} wall=${r.wallMs.toFixed(0)}ms speed=${speed}x ` +
    `starts=${s.containerStarts} restarts=${s.restarts} relists=${s.relists} faults=${s.faultsInjected} agentRestarts=${s.agentRestarts} runtimeRestarts=${s.runtimeRestarts}${s.statsPasses > 0 ? ` statsPasses=${s.statsPasses} evictions=${s.evictions}` : ""}` +
    `${s.runtimeEvents + s.runtimeEventsLost > 0 ? ` runtimeEvents=${s.runtimeEvents} lost=${s.runtimeEventsLost}${s.runtimeEventsDuplicated > 0 ? ` twice=${s.runtimeEventsDuplicated}` : ""}${s.runtimeEventsLate > 0 ? ` late=${s.runtimeEventsLate}` : ""}` : ""}`
  );
}

function failureLines(r: SimReport): string[] {
  const out: string[] = [];
  for (const v of r.violations) out.push(`  invariant ${v.invariant} broken at ${formatDuration(v.atMs - SIM_EPOCH_MS)}: ${v.message}`);
  for (const e of r.failedExpectations) out.push(`  expectation ${e.text} failed at ${formatDuration(e.atMs)}: ${e.detail}`);
  out.push(`  reproduce: ${reproduceCommand(r.seed, r.file.startsWith("swarm:") ? undefined : r.file)}`);
  return out;
}

export async function simCommand(argv: string[], write: (text: string) => void = (t) => process.stdout.write(t)): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      seed: { type: "string" },
      seeds: { type: "string" },
      trace: { type: "string" },
      report: { type: "string" },
      dump: { type: "boolean", default: false },
      replay: { type: "string" },
      quiet: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    write(SIM_USAGE);
    return 0;
  }
  if (values.replay !== undefined) {
    const report = await replayFile(values.replay);
    if (!report.divergence) {
      write(`replay ${values.replay}: ${report.calls} calls, no divergence\n`);
      return 0;
    }
    const d = report.divergence;
    write(`replay ${values.replay}: diverged at line ${d.line} (t=${d.t}, ${d.op})\n  recorded: ${d.expected}\n  replayed: ${d.actual}\n`);
    return 1;
  }
  const seeds = parseSeeds(values.seed, values.seeds);
  if (values.dump) {
    if (positionals.length > 0) throw new Error("--dump: shows swarm scenarios; scenario files are already files");
    for (const seed of seeds) write(`# nanolet sim --seed ${seed}\n${swarmYaml(seed)}`);
    return 0;
  }
  if (values.trace !== undefined && seeds.length * Math.max(1, positionals.length) > 1) throw new Error("--trace: give one scenario and one seed");
  if (values.report !== undefined && seeds.length * Math.max(1, positionals.length) > 1) throw new Error("--report: give one scenario and one seed");
  const scenarios: (Scenario | undefined)[] = positionals.length > 0 ? positionals.map((f) => loadScenarioFile(f)) : [undefined];
  const failures: SimReport[] = [];
  let runs = 0;
  let simulatedMs = 0;
  let wallMs = 0;
  for (const fixed of scenarios) {
    for (const seed of seeds) {
      const scenario = fixed ?? swarmScenario(seed);
      if (!values.quiet && seeds.length * scenarios.length === 1) write(`${describeScenario(scenario, seed)}\n`);
      const sink = values.trace !== undefined ? new FileTraceSink(values.trace) : undefined;
      const kept: string[] | undefined = values.report !== undefined ? [] : undefined;
      const trace = kept ? (line: string) => (kept.push(line), sink?.sink(line)) : sink?.sink;
      let report: SimReport;
      try {
        report = await Simulator.run({ scenario, seed, trace });
      } finally {
        sink?.close();
      }
      if (kept && values.report !== undefined) {
        const reproduce = reproduceCommand(seed, fixed ? scenario.file : undefined);
        const bytes = writeReport(values.report, { scenario, seed, reproduce, traceLines: kept });
        write(`report: ${values.report} (${Math.round(bytes / 1024)} KiB)\n`);
      }
      runs++;
      simulatedMs += report.simulatedMs;
      wallMs += report.wallMs;
      if (!values.quiet || !report.ok) write(`${summarise(report)}\n`);
      if (report.refused.length > 0 && !values.quiet) for (const r of report.refused) write(`  refused: ${r}\n`);
      if (!report.ok) {
        failures.push(report);
        for (const line of failureLines(report)) write(`${line}\n`);
      }
    }
  }
  if (runs > 1) {
    write(`\n${runs} runs, ${failures.length} failed; ${formatDuration(simulatedMs)} simulated in ${(wallMs / 1000).toFixed(1)} s\n`);
    for (const f of failures) write(`  ${reproduceCommand(f.seed, f.file.startsWith("swarm:") ? undefined : f.file)}\n`);
  }
  return failures.length === 0 ? 0 : 1;
}
