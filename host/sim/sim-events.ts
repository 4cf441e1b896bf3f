// The runtime's pushed changes in the simulator, as host/cri/runtime-events.ts hears them from a
// real runtime (scenario `runtimeEvents`): containerd 1.6's task exits (some lost), or CRI's
// GetContainerEvents stream (every change; broken by a runtime restart, given up at the fifth
// break, after which exits alone come, as the host falls back to containerd's events). Each
// arrives after a drawn latency, some twice, some late (after the relist that already saw the
// change); one sent to an agent since restarted is gone with it.
import type { Core } from "../core/core.js";
import { MAX_CRI_STREAM_FAILURES } from "../common/pleg-policy.js";
import { drawDuration } from "./sim-cri.js";
import type { EventQueue } from "./event-queue.js";
import type { Faults } from "./faults.js";
import type { Prng } from "./prng.js";
import type { Scenario } from "./scenario.js";
import type { TraceWriter } from "../trace/recording-core.js";

export interface SimEventsHost {
  now(): number;
  /** The running agent's generation: bumped by each agent restart. */
  generation(): number;
  /** Calls into the current core (none while the agent is down) and pumps after. */
  deliver(fn: (core: Core) => void): void;
}

export class SimRuntimeEvents {
  /** What the agent listens to now: a stream given up leaves exits. */
  private source: Scenario["runtimeEvents"]["source"];
  private streamUp = false;
  private breaks = 0;
  delivered = 0;
  lost = 0;
  duplicated = 0;
  late = 0;

  constructor(
    private config: Scenario["runtimeEvents"],
    private rng: Prng,
    private queue: EventQueue,
    private faults: Faults,
    private host: SimEventsHost,
    private trace?: TraceWriter,
  ) {
    this.source = config.source;
  }

  /** A sandbox or container changed in the runtime (`exit`: a container's process ended). */
  changed(exit: boolean): void {
    if (this.source === "none" || (this.source === "exits" && !exit)) return;
    const now = this.host.now();
    if (this.source === "exits" && this.config.lose > 0 && this.rng.chance(this.config.lose)) {
      this.lost++;
      this.trace?.sim(now, "runtime event lost", {});
      return;
    }
    if (this.source === "stream" && !this.streamUp) return; // nobody is listening
    const generation = this.host.generation();
    // Draws only for the features a scenario asks for: older scenarios replay as they were.
    const copies = this.config.duplicate > 0 && this.rng.chance(this.config.duplicate) ? 2 : 1;
    for (let copy = 0; copy < copies; copy++) {
      const late = this.config.late > 0 && this.rng.chance(this.config.late);
      if (copy > 0) this.duplicated++;
      if (late) this.late++;
      const delayMs = drawDuration(this.rng, late ? this.config.lateLatency : this.config.latency);
      this.queue.push(now + delayMs, late ? "runtime event (late)" : copy > 0 ? "runtime event (again)" : "runtime event", () => {
        if (generation !== this.host.generation()) return;
        this.delivered++;
        this.host.deliver((core) => core.handleRuntimeEvent?.(this.host.now()));
      });
    }
  }

  /** A new agent process opens its stream afresh (a new process counts breaks from zero). */
  agentStarted(): void {
    this.source = this.config.source;
    this.breaks = 0;
    this.streamUp = false;
    if (this.source === "stream") this.openStream();
  }

  /**
   * The runtime went down: the stream breaks, and is opened again once the runtime is up. (The
   * host also counts each failed reopening while the runtime is down; here a restart counts once.)
   */
  runtimeRestarted(): void {
    if (this.source !== "stream") return;
    if (this.streamUp) {
      this.streamUp = false;
      this.trace?.sim(this.host.now(), "runtime event stream broken", { breaks: this.breaks + 1 });
      this.host.deliver((core) => core.handleEventStream?.(this.host.now(), false));
    }
    if (++this.breaks >= MAX_CRI_STREAM_FAILURES) {
      this.source = "exits";
      return;
    }
    this.openStream();
  }

  private openStream(): void {
    const generation = this.host.generation();
    const attempt = () => {
      if (generation !== this.host.generation() || this.source !== "stream" || this.streamUp) return;
      const now = this.host.now();
      if (this.faults.isRuntimeDown(now)) {
        this.queue.push(now + 1000, "runtime event stream retry", attempt);
        return;
      }
      this.streamUp = true;
      this.host.deliver((core) => core.handleEventStream?.(now, true));
    };
    this.queue.push(this.host.now() + drawDuration(this.rng, this.config.latency), "runtime event stream open", attempt);
  }
}
