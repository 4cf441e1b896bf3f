// How a KubeletConfiguration field's value is read: from the file (YAML types, checked against the
// field's kind) and from its flag (the kubelet's flag syntax for lists and maps), into the form
// /configz shows. The field table itself is kubelet-config.ts's.
import { formatGoDuration, parseGoDuration } from "./go-duration.js";
import { printable } from "../common/log.js";
import { ConfigError, type FieldSpec } from "./config-types.js";
import { readPriorityPeriods } from "./node-fields.js";
import { readReservedMemory, reservedMemoryFlag } from "./hardware-fields.js";

const INT32_MAX = 2 ** 31 - 1;
const INT32_MIN = -(2 ** 31);

/** A value from the file or a flag as an error shows it: JSON, cut short, printable. */
export function shown(value: unknown): string {
  return printable(JSON.stringify(value) ?? String(value), 64);
}

/** A file value checked against the field's kind and brought to the /configz form. */
export function fromFile(spec: FieldSpec, value: unknown): unknown {
  const wrong = (what: string) => new ConfigError(`invalid configuration: ${spec.path}: expected ${what}, got ${shown(value)}`);
  switch (spec.kind) {
    case "bool":
      if (typeof value !== "boolean") throw wrong("true or false");
      return value;
    case "int":
      // The kubelet's integer fields are int32: a larger number does not decode.
      if (typeof value !== "number" || !Number.isInteger(value) || value > INT32_MAX || value < INT32_MIN) throw wrong(`a whole number from ${INT32_MIN} to ${INT32_MAX}`);
      return value;
    case "string":
      if (typeof value !== "string") throw wrong("a string");
      return value;
    case "quantity":
      if (typeof value !== "string" && typeof value !== "number") throw wrong("a quantity like 10Mi");
      return String(value);
    case "duration": {
      if (typeof value !== "string") throw wrong('a duration like "10s"');
      const ns = parseGoDuration(value);
      if (typeof ns === "string") throw new ConfigError(`invalid configuration: ${spec.path}: ${ns}`);
      return formatGoDuration(ns);
    }
    case "list":
      if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) throw wrong("a list of strings");
      return [...value];
    case "header-map": {
      if (value === null || typeof value !== "object" || Array.isArray(value)) throw wrong("a map of header names to lists of values");
      const headers: Record<string, string[]> = {};
      for (const [k, v] of Object.entries(value)) {
        if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) throw new ConfigError(`invalid configuration: ${spec.path}.${printable(k, 64)}: expected a list of strings, got ${shown(v)}`);
        headers[k] = [...v];
      }
      return headers;
    }
    case "reserved-memory": {
      const read = readReservedMemory(value);
      if (typeof read === "string") throw new ConfigError(`invalid configuration: ${spec.path}${read.startsWith("[") ? "" : ": "}${read}`);
      return read;
    }
    case "priority-periods": {
      const read = readPriorityPeriods(value);
      if (typeof read === "string") throw new ConfigError(`invalid configuration: ${spec.path}${read.startsWith("[") ? "" : ": "}${read}`);
      return read;
    }
    case "map":
      if (value === null || typeof value !== "object" || Array.isArray(value)) throw wrong("a map of strings");
      for (const [k, v] of Object.entries(value)) if (typeof v !== "string") throw new ConfigError(`invalid configuration: ${spec.path}.${printable(k, 64)}: expected a string, got ${shown(v)}`);
      return { ...(value as Record<string, string>) };
  }
}

/** A flag's text read into its field's form (the kubelet's flag syntax for lists and maps). */
export function fromFlag(spec: FieldSpec, text: string | boolean): unknown {
  const flag = `--${spec.flag}`;
  if (typeof text === "boolean") return text;
  switch (spec.flagSyntax ?? "value") {
    case "comma-list":
      return text.split(",").map((v) => v.trim()).filter((v) => v !== "");
    case "less-than-map":
    case "equals-map": {
      const separator = spec.flagSyntax === "less-than-map" ? "<" : "=";
      const map: Record<string, string> = {};
      for (const pair of text.split(",").map((v) => v.trim()).filter((v) => v !== "")) {
        const at = pair.indexOf(separator);
        if (at < 0) throw new ConfigError(`invalid argument "${text}" for "${flag}" flag: malformed pair, expect string${separator}string`);
        map[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
      }
      return map;
    }
    case "colon-multimap": {
      // The kubelet's --manifest-url-header: "a:hello,b:again", repeatable; a name given twice keeps both values in order.
      const headers: Record<string, string[]> = {};
      for (const pair of text.split(",").map((v) => v.trim()).filter((v) => v !== "")) {
        const at = pair.indexOf(":");
        if (at < 0) throw new ConfigError(`invalid argument "${text}" for "${flag}" flag: malformed pair, expect string:string`);
        (headers[pair.slice(0, at)] ??= []).push(pair.slice(at + 1));
      }
      return headers;
    }
    case "reserved-memory":
      return reservedMemoryFlag(text);
    case "value":
      break;
  }
  if (spec.kind === "int") {
    const n = Number(text);
    if (!/^-?\d+$/.test(text.trim()) || n > INT32_MAX || n < INT32_MIN) throw new ConfigError(`invalid argument ${shown(text)} for "${flag}" flag: expected a whole number from ${INT32_MIN} to ${INT32_MAX}`);
    return n;
  }
  if (spec.kind === "duration") {
    const ns = parseGoDuration(text.trim());
    if (typeof ns === "string") throw new ConfigError(`invalid argument "${text}" for "${flag}" flag: ${ns}`);
    return formatGoDuration(ns);
  }
  return text;
}

/** Whether a file's value is the zero of its kind (upstream's defaulting treats it as unset). */
export function isZero(spec: FieldSpec, value: unknown): boolean {
  if (spec.kind === "duration") return parseGoDuration(String(value)) === 0n;
  return value === 0 || value === "";
}

