// One step of SyncPod (upstream kuberuntime computePodActions + SyncPod): compare a desired pod
// with its part of the runtime view and queue the next runtime call, at most one at a time, so
// that each decision sees the outcome of the previous one.
import { imageReferenceProblem } from "./image-reference";
import { ContainerObservation, ContainerSpec, ContainerState, EventType, PodSpec, SandboxObservation, SandboxState } from "./model";
import { ProbeType } from "./probe-types";
import { failedProbe } from "./probe-status";
import { PodRecord } from "./pod-record";
import { WorkerContext } from "./context";
import {
  RestartPolicy,
  crashLoopKey,
  imagePullKey,
  restartPolicyOf,
  shouldContainerBeRestarted,
  shouldRestartOnFailure,
} from "./restart";
import { WaitingReason, latestContainer } from "./status";
import { resizeStep } from "./resize";
import { InitProgress, initStep, stopSidecarsOfCompletedPod } from "./init-containers";
import { VolumeProgress, volumesStep } from "./volume-manager";
import { containerSpecHash } from "./hash";

/// Dead instances kept per container name (upstream's MaxPerPodContainer, 1).
const DEAD_CONTAINERS_KEPT_PER_NAME = 1;
const NS_PER_MS: i64 = 1_000_000;

function newestReadySandbox(sandboxes: SandboxObservation[]): SandboxObservation | null {
  let best: SandboxObservation | null = null;
  for (let i = 0; i < sandboxes.length; i++) {
    const s = sandboxes[i];
    if (s.state != SandboxState.Ready) continue;
    if (best === null || s.attempt > best.attempt || (s.attempt == best.attempt && s.createdAtNs > best.createdAtNs)) best = s;
  }
  return best;
}

function nextSandboxAttempt(sandboxes: SandboxObservation[]): u32 {
  let attempt: u32 = 0;
  for (let i = 0; i < sandboxes.length; i++) if (sandboxes[i].attempt + 1 > attempt) attempt = sandboxes[i].attempt + 1;
  return attempt;
}

function inSpec(spec: PodSpec, name: string): bool {
  for (let i = 0; i < spec.containers.length; i++) if (spec.containers[i].name == name) return true;
  for (let i = 0; i < spec.initContainers.length; i++) if (spec.initContainers[i].name == name) return true;
  for (let i = 0; i < spec.ephemeralContainers.length; i++) if (spec.ephemeralContainers[i].name == name) return true;
  return false;
}

function isLive(c: ContainerObservation): bool {
  return c.state != ContainerState.Exited;
}

function humanDuration(ms: u64): string {
  const seconds = ms / 1000;
  if (seconds < 60) return seconds.toString() + "s";
  const minutes = seconds / 60;
  const rest = seconds % 60;
  return rest == 0 ? minutes.toString() + "m0s" : minutes.toString() + "m" + rest.toString() + "s";
}

function wakeAt(rec: PodRecord, atMs: u64): void {
  if (rec.retryAtMs == 0 || atMs < rec.retryAtMs) rec.retryAtMs = atMs;
}

/// Whether container `name` waits after a failed create or start; the pod wakes when it ends.
export function inContainerErrorWait(rec: PodRecord, ctx: WorkerContext, name: string): bool {
  if (!rec.containerRetryAtMs.has(name)) return false;
  const atMs = rec.containerRetryAtMs.get(name);
  if (ctx.nowMs >= atMs) {
    rec.containerRetryAtMs.delete(name);
    return false;
  }
  wakeAt(rec, atMs);
  return true;
}

