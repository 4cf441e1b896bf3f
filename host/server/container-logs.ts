// `GET /containerLogs/{namespace}/{pod}/{container}`: a container's log as `kubectl logs` reads it,
// with the kubelet's query options (PodLogOptions v1) and its answers to bad ones: a query that
// does not decode is 400 `Unable to decode query.`, one that decodes but is invalid is 422
// `Invalid request.`, an unknown pod or container is 404.
import fs from "node:fs";
import type http from "node:http";
import { LogLineJoiner, type LogRecord } from "./cri-log.js";

export interface LogOptions {
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  tailLines?: number;
  limitBytes?: number;
  sinceSeconds?: number;
  sinceTimeMs?: number;
}

/** A query the kubelet refuses: its HTTP code and its message. */
export class LogQueryError extends Error {
  constructor(
    readonly code: 400 | 422,
    message: string,
  ) {
    super(message);
  }
}

/** Go's strconv.ParseBool, which the parameter codec uses. */
function parseBool(value: string): boolean | undefined {
  if (["1", "t", "T", "TRUE", "true", "True"].includes(value)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(value)) return false;
  return undefined;
}

/** A whole number as Go's ParseInt(…, 10, 64) takes it (within JavaScript's safe range). */
function parseInt64(value: string): number | undefined {
  if (!/^[+-]?\d+$/.test(value)) return undefined;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** RFC 3339 as metav1.Time decodes it: a date, a time, and a zone (Z or an offset). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

export function parseLogOptions(query: URLSearchParams): LogOptions {
  const undecodable = () => new LogQueryError(400, "Unable to decode query.");
  const invalid = () => new LogQueryError(422, "Invalid request.");
  const bool = (name: string): boolean => {
    const v = query.get(name);
    if (v === null) return false;
    const b = parseBool(v);
    if (b === undefined) throw undecodable();
    return b;
  };
  const int = (name: string): number | undefined => {
    const v = query.get(name);
    if (v === null) return undefined;
    const n = parseInt64(v);
    if (n === undefined) throw undecodable();
    return n;
  };
  // The old `tail` parameter, as the kubelet still takes it: a number, or `all`.
  const tail = query.get("tail");
  if (tail !== null && tail !== "") {
    if (tail === "all") query.delete("tailLines");
    else query.set("tailLines", tail);
  }
  const options: LogOptions = {
    follow: bool("follow"),
    previous: bool("previous"),
    timestamps: bool("timestamps"),
    tailLines: int("tailLines"),
    limitBytes: int("limitBytes"),
    sinceSeconds: int("sinceSeconds"),
  };
  const sinceTime = query.get("sinceTime");
  if (sinceTime !== null) {
    if (!RFC3339.test(sinceTime) || Number.isNaN(Date.parse(sinceTime))) throw undecodable();
    options.sinceTimeMs = Date.parse(sinceTime);
  }
  // ValidatePodLogOptions' rules.
  if (options.tailLines !== undefined && options.tailLines < 0) throw invalid();
  if (options.limitBytes !== undefined && options.limitBytes < 1) throw invalid();
  if (options.sinceSeconds !== undefined && options.sinceSeconds < 1) throw invalid();
  if (options.sinceSeconds !== undefined && options.sinceTimeMs !== undefined) throw invalid();
  return options;
}

/** Bytes read from a log file at a time. */
const CHUNK_BYTES = 64 * 1024;
/** How often a followed log is checked for new data and for its container's end. */
export const FOLLOW_POLL_MS = 250;

/** Whether the open file `fd` is no longer the one at `file` (and a new one is there). */
function rotatedAway(fd: number, file: string): boolean {
  try {
    return fs.statSync(file).ino !== fs.fstatSync(fd).ino;
  } catch {
    return false; // not there yet: the runtime has not reopened it
  }
}

export interface LogSource {
  file: string;
  /** For `follow`: whether the container still runs (the stream ends after it stops). */
  stillRunning(): Promise<boolean>;
}

/**
 * Writes the log to `res` by `options`: the records since the given time, the last `tailLines`
 * of them, cut at `limitBytes`; with `follow`, then every new record until the container stops or
 * the client goes away.
 */
export async function writeContainerLog(res: http.ServerResponse, source: LogSource, options: LogOptions, nowMs: number): Promise<void> {
  const sinceMs = options.sinceTimeMs ?? (options.sinceSeconds !== undefined ? nowMs - options.sinceSeconds * 1000 : undefined);
  let budget = options.limitBytes ?? Infinity;
  let closed = false;
  res.on("close", () => (closed = true));
  const format = (r: LogRecord) => (options.timestamps ? `${r.time} ${r.text}` : r.text);
  /** Writes one record; false once the byte limit is reached. */
  // Output is gathered per chunk read and written at once: one write (and one wait for the
  // client) per 64 KiB, not per line.
  let pending: string[] = [];
  let cut: Buffer | undefined;
  const flush = async (): Promise<void> => {
    const text = pending.join("");
    pending = [];
    const piece = cut;
    cut = undefined;
    const ok = (text.length === 0 || res.write(text)) && (piece === undefined || res.write(piece));
    if (!ok && !closed) await new Promise((resolve) => res.once("drain", resolve).once("close", resolve));
  };
  /** Takes one record; false once the byte limit is reached. */
  const emit = (r: LogRecord): boolean => {
    if (sinceMs !== undefined && r.timeMs < sinceMs) return true;
    const out = format(r);
    if (budget === Infinity) {
      pending.push(out);
      return true;
    }
    const bytes = Buffer.byteLength(out);
    if (bytes <= budget) {
      pending.push(out);
      budget -= bytes;
      return budget > 0;
    }
    cut = Buffer.from(out).subarray(0, budget);
    budget = 0;
    return false;
  };

  const joiner = new LogLineJoiner();
  let fd = fs.openSync(source.file, "r");
  try {
    let position = 0;
    let rest = "";
    const buffer = Buffer.alloc(CHUNK_BYTES);
    /** Reads what the file has now; calls `each` for every whole record. */
    const readAvailable = async (each: (r: LogRecord) => boolean): Promise<boolean> => {
      for (;;) {
        const n = fs.readSync(fd, buffer, 0, CHUNK_BYTES, position);
        if (n === 0) {
          await flush();
          return true;
        }
        position += n;
        const text = rest + buffer.toString("utf8", 0, n);
        let start = 0;
        for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", start)) {
          const record = joiner.push(text.slice(start, nl));
          start = nl + 1;
          if (record && !each(record)) {
            await flush();
            return false;
          }
        }
        await flush();
        rest = text.slice(start);
        if (rest.length > LogLineJoiner.MAX_LINE_BYTES) rest = ""; // a line without end: dropped
      }
    };

    // What the file holds now: every record, or the last `tailLines` of them.
    if (options.tailLines !== undefined) {
      const tail: LogRecord[] = [];
      if (options.tailLines > 0) {
        await readAvailable((r) => {
          if (sinceMs !== undefined && r.timeMs < sinceMs) return true;
          tail.push(r);
          if (tail.length > options.tailLines!) tail.shift();
          return true;
        });
      } else await readAvailable(() => true);
      for (const r of tail) if (closed || !emit(r)) break;
      await flush();
      if (closed || budget <= 0) return;
    } else if (!(await readAvailable(emit))) return;

    if (!options.follow) return;
    for (;;) {
      if (closed) return;
      const running = await source.stillRunning().catch(() => false);
      if (!(await readAvailable(emit))) return;
      // Rotated (the log manager renamed the file and the runtime reopened a new one): the old
      // file was read to its end above; go on with the new one from its start.
      if (rotatedAway(fd, source.file)) {
        if (!(await readAvailable(emit))) return; // what the runtime wrote before it reopened
        fs.closeSync(fd);
        fd = fs.openSync(source.file, "r");
        position = 0;
        rest = "";
        continue;
      }
      if (!running) return;
      await new Promise((resolve) => setTimeout(resolve, FOLLOW_POLL_MS));
    }
  } finally {
    fs.closeSync(fd);
  }
}
