// Draws a Timeline (timeline.ts) as one SVG document: a time axis, the node's pressure and
// signals, the injected faults, then one row per pod phase and per container. DOM-free text, so
// that Node.js writes it into the report and the browser redraws it after a re-run.
import { formatDuration } from "../duration.js";
import type { Mark, PodTrack, Span, Timeline } from "./timeline.js";

const WIDTH = 1200;
const LABEL = 230;
const PLOT = WIDTH - LABEL - 20;
const ROW = 16;
const BAR = 11;

/** Fill colours by state; a legend in the page uses the same table. */
export const COLOURS: Record<string, string> = {
  pending: "#e9c46a",
  running: "#2a9d8f",
  succeeded: "#457b9d",
  failed: "#d62828",
  unknown: "#999999",
  waiting: "#d9d9d9",
  "back-off": "#f4a261",
  terminated: "#6c757d",
  "terminated-error": "#9d0208",
  pressure: "#d62828",
  fault: "#7b2cbf",
};

/** Text safe in HTML and in attribute values. */
export const escape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

const TICKS_MS = [1000, 5000, 10_000, 30_000, 60_000, 300_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000];

function spanColour(kind: "phase" | "container", span: Span): string {
  if (kind === "phase") return COLOURS[span.state] ?? COLOURS.unknown;
  if (span.state === "waiting" && span.reason === "CrashLoopBackOff") return COLOURS["back-off"];
  if (span.state === "terminated") return span.reason === "Completed" || span.reason === "exit 0" ? COLOURS.terminated : COLOURS["terminated-error"];
  return COLOURS[span.state] ?? COLOURS.unknown;
}

class Canvas {
  parts: string[] = [];
  y = 0;
  constructor(readonly durationMs: number) {}
  x(ms: number): number {
    return LABEL + (this.durationMs > 0 ? (ms / this.durationMs) * PLOT : 0);
  }
  label(text: string, indent: number, cls = "label"): void {
    this.parts.push(`<text class="${cls}" x="${8 + indent}" y="${this.y + BAR - 1}">${escape(text)}</text>`);
  }
  spans(spans: Span[], kind: "phase" | "container", data: string): void {
    for (const s of spans) {
      const x0 = this.x(s.fromMs);
      const w = Math.max(1, this.x(s.toMs) - x0);
      const what = s.reason ? `${s.state} (${s.reason})` : s.state;
      const title = `${what}: ${formatDuration(s.fromMs)} to ${formatDuration(s.toMs)}`;
      this.parts.push(
        `<rect class="span ${kind}" data-state="${escape(s.state)}" data-reason="${escape(s.reason)}" ${data} x="${x0.toFixed(1)}" y="${this.y}" width="${w.toFixed(1)}" height="${BAR}" fill="${spanColour(kind, s)}"><title>${escape(title)}</title></rect>`,
      );
    }
  }
  marks(marks: Mark[], data: string): void {
    for (const m of marks) {
      const x = this.x(m.atMs).toFixed(1);
      // Evictions sit on a red (failed) bar: black stands out there.
      const colour = m.kind === "Evicted" ? "#111" : m.kind === "restart" ? "#000" : m.kind === "Killing" ? "#333" : COLOURS.fault;
      const title = `${formatDuration(m.atMs)}: ${m.text}`;
      if (m.kind === "restart" || m.kind === "Killing") {
        this.parts.push(`<line class="mark ${m.kind}" ${data} x1="${x}" x2="${x}" y1="${this.y - 2}" y2="${this.y + BAR + 2}" stroke="${colour}" stroke-width="1.5"><title>${escape(title)}</title></line>`);
      } else {
        const y = this.y;
        this.parts.push(`<path class="mark ${m.kind}" ${data} d="M${x} ${y + BAR} l-5 -${BAR} h10 z" fill="${colour}"><title>${escape(title)}</title></path>`);
      }
    }
  }
  next(rows = 1): void {
    this.y += ROW * rows;
  }
  heading(text: string): void {
    this.y += 6;
    this.parts.push(`<text class="heading" x="8" y="${this.y + BAR}">${escape(text)}</text>`);
    this.parts.push(`<line x1="8" x2="${WIDTH - 12}" y1="${this.y + BAR + 4}" y2="${this.y + BAR + 4}" stroke="#ccc"/>`);
    this.y += ROW + 4;
  }
}

