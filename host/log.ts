// Structured log lines (logfmt): `time=... level=info msg="Started container" pod=ns/name
// container=app`. One line per event, greppable by pod and container.
export type Level = "debug" | "info" | "warn" | "error";
export type Fields = Record<string, string | number | boolean | undefined>;

function quote(value: string): string {
  return /^[^\s"=\\]+$/.test(value) ? value : JSON.stringify(value);
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
