// The status manager: sends the core's pod statuses to the apiserver as patches of
// `pods/<name>/status` carrying the pod's uid, never reading first (a node may not GET the
// status subresource). Per pod only the newest version matters and versions only increase;
// changes are sent as they come, batched per turn of the event loop, and everything unsent is
// retried every 10 s (upstream's sync period), so after an outage every pod's newest status goes
// out. A pod's statuses closer together than half a second are sent as one, the newest, and one
// made while the pod is being started waits for the start. A pod marked for deletion whose status
// says `finished` is then deleted with grace 0 and a uid precondition. A patch the apiserver refuses as invalid is not retried blindly: the pod is
// read back, the status built again against what the apiserver holds and sent once more; refused
// again, it waits (logged once) for a newer status or a change of the object.
import type { PodStatus } from "../core/types.js";
import type { Logger } from "../common/log.js";
import { ApiClient, ApiStatusError, failureLevel, isRefusal } from "./api-client.js";
import { apiPodStatus, statusPatch, type StatusContext } from "./api-status.js";

export const STATUS_SYNC_PERIOD_MS = 10_000;
/**
 * A pod's statuses that follow each other closer than this go as one patch, the newest: a start's
 * steps (sandbox ready, container created, running, ready) came 50-100 ms apart as five patches,
 * each echoed back whole by the pod watch and the patch's answer. A status after a quiet spell
 * goes at once; a pod being deleted is never held.
 */
export const STATUS_COALESCE_MS = 500;
/**
 * A pod whose sandbox or containers are being started sends its status once they are, as
 * upstream's pod sync publishes the status it began with and the next after its runtime calls:
 * the steps between (sandbox ready, container created) were patches of their own. Held no longer
 * than this, so that a long pull does not hold a sibling container's readiness.
 */
export const STATUS_HOLD_WHILE_STARTING_MS = 5_000;
/** How often a status held for a start looks again. */
const STARTING_RECHECK_MS = 100;
/** Patches in flight at once: a node with 110 pods after an outage must not open 110 sockets. */
const MAX_IN_FLIGHT = 8;

/** Where a pod's status goes: the apiserver object (for a static pod, its mirror pod). */
export interface StatusTarget {
  namespace: string;
  name: string;
  /** The apiserver object's uid (a mirror pod's own uid for a static pod). */
  uid: string;
  /** The object's status as last seen from the apiserver. */
  current?: Record<string, any>;
  /** The object has a deletionTimestamp and may be deleted once the pod finished. */
  deleting: boolean;
  hostNetwork: boolean;
  /** The object's metadata.generation, if the apiserver keeps one. */
  generation?: number;
  /** The object's metadata.resourceVersion as last seen: a refused status waits for it to change. */
  resourceVersion?: string;
  /** The pod's spec as its source gave it (the status repeats its mounts and sizes). */
  spec?: Record<string, any>;
}

/** How much of the apiserver's words goes into the log (its message quotes what was sent). */
const REFUSAL_LOG_CHARS = 400;

export interface StatusManagerOptions {
  client: ApiClient;
  log: Logger;
  /** Where the pod with this (core) uid reports; undefined while the apiserver object is unknown. */
  targetOf: (podUid: string) => StatusTarget | undefined;
  context: () => Omit<StatusContext, "hostNetwork" | "current">;
  /** Whether a sandbox or container of the pod is being started (none: never). */
  starting?: (podUid: string) => boolean;
  /** Called after each patch the apiserver accepted (tests and the latency benchmark). */
  onSent?: (podUid: string, version: bigint) => void;
  nowMs?: () => number;
}

/** What reconciliation compares: the phase and each container's instance, restarts and state. */
function reconcileKey(status: Record<string, any> | undefined): string {
  if (!status) return "";
  return JSON.stringify([
    status.phase,
    (status.containerStatuses ?? []).map((c: any) => [c.name, c.containerID ?? "", c.restartCount, Object.keys(c.state ?? {}).sort()[0] ?? ""]),
  ]);
}

interface Entry {
  status: PodStatus;
  sentVersion: bigint;
  /** The target uid the sent version went to: a replaced object needs the status again. */
  sentTo: string;
  inFlight: boolean;
  deleted: boolean;
  /** What the sent status says (reconcileKey), and when it went. */
  sentKey: string;
  sentAtMs: number;
  /** Since when a newer status waits for the pod's start to finish. */
  heldSinceMs?: number;
  /**
   * Set when the apiserver refused `sentVersion`: the object's resourceVersions then (as the
   * watch showed it, and as read back), so that a watch catching up is not taken for a change.
   */
  refusedAt?: string[];
}

export class StatusManager {
  private entries = new Map<string, Entry>();
  private flushQueued = false;
  private timer?: NodeJS.Timeout;
  /** The flush of statuses held back to be sent as one, and when it runs. */
  private heldTimer?: NodeJS.Timeout;
  private heldUntilMs = Infinity;
  private inFlight = 0;
  private stopped = false;
  patchCount = 0;
  failureCount = 0;
  /** Patches the apiserver refused (Invalid, BadRequest, Forbidden), each after one re-read. */
  refusalCount = 0;

