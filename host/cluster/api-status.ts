// The core's pod status in the apiserver's words: the body of a strategic merge patch of
// `pods/<name>/status`. Pure: the host's extra knowledge (node IP, image digests, the runtime's
// name, what the apiserver already holds) comes in as arguments.
import type { ContainerStatus, PodCondition, PodStatus, TerminatedState } from "../core/types.js";
import { podResourcesStatus, volumeMountStatuses } from "./status-spec-fields.js";

export interface StatusContext {
  /** The node's address: status.hostIP, and podIP of host-network pods. */
  nodeIp: string;
  /** Both of a dual-stack node's addresses (the first is `nodeIp`): hostIPs, and podIPs of host-network pods. */
  nodeIps?: string[];
  /** Whether the pod uses the node's network (its IP is then the node's). */
  hostNetwork: boolean;
  /** Runtime name for container IDs (`containerd://<id>`). */
  runtimeName: string;
  /** Image digest reference by container ID, when the runtime told it. */
  imageRefOf: (containerId: string) => string | undefined;
  /** The IP of a sandbox, when the runtime told it (pods on the pod network). */
  podIpOf?: (sandboxId: string) => string | undefined;
  /** The pod's status as the apiserver last showed it: its startTime and condition times win. */
  current?: Record<string, any>;
  /** The object's metadata.generation, when the apiserver sets one (reported as observed). */
  generation?: number;
  /** The pod's spec as its source gave it: volume mounts and sizes the status repeats. */
  podSpec?: Record<string, any>;
}

const PHASES: Record<PodStatus["phase"], string> = {
  pending: "Pending",
  running: "Running",
  succeeded: "Succeeded",
  failed: "Failed",
  unknown: "Unknown",
};

const CONDITION_TYPES: Record<PodCondition["conditionType"], string> = {
  "pod-scheduled": "PodScheduled",
  "pod-ready-to-start-containers": "PodReadyToStartContainers",
  initialized: "Initialized",
  "containers-ready": "ContainersReady",
  ready: "Ready",
  "disruption-target": "DisruptionTarget",
  "pod-resize-pending": "PodResizePending",
  "pod-resize-in-progress": "PodResizeInProgress",
};

/** metav1.Time: RFC 3339 in whole seconds, UTC. */
export function apiTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

const nsToTime = (ns: bigint): string | undefined => (ns > 0n ? apiTime(Number(ns / 1_000_000n)) : undefined);

function terminated(t: TerminatedState, ctx: StatusContext): Record<string, unknown> {
  return {
    exitCode: t.exitCode,
    reason: t.reason || undefined,
    message: t.message || undefined,
    startedAt: nsToTime(t.startedAtNs) ?? null,
    finishedAt: nsToTime(t.finishedAtNs) ?? null,
    containerID: t.containerId ? `${ctx.runtimeName}://${t.containerId}` : undefined,
  };
}

function containerStatus(c: ContainerStatus, ctx: StatusContext): Record<string, unknown> {
  let state: Record<string, unknown>;
  if (c.state === "running") state = { running: { startedAt: nsToTime(c.startedAtNs) ?? null } };
  else if (c.state === "terminated") {
    state = { terminated: terminated({ containerId: c.containerId, exitCode: c.exitCode, reason: c.reason, message: c.message, startedAtNs: c.startedAtNs, finishedAtNs: c.finishedAtNs }, ctx) };
  } else state = { waiting: { reason: c.reason || undefined, message: c.message || undefined } };
  return {
    name: c.name,
    state,
    lastState: c.lastState ? { terminated: terminated(c.lastState, ctx) } : {},
    ready: c.ready,
    restartCount: c.restartCount,
    image: c.image,
    imageID: (c.containerId && ctx.imageRefOf(c.containerId)) || "",
    containerID: c.containerId ? `${ctx.runtimeName}://${c.containerId}` : undefined,
    started: c.started,
    volumeMounts: volumeMountStatuses(ctx.podSpec, c.name),
    allocatedResources: quantities(c.allocatedResources),
    resources: c.containerId ? { requests: quantities(c.resourceRequests), limits: quantities(c.resourceLimits) } : undefined,
  };
}

/** A resource list as the API spells it: `{cpu: "250m"}`; absent when empty. */
function quantities(list: { name: string; quantity: string }[]): Record<string, string> | undefined {
  if (list.length === 0) return undefined;
  return Object.fromEntries(list.map((q) => [q.name, q.quantity]));
}

/** Conditions the node sets only while they hold: gone from the core's list, they are deleted. */
const TRANSIENT_CONDITIONS = ["PodResizePending", "PodResizeInProgress"];

