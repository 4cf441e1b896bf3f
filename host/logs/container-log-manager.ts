// The kubelet's ContainerLogManager: every 10 s, a running container's log past
// --container-log-max-size (10Mi) is rotated: renamed to `<log>.<YYYYMMDD-hhmmss>` and the runtime
// told to reopen it (CRI ReopenContainerLog); older rotated files are gzipped
// (`<log>.<time>.gz`), and past --container-log-max-files (5, the live one included) the oldest
// go. The runtime keeps writing to the renamed file until it reopens, so the newest rotated file
// stays uncompressed until the next rotation, as upstream does.
import fs from "node:fs";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import zlib from "node:zlib";
import type { RuntimeSnapshot } from "../core/types.js";
import type { Runtime } from "../cri/runtime.js";
import { containerLogName, podLogDirectory } from "./log-paths.js";
import type { Logger } from "../common/log.js";

export const DEFAULT_LOG_MAX_SIZE_BYTES = 10 * 1024 * 1024;
export const DEFAULT_LOG_MAX_FILES = 5;
export const LOG_MONITOR_PERIOD_MS = 10_000;

export interface ContainerLogManagerOptions {
  runtime: Runtime;
  podLogsDir: string;
  log: Logger;
  snapshot: () => RuntimeSnapshot | undefined;
  maxSizeBytes?: number;
  maxFiles?: number;
  periodMs?: number;
  now?: () => Date;
}

/** `20261205-013301`: the kubelet's rotation timestamp (UTC). */
export function rotationStamp(d: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}-${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`;
}

/** The rotated files of `logFile`, oldest first (their names sort by time). */
export function rotatedFiles(logFile: string): string[] {
  const dir = path.dirname(logFile);
  const base = path.basename(logFile);
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.startsWith(`${base}.`) && /^\d{8}-\d{6}(\.gz)?$/.test(n.slice(base.length + 1)))
    .sort()
    .map((n) => path.join(dir, n));
}

export class ContainerLogManager {
  private timer?: NodeJS.Timeout;
  private busy = false;
  private maxSizeBytes: number;
  private maxFiles: number;

  constructor(private options: ContainerLogManagerOptions) {
    this.maxSizeBytes = options.maxSizeBytes ?? DEFAULT_LOG_MAX_SIZE_BYTES;
    this.maxFiles = options.maxFiles ?? DEFAULT_LOG_MAX_FILES;
    if (!(this.maxFiles >= 2)) throw new Error(`--container-log-max-files: must be at least 2, got ${this.maxFiles}`);
    if (!(this.maxSizeBytes > 0)) throw new Error("--container-log-max-size: must be greater than zero");
  }

  start(): void {
    this.timer = setInterval(() => void this.rotateAll(), this.options.periodMs ?? LOG_MONITOR_PERIOD_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One pass over the running containers; overlapping passes are skipped. */
  async rotateAll(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const snapshot = this.options.snapshot();
      if (!snapshot) return;
      const sandboxes = new Map(snapshot.sandboxes.map((s) => [s.id, s]));
      for (const c of snapshot.containers) {
        if (c.state !== "running") continue;
        const sandbox = sandboxes.get(c.sandboxId);
        if (!sandbox) continue;
        let file: string;
        try {
          file = path.join(podLogDirectory(this.options.podLogsDir, sandbox), containerLogName(c.name, c.attempt));
        } catch {
          continue; // names that would lead outside the log directory are not ours
        }
        try {
          await this.rotateIfNeeded(c.id, file);
        } catch (error) {
          this.options.log.log("warn", "Container log rotation failed", { container: c.id, file, error: (error as Error).message });
        }
      }
    } finally {
      this.busy = false;
    }
  }

  /** Rotates `file` of container `id` if it is past the size limit. */
  async rotateIfNeeded(id: string, file: string): Promise<boolean> {
    let size: number;
    try {
      size = fs.statSync(file).size;
    } catch {
      return false; // not written yet
    }
    if (size <= this.maxSizeBytes) return false;
    this.removeTemporaryFiles(file);
    this.removeExcess(file);
    await this.compressOlder(file);
    const rotated = `${file}.${rotationStamp((this.options.now ?? (() => new Date()))())}`;
    if (fs.existsSync(rotated)) return false; // rotated this second already
    fs.renameSync(file, rotated);
    try {
      await this.options.runtime.reopenContainerLog(id);
    } catch (error) {
      // The runtime still writes to the renamed file: give it its name back, as upstream does.
      fs.renameSync(rotated, file);
      throw error;
    }
    return true;
  }

  private removeTemporaryFiles(file: string): void {
    const dir = path.dirname(file);
    for (const name of fs.readdirSync(dir)) if (name.startsWith(path.basename(file)) && name.endsWith(".tmp")) fs.rmSync(path.join(dir, name), { force: true });
  }

  /** Keeps at most maxFiles - 2 rotated files: the live file and the one about to be made count too. */
  private removeExcess(file: string): void {
    const rotated = rotatedFiles(file);
    const keep = this.maxFiles - 2;
    for (const old of rotated.slice(0, Math.max(0, rotated.length - keep))) fs.rmSync(old, { force: true });
  }

  /** Gzips every rotated file but the newest (which the runtime may still be writing). */
  private async compressOlder(file: string): Promise<void> {
    const rotated = rotatedFiles(file).filter((f) => !f.endsWith(".gz"));
    for (const f of rotated) {
      const tmp = `${f}.gz.tmp`;
      await pipeline(fs.createReadStream(f), zlib.createGzip(), fs.createWriteStream(tmp));
      fs.renameSync(tmp, `${f}.gz`);
      fs.rmSync(f, { force: true });
    }
  }
}