  constructor(private options: StatusManagerOptions) {}

  start(): void {
    this.timer = setInterval(() => this.sync(), STATUS_SYNC_PERIOD_MS);
  }

  /**
   * The periodic sync: everything unsent, and every pod whose status in the apiserver no longer
   * says what was sent (someone else wrote it; upstream's needsReconcile) is sent again. A
   * status sent within the last period is left alone: the watch may not have shown it yet.
   */
  sync(): void {
    const nowMs = (this.options.nowMs ?? Date.now)();
    for (const [podUid, entry] of this.entries) {
      if (entry.inFlight || entry.deleted || entry.sentVersion < entry.status.version) continue;
      if (nowMs - entry.sentAtMs <= STATUS_SYNC_PERIOD_MS) continue;
      const target = this.options.targetOf(podUid);
      if (!target?.current || target.uid !== entry.sentTo) continue;
      if (entry.refusedAt !== undefined) {
        // A refused status is tried again only against an object that changed since.
        if (!entry.refusedAt.includes(target.resourceVersion ?? "")) entry.sentVersion = 0n;
        continue;
      }
      if (reconcileKey(target.current) !== entry.sentKey) {
        this.options.log.log("info", "Pod status in the apiserver differs from what was sent; sending it again", { pod: `${target.namespace}/${target.name}` });
        entry.sentVersion = 0n;
      }
    }
    this.flush();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.heldTimer);
  }

  /** The core published a status for this pod. */
  setStatus(podUid: string, status: PodStatus): void {
    const entry = this.entries.get(podUid);
    if (entry && status.version <= entry.status.version) return; // versions only increase
    if (entry) {
      entry.status = status;
      entry.refusedAt = undefined;
    } else this.entries.set(podUid, { status, sentVersion: 0n, sentTo: "", inFlight: false, deleted: false, sentKey: "", sentAtMs: 0 });
    this.requestFlush();
  }

  /**
   * A new core instance (after a trap) numbers versions from 1 again: what it says next is
   * newer than anything the old one said.
   */
  resetVersions(): void {
    for (const entry of this.entries.values()) {
      entry.status = { ...entry.status, version: 0n };
      entry.sentVersion = 0n;
    }
  }

  /** Pods that left every source have nothing more to send: their entries go (memory stays bounded). */
  retainOnly(podUids: ReadonlySet<string>): void {
    for (const podUid of this.entries.keys()) if (!podUids.has(podUid)) this.entries.delete(podUid);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Something changed on the apiserver's side (a pod appeared, the connection came back). */
  requestFlush(): void {
    if (this.flushQueued || this.stopped) return;
    this.flushQueued = true;
    setImmediate(() => {
      this.flushQueued = false;
      this.flush();
    });
  }

  /** Pods whose newest status is not yet in the apiserver. */
  get pendingCount(): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.sentVersion < e.status.version) n++;
    return n;
  }

  private flush(): void {
    if (this.stopped) return;
    const nowMs = (this.options.nowMs ?? Date.now)();
    for (const [podUid, entry] of this.entries) {
      if (this.inFlight >= MAX_IN_FLIGHT) return;
      if (entry.inFlight || entry.deleted) continue;
      const target = this.options.targetOf(podUid);
      if (!target) continue;
      const stale = entry.sentVersion < entry.status.version || entry.sentTo !== target.uid;
      const deletable = target.deleting && entry.status.finished && entry.sentTo === target.uid && !stale;
      if (!stale && !deletable) continue;
      // Only a newer status of an object already told something waits; a first one goes at once.
      if (stale && !target.deleting && entry.sentTo === target.uid && entry.sentVersion > 0n) {
        const coalescedUntilMs = entry.sentAtMs + STATUS_COALESCE_MS;
        if (nowMs < coalescedUntilMs) {
          this.flushAt(coalescedUntilMs, nowMs);
          continue;
        }
        if (this.options.starting?.(podUid)) {
          entry.heldSinceMs ??= nowMs;
          const heldUntilMs = entry.heldSinceMs + STATUS_HOLD_WHILE_STARTING_MS;
          if (nowMs < heldUntilMs) {
            this.flushAt(Math.min(heldUntilMs, nowMs + STARTING_RECHECK_MS), nowMs);
            continue;
          }
        }
      }
      entry.heldSinceMs = undefined;
      void this.send(podUid, entry, target, stale);
    }
  }

  /** Flushes again at `atMs` (the earliest of the held statuses). */
  private flushAt(atMs: number, nowMs: number): void {
    if (atMs >= this.heldUntilMs) return;
    clearTimeout(this.heldTimer);
    this.heldUntilMs = atMs;
    this.heldTimer = setTimeout(() => {
      this.heldUntilMs = Infinity;
      this.heldTimer = undefined;
      this.flush();
    }, Math.max(1, atMs - nowMs));
  }

  private async send(podUid: string, entry: Entry, target: StatusTarget, patch: boolean): Promise<void> {
    entry.inFlight = true;
    this.inFlight++;
    const status = entry.status;
    let failed = false;
    const path = `/api/v1/namespaces/${encodeURIComponent(target.namespace)}/pods/${encodeURIComponent(target.name)}`;
    try {
      if (patch) {
        const answer = await this.patchOrRecover(path, status, target);
        if ("refusedAt" in answer) {
          entry.sentVersion = status.version;
          entry.sentTo = target.uid;
          entry.refusedAt = [target.resourceVersion ?? "", answer.refusedAt];
          return;
        }
        const sent = answer.sent;
        entry.sentKey = reconcileKey(JSON.parse(JSON.stringify(sent)));
        entry.sentAtMs = (this.options.nowMs ?? Date.now)();
        entry.sentVersion = status.version;
        entry.sentTo = target.uid;
        entry.refusedAt = undefined;
        this.options.onSent?.(podUid, status.version);
      }
      if (target.deleting && status.finished && entry.sentVersion === status.version) {
        // The final status is in: the object can go (upstream: canBeDeleted, then a grace-0
        // delete with a uid precondition so that a new pod of the same name is never touched).
        await this.options.client.request("DELETE", path, { kind: "DeleteOptions", apiVersion: "v1", gracePeriodSeconds: 0, preconditions: { uid: target.uid } }, "application/json", { metadataOnly: true });
        entry.deleted = true;
        this.options.log.log("info", "Pod deleted from the apiserver after it finished", { pod: `${target.namespace}/${target.name}` });
      }
    } catch (error) {
      const code = error instanceof ApiStatusError ? error.code : 0;
      if (code === 404 || code === 409) {
        // Gone, or replaced by a pod of the same name (the uid precondition failed): this
        // status has no object to go to; a new object gets it when it appears.
        entry.sentVersion = status.version;
        entry.sentTo = target.uid;
        if (target.deleting) entry.deleted = true;
      } else {
        failed = true;
        this.failureCount++;
        this.options.log.log(failureLevel(error), "Pod status not sent; will retry", { pod: `${target.namespace}/${target.name}`, error: (error as Error).message });
      }
    } finally {
      entry.inFlight = false;
      this.inFlight--;
      // A newer status may have come while this one was on the wire, or others waited for a
      // free slot. After a failure the retry waits for the sync period or a reconnect.
      if (!failed && (entry.sentVersion < entry.status.version || this.inFlight === MAX_IN_FLIGHT - 1)) this.requestFlush();
    }
  }

  /**
   * Patches the status; returns what was sent, or the resourceVersion of the object as read back
   * when the apiserver refused it twice.
   * A refusal (Invalid, BadRequest, Forbidden) is first understood: the object is read back and
   * the status built against what the apiserver holds now (the watch may have been behind, or
   * someone else wrote the status), then sent once more. Other errors throw (retried later).
   */
  private async patchOrRecover(path: string, status: PodStatus, target: StatusTarget): Promise<{ sent: Record<string, unknown> } | { refusedAt: string }> {
    const build = (t: StatusTarget) => apiPodStatus(status, { ...this.options.context(), hostNetwork: t.hostNetwork, current: t.current, generation: t.generation, podSpec: t.spec });
    const patchWith = async (t: StatusTarget) => {
      const body = build(t);
      const patch = statusPatch(t.uid, body, t.current);
      // What the apiserver already holds needs no request (nor the watch event it would echo).
      if (Object.keys(patch.status).length === 0) return body;
      // The pod watch brings the patched pod down anyway: its metadata is all the answer needs to be.
      await this.options.client.request("PATCH", `${path}/status`, patch, "application/strategic-merge-patch+json", { metadataOnly: true });
      this.patchCount++;
      return body;
    };
    try {
      return { sent: await patchWith(target) };
    } catch (error) {
      if (!isRefusal(error)) throw error;
      const fresh = (await this.options.client.request("GET", path)) as Record<string, any>;
      // A different object of the same name: the uid precondition answers for it (409) below.
      const reread: StatusTarget = { ...target, current: fresh?.status, generation: fresh?.metadata?.generation, resourceVersion: fresh?.metadata?.resourceVersion };
      try {
        return { sent: await patchWith(reread) };
      } catch (again) {
        if (!isRefusal(again)) throw again;
        this.refusalCount++;
        this.options.log.log("error", "Pod status refused by the apiserver; sent again only when the pod or its status changes", {
          pod: `${target.namespace}/${target.name}`,
          code: again.code,
          error: again.message.length > REFUSAL_LOG_CHARS ? `${again.message.slice(0, REFUSAL_LOG_CHARS)}...` : again.message,
        });
        return { refusedAt: reread.resourceVersion ?? "" };
      }
    }
  }
}
