// "No update of a running pod stops it unless its spec says so": when the source changes a pod
// (same uid), each of its running containers whose spec the change leaves as it was must keep
// running. The core may still stop one for a reason of its own, each excused here: the pod is
// deleted, evicted or gone from the source, its sandbox died, its deadline passed, or a probe of
// the container failed (containers with liveness or startup probes, or pods with a deadline, are
// not watched); a newer change of the pod starts the watch again.
import type { ContainerSpec, PodSpec } from "../core/types.js";
import type { Invariants } from "./invariants.js";
import type { SimRuntime } from "./sim-runtime.js";

interface Watched {
  podUid: string;
  key: string;
  name: string;
  sinceMs: number;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a, (_k, v) => (typeof v === "bigint" ? v.toString() : v)) === JSON.stringify(b, (_k, v) => (typeof v === "bigint" ? v.toString() : v));

function containerNamed(spec: PodSpec, name: string): ContainerSpec | undefined {
  return [...spec.containers, ...spec.initContainers, ...spec.ephemeralContainers.map((e) => e.container)].find((c) => c.name === name);
}

/** What of the pod, besides its containers, would rightly restart them when it changes. */
function podLevel(spec: PodSpec): unknown {
  return [spec.hostNetwork, spec.restartPolicy, spec.volumes.map((v) => v.name), spec.activeDeadlineSeconds, spec.deletionGracePeriodSeconds];
}

export class UpdateInvariants {
  /** Watched running containers, by container ID. */
  private watched = new Map<string, Watched>();

  constructor(
    private runtime: SimRuntime,
    private invariants: Invariants,
  ) {}

  /** The source changed pod `key` from `before` to `after` (either may be refused: undefined). */
  onUpdate(key: string, before: PodSpec | undefined, after: PodSpec | undefined, nowMs: number): void {
    if (before) this.release(before.uid);
    if (!before || !after || before.uid !== after.uid || !same(podLevel(before), podLevel(after))) return;
    if (after.activeDeadlineSeconds !== undefined) return;
    for (const c of this.runtime.containers.values()) {
      if (c.podUid !== after.uid || c.state !== "running") continue;
      const was = containerNamed(before, c.name);
      const now = containerNamed(after, c.name);
      if (!was || !now || !same(was, now) || now.livenessProbe || now.startupProbe) continue;
      this.watched.set(c.id, { podUid: after.uid, key, name: c.name, sinceMs: nowMs });
    }
  }

  /** The pod no longer asks to run as it did (deleted, evicted, removed, changed): no more watch. */
  release(podUid: string): void {
    for (const [id, w] of this.watched) if (w.podUid === podUid) this.watched.delete(id);
  }

  /** The core stops container `containerId`; `excused` when the pod may rightly lose it now. */
  onStop(containerId: string, excused: boolean, nowMs: number): void {
    const w = this.watched.get(containerId);
    if (!w) return;
    this.watched.delete(containerId);
    const c = this.runtime.containers.get(containerId);
    const sandbox = c ? this.runtime.sandboxes.get(c.sandboxId) : undefined;
    if (excused || !c || c.state !== "running" || sandbox?.state !== "ready") return;
    this.invariants.violate(nowMs, "update-keeps-pod-running", `pod ${w.key}: container ${w.name} (${containerId.slice(0, 12)}) stopped ${nowMs - w.sinceMs} ms after an update that left its spec as it was`);
  }
}
