// The faults a scenario injects, and how long each may rightly delay the core. Call faults are
// drawn per CRI call from the windows open at that moment; relist faults lose or repeat a relist
// answer; a runtime restart refuses calls for a while. Every draw comes from the seeded streams
// given here, in a fixed order, so a seed always injects the same faults.
import type { TraceWriter } from "../trace/recording-core.js";
import type { Prng } from "./prng.js";
import type { CallFault, CriCall, Scenario } from "./scenario.js";

export type FaultKind = "error" | "timeout" | "slow";

/** Must match the core's RELIST_ANSWER_TIMEOUT_MS: a lost relist is asked again after this. */
export const RELIST_ANSWER_TIMEOUT_MS = 30_000;

export class Faults {
  private windows: { fault: CallFault; untilMs: number }[] = [];
  private relistFault = { lose: 0, duplicate: 0, untilMs: 0 };
  private runtimeDownUntilMs = 0;
  /** Until when the effects of the last disturbance may delay the core. */
  private lastDisturbanceMs = -Infinity;
  injected = 0;

  constructor(
    private scenario: Scenario,
    /** Draws call faults, and whether a cut-off call took effect. */
    private rng: Prng,
    /** Draws relist losses and repeats. */
    private relistRng: Prng,
    /** The slowest ordinary call, for how long a fault's effects last. */
    private maxLatencyMs: number,
    private trace?: TraceWriter,
  ) {}

  openWindow(fault: CallFault, nowMs: number): void {
    this.windows.push({ fault, untilMs: nowMs + fault.forMs });
    this.disturbed("fault-window", { ...fault }, nowMs);
  }

  openRelistWindow(lose: number, duplicate: number, forMs: number, nowMs: number): void {
    this.relistFault = { lose, duplicate, untilMs: nowMs + forMs };
    this.disturbed("relist-fault-window", { lose, duplicate, forMs }, nowMs);
  }

  /** The runtime goes down now for `downMs`; returns when it is back. */
  runtimeRestart(downMs: number, nowMs: number): number {
    this.runtimeDownUntilMs = nowMs + downMs;
    this.disturbed("runtime-restart", { downMs }, nowMs);
    return this.runtimeDownUntilMs;
  }

  isRuntimeDown(nowMs: number): boolean {
    return nowMs < this.runtimeDownUntilMs;
  }

  /** The fault for one call of `call` now, if a window injects one. */
  draw(call: CriCall, nowMs: number): FaultKind | undefined {
    if (this.windows.length === 0) return undefined;
    this.windows = this.windows.filter((w) => w.untilMs > nowMs);
    for (const { fault } of this.windows) {
      if (fault.call !== "*" && fault.call !== call) continue;
      const roll = this.rng.float();
      let kind: FaultKind | undefined;
      if (roll < fault.error) kind = "error";
      else if (roll < fault.error + fault.timeout) kind = "timeout";
      else if (roll < fault.error + fault.timeout + fault.slow) kind = "slow";
      if (kind) {
        this.injected++;
        // A failed call is retried after the worker back-off; a timed-out one only after its deadline.
        const s = this.scenario;
        const lastsMs = kind === "timeout" ? s.criTimeoutMs + s.workerErrorBackoffMs : kind === "error" ? s.workerErrorBackoffMs : 0;
        this.disturbed("fault", { call, kind }, nowMs, nowMs + lastsMs + 10 * this.maxLatencyMs);
        return kind;
      }
    }
    return undefined;
  }

  /** Whether a call cut off by a timeout or a runtime restart had taken effect: even odds. */
  tookEffect(): boolean {
    return this.rng.chance(0.5);
  }

  /** Whether this relist answer is lost on its way to the core. */
  loseRelist(nowMs: number): boolean {
    if (nowMs >= this.relistFault.untilMs || !this.relistRng.chance(this.relistFault.lose)) return false;
    this.disturbed("relist-lost", {}, nowMs, nowMs + RELIST_ANSWER_TIMEOUT_MS);
    return true;
  }

  /** If this relist answer is delivered a second time, how much later. */
  repeatRelist(nowMs: number): number | undefined {
    if (nowMs >= this.relistFault.untilMs || !this.relistRng.chance(this.relistFault.duplicate)) return undefined;
    const periodMs = this.scenario.relistPeriodMs;
    this.disturbed("relist-duplicated", {}, nowMs, nowMs + 3 * periodMs);
    return this.relistRng.int(1, 3 * periodMs);
  }

  /** Records a disturbance whose effects on the core may last until `untilMs`. */
  disturbed(event: string, fields: Record<string, unknown>, nowMs: number, untilMs = nowMs): void {
    this.lastDisturbanceMs = Math.max(this.lastDisturbanceMs, untilMs);
    this.trace?.sim(nowMs, event, fields);
  }

  /** When the node last stopped being disturbed (a restart in progress counts until it ends). */
  calmSinceMs(): number {
    return Math.max(this.lastDisturbanceMs, this.runtimeDownUntilMs);
  }

  /** The node sleeps for `forMs`: every window and every lasting effect resumes after it. */
  suspend(forMs: number, nowMs: number): void {
    for (const w of this.windows) w.untilMs += forMs;
    this.relistFault.untilMs += forMs;
    if (this.runtimeDownUntilMs > nowMs) this.runtimeDownUntilMs += forMs;
    if (this.lastDisturbanceMs > nowMs) this.lastDisturbanceMs += forMs;
  }
}