function axis(c: Canvas): void {
  const step = TICKS_MS.find((t) => c.durationMs / t <= 12) ?? TICKS_MS[TICKS_MS.length - 1];
  for (let t = 0; t <= c.durationMs; t += step) {
    const x = c.x(t).toFixed(1);
    c.parts.push(`<line class="tick" x1="${x}" x2="${x}" y1="${c.y + 14}" y2="100%" stroke="#eee"/>`);
    c.parts.push(`<text class="axis" x="${x}" y="${c.y + 10}" text-anchor="middle">${formatDuration(t)}</text>`);
  }
  c.next(1.5);
}

function signalChart(c: Canvas, timeline: Timeline): void {
  for (const series of timeline.signals) {
    const height = ROW * 3;
    const max = Math.max(1, ...series.points.map((p) => p.capacity));
    const y = (v: number) => c.y + height - (Math.max(0, Math.min(v, max)) / max) * height;
    c.label(series.signal, 0);
    const path = series.points.map((p, i) => `${i ? "L" : "M"}${c.x(p.atMs).toFixed(1)} ${y(p.available).toFixed(1)}`).join(" ");
    c.parts.push(`<rect x="${LABEL}" y="${c.y}" width="${PLOT}" height="${height}" fill="#fafafa" stroke="#eee"/>`);
    if (series.hardThreshold !== undefined) {
      const ty = y(series.hardThreshold).toFixed(1);
      c.parts.push(
        `<line class="threshold" x1="${LABEL}" x2="${LABEL + PLOT}" y1="${ty}" y2="${ty}" stroke="#d62828" stroke-dasharray="4 3"><title>${escape(`hard eviction threshold: ${Math.round(series.hardThreshold / 1048576)} Mi`)}</title></line>`,
      );
    }
    const last = series.points[series.points.length - 1];
    c.parts.push(
      `<path class="signal" data-signal="${escape(series.signal)}" d="${path}" fill="none" stroke="#264653" stroke-width="1.2"><title>${escape(`${series.signal}: ${series.points.length} stats passes; last ${last ? `${Math.round(last.available / 1048576)} Mi of ${Math.round(last.capacity / 1048576)} Mi` : "none"}`)}</title></path>`,
    );
    c.next(3.3);
  }
  for (const [key, name] of [["memory", "MemoryPressure"], ["disk", "DiskPressure"], ["pid", "PIDPressure"]] as const) {
    const spans = timeline.pressure[key];
    c.label(name, 0);
    c.parts.push(`<rect x="${LABEL}" y="${c.y}" width="${PLOT}" height="${BAR}" fill="#f5f5f5"/>`);
    c.spans(spans, "phase", `data-condition="${name}"`);
    c.next();
  }
}

function podRows(c: Canvas, pod: PodTrack): void {
  const data = `data-pod="${escape(pod.name)}"`;
  c.label(`${pod.name}`, 0, "label pod");
  c.spans(pod.phases, "phase", data);
  c.marks(pod.marks.filter((m) => m.kind === "Evicted"), data);
  c.next();
  for (const container of pod.containers) {
    const cdata = `${data} data-container="${escape(container.name)}"`;
    c.label(container.name, 14, "label container");
    c.spans(container.spans, "container", cdata);
    c.marks(container.restarts, cdata);
    c.next();
  }
}

/** The whole timeline as an SVG element (text). */
export function renderTimelineSvg(timeline: Timeline): string {
  const c = new Canvas(timeline.durationMs);
  axis(c);
  c.heading("Node");
  signalChart(c, timeline);
  c.label(`faults (${timeline.faults.length})`, 0);
  c.parts.push(`<rect x="${LABEL}" y="${c.y}" width="${PLOT}" height="${BAR}" fill="#f5f5f5"/>`);
  c.marks(timeline.faults, 'data-row="faults"');
  c.next();
  c.heading(`Pods (${timeline.pods.length})`);
  for (const pod of timeline.pods) podRows(c, pod);
  const height = c.y + 10;
  return `<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="system-ui, sans-serif" font-size="11">${c.parts.join("")}</svg>`;
}
