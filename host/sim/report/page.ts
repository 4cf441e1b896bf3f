// The report page: one self-contained HTML file (no network): the timeline drawn as SVG, a legend,
// and, when given, the browser bundle and the component's core modules so that the page can run
// the same scenario and seed again with the component and compare traces.
import { formatDuration } from "../duration.js";
import { COLOURS, escape, renderTimelineSvg } from "./render.js";
import type { Timeline } from "./timeline.js";

export interface ReportInput {
  timeline: Timeline;
  /** The scenario as the simulator read it (JSON-able), for the re-run. */
  scenario: unknown;
  seed: number;
  /** `nanolet sim ...` that reproduces the run. */
  reproduce: string;
  traceDigest: string;
  traceLines: number;
  /** The browser bundle (build/out/report/browser.js); without it the page cannot re-run. */
  bundleJs?: string;
  /** The component's core modules by file name, for the re-run. */
  coreModules?: Map<string, Uint8Array>;
}

/** JSON safe inside a <script> element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, "\\u003c");

const LEGEND: [string, string][] = [
  ["pending", "pod pending"],
  ["running", "running"],
  ["succeeded", "pod succeeded"],
  ["failed", "pod failed"],
  ["waiting", "container waiting"],
  ["back-off", "crash-loop back-off"],
  ["terminated", "exited 0"],
  ["terminated-error", "exited with error"],
  ["pressure", "node pressure"],
];

function toBase64(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

/** A summary line of the run. */
export function summaryText(t: Timeline): string {
  return `seed ${t.seed} · ${formatDuration(t.durationMs)} simulated · ${t.pods.length} pods · ${t.restarts} restarts · ${t.evictions} evictions · ${t.faults.length} faults`;
}

export function reportHtml(input: ReportInput): string {
  const t = input.timeline;
  const canRerun = input.bundleJs !== undefined && input.coreModules !== undefined;
  const modules = canRerun
    ? [...input.coreModules!.entries()].map(([name, bytes]) => `<script type="application/octet-stream" class="core-module" data-name="${escape(name)}">${toBase64(bytes)}</script>`).join("\n")
    : "";
  const run = { scenario: input.scenario, seed: input.seed, traceDigest: input.traceDigest, traceLines: input.traceLines };
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>nanolet sim: ${escape(t.scenario)} (seed ${t.seed})</title>
<style>
  body { font: 14px system-ui, sans-serif; margin: 1.5em 2em; color: #222; }
  h1 { font-size: 20px; margin: 0 0 4px; }
  code { background: #f3f3f3; padding: 1px 4px; border-radius: 3px; }
  #legend span { display: inline-block; margin-right: 14px; font-size: 12px; }
  #legend i { display: inline-block; width: 12px; height: 10px; margin-right: 4px; vertical-align: -1px; }
  #rerun-status { margin-left: 8px; font-size: 13px; }
  #rerun-status.same { color: #2a9d8f; } #rerun-status.differs { color: #d62828; }
  svg .label { fill: #333; } svg .label.pod { font-weight: 600; } svg .heading { font-weight: 700; font-size: 13px; }
  svg .axis { fill: #777; font-size: 10px; } svg .span:hover, svg .mark:hover { opacity: 0.75; }
  button { font: inherit; padding: 3px 10px; }
</style>
</head>
<body>
<h1>nanolet sim · ${escape(t.scenario)}</h1>
<p id="summary">${escape(summaryText(t))}</p>
<p>Reproduce: <code>${escape(input.reproduce)}</code> · trace ${input.traceLines} lines, digest <code id="digest">${input.traceDigest}</code></p>
<p>${canRerun ? '<button id="rerun" type="button">Re-run in this browser</button>' : "<em>Built without the browser bundle: no re-run.</em>"}<span id="rerun-status"></span></p>
<p id="legend">${LEGEND.map(([key, text]) => `<span><i style="background:${COLOURS[key]}"></i>${escape(text)}</span>`).join("")}<span>| restart</span><span><b style="color:${COLOURS.fault}">▼</b> fault</span><span><b>▼</b> eviction</span></p>
<div id="timeline">${renderTimelineSvg(t)}</div>
<script type="application/json" id="run">${scriptJson(run)}</script>
${modules}
${canRerun ? `<script type="module">${input.bundleJs!.replace(/<\/script/gi, "<\\/script")}</script>` : ""}
</body>
</html>
`;
}
