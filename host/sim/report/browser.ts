/// <reference lib="dom" />
// The report page's script (bundled by build/build.mjs into build/out/report/browser.js): runs
// the embedded scenario and seed again on the component embedded in the page, redraws the
// timeline from the new trace, and says whether the trace is identical to the recorded one.
import { useCoreModules } from "../../core/core.js";
import { Simulator } from "../simulator.js";
import type { Scenario } from "../scenario.js";
import { traceDigest } from "./digest.js";
import { renderTimelineSvg } from "./render.js";
import { summaryText } from "./page.js";
import { timelineFromTrace } from "./timeline.js";

interface EmbeddedRun {
  scenario: Scenario;
  seed: number;
  traceDigest: string;
  traceLines: number;
}

async function compileEmbeddedModules(): Promise<Map<string, WebAssembly.Module>> {
  const map = new Map<string, WebAssembly.Module>();
  for (const element of document.querySelectorAll<HTMLScriptElement>("script.core-module")) {
    const text = atob(element.textContent!.trim());
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    map.set(element.dataset.name!, await WebAssembly.compile(bytes));
  }
  return map;
}

async function rerun(): Promise<void> {
  const status = document.getElementById("rerun-status")!;
  const button = document.getElementById("rerun") as HTMLButtonElement;
  button.disabled = true;
  status.className = "";
  status.textContent = "running…";
  try {
    const run = JSON.parse(document.getElementById("run")!.textContent!) as EmbeddedRun;
    useCoreModules(await compileEmbeddedModules());
    const lines: string[] = [];
    const started = performance.now();
    const report = await Simulator.run({ scenario: run.scenario, seed: run.seed, trace: (line) => lines.push(line) });
    const wallMs = performance.now() - started;
    const timeline = timelineFromTrace(lines);
    document.getElementById("timeline")!.innerHTML = renderTimelineSvg(timeline);
    document.getElementById("summary")!.textContent = summaryText(timeline);
    const digest = traceDigest(lines);
    const same = digest === run.traceDigest;
    status.className = same ? "same" : "differs";
    status.dataset.digest = digest;
    status.textContent = `Re-ran in ${(wallMs / 1000).toFixed(1)} s (${report.ok ? "all invariants held" : "invariants broken"}): ${
      same ? "the trace is identical to the recorded run" : `the trace differs (digest ${digest}, ${lines.length} lines)`}.`;
  } catch (e) {
    status.className = "differs";
    status.textContent = `Re-run failed: ${e}`;
  } finally {
    button.disabled = false;
  }
}

document.getElementById("rerun")?.addEventListener("click", () => void rerun());
