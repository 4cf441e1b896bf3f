// Structured log lines (logfmt): `time=... level=info msg="Started container" pod=ns/name
// container=app`. One line per event, greppable by pod and container.
export type Level = "debug" | "info" | "warn" | "error";
export type Fields = Record<string, string | number | boolean | undefined>;

/** Longest value a log field shows; the rest is counted, never written (input may be hostile). */
export const MAX_LOG_VALUE_CHARS = 1024;

/**
 * `text` safe to show on a terminal or in a log: control characters (a NUL, an escape sequence,
 * a newline that would forge a line) escaped as \uXXXX, and at most `max` characters kept.
 */
export function printable(text: string, max = MAX_LOG_VALUE_CHARS): string {
  const cut = text.length > max ? text.slice(0, max) : text;
  const safe = cut.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return text.length > max ? `${safe}...(${text.length - max} more characters)` : safe;
}

function quote(value: string): string {
  const bounded = value.length > MAX_LOG_VALUE_CHARS ? printable(value) : value;
  // Bare only when plainly printable; JSON quoting escapes every control character.
  return /^[\x21-\x7e]+$/.test(bounded) && !/["=\\]/.test(bounded) ? bounded : JSON.stringify(bounded);
}

export function formatLine(level: Level, msg: string, fields: Fields, now = new Date()): string {
  let line = `time=${now.toISOString()} level=${level} msg=${JSON.stringify(msg)}`;
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined || value === "") continue;
    line += ` ${key}=${quote(String(value))}`;
  }
  return line;
}

export interface Logger {
  log(level: Level, msg: string, fields?: Fields): void;
}

export class StreamLogger implements Logger {
  constructor(
    private out: NodeJS.WritableStream = process.stderr,
    private minLevel: Level = "info",
  ) {}
  log(level: Level, msg: string, fields: Fields = {}): void {
    const order: Level[] = ["debug", "info", "warn", "error"];
    if (order.indexOf(level) < order.indexOf(this.minLevel)) return;
    this.out.write(formatLine(level, msg, fields) + "\n");
  }
}

/** Keeps lines in memory; for tests. */
export class MemoryLogger implements Logger {
  readonly lines: { level: Level; msg: string; fields: Fields }[] = [];
  log(level: Level, msg: string, fields: Fields = {}): void {
    this.lines.push({ level, msg, fields });
  }
  find(predicate: (l: { level: Level; msg: string; fields: Fields }) => boolean) {
    return this.lines.filter(predicate);
  }
}
