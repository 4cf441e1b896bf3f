// Init containers and sidecars (upstream computeInitContainerActions with KEP-753 sidecars): init
// containers run one at a time, in order, each to success before the next; a sidecar (an init
// container with restartPolicy Always) is started in its turn, the next one waits until it has
// started, and it is kept running beside the regular containers and stopped after them.
import { WorkerContext } from "./context";
import { ContainerObservation, ContainerSpec, ContainerState, PodSpec, SandboxObservation } from "./model";
import { MINIMUM_GRACE_PERIOD_SECONDS, PodRecord } from "./pod-record";
import { isContainerStarted } from "./probe-status";
import { RestartPolicy, shouldContainerBeRestarted, shouldInitContainerBeRestarted } from "./restart";
import { latestContainer } from "./status";
import { hasInvalidImageName, inContainerErrorWait, inCrashLoopBackOff, inImagePullBackOff, syncContainer } from "./sync-pod";

export const enum InitProgress {
  /// Every init container succeeded and every sidecar started: the regular containers may run.
  Done = 0,
  /// A runtime call was queued.
  Acted = 1,
  /// Waiting: an init container runs, is in back-off, or failed for good (policy Never).
  Blocked = 2,
}

/// Whether the pod's regular containers already ran in this sandbox: then its init containers
/// ran to the end before, and are not run again (upstream: any regular container has a status).
export function hasInitialized(rec: PodRecord, spec: PodSpec, sandbox: SandboxObservation): bool {
  for (let i = 0; i < spec.containers.length; i++) {
    if (latestContainer(rec.containers, spec.containers[i].name, sandbox.id) !== null) return true;
  }
  return false;
}

/// One step of the init sequence; at most one runtime call.
export function initStep(rec: PodRecord, ctx: WorkerContext, spec: PodSpec, sandbox: SandboxObservation, policy: RestartPolicy): InitProgress {
  const inits = spec.initContainers;
  if (inits.length == 0) return InitProgress.Done;
  if (regularContainersCompleted(rec, spec, sandbox, policy)) return InitProgress.Done; // its sidecars are being stopped
  const initialized = hasInitialized(rec, spec, sandbox);
  for (let i = 0; i < inits.length; i++) {
    const container = inits[i];
    const hash = rec.initHashes[i];
    if (container.isSidecar) {
      // Kept running whatever the pod's policy, during and after initialization.
      if (syncContainer(rec, ctx, container, hash, sandbox, RestartPolicy.Always)) return InitProgress.Acted;
      if (initialized) continue;
      const current = latestContainer(rec.containers, container.name, sandbox.id);
      if (current === null || current.state != ContainerState.Running || !isContainerStarted(rec, container.name, current.id)) return InitProgress.Blocked;
      continue;
    }
    if (initialized) continue;
    const progress = syncInitContainer(rec, ctx, container, hash, sandbox, policy);
    if (progress != InitProgress.Done) return progress;
  }
  return InitProgress.Done;
}

/// A regular init container: created, started, waited for; a failure restarts it with back-off
/// unless the pod's policy is Never (then the pod fails: see the phase).
function syncInitContainer(rec: PodRecord, ctx: WorkerContext, container: ContainerSpec, hash: string, sandbox: SandboxObservation, policy: RestartPolicy): InitProgress {
  const name = container.name;
  const current = latestContainer(rec.containers, name, sandbox.id);
  if (current !== null) {
    if (current.state == ContainerState.Exited && current.exitCode == 0) {
      rec.waiting.delete(name);
      return InitProgress.Done;
    }
    if (current.state == ContainerState.Created) {
      if (inContainerErrorWait(rec, ctx, name)) return InitProgress.Blocked;
      ctx.startContainer(rec, current.id, name);
      return InitProgress.Acted;
    }
    if (current.state == ContainerState.Running) return InitProgress.Blocked;
    if (current.state == ContainerState.Unknown) {
      ctx.stopContainer(rec, current.id, name, "Stopping container " + name + ": its state is unknown");
      return InitProgress.Acted;
    }
    // Exited with a failure: again, unless the policy is Never.
    if (!shouldInitContainerBeRestarted(current, policy)) return InitProgress.Blocked;
    if (inCrashLoopBackOff(rec, ctx, name, hash, current)) return InitProgress.Blocked;
  }
  if (inImagePullBackOff(rec, ctx, name, container.image)) return InitProgress.Blocked;
  if (hasInvalidImageName(rec, ctx, name, container.image)) return InitProgress.Blocked;
  if (inContainerErrorWait(rec, ctx, name)) return InitProgress.Blocked;
  const latest = latestContainer(rec.containers, name);
  ctx.createContainer(rec, sandbox.id, sandbox.attempt, container, hash, latest !== null ? latest.attempt + 1 : 0);
  return InitProgress.Acted;
}

