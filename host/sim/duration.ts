// Durations as scenario files write them: `500ms`, `10s`, `2m`, `1h`, `1m30s`, and ranges
// `1s-5s` (uniform, drawn by the simulator).

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

export class DurationError extends Error {}

/** Milliseconds of `text`; a bare number is milliseconds. */
export function parseDuration(text: unknown, where: string): number {
  if (typeof text === "number" && Number.isFinite(text) && text >= 0) return Math.round(text);
  if (typeof text !== "string") throw new DurationError(`${where}: expected a duration like "10s", got ${JSON.stringify(text)}`);
  const parts = text.trim().match(/(\d+(?:\.\d+)?)(ms|h|m|s)/g);
  if (!parts || parts.join("") !== text.trim()) throw new DurationError(`${where}: invalid duration "${text}" (use e.g. 500ms, 10s, 2m, 1h30m)`);
  let ms = 0;
  for (const part of parts) {
    const m = /^(\d+(?:\.\d+)?)(ms|h|m|s)$/.exec(part)!;
    ms += Number(m[1]) * UNIT_MS[m[2]];
  }
  return Math.round(ms);
}

export interface DurationRange {
  minMs: number;
  maxMs: number;
}

/** `1s-5s` or a single duration (a range of one value). */
export function parseRange(text: unknown, where: string): DurationRange {
  if (typeof text === "string" && text.includes("-")) {
    const [low, high, ...rest] = text.split("-");
    if (rest.length > 0) throw new DurationError(`${where}: invalid range "${text}" (use e.g. 1s-5s)`);
    const range = { minMs: parseDuration(low, where), maxMs: parseDuration(high, where) };
    if (range.maxMs < range.minMs) throw new DurationError(`${where}: range "${text}" ends before it starts`);
    return range;
  }
  const ms = parseDuration(text, where);
  return { minMs: ms, maxMs: ms };
}

/** `90000` -> `1m30s`, for printing. */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0s";
  let rest = ms;
  let out = "";
  for (const [unit, size] of [["h", 3_600_000], ["m", 60_000], ["s", 1000], ["ms", 1]] as const) {
    if (rest >= size) {
      out += `${Math.floor(rest / size)}${unit}`;
      rest %= size;
    }
  }
  return out;
}
