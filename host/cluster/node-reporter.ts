// Registers the Node and keeps its status: computed every 10 s, sent when it changed (heartbeat
// times aside) or at least every 5 min, as a strategic merge patch of `nodes/<name>/status`.
import type { Logger } from "../common/log.js";
import type { MachineInfo } from "../node/machine.js";
import { ApiClient, ApiStatusError, failureLevel } from "./api-client.js";
import { apiTime } from "./api-status.js";
import { type NodeCondition, type NodeHealth, nodeObject, nodeStatus, stampConditions } from "./node-object.js";

export const NODE_STATUS_UPDATE_MS = 10_000;
export const NODE_STATUS_REPORT_MS = 5 * 60_000;

export interface NodeReporterOptions {
  client: ApiClient;
  log: Logger;
  nodeName: string;
  machine: () => MachineInfo;
  health: () => Promise<NodeHealth>;
  nowMs?: () => number;
  /** How often the status is computed (nodeStatusUpdateFrequency, default 10 s). */
  updateMs?: number;
  /** How often an unchanged status is still reported (nodeStatusReportFrequency, default 5 min). */
  reportMs?: number;
  /** `--provider-id`: the Node's spec.providerID at registration. */
  providerId?: string;
  /** Node events: Starting, NodeReady / NodeNotReady when Ready changes. */
  onEvent?: (type: "Normal" | "Warning", reason: string, message: string) => void;
}

/** The event reason for each condition's False and True status, as the kubelet names them. */
const CONDITION_EVENTS: Record<string, [string, string]> = {
  MemoryPressure: ["NodeHasSufficientMemory", "NodeHasInsufficientMemory"],
  DiskPressure: ["NodeHasNoDiskPressure", "NodeHasDiskPressure"],
  PIDPressure: ["NodeHasSufficientPID", "NodeHasInsufficientPID"],
  Ready: ["NodeNotReady", "NodeReady"],
};

export class NodeReporter {
  private allocatableSent = false;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private registered = false;
  /** The last status the apiserver accepted, without heartbeat times. */
  private lastSent?: string;
  private lastConditions?: NodeCondition[];
  private lastReportMs = 0;
  private busy = false;
  private startingSent = false;
  /** The Node's uid once registered (the lease's owner). */
  nodeUid?: string;
  /** The Node's labels as the apiserver last returned them (an admin may add some). */
  labels?: Record<string, string>;
  reportCount = 0;

  constructor(private options: NodeReporterOptions) {}

  private now(): number {
    return (this.options.nowMs ?? Date.now)();
  }

  /** Starts the update loop (10 s by default); resolves after the first attempt to register and report. */
  start(): Promise<void> {
    this.timer = setInterval(() => void this.tick(), this.options.updateMs ?? NODE_STATUS_UPDATE_MS);
    return this.tick();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** Computes the status now and reports it if due; also the first registration. */
  async tick(): Promise<void> {
    if (this.busy || this.stopped) return;
    this.busy = true;
    try {
      const nowMs = this.now();
      const status = nodeStatus(this.options.nodeName, this.options.machine(), await this.options.health(), nowMs);
      if (!this.registered) await this.register(status, nowMs);
      const key = JSON.stringify(status);
      if (key === this.lastSent && nowMs - this.lastReportMs < (this.options.reportMs ?? NODE_STATUS_REPORT_MS)) return;
      const conditions = stampConditions(status.conditions, this.lastConditions, apiTime(nowMs));
      // Only the Node's labels are read back: its metadata is answer enough (the whole Node, images and all, is not).
      const patched = await this.options.client.request("PATCH", `/api/v1/nodes/${encodeURIComponent(this.options.nodeName)}/status`, { status: { ...status, conditions } }, "application/strategic-merge-patch+json", { metadataOnly: true });
      this.keepLabels(patched);
      if (key !== this.lastSent) {
        const ready = status.conditions.find((c: NodeCondition) => c.type === "Ready");
        this.options.log.log("info", "Node status reported", { node: this.options.nodeName, ready: ready?.status, message: ready?.message });
        // Upstream's node status events: one per condition whose status changed (the first report
        // included), pressure conditions before Ready.
        for (const c of status.conditions as NodeCondition[]) {
          const was = this.lastConditions?.find((p) => p.type === c.type)?.status;
          const what = CONDITION_EVENTS[c.type]?.[c.status === "True" ? 1 : 0];
          if (what && c.status !== was) this.options.onEvent?.("Normal", what, `Node ${this.options.nodeName} status is now: ${what}`);
        }
        if (!this.allocatableSent) {
          this.allocatableSent = true;
          this.options.onEvent?.("Normal", "NodeAllocatableEnforced", "Updated Node Allocatable limit across pods");
        }
      }
      this.lastSent = key;
      this.lastConditions = conditions;
      this.lastReportMs = nowMs;
      this.reportCount++;
    } catch (error) {
      this.options.log.log(failureLevel(error), "Node status not reported; will retry", { error: (error as Error).message });
    } finally {
      this.busy = false;
    }
  }

  private keepLabels(node: any): void {
    const labels = node?.metadata?.labels;
    if (labels && typeof labels === "object") this.labels = { ...labels };
  }

  private async register(status: Record<string, any>, nowMs: number): Promise<void> {
    if (!this.startingSent) this.options.onEvent?.("Normal", "Starting", "Starting kubelet.");
    this.startingSent = true;
    const conditions = stampConditions(status.conditions, undefined, apiTime(nowMs));
    const node = nodeObject(this.options.nodeName, this.options.machine(), { ...status, conditions }, this.options.providerId);
    try {
      // Its uid and labels are all that is read of the answer: the metadata alone comes back.
      const created = await this.options.client.request("POST", "/api/v1/nodes", node, "application/json", { metadataOnly: true });
      this.nodeUid = created?.metadata?.uid;
      this.keepLabels(created);
      this.options.log.log("info", "Node registered", { node: this.options.nodeName });
    } catch (error) {
      if (!(error instanceof ApiStatusError && error.code === 409)) throw error;
      // Already registered (an agent restart): take it over as it is.
      const existing = await this.options.client.request("GET", `/api/v1/nodes/${encodeURIComponent(this.options.nodeName)}`);
      this.nodeUid = existing?.metadata?.uid;
      this.keepLabels(existing);
      this.lastConditions = existing?.status?.conditions;
      this.options.log.log("info", "Node already registered; taking it over", { node: this.options.nodeName });
    }
    this.registered = true;
    void this.ensureCsiNode();
  }

  /**
   * The CSINode object the kubelet makes beside its Node (storage.k8s.io/v1, owned by the Node, no
   * drivers yet), which the scheduler and attach/detach controller look for. Best effort: an
   * apiserver without the storage API, or a refusal, is logged and the node goes on.
   */
  private async ensureCsiNode(): Promise<void> {
    const name = this.options.nodeName;
    try {
      await this.options.client.request("POST", "/apis/storage.k8s.io/v1/csinodes", {
        apiVersion: "storage.k8s.io/v1",
        kind: "CSINode",
        metadata: { name, ownerReferences: [{ apiVersion: "v1", kind: "Node", name, uid: this.nodeUid, controller: false }] },
        spec: { drivers: [] },
      });
    } catch (error) {
      if (error instanceof ApiStatusError && error.code === 409) return;
      this.options.log.log("debug", "CSINode not created", { node: name, error: (error as Error).message });
    }
  }
}
