// A Logind in memory for unit tests and the simulator: a delay setting, a drop-in that raises it
// (or a refusal), a lock, and PrepareForShutdown sent by the test.
import type { Logind } from "./logind.js";

export class FakeLogind implements Logind {
  delayMs: number;
  /** Whether a drop-in takes effect (false: logind keeps its delay, as when /etc is read-only). */
  dropInWorks = true;
  lockHeld = false;
  lockTakenCount = 0;
  private handlers: ((active: boolean) => void)[] = [];
  private closeHandlers: ((error?: Error) => void)[] = [];

  constructor(delayMs = 5000) {
    this.delayMs = delayMs;
  }

  async inhibitDelayMs(): Promise<number> {
    return this.delayMs;
  }

  async raiseInhibitDelay(delayMs: number): Promise<void> {
    if (this.dropInWorks) this.delayMs = delayMs;
  }

  async takeLock(): Promise<void> {
    this.lockHeld = true;
    this.lockTakenCount++;
  }

  async releaseLock(): Promise<void> {
    this.lockHeld = false;
  }

  async watchShutdown(handler: (active: boolean) => void): Promise<void> {
    this.handlers.push(handler);
  }

  onClose(handler: (error?: Error) => void): void {
    this.closeHandlers.push(handler);
  }

  close(): void {
    this.lockHeld = false;
  }

  /** logind announces a shutdown (true) or its cancellation (false). */
  prepareForShutdown(active: boolean): void {
    for (const handler of this.handlers) handler(active);
  }

  /** The bus goes away. */
  disconnect(): void {
    this.lockHeld = false;
    for (const handler of this.closeHandlers) handler(new Error("bus gone"));
  }
}
