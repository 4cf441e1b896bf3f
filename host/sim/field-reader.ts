// Reads fields of a parsed YAML document with clear errors: each names the file and the field
// path, and says what was expected and what was found. Unknown keys are refused.
import { DurationError, DurationRange, parseDuration, parseRange } from "./duration.js";

export class ScenarioError extends Error {
  constructor(
    readonly file: string,
    readonly field: string,
    message: string,
  ) {
    super(`${file}: ${field ? `${field}: ` : ""}${message}`);
    this.name = "ScenarioError";
  }
}

export type Obj = Record<string, unknown>;

export class Reader {
  constructor(readonly file: string) {}

  fail(field: string, message: string): never {
    throw new ScenarioError(this.file, field, message);
  }

  object(value: unknown, field: string): Obj {
    if (typeof value !== "object" || value === null || Array.isArray(value)) this.fail(field, `expected a mapping, got ${describe(value)}`);
    return value as Obj;
  }

  list(value: unknown, field: string): unknown[] {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) this.fail(field, `expected a list, got ${describe(value)}`);
    return value;
  }

  string(value: unknown, field: string): string {
    if (typeof value !== "string" || value === "") this.fail(field, `expected a non-empty string, got ${describe(value)}`);
    return value;
  }

  strings(value: unknown, field: string): string[] {
    return this.list(value, field).map((v, i) => this.string(v, `${field}[${i}]`));
  }

  int(value: unknown, field: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
    if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
      this.fail(field, `expected an integer from ${min} to ${max}, got ${describe(value)}`);
    }
    return value;
  }

  probability(value: unknown, field: string): number {
    if (value === undefined) return 0;
    if (typeof value !== "number" || !(value >= 0 && value <= 1)) this.fail(field, `expected a probability from 0 to 1, got ${describe(value)}`);
    return value;
  }

  duration(value: unknown, field: string): number {
    try {
      return parseDuration(value, field);
    } catch (error) {
      if (error instanceof DurationError) this.fail("", error.message);
      throw error;
    }
  }

  range(value: unknown, field: string): DurationRange {
    try {
      return parseRange(value, field);
    } catch (error) {
      if (error instanceof DurationError) this.fail("", error.message);
      throw error;
    }
  }

  /** Bytes as a Kubernetes quantity: `64Mi`, `1Gi`, `500M`, or a plain number. */
  bytes(value: unknown, field: string): number {
    const text = typeof value === "number" ? String(value) : value;
    const m = typeof text === "string" ? /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(text.trim()) : null;
    if (!m) this.fail(field, `expected bytes such as 64Mi or 1Gi, got ${describe(value)}`);
    const scale: Record<string, number> = { "": 1, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
    return Math.round(Number(m[1]) * scale[m[2] ?? ""]);
  }

  /** Refuses keys the format does not have: a typo must not silently test nothing. */
  only(obj: Obj, field: string, allowed: string[]): void {
    for (const key of Object.keys(obj)) {
      if (!allowed.includes(key)) this.fail(field ? `${field}.${key}` : key, `unknown field (expected one of: ${allowed.join(", ")})`);
    }
  }
}

export function describe(value: unknown): string {
  if (value === null || value === undefined) return "nothing";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "a mapping" : JSON.stringify(value);
}
