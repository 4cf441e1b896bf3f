// The status manager: sends the core's pod statuses to the apiserver as patches of
// `pods/<name>/status` carrying the pod's uid, never reading first (a node may not GET the
// status subresource). Per pod only the newest version matters and versions only increase;
// changes are sent as they come, batched per turn of the event loop, and everything unsent is
// retried every 10 s (upstream's sync period), so after an outage every pod's newest status goes
// out. A pod marked for deletion whose status says `finished` is then deleted with grace 0 and a
// uid precondition.
import type { PodStatus } from "../core-types.js";
import type { Logger } from "../log.js";
import { ApiClient, ApiStatusError } from "./api-client.js";
import { apiPodStatus, statusPatch, type StatusContext } from "./api-status.js";

export const STATUS_SYNC_PERIOD_MS = 10_000;
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
}

export interface StatusManagerOptions {
  client: ApiClient;
  log: Logger;
  /** Where the pod with this (core) uid reports; undefined while the apiserver object is unknown. */
  targetOf: (podUid: string) => StatusTarget | undefined;
  context: () => Omit<StatusContext, "hostNetwork" | "current">;
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
}

export class StatusManager {
  private entries = new Map<string, Entry>();
  private flushQueued = false;
  private timer?: NodeJS.Timeout;
  private inFlight = 0;
  private stopped = false;
  patchCount = 0;
  failureCount = 0;

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
  }

  /** The core published a status for this pod. */
  setStatus(podUid: string, status: PodStatus): void {
    const entry = this.entries.get(podUid);
    if (entry && status.version <= entry.status.version) return; // versions only increase
    if (entry) entry.status = status;
    else this.entries.set(podUid, { status, sentVersion: 0n, sentTo: "", inFlight: false, deleted: false, sentKey: "", sentAtMs: 0 });
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
    for (const [podUid, entry] of this.entries) {
      if (this.inFlight >= MAX_IN_FLIGHT) return;
      if (entry.inFlight || entry.deleted) continue;
      const target = this.options.targetOf(podUid);
      if (!target) continue;
      const stale = entry.sentVersion < entry.status.version || entry.sentTo !== target.uid;
      const deletable = target.deleting && entry.status.finished && entry.sentTo === target.uid && !stale;
      if (!stale && !deletable) continue;
      void this.send(podUid, entry, target, stale);
    }
  }

  private async send(podUid: string, entry: Entry, target: StatusTarget, patch: boolean): Promise<void> {
    entry.inFlight = true;
    this.inFlight++;
    const status = entry.status;
    let failed = false;
    const path = `/api/v1/namespaces/${encodeURIComponent(target.namespace)}/pods/${encodeURIComponent(target.name)}`;
    try {
      if (patch) {
        const apiStatus = apiPodStatus(status, { ...this.options.context(), hostNetwork: target.hostNetwork, current: target.current, generation: target.generation });
        await this.options.client.request("PATCH", `${path}/status`, statusPatch(target.uid, apiStatus), "application/strategic-merge-patch+json");
        this.patchCount++;
        entry.sentKey = reconcileKey(JSON.parse(JSON.stringify(apiStatus)));
        entry.sentAtMs = (this.options.nowMs ?? Date.now)();
        entry.sentVersion = status.version;
        entry.sentTo = target.uid;
        this.options.onSent?.(podUid, status.version);
      }
      if (target.deleting && status.finished && entry.sentVersion === status.version) {
        // The final status is in: the object can go (upstream: canBeDeleted, then a grace-0
        // delete with a uid precondition so that a new pod of the same name is never touched).
        await this.options.client.request("DELETE", path, { kind: "DeleteOptions", apiVersion: "v1", gracePeriodSeconds: 0, preconditions: { uid: target.uid } });
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
        this.options.log.log("warn", "Pod status not sent; will retry", { pod: `${target.namespace}/${target.name}`, error: (error as Error).message });
      }
    } finally {
      entry.inFlight = false;
      this.inFlight--;
      // A newer status may have come while this one was on the wire, or others waited for a
      // free slot. After a failure the retry waits for the sync period or a reconnect.
      if (!failed && (entry.sentVersion < entry.status.version || this.inFlight === MAX_IN_FLIGHT - 1)) this.requestFlush();
    }
  }
}
