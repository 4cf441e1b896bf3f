// The kubelet API's read-only measurement endpoints: /stats/summary (the stats Summary as JSON),
// /metrics (the kubelet's own metrics), /metrics/resource (what metrics-server reads) and
// /metrics/probes, all in the Prometheus text format but the first.
import type http from "node:http";
import type { PlannedAction, RuntimeSnapshot } from "../core/types.js";
import { KubeletMetrics, probeMetrics, resourceMetrics } from "../metrics/kubelet-metrics.js";
import { TEXT_FORMAT } from "../metrics/registry.js";
import type { SummaryProvider } from "../node/summary.js";
import type { Handler } from "./kubelet-server.js";

export interface StatsEndpointsOptions {
  metrics: KubeletMetrics;
  summary: SummaryProvider;
  snapshot: () => RuntimeSnapshot | undefined;
  now?: () => number;
}

/** The eviction signal a core's Evicted event names ("The node was low on resource: memory."). */
const SIGNAL_OF_RESOURCE: Record<string, string> = { memory: "memory.available", "ephemeral-storage": "nodefs.available", pids: "pid.available" };

/** Counts an eviction in kubelet_evictions when the core evicts a pod. */
export function countEviction(metrics: KubeletMetrics, action: PlannedAction): void {
  if (action.kind.tag !== "pod-event" || action.kind.val.reason !== "Evicted") return;
  const m = /low on resource: ([a-z-]+)/.exec(action.kind.val.message);
  if (m) metrics.evicted(SIGNAL_OF_RESOURCE[m[1]] ?? m[1]);
}

export function statsHandlers(o: StatsEndpointsOptions): Record<string, Handler> {
  const now = o.now ?? Date.now;
  const text = (res: http.ServerResponse, body: string) => {
    res.writeHead(200, { "content-type": TEXT_FORMAT });
    res.end(body);
  };
  return {
    "/stats/summary": (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(o.summary.summary(o.snapshot(), now())));
    },
    "/metrics": (_req, res) => text(res, o.metrics.render()),
    "/metrics/resource": (_req, res) => {
      let body: string;
      try {
        body = resourceMetrics(o.summary.summary(o.snapshot(), now()), false);
      } catch {
        body = resourceMetrics(undefined, true);
      }
      text(res, body);
    },
    "/metrics/probes": (_req, res) => text(res, probeMetrics()),
  };
}