/// A pod whose regular containers all ended for good (policy Never or OnFailure) stops its
/// sidecars, last first, one at a time: sidecars do not keep a Job-style pod from completing.
export function stopSidecarsOfCompletedPod(rec: PodRecord, ctx: WorkerContext, spec: PodSpec, sandbox: SandboxObservation, policy: RestartPolicy): bool {
  if (!regularContainersCompleted(rec, spec, sandbox, policy)) return false;
  return stopLastSidecar(rec, ctx, spec);
}

/// Whether every regular container ended and none will run again (policy Never or OnFailure):
/// the pod is done, and its sidecars are not restarted any more.
export function regularContainersCompleted(rec: PodRecord, spec: PodSpec, sandbox: SandboxObservation, policy: RestartPolicy): bool {
  if (policy == RestartPolicy.Always || spec.initContainers.length == 0) return false;
  for (let i = 0; i < spec.containers.length; i++) {
    const latest = latestContainer(rec.containers, spec.containers[i].name, sandbox.id);
    if (latest === null || latest.state != ContainerState.Exited || shouldContainerBeRestarted(latest, policy, spec.beingDeleted)) return false;
  }
  return true;
}

/// What is left of the pod's grace period since its termination began (the time taken counted in
/// whole seconds, as upstream counts it), at least the minimal shutdown window.
export function remainingGraceSeconds(rec: PodRecord, nowMs: u64): i64 {
  const grace = rec.gracePeriodSeconds();
  const since = rec.terminatingSinceMs;
  const elapsedMs: i64 = since > 0 && nowMs > since ? <i64>(nowMs - since) : 0;
  const left = grace - elapsedMs / 1000;
  return left < MINIMUM_GRACE_PERIOD_SECONDS ? MINIMUM_GRACE_PERIOD_SECONDS : left;
}

/// Stops the last sidecar (in spec order) that still runs; false when none runs.
export function stopLastSidecar(rec: PodRecord, ctx: WorkerContext, spec: PodSpec): bool {
  for (let i = spec.initContainers.length - 1; i >= 0; i--) {
    const container = spec.initContainers[i];
    if (!container.isSidecar) continue;
    const live = liveInstance(rec.containers, container.name);
    if (live === null) continue;
    if (live.state == ContainerState.Created) ctx.removeContainer(rec, live.id, live.name);
    else if (rec.stopAnnounced.has(live.id)) ctx.stopNow(rec, live.id, live.name, remainingGraceSeconds(rec, ctx.nowMs));
    else ctx.stopContainer(rec, live.id, live.name, "Stopping container " + live.name, remainingGraceSeconds(rec, ctx.nowMs));
    return true;
  }
  return false;
}

function liveInstance(containers: ContainerObservation[], name: string): ContainerObservation | null {
  for (let i = 0; i < containers.length; i++) {
    const c = containers[i];
    if (c.name == name && c.state != ContainerState.Exited) return c;
  }
  return null;
}

/// Whether `name` is a sidecar of `spec`.
export function isSidecarName(spec: PodSpec | null, name: string): bool {
  if (spec === null) return false;
  for (let i = 0; i < spec.initContainers.length; i++) if (spec.initContainers[i].name == name) return spec.initContainers[i].isSidecar;
  return false;
}
