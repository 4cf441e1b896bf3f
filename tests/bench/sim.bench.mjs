// Benchmark: how much faster than real time the simulator runs a full node. 110 pods (70 steady,
// 40 that crash every 1-15 minutes) for 24 simulated hours, with a fault window, a runtime
// restart and an agent restart every hour. Baseline, in the same process: the same 110 pods with
// no churn and no faults (the cost of a quiet node: one relist a second).
//   npm run build && node tests/bench/sim.bench.mjs [hours]
import fs from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { Simulator } from "../../dist/sim/simulator.js";
import { readScenario } from "../../dist/sim/scenario.js";

const hours = Number(process.argv[2] ?? 24);
const base = parse(fs.readFileSync(path.join(import.meta.dirname, "../sim/110-pods.yaml"), "utf8"));

function scenario(churn) {
  const doc = structuredClone(base);
  doc.duration = `${hours}h`;
  doc.expect = [];
  doc.timeline = [];
  if (churn) {
    for (let h = 0; h < hours; h++) {
      doc.timeline.push({ at: `${h}h5m`, fault: { call: "*", error: 0.05, slow: 0.05, for: "5m" } });
      doc.timeline.push({ at: `${h}h15m`, runtimeRestart: { down: "5s" } });
      doc.timeline.push({ at: `${h}h20m`, agentRestart: { down: "3s" } });
      doc.timeline.push({ at: `${h}h25m`, relistFault: { lose: 0.1, duplicate: 0.1, for: "2m" } });
    }
  } else {
    doc.pods = doc.pods.map((p) => ({ ...p, containers: undefined }));
  }
  return readScenario(doc, churn ? "bench-churn" : "bench-quiet");
}

async function measure(label, s) {
  const report = await Simulator.run({ scenario: s, seed: 1 });
  if (!report.ok) throw new Error(`${label}: ${JSON.stringify(report.violations.slice(0, 3))}`);
  const speed = report.simulatedMs / report.wallMs;
  const st = report.stats;
  console.log(
    `${label.padEnd(28)} ${(report.simulatedMs / 3_600_000).toFixed(0)} h simulated in ${(report.wallMs / 1000).toFixed(2)} s: ` +
      `${Math.round(speed)}x real time; ${st.coreCalls} core calls, ${st.relists} relists, ${st.containerStarts} starts, ${st.faultsInjected} faults`,
  );
  return speed;
}

await measure("warm-up (1 h quiet)", readScenario({ ...structuredClone(base), duration: "1h", expect: [], timeline: [] }, "warm-up"));
const quiet = await measure("baseline: 110 pods, quiet", scenario(false));
const churn = await measure("110 pods, churn and faults", scenario(true));
console.log(`churn / quiet speed: ${(churn / quiet).toFixed(2)}; target: at least 10000x real time with churn: ${churn >= 10_000 ? "met" : "NOT met"}`);
