// TerminatingPod and TerminatedPod steps (upstream syncTerminatingPod / syncTerminatedPod and
// the cleanup of removed pods): stop every container at once with the pod's grace period, then
// the sandboxes; for a removed pod, then remove containers, sandboxes and the pod cgroup.
import { ContainerState, EventType, PodSpec, SandboxState } from "./model";
import { PodRecord } from "./pod-record";
import { WorkerContext } from "./context";
import { isSidecarName, stopLastSidecar } from "./init-containers";

/// Queues the stops still needed. Containers stop in parallel, as upstream kills them, except
/// sidecars: they stop after every other container, last first, each with what is left of the
/// pod's grace period (upstream's termination ordering: one budget, never less than the minimal
/// shutdown window); the sandboxes stop once no container runs. Returns false when everything is
/// stopped.
export function terminatingStep(rec: PodRecord, ctx: WorkerContext): bool {
  let queued = false;
  const spec = rec.lastSpec;
  if (rec.terminatingSinceMs == 0) {
    rec.terminatingSinceMs = ctx.nowMs;
    if (spec !== null) queued = announceSidecarStops(rec, ctx, spec);
  }
  for (let i = 0; i < rec.containers.length; i++) {
    const c = rec.containers[i];
    if (c.state == ContainerState.Exited) continue;
    if (isSidecarName(spec, c.name)) continue;
    // A created container never ran: StopContainer leaves it "created", so remove it instead.
    if (c.state == ContainerState.Created) ctx.removeContainer(rec, c.id, c.name);
    else ctx.stopContainer(rec, c.id, c.name, "Stopping container " + c.name);
    queued = true;
  }
  if (queued) return true;
  if (spec !== null && stopLastSidecar(rec, ctx, spec)) return true;
  for (let i = 0; i < rec.sandboxes.length; i++) {
    const s = rec.sandboxes[i];
    if (s.state != SandboxState.Ready) continue;
    ctx.stopSandbox(rec, s.id);
    queued = true;
  }
  return queued;
}

/// Upstream kills every container at once and each sidecar waits for its turn inside its kill:
/// so a sidecar's Killing event and its preStop hook come at the start of the termination, with
/// the others', and only its StopContainer waits. Returns whether a hook was queued.
function announceSidecarStops(rec: PodRecord, ctx: WorkerContext, spec: PodSpec): bool {
  let queued = false;
  const grace = rec.gracePeriodSeconds();
  for (let i = 0; i < rec.containers.length; i++) {
    const c = rec.containers[i];
    if (c.state != ContainerState.Running || !isSidecarName(spec, c.name)) continue;
    ctx.event(rec, c.name, EventType.Normal, "Killing", "Stopping container " + c.name);
    rec.stopAnnounced.add(c.id);
    if (ctx.runPreStop(rec, c.id, c.name, grace, false)) queued = true;
  }
  return queued;
}

/// Queues the removals of a removed, stopped pod. Returns false when nothing is left.
export function cleanupStep(rec: PodRecord, ctx: WorkerContext): bool {
  if (rec.containers.length > 0) {
    for (let i = 0; i < rec.containers.length; i++) ctx.removeContainer(rec, rec.containers[i].id, rec.containers[i].name);
    return true;
  }
  if (rec.sandboxes.length > 0) {
    for (let i = 0; i < rec.sandboxes.length; i++) ctx.removeSandbox(rec, rec.sandboxes[i].id);
    return true;
  }
  if (!rec.cgroupRemoved) {
    rec.cgroupRemoved = true;
    ctx.removePodCgroup(rec);
  }
  return false;
}
