// Gives the core a desired set of pods without letting one burst of new, large pods set the core's
// memory for good: WebAssembly memory only grows, and a pod costs the core about 190 bytes per
// string while it is lowered and read (12 new pods of 7,000 environment variables each grew the
// core by 32 MiB in one call, and kept it). Pods the core accepted last time are given every
// time, as before; new pods join them in steps of at most STEP_WEIGHT (1 MiB), in the set's own order, so
// the core's peak is what it holds plus one step. In the usual case (small pods) there is one
// step, the same call as without steps. Within a feed, the core never sees a pod it holds vanish.
import type { PodRejection, PodSpec } from "../core/types.js";

/** Estimated core bytes of new pods per step: a few large pods, or every small one. */
export const STEP_WEIGHT = 1024 * 1024;
/** Estimated core bytes per string (lowered copy, lifted copy, their headers) and per character. */
const STRING_COST = 64;
const CHAR_COST = 4;

function stringWeight(s: string | undefined): number {
  return s === undefined ? 0 : STRING_COST + CHAR_COST * s.length;
}

/** What a pod spec costs the core to receive, roughly (no allocation to measure it). */
export function specWeight(spec: PodSpec): number {
  let w = 512 + stringWeight(spec.uid) + stringWeight(spec.namespace) + stringWeight(spec.name);
  for (const c of spec.containers) {
    w += 256 + stringWeight(c.name) + stringWeight(c.image) + stringWeight(c.workingDir);
    for (const s of c.command) w += stringWeight(s);
    for (const s of c.args) w += stringWeight(s);
    for (const e of c.env) w += 32 + stringWeight(e.name) + stringWeight(e.value);
    for (const q of [...c.requests, ...c.limits]) w += 32 + stringWeight(q.name) + stringWeight(q.quantity);
    for (const s of c.restartOnResize) w += stringWeight(s);
    w += 64 * c.ports.length;
    for (const probe of [c.startupProbe, c.livenessProbe, c.readinessProbe]) if (probe) w += 256 + stringWeight(JSON.stringify(probe.handler, (_k, v) => (typeof v === "bigint" ? 0 : v)));
  }
  return w;
}

export type HandlePods = (specs: PodSpec[]) => PodRejection[] | undefined;

export class PodFeeder {
  /** The spec objects the core held after the last feed (the static source reuses them when unchanged). */
  private held = new Set<PodSpec>();

  /**
   * Feeds `specs` (the complete desired set) through `handle`; returns the rejections with indices
   * into `specs`. `handle` returning undefined (no core) ends the feed.
   */
  feed(specs: PodSpec[], handle: HandlePods): PodRejection[] {
    const base: number[] = [];
    const steps: number[][] = [];
    let step: number[] = [];
    let weight = 0;
    for (let i = 0; i < specs.length; i++) {
      if (this.held.has(specs[i])) {
        base.push(i);
        continue;
      }
      const w = specWeight(specs[i]);
      if (step.length > 0 && weight + w > STEP_WEIGHT) {
        steps.push(step);
        step = [];
        weight = 0;
      }
      step.push(i);
      weight += w;
    }
    if (step.length > 0 || steps.length === 0) steps.push(step);

    const rejections = new Map<number, PodRejection[]>();
    let accepted = base;
    for (const next of steps) {
      const indices = [...accepted, ...next].sort((a, b) => a - b);
      const answer = handle(indices.map((i) => specs[i]));
      if (answer === undefined) return [];
      const refusedNow = new Set<number>();
      for (const r of answer) {
        const original = indices[r.index];
        refusedNow.add(original);
        const list = rejections.get(original) ?? [];
        list.push({ ...r, index: original });
        rejections.set(original, list);
      }
      // Only the last answer counts for a pod given again: clear earlier refusals of those accepted now.
      for (const i of indices) if (!refusedNow.has(i)) rejections.delete(i);
      accepted = indices.filter((i) => !refusedNow.has(i));
    }
    this.held = new Set(accepted.map((i) => specs[i]));
    return [...rejections.keys()].sort((a, b) => a - b).flatMap((i) => rejections.get(i)!);
  }

  /** A new core holds nothing: the next feed gives every pod anew. */
  reset(): void {
    this.held.clear();
  }
}
