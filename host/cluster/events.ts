// Events to the apiserver as client-go's recorder sends them for the kubelet: a repeat of the
// same event (same object, type, reason and message) within 10 minutes bumps the count and
// lastTimestamp of the existing Event by a patch instead of creating another; a spam filter
// allows each object a burst of 25 events of one kind (type, reason, message) and one more per 5
// minutes; the whole node sends at
// most 50 per second with a burst of 100 (kubelet eventRecordQPS / eventBurst). Refused or
// failed events are counted and dropped: events are best effort.
import type { Logger } from "../common/log.js";
import { ApiClient } from "./api-client.js";

export const AGGREGATE_WINDOW_MS = 10 * 60_000;
const OBJECT_BURST = 25;
const OBJECT_REFILL_MS = 5 * 60_000;
const NODE_QPS = 50;
const NODE_BURST = 100;
/** Bounds the memory of repeats kept for aggregation (Tiger style: a limit on everything). */
const MAX_REMEMBERED = 4096;

export type ContainerList = "containers" | "initContainers" | "ephemeralContainers";

export interface EventInput {
  /** The Node itself instead of a pod (then podName is the node's name). */
  aboutNode?: boolean;
  namespace: string;
  podName: string;
  podUid: string;
  /** The involved pod's resourceVersion, when it came from the apiserver. */
  resourceVersion?: string;
  containerName: string;
  /** The spec list the container is in (upstream's fieldPath names it); `containers` if unsaid. */
  containerList?: ContainerList;
  type: "Normal" | "Warning";
  reason: string;
  message: string;
}

class TokenBucket {
  constructor(
    private tokens: number,
    private readonly burst: number,
    private readonly refillEveryMs: number,
    private lastMs: number,
  ) {}

  take(nowMs: number): boolean {
    const refill = Math.floor((nowMs - this.lastMs) / this.refillEveryMs);
    if (refill > 0) {
      this.tokens = Math.min(this.burst, this.tokens + refill);
      this.lastMs += refill * this.refillEveryMs;
    }
    if (this.tokens <= 0) return false;
    this.tokens--;
    return true;
  }
}

interface Remembered {
  name: string;
  count: number;
  firstTimestamp: string;
  lastMs: number;
}

export class EventRecorder {
  private repeats = new Map<string, Remembered>();
  private perObject = new Map<string, TokenBucket>();
  private node: TokenBucket;
  /** Makes names unique among events created in the same millisecond. */
  private serial = 0;
  sentCount = 0;
  droppedCount = 0;

  constructor(
    private client: ApiClient,
    private nodeName: string,
    private log: Logger,
    private nowMs: () => number = Date.now,
  ) {
    this.node = new TokenBucket(NODE_BURST, NODE_BURST, 1000 / NODE_QPS, nowMs());
  }

  record(e: EventInput): void {
    const nowMs = this.nowMs();
    const objectKey = `${e.namespace}/${e.podUid}`;
    // client-go's spam key: the object and the event's type, reason and message, so a repeating
    // BackOff is throttled on its own and other events of the pod still pass.
    const spamKey = [objectKey, e.type, e.reason, e.message].join("\u0000");
    let bucket = this.perObject.get(spamKey);
    if (!bucket) {
      if (this.perObject.size >= MAX_REMEMBERED) this.perObject.clear();
      bucket = new TokenBucket(OBJECT_BURST, OBJECT_BURST, OBJECT_REFILL_MS, nowMs);
      this.perObject.set(spamKey, bucket);
    }
    if (!bucket.take(nowMs) || !this.node.take(nowMs)) {
      this.droppedCount++;
      return;
    }
    const key = [objectKey, e.containerName, e.type, e.reason, e.message].join("\u0000");
    const now = new Date(nowMs).toISOString().replace(/\.\d{3}Z$/, "Z");
    const seen = this.repeats.get(key);
    const path = `/api/v1/namespaces/${encodeURIComponent(e.namespace)}/events`;
    if (seen && nowMs - seen.lastMs < AGGREGATE_WINDOW_MS) {
      seen.count++;
      seen.lastMs = nowMs;
      const patch = { count: seen.count, lastTimestamp: now };
      void this.send("PATCH", `${path}/${encodeURIComponent(seen.name)}`, patch, "application/strategic-merge-patch+json");
      return;
    }
    if (this.repeats.size >= MAX_REMEMBERED) this.repeats.clear();
    this.serial = (this.serial + 1) % 1_000_000;
    const name = `${e.podName}.${(BigInt(nowMs) * 1_000_000n + BigInt(this.serial)).toString(16)}`;
    this.repeats.set(key, { name, count: 1, firstTimestamp: now, lastMs: nowMs });
    const event = {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name, namespace: e.namespace },
      involvedObject: e.aboutNode
        ? { kind: "Node", name: e.podName, uid: e.podUid } // upstream names the node by its name as uid
        : {
            apiVersion: "v1",
            kind: "Pod",
            namespace: e.namespace,
            name: e.podName,
            uid: e.podUid,
            resourceVersion: e.resourceVersion,
            fieldPath: e.containerName ? `spec.${e.containerList ?? "containers"}{${e.containerName}}` : undefined,
          },
      reason: e.reason,
      message: e.message,
      type: e.type,
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component: "kubelet", host: this.nodeName },
      reportingComponent: "kubelet",
      reportingInstance: this.nodeName,
    };
    void this.send("POST", path, event);
  }

  /** An event about the node (its namespace is `default`, as upstream's). */
  recordNode(type: "Normal" | "Warning", reason: string, message: string): void {
    this.record({ aboutNode: true, namespace: "default", podName: this.nodeName, podUid: this.nodeName, containerName: "", type, reason, message });
  }

  private async send(method: string, path: string, body: unknown, contentType?: string): Promise<void> {
    try {
      await this.client.request(method, path, body, contentType, { metadataOnly: true });
      this.sentCount++;
    } catch (error) {
      this.droppedCount++;
      this.log.log("debug", "Event not sent", { error: (error as Error).message });
    }
  }
}
