// The host's work beside the CRI, simulated: volume set-up with the scenario's latency and
// failures, and probes that answer as each container's behaviour says.
import type { ActionResult, PlannedAction, ProbeRequest, ProbeResult } from "../core/types.js";
import type { TraceWriter } from "../trace/recording-core.js";
import type { EventQueue } from "./event-queue.js";
import type { SimPodSource } from "./pod-source.js";
import type { Prng } from "./prng.js";
import type { ProbeInvariants } from "./probe-invariants.js";
import type { ContainerBehaviour, Scenario } from "./scenario.js";
import { drawDuration } from "./sim-cri.js";
import type { SimRuntime } from "./sim-runtime.js";

/** How long a simulated probe takes to answer. */
const PROBE_LATENCY_MS = 5;

export interface SimHostWorkContext {
  now(): number;
  /** The agent process's generation: answers to a dead agent's calls are dropped. */
  generation(): number;
  queue: EventQueue;
  runtime: SimRuntime;
  pods: SimPodSource;
  probeInvariants: ProbeInvariants;
  scenario: Scenario;
  trace?: TraceWriter;
  onResult(result: ActionResult): void;
  onProbeResult(result: ProbeResult): void;
}

export class SimHostWork {
  /** Pods whose volumes the simulated host has set up and not torn down (they outlive agent restarts). */
  readonly mounted = new Set<string>();
  /** When each container run's probes turn, drawn at its first probe. */
  private probeTurns = new Map<string, { startupAfterMs: number; healthyForMs: number }>();

  constructor(
    private ctx: SimHostWorkContext,
    private probeRng: Prng,
    private volumeRng: Prng,
  ) {}

  /**
   * The host's volume set-up, simulated: it takes the scenario's latency and fails as often as
   * it says; a pod counts as set up only once it answered ok.
   */
  setUpVolumes(action: PlannedAction): void {
    const generation = this.ctx.generation();
    const { latency, failure } = this.ctx.scenario.volumes;
    const fails = this.volumeRng.chance(failure);
    this.ctx.queue.push(this.ctx.now() + this.volumeRng.int(latency.minMs, latency.maxMs), "volumes set up", () => {
      if (generation !== this.ctx.generation()) return; // the agent that asked is gone
      if (!fails) this.mounted.add(action.podUid);
      this.ctx.onResult(fails
        ? { actionId: action.id, outcome: { tag: "err", val: { kind: "other", grpcCode: 0, message: 'MountVolume.SetUp failed for volume "data" : simulated failure' } } }
        : { actionId: action.id, outcome: { tag: "ok", val: "" } });
    });
  }

  /**
   * A probe on the simulated runtime: a running container answers after a moment; one that is
   * gone makes the probe error, as an exec into a stopped container does.
   */
  probe(action: PlannedAction, request: ProbeRequest): void {
    const generation = this.ctx.generation();
    const info = this.ctx.pods.podInfo(action.podUid);
    this.ctx.probeInvariants.onProbeRequest(request, info?.spec, this.ctx.now());
    this.ctx.queue.push(this.ctx.now() + PROBE_LATENCY_MS, "probe answers", () => {
      if (generation !== this.ctx.generation()) return; // the agent that asked is gone
      const container = this.ctx.runtime.containers.get(request.containerId);
      let outcome: ProbeResult["outcome"] = "error";
      let output = "container is not running";
      if (container?.state === "running") {
        const behaviour = info?.behaviour[container.name];
        const ranMs = this.ctx.now() - container.startedAtMs;
        const limits = this.probeLimits(container.id, container.runNumber, behaviour);
        const timedOut = behaviour !== undefined && behaviour.probeTimeouts > 0 && this.probeRng.chance(behaviour.probeTimeouts);
        const healthy = request.probeType === "startup" ? ranMs >= limits.startupAfterMs : ranMs < limits.healthyForMs;
        outcome = timedOut ? "failure" : healthy ? "success" : "failure";
        output = timedOut ? "command timed out" : healthy ? "" : "HTTP probe failed with statuscode: 500";
      }
      this.ctx.probeInvariants.onProbeResult(request, outcome);
      this.ctx.trace?.sim(this.ctx.now(), "probe", { container: request.containerId.slice(0, 12), type: request.probeType, outcome });
      this.ctx.onProbeResult({ actionId: action.id, outcome, output });
    });
  }

  /** When a container's probes turn (drawn once per run of the container). */
  private probeLimits(containerId: string, runNumber: number, behaviour: ContainerBehaviour | undefined): { startupAfterMs: number; healthyForMs: number } {
    const key = `${containerId}#${runNumber}`;
    let limits = this.probeTurns.get(key);
    if (!limits) {
      limits = {
        startupAfterMs: behaviour?.startupAfter ? drawDuration(this.probeRng, behaviour.startupAfter) : 0,
        healthyForMs: behaviour?.healthyFor ? drawDuration(this.probeRng, behaviour.healthyFor) : Infinity,
      };
      this.probeTurns.set(key, limits);
    }
    return limits;
  }
}
