// `/pods` of the kubelet API: the pods this node runs, as v1 Pod objects built from the agent's
// pod table (identity, phase, container states), which is what tools reading a kubelet's /pods
// (monitoring agents, `kubectl get --raw`) look at.
import type { PodTable } from "../pod-table.js";

const STATE_KEYS: Record<string, string> = { running: "running", waiting: "waiting", terminated: "terminated" };

export function podListItems(table: PodTable, nodeName: string): object[] {
  return table.snapshot().pods.map((p) => ({
    metadata: { name: p.name, namespace: p.namespace, uid: p.uid },
    spec: { nodeName, containers: p.containers.map((c) => ({ name: c.name })) },
    status: {
      phase: p.phase,
      ...(p.reason ? { reason: p.reason, message: p.message } : {}),
      containerStatuses: p.containers.map((c) => {
        const key = STATE_KEYS[c.state] ?? "waiting";
        const detail: Record<string, unknown> = {};
        if (c.reason) detail.reason = c.reason;
        if (key === "terminated") detail.exitCode = c.exitCode;
        return {
          name: c.name,
          state: { [key]: detail },
          restartCount: c.restartCount,
          ready: c.ready,
          started: c.started,
          ...(c.containerId ? { containerID: c.containerId } : {}),
        };
      }),
    },
  }));
}
