// The host half of graceful node shutdown (upstream's NodeShutdownManager on Linux): check and
// raise logind's InhibitDelayMaxUSec, hold a shutdown delay lock, and pass PrepareForShutdown to
// the core, which stops the pods and says when the lock may go. The core decides; this file
// only talks to logind. On a node without logind it logs one line and stays off.
import type { Logger } from "../common/log.js";
import type { Logind } from "./logind.js";
import { formatGoDuration } from "../config/go-duration.js";

/** Upstream's wait before watching logind again after the bus connection ended. */
const RECONNECT_MS = 1000;

export interface NodeShutdownManagerOptions {
  log: Logger;
  /** How long the lock must hold shutdown off (the core's sum of the groups' grace), ms. */
  delayMs: number;
  /** Opens logind (the system bus). */
  connect: () => Promise<Logind>;
  /** logind's PrepareForShutdown, for the core. */
  onShutdownEvent: (active: boolean) => void;
  /** A node event (upstream's NodeShutdown events). */
  nodeEvent?: (type: "Normal" | "Warning", reason: string, message: string) => void;
  reconnectMs?: number;
}

export class NodeShutdownManager {
  private logind: Logind | undefined;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;
  /** The manager has watched logind at least once (a later failure is retried). */
  private started = false;
  /** Whether the core last said the lock should be held. */
  private wantLock = true;

  constructor(private options: NodeShutdownManagerOptions) {}

  /** Watches logind; resolves true when it does, false (with one log line) when it cannot. */
  async start(): Promise<boolean> {
    const { log, delayMs } = this.options;
    log.log("info", "Creating node shutdown manager", { shutdownDelayMs: delayMs });
    try {
      await this.watch();
      this.started = true;
      return true;
    } catch (error) {
      log.log("warn", "Failed to start node shutdown manager; node shutdown will not be graceful", { error: (error as Error).message });
      return false;
    }
  }

  private async watch(): Promise<void> {
    const logind = await this.options.connect();
    try {
      await this.checkDelay(logind);
      if (this.wantLock) await logind.takeLock();
      await logind.watchShutdown((active) => this.shutdownEvent(active));
    } catch (error) {
      logind.close();
      throw error;
    }
    if (this.stopped) return logind.close();
    this.logind = logind;
    logind.onClose((error) => {
      if (this.logind !== logind || this.stopped) return;
      this.logind = undefined;
      this.options.log.log("warn", "Lost the watch for node shutdown events; watching again", { error: error?.message });
      this.scheduleRetry();
    });
  }

  /** Upstream: if logind's InhibitDelayMaxUSec is shorter than needed, raise it through a drop-in and reload. */
  private async checkDelay(logind: Logind): Promise<void> {
    const delayMs = this.options.delayMs;
    const currentMs = await logind.inhibitDelayMs();
    if (delayMs <= currentMs) return;
    try {
      await logind.raiseInhibitDelay(delayMs);
    } catch (error) {
      throw new Error(`unable to override inhibit delay by shutdown manager: ${(error as Error).message}`);
    }
    const updatedMs = await logind.inhibitDelayMs();
    if (delayMs > updatedMs) {
      throw new Error(`node shutdown manager was unable to update logind InhibitDelayMaxSec to ${seconds(delayMs)} (ShutdownGracePeriod), current value of InhibitDelayMaxSec (${seconds(updatedMs)}) is less than requested ShutdownGracePeriod`);
    }
    this.options.log.log("info", "Raised logind's InhibitDelayMaxSec for graceful node shutdown", { from: seconds(currentMs), to: seconds(updatedMs) });
  }

  private scheduleRetry(): void {
    if (this.stopped || !this.started) return;
    clearTimeout(this.retry);
    this.retry = setTimeout(() => {
      this.watch().catch((error) => {
        this.options.log.log("debug", "Unable to watch the node for shutdown events", { error: (error as Error).message });
        this.scheduleRetry();
      });
    }, this.options.reconnectMs ?? RECONNECT_MS);
    this.retry.unref?.();
  }

  private shutdownEvent(active: boolean): void {
    this.options.log.log(active ? "warn" : "info", active ? "Shutdown manager detected shutdown event" : "Shutdown manager detected shutdown cancellation");
    this.options.nodeEvent?.("Normal", "NodeShutdown", active ? "Shutdown manager detected shutdown event" : "Shutdown manager detected shutdown cancellation");
    this.options.onShutdownEvent(active);
  }

  /** The core's `shutdown-inhibit-lock`: let the lock go (every group done) or take it again (cancelled). */
  async lock(hold: boolean): Promise<void> {
    this.wantLock = hold;
    const logind = this.logind;
    if (!logind) return;
    try {
      if (hold) await logind.takeLock();
      else {
        await logind.releaseLock();
        this.options.log.log("info", "Shutdown manager completed processing shutdown event, node will shutdown shortly");
      }
    } catch (error) {
      this.options.log.log("warn", hold ? "Could not take the shutdown delay lock again" : "Could not release the shutdown delay lock", { error: (error as Error).message });
    }
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    this.logind?.close();
    this.logind = undefined;
  }
}

/** A duration in milliseconds as Go prints it (`30s`, `1m30s`). */
function seconds(ms: number): string {
  return formatGoDuration(BigInt(Math.round(ms)) * 1_000_000n);
}