/** The pod's status as the apiserver writes it (statusPatch makes the patch of it). */
export function apiPodStatus(status: PodStatus, ctx: StatusContext): Record<string, unknown> {
  const current = ctx.current ?? {};
  const conditions = status.conditions.map((c) => {
    const type = CONDITION_TYPES[c.conditionType];
    const value = c.status ? "True" : "False";
    const known = (current.conditions ?? []).find((k: any) => k.type === type);
    // The apiserver's own time wins while the condition holds: after an agent restart the core
    // would otherwise date every condition to its own start.
    const lastTransitionTime = known && known.status === value && known.lastTransitionTime ? known.lastTransitionTime : apiTime(Number(c.lastTransitionMs));
    // Conditions are merged by type in the apiserver: a reason the condition no longer has must
    // be cleared (null), or the old one stays beside the new status.
    return { type, observedGeneration: ctx.generation, status: value, reason: c.reason || null, message: c.message || null, lastProbeTime: null, lastTransitionTime };
  });
  const podIp = ctx.hostNetwork ? ctx.nodeIp : (status.sandboxId && ctx.podIpOf?.(status.sandboxId)) || "";
  const out: Record<string, unknown> = {
    observedGeneration: ctx.generation,
    phase: PHASES[status.phase],
    conditions,
    hostIP: ctx.nodeIp,
    hostIPs: (ctx.nodeIps ?? [ctx.nodeIp]).map((ip) => ({ ip })),
    containerStatuses: status.containerStatuses.map((c) => containerStatus(c, ctx)),
  };
  if ((status.initContainerStatuses ?? []).length > 0) out.initContainerStatuses = status.initContainerStatuses.map((c) => containerStatus(c, ctx));
  if ((status.ephemeralContainerStatuses ?? []).length > 0) {
    // No probe ever runs on an ephemeral container: upstream leaves `started` unset.
    out.ephemeralContainerStatuses = status.ephemeralContainerStatuses.map((c) => ({ ...containerStatus(c, ctx), started: undefined }));
  }
  if (podIp) {
    out.podIP = podIp;
    out.podIPs = (ctx.hostNetwork && ctx.nodeIps ? ctx.nodeIps : [podIp]).map((ip) => ({ ip }));
  }
  // The apiserver's reason stays unless the core gives one, while the phase is the one it came
  // with (upstream keeps pod.Status.Reason with its phase): after an agent restart an evicted pod
  // is still Evicted; a pod a shutdown stopped that ended Succeeded says no reason.
  const samePhase = current.phase === undefined || current.phase === out.phase;
  out.reason = status.reason || (samePhase ? current.reason : null) || null;
  out.message = status.message || (samePhase ? current.message : null) || null;
  out.startTime = current.startTime ?? (status.startTimeMs > 0n ? apiTime(Number(status.startTimeMs)) : undefined);
  out.resources = podResourcesStatus(ctx.podSpec, status.containerStatuses, status.initContainerStatuses ?? []);
  return out;
}

/**
 * The strategic merge patch that turns `current` (what the apiserver holds, as the watch last
 * showed it) into `status`, carrying only what differs, as upstream's status manager patches: a
 * start's later statuses change two or three fields of a 1.5 KB status. A field `status` clears
 * (null) is sent as null only where the apiserver has it. Conditions merge by `type` in the
 * apiserver: only changed ones go, whole. Container status lists are atomic: one that changed
 * goes whole. `podIPs` and `hostIPs` merge by `ip`: a plain list would be added to what is there
 * (a sandbox replaced with a new address would report both, which the apiserver refuses), so a
 * changed one carries a `$patch: replace` element. A condition the node sets only while it holds,
 * gone from the status, is deleted. The uid makes the apiserver refuse the patch if the pod was
 * replaced. With nothing known of `current`, everything goes; an empty `status` when the apiserver
 * already holds all of it.
 */
export function statusPatch(uid: string, status: Record<string, any>, current: Record<string, any> = {}): { metadata: { uid: string }; status: Record<string, any> } {
  const patch: Record<string, any> = {};
  for (const [key, value] of Object.entries(status)) {
    if (key === "conditions" || value === undefined) continue;
    if (value === null) {
      if (current[key] !== undefined && current[key] !== null) patch[key] = null;
      continue;
    }
    if (sameValue(value, current[key])) continue;
    patch[key] = (key === "podIPs" || key === "hostIPs") && Array.isArray(value) ? [...value, { $patch: "replace" }] : value;
  }
  const held: Record<string, any>[] = Array.isArray(current.conditions) ? current.conditions : [];
  const conditions: Record<string, unknown>[] = [];
  for (const c of status.conditions ?? []) {
    const before = held.find((k) => k?.type === c.type);
    if (!before || !sameValue(c, before)) conditions.push(c);
  }
  for (const type of TRANSIENT_CONDITIONS) {
    const kept = held.some((k: any) => k?.type === type);
    if (kept && !(status.conditions ?? []).some((c: any) => c.type === type)) conditions.push({ type, $patch: "delete" });
  }
  if (conditions.length > 0) patch.conditions = conditions;
  return { metadata: { uid }, status: patch };
}

/**
 * Whether `ours` says what `theirs` (the apiserver's JSON) says: objects key by key, a null or
 * empty string of ours matching an absent one of theirs (the apiserver leaves those out). An empty
 * object is not absent: the apiserver keeps `resources: {}` as sent, and the kubelet sends it.
 */
function sameValue(ours: unknown, theirs: unknown): boolean {
  const empty = (v: unknown) => v === undefined || v === null || v === "";
  if (empty(ours) && empty(theirs)) return true;
  if (Array.isArray(ours)) return Array.isArray(theirs) && ours.length === theirs.length && ours.every((v, i) => sameValue(v, theirs[i]));
  if (ours !== null && typeof ours === "object") {
    if (theirs === null || typeof theirs !== "object" || Array.isArray(theirs)) return false;
    const keys = new Set([...Object.keys(ours), ...Object.keys(theirs as object)]);
    for (const k of keys) if (!sameValue((ours as any)[k], (theirs as any)[k])) return false;
    return true;
  }
  return ours === theirs;
}
