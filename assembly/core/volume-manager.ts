// The deciding half of upstream's VolumeManager: which volumes a pod needs and when it may start
// (WaitForAttachAndMount before the sandbox), when they are refreshed (every sync, so that an
// updated configMap or secret reaches its files), when a failed set-up is tried again
// (exponential back-off, as the volume reconciler's operations), and when a stopped pod's volumes
// are torn down. The host mounts and writes the files.
import { PodSpec, VolumeKind } from "./model";
import { PodRecord } from "./pod-record";
import { WorkerContext } from "./context";

/// Upstream's syncFrequency: a running pod is synced, and its volumes refreshed, this often.
export const VOLUME_REFRESH_PERIOD_MS: u64 = 60_000;
/// Upstream's volume operation back-off (exponentialbackoff: 500 ms doubling to 2m2s).
export const VOLUME_RETRY_INITIAL_MS: u64 = 500;
export const VOLUME_RETRY_MAX_MS: u64 = 122_000;

/// What the core knows of one pod's volumes.
export class PodVolumes {
  /// All volumes of the spec described by `readyKey` are set up.
  ready: bool = false;
  readyKey: string = "";
  /// Something of the pod may be mounted: set up was asked, or it is unknown (after an agent
  /// restart, a found pod may still have its volumes). Cleared by a tear-down.
  mounted: bool = true;
  /// When a set-up pod's files are refreshed next (0: never, no volume needs it).
  refreshAtMs: u64 = 0;
  /// The wait before the next try after a failure; 0 after a success.
  retryDelayMs: u64 = 0;
}

export const enum VolumeProgress {
  /// Every volume is set up: the pod's containers may run.
  Ready = 0,
  /// A set-up or refresh was queued.
  Acted = 1,
  /// Not set up yet, and waiting for the next try.
  Waiting = 2,
}

/// Names, kinds and source versions of a spec's volumes: a change means another set-up.
export function volumesKey(spec: PodSpec): string {
  const parts: string[] = [];
  for (let i = 0; i < spec.volumes.length; i++) {
    const v = spec.volumes[i];
    if (v.used) parts.push(v.name + "\u0000" + v.kind.toString() + "\u0000" + v.sourceVersion);
  }
  return parts.join("\n");
}

/// True for the types whose files follow objects that change (upstream RequiresRemount).
function refreshes(kind: i32): bool {
  return kind == VolumeKind.ConfigMap || kind == VolumeKind.Secret || kind == VolumeKind.DownwardApi || kind == VolumeKind.Projected;
}

function needsRefresh(spec: PodSpec): bool {
  for (let i = 0; i < spec.volumes.length; i++) if (spec.volumes[i].used && refreshes(spec.volumes[i].kind)) return true;
  return false;
}

/// The volumes to set up: those a container mounts (upstream skips the others).
export function usedVolumeCount(spec: PodSpec): i32 {
  let n = 0;
  for (let i = 0; i < spec.volumes.length; i++) if (spec.volumes[i].used) n++;
  return n;
}

/// The set-up part of a sync: queues a set-up (or a due refresh) of the pod's volumes. A pod
/// whose volumes are not all set up must not get a sandbox.
export function volumesStep(rec: PodRecord, ctx: WorkerContext, spec: PodSpec): VolumeProgress {
  const v = rec.volumes;
  if (usedVolumeCount(spec) == 0) return VolumeProgress.Ready;
  const key = volumesKey(spec);
  if (v.ready && v.readyKey == key) {
    if (v.refreshAtMs == 0 || ctx.nowMs < v.refreshAtMs) return VolumeProgress.Ready;
  } else if (rec.retryAtMs > ctx.nowMs) {
    return VolumeProgress.Waiting;
  }
  const names: string[] = [];
  for (let i = 0; i < spec.volumes.length; i++) if (spec.volumes[i].used) names.push(spec.volumes[i].name);
  v.mounted = true;
  ctx.setUpVolumes(rec, names, key);
  return VolumeProgress.Acted;
}

/// The set-up succeeded: the pod may start; refreshed again after one sync period.
export function volumesSetUp(rec: PodRecord, key: string, nowMs: u64): void {
  const v = rec.volumes;
  v.ready = true;
  v.readyKey = key;
  v.retryDelayMs = 0;
  const spec = rec.spec;
  v.refreshAtMs = spec !== null && needsRefresh(spec) ? nowMs + VOLUME_REFRESH_PERIOD_MS : 0;
}

/// The set-up failed: tried again after the back-off. Returns when. A pod that is running keeps
/// running (its volumes stay mounted); only its refresh waits.
export function volumesFailed(rec: PodRecord, nowMs: u64): u64 {
  const v = rec.volumes;
  const doubled = v.retryDelayMs * 2;
  v.retryDelayMs = v.retryDelayMs == 0 ? VOLUME_RETRY_INITIAL_MS : doubled < VOLUME_RETRY_MAX_MS ? doubled : VOLUME_RETRY_MAX_MS;
  const retryAtMs = nowMs + v.retryDelayMs;
  if (v.ready) v.refreshAtMs = retryAtMs;
  return retryAtMs;
}

/// The tear-down part of a stopped pod: queues it when something may be mounted. Returns true
/// when it acted.
export function tearDownStep(rec: PodRecord, ctx: WorkerContext): bool {
  if (!rec.volumes.mounted) return false;
  ctx.tearDownVolumes(rec);
  return true;
}

/// Nothing of the pod's volumes is left.
export function volumesTornDown(rec: PodRecord): void {
  const v = rec.volumes;
  v.mounted = false;
  v.ready = false;
  v.readyKey = "";
  v.refreshAtMs = 0;
  v.retryDelayMs = 0;
}
