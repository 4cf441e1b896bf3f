// Logs of removed containers, deleted a minute after the container (upstream's container GC runs
// every minute, so a removed container's log stays readable about that long; nanolet removes the
// containers of a deleted pod at once, and deleting their logs at once too lost the last lines
// a user or a test reads right after). Only regular files under the pod logs directory go.
import fs from "node:fs";
import path from "node:path";
import type { Logger } from "../common/log.js";
import { within } from "../files/safe-open.js";

/** How long a removed container's log is kept. */
export const REMOVED_LOG_KEPT_MS = 60_000;
/** Logs waiting at most; past it the oldest goes at once (a storm of removals cannot grow this). */
const PENDING_MAX = 10_000;

/** Removes a container's log file and its rotated files, only under `podLogsDir` and only regular files. */
export function removeContainerLog(logPath: string, podLogsDir: string, log: Logger): void {
  if (!path.isAbsolute(logPath) || !within(path.normalize(logPath), path.resolve(podLogsDir))) return;
  const dir = path.dirname(logPath);
  const base = path.basename(logPath);
  try {
    for (const name of fs.readdirSync(dir)) {
      if (name !== base && !name.startsWith(`${base}.`)) continue;
      const file = path.join(dir, name);
      // lstat: a link where a log was is left alone (never followed out of the directory).
      if (fs.lstatSync(file).isFile()) fs.rmSync(file);
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT") log.log("warn", "Container log not removed", { logPath, error: code ?? (error as Error).message });
  }
}

export class RemovedLogs {
  private readonly pending: { logPath: string; removedAtMs: number }[] = [];

  constructor(
    private readonly podLogsDir: string,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** The container of `logPath` was removed just now. */
  add(logPath: string): void {
    const nowMs = this.now();
    if (this.pending.length >= PENDING_MAX) {
      const oldest = this.pending.shift()!;
      removeContainerLog(oldest.logPath, this.podLogsDir, this.log);
    }
    this.pending.push({ logPath, removedAtMs: nowMs });
  }

  /** Deletes the logs of containers removed at least REMOVED_LOG_KEPT_MS ago. */
  sweep(nowMs = this.now()): void {
    while (this.pending.length > 0 && nowMs - this.pending[0].removedAtMs >= REMOVED_LOG_KEPT_MS) {
      removeContainerLog(this.pending.shift()!.logPath, this.podLogsDir, this.log);
    }
  }

  get size(): number {
    return this.pending.length;
  }
}