/// Queues at most one runtime action for `rec` (worker state SyncPod). Returns false when the
/// pod matches its spec (or must wait); waiting reasons and the wake-up time are updated.
export function syncPodStep(rec: PodRecord, ctx: WorkerContext): bool {
  const spec = rec.spec!;
  const policy = restartPolicyOf(spec);
  const sandbox = newestReadySandbox(rec.sandboxes);

  // Upstream syncPod waits for the pod's volumes before the runtime's SyncPod, at every sync.
  const volumes = volumesStep(rec, ctx, spec);
  if (volumes == VolumeProgress.Acted) return true;
  if (volumes == VolumeProgress.Waiting) return false;

  if (sandbox === null) {
    // Upstream: a pod with restartPolicy Never whose sandbox died after it ran is not restarted.
    if (!shouldRestartOnFailure(policy) && rec.sandboxes.length > 0 && rec.containers.length > 0) return false;
    for (let i = 0; i < rec.containers.length; i++) {
      const c = rec.containers[i];
      if (isLive(c) && c.state != ContainerState.Created) {
        ctx.stopContainer(rec, c.id, c.name, "Stopping container " + c.name + ": its sandbox is gone");
        return true;
      }
    }
    ctx.runSandbox(rec, nextSandboxAttempt(rec.sandboxes));
    return true;
  }

  // Stray instances: extra ready sandboxes, containers outside the current sandbox or the spec.
  for (let i = 0; i < rec.sandboxes.length; i++) {
    const s = rec.sandboxes[i];
    if (s.state == SandboxState.Ready && s.id != sandbox.id) {
      ctx.stopSandbox(rec, s.id);
      return true;
    }
  }
  for (let i = 0; i < rec.containers.length; i++) {
    const c = rec.containers[i];
    if (!isLive(c)) continue;
    if (c.sandboxId != sandbox.id) {
      ctx.stopContainer(rec, c.id, c.name, "Stopping container " + c.name + ": it belongs to an old sandbox");
      return true;
    }
    if (!inSpec(spec, c.name)) {
      ctx.stopContainer(rec, c.id, c.name, "Stopping container " + c.name + ": it is not in the pod spec");
      return true;
    }
  }

  // Upstream starts ephemeral containers first, initialized or not: they debug a pod whose
  // containers crash or never start.
  if (ephemeralStep(rec, ctx, spec, sandbox)) return true;
  const init = initStep(rec, ctx, spec, sandbox, policy);
  if (init == InitProgress.Acted) return true;
  if (init == InitProgress.Done) {
    for (let i = 0; i < spec.containers.length; i++) {
      if (syncContainer(rec, ctx, spec.containers[i], rec.hashes[i], sandbox, policy)) return true;
    }
    if (stopSidecarsOfCompletedPod(rec, ctx, spec, sandbox, policy)) return true;
    if (resizeStep(rec, ctx, sandbox)) return true;
  }
  return collectGarbage(rec, ctx, sandbox);
}

/// Starts each ephemeral container that has no instance yet (created once in the pod's life: never
/// restarted, not even in a new sandbox). A created one that did not start is started; one whose
/// create failed waits as any container does and is tried again. Returns true when it acted.
function ephemeralStep(rec: PodRecord, ctx: WorkerContext, spec: PodSpec, sandbox: SandboxObservation): bool {
  for (let i = 0; i < spec.ephemeralContainers.length; i++) {
    const container = spec.ephemeralContainers[i];
    const name = container.name;
    const latest = latestContainer(rec.containers, name);
    if (latest !== null) {
      if (latest.state != ContainerState.Created || latest.sandboxId != sandbox.id) continue;
      if (inContainerErrorWait(rec, ctx, name)) continue;
      ctx.startContainer(rec, latest.id, name);
      return true;
    }
    if (inImagePullBackOff(rec, ctx, name, container.image)) continue;
    if (hasInvalidImageName(rec, ctx, name, container.image)) continue;
    if (inContainerErrorWait(rec, ctx, name)) continue;
    // The target's process namespace is joined when it runs; otherwise the pod's (as upstream).
    let targetId = "";
    if (container.targetContainerName.length > 0) {
      const target = latestContainer(rec.containers, container.targetContainerName, sandbox.id);
      if (target !== null && target.state == ContainerState.Running) targetId = target.id;
    }
    ctx.createContainer(rec, sandbox.id, sandbox.attempt, container, containerSpecHash(container), 0, targetId);
    return true;
  }
  return false;
}

