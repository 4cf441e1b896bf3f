// `nanolet sim --report FILE`: writes the report page of one run, with the browser bundle and the
// component's core modules inlined so that the page re-runs it with no server and no network.
import fs from "node:fs";
import path from "node:path";
import { BINDINGS_DIR } from "../../core/core.js";
import { REPORT_SCRIPT_PATH } from "../../common/asset-paths.js";
import type { Scenario } from "../scenario.js";
import { traceDigest } from "./digest.js";
import { reportHtml } from "./page.js";
import { timelineFromTrace } from "./timeline.js";

const BUNDLE = REPORT_SCRIPT_PATH;

export interface ReportRun {
  scenario: Scenario;
  seed: number;
  reproduce: string;
  traceLines: string[];
}

/** Writes the page; returns its size in bytes. Without a built bundle the page cannot re-run. */
export function writeReport(file: string, run: ReportRun): number {
  const timeline = timelineFromTrace(run.traceLines);
  const bundleJs = fs.existsSync(BUNDLE) ? fs.readFileSync(BUNDLE, "utf8") : undefined;
  const coreModules = new Map<string, Uint8Array>();
  for (const name of fs.readdirSync(BINDINGS_DIR).filter((n) => n.endsWith(".wasm")).sort()) {
    coreModules.set(name, fs.readFileSync(path.join(BINDINGS_DIR, name)));
  }
  const html = reportHtml({
    timeline,
    scenario: run.scenario,
    seed: run.seed,
    reproduce: run.reproduce,
    traceDigest: traceDigest(run.traceLines),
    traceLines: run.traceLines.length,
    bundleJs,
    coreModules: bundleJs ? coreModules : undefined,
  });
  fs.writeFileSync(file, html);
  return Buffer.byteLength(html);
}
