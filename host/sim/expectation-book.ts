// The scenario's expectations: `at` ones checked at their time, `by` ones checked whenever time
// moves until they are met or their time has come; what failed, for the report.
import type { PodStatus } from "../core/types.js";
import type { TraceWriter } from "../trace/recording-core.js";
import { evaluateExpectation } from "./expectations.js";
import type { SimPodSource } from "./pod-source.js";
import type { Expectation } from "./scenario.js";
import type { FailedExpectation } from "./sim-report.js";
import { SIM_EPOCH_MS } from "./sim-report.js";
import type { SimRuntime } from "./sim-runtime.js";

export interface ExpectationContext {
  now(): number;
  pods: SimPodSource;
  runtime: SimRuntime;
  statuses: Map<string, PodStatus>;
  trace?: TraceWriter;
}

export class ExpectationBook {
  /** `by` expectations not met yet. */
  byExpectations: Expectation[] = [];
  readonly failed: FailedExpectation[] = [];

  constructor(private ctx: ExpectationContext) {}

  evaluate(e: Expectation): string | undefined {
    const uid = this.ctx.pods.uidOf(e.pod);
    return evaluateExpectation(e, uid, uid === undefined ? undefined : this.ctx.statuses.get(uid), this.ctx.runtime);
  }

  private record(e: Expectation, problem: string | undefined): void {
    if (problem) this.failed.push({ text: e.text, atMs: this.ctx.now() - SIM_EPOCH_MS, detail: problem });
    this.ctx.trace?.sim(this.ctx.now(), "expect", { expectation: e.text, ok: !problem, detail: problem });
  }

  checkAt(e: Expectation): void {
    this.record(e, this.evaluate(e));
  }

  /** A `by` expectation's time has come: met now, or it failed. */
  checkDeadline(e: Expectation): void {
    if (!this.byExpectations.includes(e)) return; // met earlier
    this.byExpectations = this.byExpectations.filter((x) => x !== e);
    this.record(e, this.evaluate(e));
  }

  checkBy(): void {
    this.byExpectations = this.byExpectations.filter((e) => {
      if (this.evaluate(e) !== undefined) return true;
      this.ctx.trace?.sim(this.ctx.now(), "expect", { expectation: e.text, ok: true });
      return false;
    });
  }


  /** The end of the run: every `by` expectation still open failed. */
  finish(): void {
    for (const e of this.byExpectations) {
      this.failed.push({ text: e.text, atMs: this.ctx.now() - SIM_EPOCH_MS, detail: this.evaluate(e) ?? "met only after its time" });
    }
  }
}