/// Makes one container (regular, or a sidecar with policy Always) match its spec: start, restart
/// with back-off, replace on a spec change, kill on a failed probe. Returns true when it acted.
export function syncContainer(
  rec: PodRecord,
  ctx: WorkerContext,
  container: ContainerSpec,
  hash: string,
  sandbox: SandboxObservation,
  policy: RestartPolicy,
): bool {
  const name = container.name;
  const current = latestContainer(rec.containers, name, sandbox.id);
  const latest = latestContainer(rec.containers, name);
  // The replacement for a spec change has run (or is running): the replacement is done.
  if (latest !== null && latest.specHash == hash && latest.state != ContainerState.Created) rec.restartForSpecChange.delete(name);
  if (latest !== null && rec.restartForResize.has(name) && rec.restartForResize.get(name) != latest.id) rec.restartForResize.delete(name);
  if (latest !== null && rec.restartForProbe.has(name) && rec.restartForProbe.get(name) != latest.id && latest.state != ContainerState.Created) {
    rec.restartForProbe.delete(name);
  }

  if (current !== null && current.state == ContainerState.Running) {
    if (current.specHash.length > 0 && current.specHash != hash) {
      // Restarted whatever the restart policy: the spec it runs is gone.
      rec.restartForSpecChange.add(name);
      ctx.stopContainer(rec, current.id, name, "Container " + name + " definition changed, will be restarted");
      return true;
    }
    if (killForFailedProbe(rec, ctx, container, current, policy)) return true;
    rec.waiting.delete(name);
    return false;
  }
  if (current !== null && current.state == ContainerState.Created) {
    if (inContainerErrorWait(rec, ctx, name)) return false;
    ctx.startContainer(rec, current.id, name);
    return true;
  }
  if (current !== null && current.state == ContainerState.Unknown) {
    ctx.stopContainer(rec, current.id, name, "Stopping container " + name + ": its state is unknown");
    return true;
  }

  // Not running in this sandbox: exited here, or never created in it.
  const specChanged = latest !== null && ((latest.specHash != hash && rec.restartForSpecChange.has(name)) || rec.restartForResize.has(name) ||
    rec.restartForProbe.has(name));
  if (latest !== null && !specChanged) {
    if (current === null && latest.sandboxId != sandbox.id) {
      // A new sandbox starts every container, except those that succeeded under OnFailure.
      if (policy == RestartPolicy.OnFailure && latest.state == ContainerState.Exited && latest.exitCode == 0) return false;
      if (policy == RestartPolicy.Never) return false;
    } else if (!shouldContainerBeRestarted(latest, policy, rec.lastSpec!.beingDeleted)) {
      rec.waiting.delete(name);
      return false;
    }
    if (latest.state == ContainerState.Exited && inCrashLoopBackOff(rec, ctx, name, hash, latest)) return false;
  }
  if (inImagePullBackOff(rec, ctx, name, container.image)) return false;
  if (hasInvalidImageName(rec, ctx, name, container.image)) return false;
  if (inContainerErrorWait(rec, ctx, name)) return false;

  const attempt: u32 = latest !== null ? latest.attempt + 1 : 0;
  ctx.createContainer(rec, sandbox.id, sandbox.attempt, container, hash, attempt);
  return true;
}

/// Upstream computePodActions: a running container whose liveness or startup probe failed is
/// killed (with the probe's own grace period if it has one) and, unless the policy is Never,
/// started again at once.
function killForFailedProbe(rec: PodRecord, ctx: WorkerContext, container: ContainerSpec, current: ContainerObservation, policy: RestartPolicy): bool {
  const failed = failedProbe(rec, container.name, current.id);
  if (failed < 0) return false;
  let message = "Container " + container.name + " failed " + (failed == ProbeType.Liveness ? "liveness" : "startup") + " probe";
  if (policy != RestartPolicy.Never) {
    message += ", will be restarted";
    rec.restartForProbe.set(container.name, current.id);
  }
  const probe = container.probe(failed)!;
  ctx.stopContainer(rec, current.id, container.name, message, probe.hasGracePeriod ? probe.terminationGracePeriodSeconds : -1);
  return true;
}

/// Upstream doBackOff: true (and a CrashLoopBackOff reason) while the last exit is too recent;
/// otherwise records the restart in the back-off.
export function inCrashLoopBackOff(
  rec: PodRecord,
  ctx: WorkerContext,
  name: string,
  hash: string,
  exited: ContainerObservation,
): bool {
  const key = crashLoopKey(rec.uid, name, hash);
  const finishedMs: u64 = exited.finishedAtNs > 0 ? <u64>(exited.finishedAtNs / NS_PER_MS) : ctx.nowMs;
  if (ctx.crashBackoff.isInBackOffSince(key, finishedMs, ctx.nowMs)) {
    const durationMs = ctx.crashBackoff.durationMs(key);
    const message =
      "back-off " + humanDuration(durationMs) + " restarting failed container=" + name +
      " pod=" + rec.name + "_" + rec.namespace + "(" + rec.uid + ")";
    rec.waiting.set(name, new WaitingReason("CrashLoopBackOff", message));
    const eventKey = exited.id;
    if (!rec.backoffEventSent.has(name) || rec.backoffEventSent.get(name) != eventKey) {
      rec.backoffEventSent.set(name, eventKey);
      ctx.event(rec, name, EventType.Warning, "BackOff", "Back-off restarting failed container " + name + " in pod " + rec.name + "_" + rec.namespace + "(" + rec.uid + ")");
    }
    wakeAt(rec, finishedMs + durationMs);
    return true;
  }
  ctx.crashBackoff.next(key, finishedMs, ctx.nowMs);
  return false;
}

