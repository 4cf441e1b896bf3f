// What a simulator run is given and what it reports.
import type { Core, CoreConfig } from "../core/core.js";
import type { TraceSink } from "../trace/recording-core.js";
import type { Violation } from "./invariants.js";
import type { Scenario } from "./scenario.js";

/** Virtual time 0 of every run: 2026-01-01T00:00:00Z, so traces show plausible dates. */
export const SIM_EPOCH_MS = Date.UTC(2026, 0, 1);

export interface SimOptions {
  scenario: Scenario;
  seed: number;
  /** Receives the trace, one JSON line at a time. */
  trace?: TraceSink;
  /** Stop at the first broken invariant (default true). */
  stopOnViolation?: boolean;
  /** Makes the core; tests wrap it to prove the invariants catch a broken core. */
  createCore?: (config: CoreConfig) => Promise<Core>;
}

export interface FailedExpectation {
  text: string;
  atMs: number;
  detail: string;
}

export interface SimStats {
  coreCalls: number;
  runtimeCalls: number;
  relists: number;
  containerStarts: number;
  restarts: number;
  faultsInjected: number;
  agentRestarts: number;
  runtimeRestarts: number;
  statusUpdates: number;
  statsPasses: number;
  evictions: number;
  /** Pushed runtime changes delivered to the core, and exits lost on the way (scenario runtimeEvents). */
  runtimeEvents: number;
  runtimeEventsLost: number;
  /** Of those delivered, the second copies and the late ones. */
  runtimeEventsDuplicated: number;
  runtimeEventsLate: number;
}

export interface SimReport {
  seed: number;
  scenario: string;
  file: string;
  ok: boolean;
  violations: Violation[];
  failedExpectations: FailedExpectation[];
  /** Pods the core refused, with its reason. */
  refused: string[];
  simulatedMs: number;
  wallMs: number;
  stats: SimStats;
}
