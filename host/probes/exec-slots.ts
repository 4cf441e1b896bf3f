// A bound on exec probes running at once. Each exec probe is a process the runtime starts in the
// container (runc exec): 110 pods with two exec probes every 10 s ask a 2-core node for 22 of them
// a second, and unbounded they took the CPU the runtime needed to start containers. Past the bound
// a probe waits its turn in arrival order; the wait counts against its own timeout, and one whose
// timeout runs out while waiting fails as a command that ran past it does (upstream's words), so
// an overloaded node reports what the kubelet would, and container starts keep their share.
import os from "node:os";

/** Exec probes at once: two per CPU, at least four. */
export function defaultExecProbeSlots(): number {
  return Math.max(4, 2 * os.availableParallelism());
}

export class ExecSlots {
  private running = 0;
  private waiting: { grant: () => void; timer: NodeJS.Timeout }[] = [];
  /** The most that ever ran at once, and probes whose timeout ran out waiting (for tests and metrics). */
  mostRunning = 0;
  expiredWaiting = 0;

  constructor(readonly limit: number = defaultExecProbeSlots()) {}

  /** Waits for a slot until `deadlineMs` (Date.now() time); true with a slot, false without. */
  acquire(deadlineMs: number): Promise<boolean> {
    if (this.running < this.limit) {
      this.take();
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const entry = {
        grant: () => {
          clearTimeout(entry.timer);
          this.take();
          resolve(true);
        },
        timer: setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(entry), 1);
          this.expiredWaiting++;
          resolve(false);
        }, Math.max(0, deadlineMs - Date.now())),
      };
      this.waiting.push(entry);
    });
  }

  release(): void {
    this.running--;
    this.waiting.shift()?.grant();
  }

  get queued(): number {
    return this.waiting.length;
  }

  private take(): void {
    this.running++;
    if (this.running > this.mostRunning) this.mostRunning = this.running;
  }
}
