// Reads typed fields out of a parsed manifest and collects every problem instead of stopping at
// the first, so that a user fixes a manifest in one round (the apiserver lists all its errors).
// A bad field reads as its default, so the walk goes on; the caller refuses the pod at the end.
import { printable } from "../common/log.js";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = Record<string, Json>;

export interface FieldProblem {
  field: string;
  detail: string;
  /**
   * Set when the pod is well-formed but this node's admission refuses it (upstream's admit
   * handlers): the pod's status reason, e.g. SysctlForbidden.
   */
  reason?: string;
}

/** A manifest that cannot become a pod: every problem found, the first as `field`/`detail`. */
export class ManifestError extends Error {
  readonly field: string;
  readonly detail: string;
  readonly problems: FieldProblem[];
  /** The admission reason when every problem is one (the pod is valid but refused here). */
  readonly reason: string | undefined;

  constructor(fieldOrProblems: string | FieldProblem[], detail = "") {
    const problems = typeof fieldOrProblems === "string" ? [{ field: fieldOrProblems, detail }] : fieldOrProblems;
    super(problems.map((p) => (p.field ? `${p.field}: ${p.detail}` : p.detail)).join("; "));
    this.name = "ManifestError";
    this.problems = problems;
    this.field = problems[0]?.field ?? "";
    this.detail = problems[0]?.detail ?? "";
    this.reason = problems.length > 0 && problems.every((p) => p.reason) ? problems[0].reason : undefined;
  }
}

export function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The apiserver's wording for a field it does not know how to act on here. */
export const NOT_IMPLEMENTED = "Unsupported field: nanolet does not implement it yet";

/** Problems one document reports; the rest are counted in one more (a file of junk is one mistake). */
export const MAX_PROBLEMS_PER_DOCUMENT = 20;

/**
 * A map key from the input as a field name: a plain name as it is, anything else (long, or with
 * characters no Kubernetes field has) quoted and cut, so that a file's contents (a password
 * file read as YAML keys) never reach the log as "field names".
 */
export function fieldKey(key: string): string {
  if (/^[A-Za-z0-9_.\-/]{1,63}$/.test(key)) return key;
  return JSON.stringify(key.length > 16 ? key.slice(0, 16) : key).replace(/[\u007f-\uffff]/g, "?") + (key.length > 16 ? `...(${key.length} characters)` : "");
}

export class FieldReader {
  readonly problems: FieldProblem[] = [];
  private dropped = 0;

  add(field: string, detail: string): void {
    if (this.problems.length >= MAX_PROBLEMS_PER_DOCUMENT) {
      this.dropped++;
      return;
    }
    // Details quote values from the input (`Invalid value: "..."`): bounded and made printable.
    this.problems.push({ field: printable(field, 256), detail: printable(detail, 512) });
  }

  /** The node's admission refuses the pod (a valid one) for `reason`. */
  reject(field: string, reason: string, detail: string): void {
    this.problems.push({ field, detail, reason });
  }

  /** Throws the collected problems, if any. */
  done(): void {
    if (this.dropped > 0) {
      this.problems.push({ field: "", detail: `... and ${this.dropped} more problems in this document` });
      this.dropped = 0;
    }
    if (this.problems.length > 0) throw new ManifestError(this.problems);
  }

  object(value: unknown, field: string, required = false): JsonObject | undefined {
    if (value === undefined || value === null) {
      if (required) this.add(field, "Required value");
      return undefined;
    }
    if (!isObject(value)) {
      this.add(field, `Invalid type: expected object, got ${typeName(value)}`);
      return undefined;
    }
    return value;
  }

  string(value: unknown, field: string, required = false): string | undefined {
    if (value === undefined || value === null) {
      if (required) this.add(field, "Required value");
      return undefined;
    }
    if (typeof value !== "string") {
      this.add(field, `Invalid type: expected string, got ${typeName(value)}`);
      return undefined;
    }
    return value;
  }

  boolean(value: unknown, field: string): boolean | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "boolean") {
      this.add(field, `Invalid type: expected boolean, got ${typeName(value)}`);
      return undefined;
    }
    return value;
  }

  array(value: unknown, field: string): Json[] {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) {
      this.add(field, `Invalid type: expected array, got ${typeName(value)}`);
      return [];
    }
    return value;
  }

  stringList(value: unknown, field: string): string[] {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) {
      this.add(field, `Invalid type: expected array of strings, got ${typeName(value)}`);
      return [];
    }
    return value.map((item, i) => this.string(item, `${field}[${i}]`, true) ?? "");
  }

  /** An integer in [min, max]; a number with a fraction or out of range is a type error. */
  integer(value: unknown, field: string, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): number | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
      const what = min === -2147483648 && max === 2147483647 ? "32-bit integer" : "integer";
      this.add(field, `Invalid type: expected ${what}, got ${typeof value === "number" ? String(value) : typeName(value)}`);
      return undefined;
    }
    return value;
  }

  /** A map of strings (labels, annotations, node selectors). */
  stringMap(value: unknown, field: string): Record<string, string> {
    const map = this.object(value, field);
    const out: Record<string, string> = {};
    if (!map) return out;
    for (const key of Object.keys(map)) {
      const v = this.string(map[key], `${field}[${key}]`, true);
      if (v !== undefined) out[key] = v;
    }
    return out;
  }

  /** Fields outside `allowed` are refused by name; `allowedIfEmpty` only when empty ({} or []). */
  onlyFields(object: JsonObject, field: string, allowed: ReadonlySet<string>, allowedIfEmpty: ReadonlySet<string> = new Set()): void {
    for (const key of Object.keys(object)) {
      if (allowed.has(key)) continue;
      const value = object[key];
      if (allowedIfEmpty.has(key) && isEmpty(value)) continue;
      this.add(field ? `${field}.${fieldKey(key)}` : fieldKey(key), NOT_IMPLEMENTED);
    }
  }
}

/** null, false, 0, "", {} and []: what a defaulted or zero field looks like in JSON. */
export function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === "") return true;
  if (Array.isArray(value)) return value.length === 0;
  if (isObject(value)) return Object.values(value).every(isEmpty);
  return false;
}