/// Upstream's applyDefaultImageTag before a pull: an image the reference grammar refuses is never
/// pulled; the container waits with InvalidImageName, and an InspectFailed event says why (once).
export function hasInvalidImageName(rec: PodRecord, ctx: WorkerContext, name: string, image: string): bool {
  const problem = imageReferenceProblem(image);
  if (problem.length == 0) return false;
  const message = 'Failed to apply default image tag "' + image + '": couldn\'t parse image name "' + image + '": ' + problem;
  rec.waiting.set(name, new WaitingReason("InvalidImageName", message));
  const eventKey = "image:" + name;
  if (!rec.backoffEventSent.has(eventKey) || rec.backoffEventSent.get(eventKey) != image) {
    rec.backoffEventSent.set(eventKey, image);
    ctx.event(rec, name, EventType.Warning, "InspectFailed", message);
  }
  return true;
}

export function inImagePullBackOff(rec: PodRecord, ctx: WorkerContext, name: string, image: string): bool {
  const key = imagePullKey(rec.uid, image);
  if (!ctx.imageBackoff.isInBackOffSinceUpdate(key, ctx.nowMs)) return false;
  const backOff = 'Back-off pulling image "' + image + '"';
  // v1.36 says why in the waiting message: the failure that started this back-off, once per
  // failure (a message already of the back-off stays as it is).
  const previous = rec.waiting.has(name) ? rec.waiting.get(name) : null;
  let message = backOff;
  if (previous != null && previous.reason == "ErrImagePull") message = backOff + ": " + previous.reason + ": " + previous.message;
  else if (previous != null && previous.reason == "ImagePullBackOff" && previous.message.startsWith(backOff)) message = previous.message;
  rec.waiting.set(name, new WaitingReason("ImagePullBackOff", message));
  const endsAtMs = ctx.imageBackoff.waitEndsAtMs(key);
  // The BackOff event, once per back-off window (each sync in it would say the same).
  const eventKey = "pull-backoff:" + name;
  const windowKey = image + "@" + endsAtMs.toString();
  if (!rec.backoffEventSent.has(eventKey) || rec.backoffEventSent.get(eventKey) != windowKey) {
    rec.backoffEventSent.set(eventKey, windowKey);
    ctx.event(rec, name, EventType.Normal, "BackOff", backOff);
    ctx.event(rec, name, EventType.Warning, "Failed", "Error: ImagePullBackOff");
  }
  wakeAt(rec, endsAtMs);
  return true;
}

/// Removes dead instances beyond what status needs, and sandboxes left empty.
function collectGarbage(rec: PodRecord, ctx: WorkerContext, sandbox: SandboxObservation): bool {
  for (let i = 0; i < rec.containers.length; i++) {
    const c = rec.containers[i];
    if (isLive(c)) continue;
    // Upstream's MaxPerPodContainer counts dead instances only: the newest dead one stays (its
    // exit is the lastState, and `kubectl logs --previous` reads its log); older ones go.
    let newerDead = 0;
    for (let j = 0; j < rec.containers.length; j++) {
      const o = rec.containers[j];
      if (isLive(o) || o.name != c.name) continue;
      if (o.attempt > c.attempt || (o.attempt == c.attempt && o.createdAtNs > c.createdAtNs)) newerDead++;
    }
    if (newerDead >= DEAD_CONTAINERS_KEPT_PER_NAME) {
      ctx.removeContainer(rec, c.id, c.name);
      return true;
    }
  }
  for (let i = 0; i < rec.sandboxes.length; i++) {
    const s = rec.sandboxes[i];
    if (s.id == sandbox.id || s.state == SandboxState.Ready) continue;
    let used = false;
    for (let j = 0; j < rec.containers.length; j++) if (rec.containers[j].sandboxId == s.id) used = true;
    if (!used) {
      ctx.removeSandbox(rec, s.id);
      return true;
    }
  }
  return false;
}
