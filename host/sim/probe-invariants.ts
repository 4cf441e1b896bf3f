// What must hold of probes, init containers and sidecars in a simulation, modelled apart from the
// core: no liveness or readiness probe before the startup probe passed; never ready while the
// readiness probe's last failureThreshold results failed; init containers strictly in order and
// no regular container before they all succeeded; sidecars stopped after the regular containers.
import type { ContainerStatus, PodSpec, PodStatus, ProbeRequest } from "../core/types.js";
import type { Invariants } from "./invariants.js";
import type { SimContainer, SimRuntime } from "./sim-runtime.js";

interface ProbeTrack {
  startupPassed: boolean;
  readinessSuccesses: number;
  readinessFailuresInRow: number;
}

export class ProbeInvariants {
  /** Per container ID: what its probes answered so far. */
  private tracks = new Map<string, ProbeTrack>();

  /** `stopping(uid)`: the pod is being removed or deleted (its sidecars must then stop last). */
  constructor(private invariants: Invariants, private stopping: (podUid: string) => boolean) {}

  private track(containerId: string): ProbeTrack {
    let t = this.tracks.get(containerId);
    if (!t) this.tracks.set(containerId, (t = { startupPassed: false, readinessSuccesses: 0, readinessFailuresInRow: 0 }));
    return t;
  }

  /** The core asked for a probe of a container of `spec`. */
  onProbeRequest(request: ProbeRequest, spec: PodSpec | undefined, nowMs: number): void {
    if (request.probeType === "startup" || !spec) return;
    const container = [...spec.containers, ...spec.initContainers].find((c) => c.name === request.containerName);
    if (container?.startupProbe && !this.track(request.containerId).startupPassed) {
      this.invariants.violate(nowMs, "probe-before-startup", `${request.probeType} probe of "${request.containerName}" (${request.containerId.slice(0, 12)}) before its startup probe passed`);
    }
  }

  /** The simulated container answered a probe. */
  onProbeResult(request: ProbeRequest, outcome: string): void {
    const t = this.track(request.containerId);
    const passed = outcome === "success" || outcome === "warning";
    if (request.probeType === "startup" && passed) t.startupPassed = true;
    if (request.probeType !== "readiness" || outcome === "error") return;
    if (passed) {
      t.readinessSuccesses++;
      t.readinessFailuresInRow = 0;
    } else t.readinessFailuresInRow++;
  }

  /** Every status the core publishes: a ready container's readiness probe must allow it. */
  onStatus(status: PodStatus, spec: PodSpec | undefined, nowMs: number): void {
    if (!spec) return;
    const check = (s: ContainerStatus) => {
      if (!s.ready) return;
      const probe = [...spec.containers, ...spec.initContainers].find((c) => c.name === s.name)?.readinessProbe;
      if (!probe) return;
      const t = this.track(s.containerId);
      if (t.readinessSuccesses === 0 || t.readinessFailuresInRow >= probe.failureThreshold) {
        this.invariants.violate(nowMs, "ready-while-failing", `"${s.name}" (${s.containerId.slice(0, 12)}) reported ready after ${t.readinessSuccesses} readiness successes and ${t.readinessFailuresInRow} failures in a row`);
      }
    };
    status.containerStatuses.forEach(check);
    (status.initContainerStatuses ?? []).forEach(check);
  }

  /** The runtime creates `c`: every init container before it must have done its part. */
  onCreate(runtime: SimRuntime, c: SimContainer, spec: PodSpec | undefined, nowMs: number): void {
    if (!spec || spec.initContainers.length === 0) return;
    const initIndex = spec.initContainers.findIndex((i) => i.name === c.name);
    const isSidecar = initIndex >= 0 && spec.initContainers[initIndex].restartPolicy === "Always";
    // A sidecar restarted later, or a container of a pod that already ran its regular ones, is not initialization.
    const regularRan = [...runtime.containers.values()].some((o) => o !== c && o.sandboxId === c.sandboxId && spec.containers.some((r) => r.name === o.name));
    if (regularRan || (isSidecar && [...runtime.containers.values()].some((o) => o !== c && o.sandboxId === c.sandboxId && o.name === c.name))) return;
    const before = initIndex >= 0 ? spec.initContainers.slice(0, initIndex) : spec.initContainers;
    for (const init of before) {
      const instances = [...runtime.containers.values()].filter((o) => o.sandboxId === c.sandboxId && o.name === init.name);
      const done = init.restartPolicy === "Always" ? instances.some((o) => o.state === "running") : instances.some((o) => o.state === "exited" && o.exitCode === 0);
      if (!done) {
        this.invariants.violate(nowMs, "init-order", `"${c.name}" of pod ${c.podUid} created before init container "${init.name}" ${init.restartPolicy === "Always" ? "ran" : "succeeded"}`);
        return;
      }
    }
  }

  /** The core stops running container `c`: a sidecar only once no regular container runs. */
  onStop(runtime: SimRuntime, c: SimContainer, spec: PodSpec | undefined, nowMs: number): void {
    if (!spec || !spec.initContainers.some((i) => i.name === c.name && i.restartPolicy === "Always")) return;
    if (!this.stopping(c.podUid)) return; // a sidecar failing its probe is killed while the pod runs
    const sandbox = runtime.sandboxes.get(c.sandboxId);
    if (sandbox && sandbox.state !== "ready") return; // the sandbox died: everything goes at once
    const regular = [...runtime.containers.values()].find((o) => o.sandboxId === c.sandboxId && o.state === "running" && spec.containers.some((r) => r.name === o.name));
    if (regular) this.invariants.violate(nowMs, "sidecar-stops-last", `sidecar "${c.name}" of pod ${c.podUid} stopped while "${regular.name}" still runs`);
  }
}
