// The CRI container log format, as containerd writes it: one record per line,
// `<RFC3339Nano time> <stdout|stderr> <P|F> <text>`, where P marks a partial line (the runtime
// split a long line) and F the full line's last piece. Readers join partial records into lines.

export interface LogRecord {
  /** The record's time as written (RFC3339Nano), and in milliseconds for comparisons. */
  time: string;
  timeMs: number;
  stream: "stdout" | "stderr";
  /** The text of a whole line, with its trailing newline (pieces joined). */
  text: string;
}

/** Joins partial records into whole lines; feed it raw lines, take the complete records. */
export class LogLineJoiner {
  private pending = new Map<string, { time: string; timeMs: number; parts: string[]; bytes: number }>();

  /** At most this much of one line is kept while its pieces arrive (a runaway partial line). */
  static readonly MAX_LINE_BYTES = 16 * 1024 * 1024;

  /** One raw line of the file (without its newline); returns a whole record or undefined. */
  push(raw: string): LogRecord | undefined {
    const first = raw.indexOf(" ");
    const second = first < 0 ? -1 : raw.indexOf(" ", first + 1);
    const third = second < 0 ? -1 : raw.indexOf(" ", second + 1);
    if (third < 0 && second < 0) return undefined; // not a CRI record: skipped, as the kubelet skips it
    const time = raw.slice(0, first);
    const stream = raw.slice(first + 1, second);
    if (stream !== "stdout" && stream !== "stderr") return undefined;
    const timeMs = Date.parse(time);
    if (Number.isNaN(timeMs)) return undefined;
    const tag = third < 0 ? raw.slice(second + 1) : raw.slice(second + 1, third);
    const text = third < 0 ? "" : raw.slice(third + 1);
    const flags = tag.split(":");
    const partial = flags[0] === "P";
    const open = this.pending.get(stream);
    if (partial) {
      if (open) {
        if (open.bytes < LogLineJoiner.MAX_LINE_BYTES) open.parts.push(text);
        open.bytes += text.length;
      } else this.pending.set(stream, { time, timeMs, parts: [text], bytes: text.length });
      return undefined;
    }
    this.pending.delete(stream);
    if (open) return { time: open.time, timeMs: open.timeMs, stream, text: open.parts.join("") + text + "\n" };
    return { time, timeMs, stream, text: text + "\n" };
  }
}

/** Splits a file's text into records; a last line without its newline is left for later. */
export function parseLogText(text: string, joiner = new LogLineJoiner()): { records: LogRecord[]; rest: string } {
  const records: LogRecord[] = [];
  let start = 0;
  for (;;) {
    const nl = text.indexOf("\n", start);
    if (nl < 0) break;
    const record = joiner.push(text.slice(start, nl));
    if (record) records.push(record);
    start = nl + 1;
  }
  return { records, rest: text.slice(start) };
}
