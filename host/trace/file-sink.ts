// A trace sink writing to a file: lines are buffered and written in blocks, at the latest every
// second, so recording costs the agent little; `close` writes what is left. A size limit keeps a
// forgotten recording from filling a small device's disk: past it, recording stops.
import fs from "node:fs";
import type { TraceSink } from "./recording-core.js";

const FLUSH_BYTES = 64 * 1024;
const FLUSH_INTERVAL_MS = 1000;
/** Default limit of one recording. */
export const DEFAULT_MAX_TRACE_BYTES = 256 * 1024 * 1024;

export class FileTraceSink {
  private fd: number;
  private buffer: string[] = [];
  private bytes = 0;
  private timer?: NodeJS.Timeout;
  private written = 0;
  private full = false;
  private maxBytes: number;
  readonly sink: TraceSink = (line) => this.write(line);

  constructor(
    file: string,
    private options: { periodicFlush?: boolean; maxBytes?: number; onFull?: (bytes: number) => void } = {},
  ) {
    this.maxBytes = options.maxBytes ?? Infinity;
    this.fd = fs.openSync(file, "w");
    if (options.periodicFlush) {
      this.timer = setInterval(() => this.flush(), FLUSH_INTERVAL_MS);
      this.timer.unref();
    }
  }

  private write(line: string): void {
    if (this.full) return;
    if (this.written + this.bytes + line.length + 1 > this.maxBytes) {
      // Stop at a line boundary, so that what was written still replays.
      this.full = true;
      this.flush();
      this.options.onFull?.(this.written);
      return;
    }
    this.buffer.push(line);
    this.bytes += line.length + 1;
    if (this.bytes >= FLUSH_BYTES) this.flush();
  }

  flush(): void {
    if (this.buffer.length === 0) return;
    const text = this.buffer.join("\n") + "\n";
    fs.writeSync(this.fd, text);
    this.written += Buffer.byteLength(text);
    this.buffer = [];
    this.bytes = 0;
  }

  close(): void {
    clearInterval(this.timer);
    this.flush();
    fs.closeSync(this.fd);
  }
}
