// Counters, gauges and histograms with labels, written in the Prometheus text format (0.0.4).
// Hand-written rather than prom-client: loading prom-client costs about 12 MiB of RSS (measured
// with Node.js 20), more than the whole kubelet API may cost on a small device; the format is
// checked in the tests with a real parser (parse-prometheus-text-format).

export type Labels = Record<string, string>;

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function escapeHelp(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

function labelText(labels: Labels, extra?: [string, string]): string {
  const pairs = Object.entries(labels);
  if (extra) pairs.push(extra);
  if (pairs.length === 0) return "";
  return `{${pairs.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(",")}}`;
}

function numberText(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (n === Infinity) return "+Inf";
  if (n === -Infinity) return "-Inf";
  return String(n);
}

/** Most label combinations one metric keeps: a label fed by outside input cannot grow without end. */
export const MAX_SERIES_PER_METRIC = 10_000;

abstract class Metric<S> {
  protected series = new Map<string, { labels: Labels; value: S }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: "counter" | "gauge" | "histogram",
  ) {}

  protected entry(labels: Labels, init: () => S): { labels: Labels; value: S } | undefined {
    const key = JSON.stringify(Object.entries(labels).sort());
    let e = this.series.get(key);
    if (!e) {
      if (this.series.size >= MAX_SERIES_PER_METRIC) return undefined;
      e = { labels, value: init() };
      this.series.set(key, e);
    }
    return e;
  }

  reset(): void {
    this.series.clear();
  }

  render(): string {
    return `# HELP ${this.name} ${escapeHelp(this.help)}\n# TYPE ${this.name} ${this.type}\n${this.renderSeries()}`;
  }

  protected abstract renderSeries(): string;
}

export class Counter extends Metric<number> {
  constructor(name: string, help: string) {
    super(name, help, "counter");
  }

  inc(labels: Labels = {}, by = 1): void {
    const e = this.entry(labels, () => 0);
    if (e) e.value += by;
  }

  protected renderSeries(): string {
    let out = "";
    for (const { labels, value } of this.series.values()) out += `${this.name}${labelText(labels)} ${numberText(value)}\n`;
    return out;
  }
}

export class Gauge extends Metric<number> {
  constructor(name: string, help: string) {
    super(name, help, "gauge");
  }

  set(labels: Labels, value: number): void {
    const e = this.entry(labels, () => 0);
    if (e) e.value = value;
  }

  protected renderSeries(): string {
    let out = "";
    for (const { labels, value } of this.series.values()) out += `${this.name}${labelText(labels)} ${numberText(value)}\n`;
    return out;
  }
}

export class Histogram extends Metric<{ counts: number[]; sum: number; count: number }> {
  constructor(
    name: string,
    help: string,
    readonly buckets: number[],
  ) {
    super(name, help, "histogram");
  }

  observe(labels: Labels, value: number): void {
    const e = this.entry(labels, () => ({ counts: this.buckets.map(() => 0), sum: 0, count: 0 }));
    if (!e) return;
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]) e.value.counts[i]++;
    e.value.sum += value;
    e.value.count++;
  }

  protected renderSeries(): string {
    let out = "";
    for (const { labels, value } of this.series.values()) {
      for (let i = 0; i < this.buckets.length; i++) out += `${this.name}_bucket${labelText(labels, ["le", numberText(this.buckets[i])])} ${value.counts[i]}\n`;
      out += `${this.name}_bucket${labelText(labels, ["le", "+Inf"])} ${value.count}\n`;
      out += `${this.name}_sum${labelText(labels)} ${numberText(value.sum)}\n`;
      out += `${this.name}_count${labelText(labels)} ${value.count}\n`;
    }
    return out;
  }
}

/** Buckets growing by `factor` from `start`, `count` of them (Prometheus' ExponentialBuckets). */
export function exponentialBuckets(start: number, factor: number, count: number): number[] {
  const out: number[] = [];
  for (let i = 0, v = start; i < count; i++, v *= factor) out.push(Number(v.toPrecision(12)));
  return out;
}

/** The content type of the text format. */
export const TEXT_FORMAT = "text/plain; version=0.0.4; charset=utf-8";

export function renderAll(metrics: Metric<unknown>[]): string {
  return metrics.map((m) => m.render()).join("");
}

export type AnyMetric = Metric<unknown>;
