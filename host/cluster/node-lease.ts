// The node's heartbeat: a Lease named after the node in `kube-node-lease`, held by the node,
// 40 s long, renewed every 10 s with a jitter of 4% (component-helpers' lease controller). A failed renewal is
// retried with a back-off from 200 ms doubling up to 7 s, at most 5 times, then waits for the
// next period; a conflict re-reads the lease.
import type { Logger } from "../common/log.js";
import { ApiClient, ApiStatusError, failureLevel } from "./api-client.js";

export const LEASE_DURATION_SECONDS = 40;
export const LEASE_RENEW_MS = 10_000;
/** Each wait is up to 4% longer, at random, so that a fleet restarted together spreads out. */
export const LEASE_RENEW_JITTER = 0.04;
const RETRY_INITIAL_MS = 200;
const RETRY_MAX_MS = 7_000;
const MAX_RETRIES = 5;
const NAMESPACE = "kube-node-lease";

/** metav1.MicroTime: RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

export interface NodeLeaseOptions {
  client: ApiClient;
  log: Logger;
  nodeName: string;
  /** The Node's uid, for the lease's owner reference (undefined until registered). */
  nodeUid: () => string | undefined;
  nowMs?: () => number;
  /** nodeLeaseDurationSeconds (default 40); the lease is renewed every quarter of it, as upstream does. */
  durationSeconds?: number;
}

export class NodeLease {
  private lease?: Record<string, any>;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private busy = false;
  renewCount = 0;

  constructor(private options: NodeLeaseOptions) {}

  private get renewMs(): number {
    return this.options.durationSeconds === undefined ? LEASE_RENEW_MS : this.options.durationSeconds * 250;
  }

  private get path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases/${encodeURIComponent(this.options.nodeName)}`;
  }

  start(): void {
    const loop = () => {
      void this.renewWithRetries();
      if (!this.stopped) this.timer = setTimeout(loop, this.renewMs * (1 + LEASE_RENEW_JITTER * Math.random()));
    };
    loop();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async renewWithRetries(): Promise<void> {
    if (this.busy || this.stopped) return;
    this.busy = true;
    try {
      let delayMs = RETRY_INITIAL_MS;
      for (let attempt = 0; attempt <= MAX_RETRIES && !this.stopped; attempt++) {
        try {
          await this.renew();
          return;
        } catch (error) {
          if (error instanceof ApiStatusError && error.code === 409) this.lease = undefined; // someone else wrote it: read again
          if (attempt === MAX_RETRIES) {
            this.options.log.log(failureLevel(error), "Node lease not renewed; will try next period", { error: (error as Error).message });
            return;
          }
          await new Promise((r) => setTimeout(r, delayMs));
          delayMs = Math.min(delayMs * 2, RETRY_MAX_MS);
        }
      }
    } finally {
      this.busy = false;
    }
  }

  private spec(): Record<string, unknown> {
    return { holderIdentity: this.options.nodeName, leaseDurationSeconds: this.options.durationSeconds ?? LEASE_DURATION_SECONDS, renewTime: microTime((this.options.nowMs ?? Date.now)()) };
  }

  private ownerReferences(): Record<string, unknown>[] | undefined {
    const uid = this.options.nodeUid();
    return uid ? [{ apiVersion: "v1", kind: "Node", name: this.options.nodeName, uid }] : undefined;
  }

  private async renew(): Promise<void> {
    if (!this.lease) {
      try {
        this.lease = await this.options.client.request("GET", this.path);
      } catch (error) {
        if (!(error instanceof ApiStatusError && error.code === 404)) throw error;
        const body = {
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: { name: this.options.nodeName, namespace: NAMESPACE, ownerReferences: this.ownerReferences() },
          spec: this.spec(),
        };
        this.lease = await this.options.client.request("POST", `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases`, body);
        this.renewCount++;
        return;
      }
    }
    const lease = this.lease!;
    // managedFields left out: the apiserver keeps its own when an update carries none, so every
    // renewal need not send them back (a third of the body on a metered uplink).
    const { managedFields: _kept, ...metadata } = lease.metadata ?? {};
    const next = { ...lease, metadata, spec: { ...lease.spec, ...this.spec() } };
    if (!next.metadata.ownerReferences && this.ownerReferences()) next.metadata.ownerReferences = this.ownerReferences();
    // The answer's metadata (its resourceVersion) is all the next renewal needs: the spec is what was sent.
    const answer = await this.options.client.request("PUT", this.path, next, "application/json", { metadataOnly: true });
    this.lease = { ...next, metadata: answer?.metadata ?? next.metadata };
    this.renewCount++;
  }
}
