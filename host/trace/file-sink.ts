// A trace sink writing to a file: lines are buffered and written in blocks, at the latest every
// second, so recording costs the agent little; `close` writes what is left.
import fs from "node:fs";
import type { TraceSink } from "./recording-core.js";

const FLUSH_BYTES = 64 * 1024;
const FLUSH_INTERVAL_MS = 1000;

export class FileTraceSink {
  private fd: number;
  private buffer: string[] = [];
  private bytes = 0;
  private timer?: NodeJS.Timeout;
  readonly sink: TraceSink = (line) => this.write(line);

  constructor(file: string, options: { periodicFlush?: boolean } = {}) {
    this.fd = fs.openSync(file, "w");
    if (options.periodicFlush) {
      this.timer = setInterval(() => this.flush(), FLUSH_INTERVAL_MS);
      this.timer.unref();
    }
  }

  private write(line: string): void {
    this.buffer.push(line);
    this.bytes += line.length + 1;
    if (this.bytes >= FLUSH_BYTES) this.flush();
  }

  flush(): void {
    if (this.buffer.length === 0) return;
    fs.writeSync(this.fd, this.buffer.join("\n") + "\n");
    this.buffer = [];
    this.bytes = 0;
  }

  close(): void {
    clearInterval(this.timer);
    this.flush();
    fs.closeSync(this.fd);
  }
}
