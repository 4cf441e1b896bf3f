// `/pods` of the kubelet API: the pods this node runs as v1 Pod objects, as the kubelet serves the
// pods it holds: each pod's metadata and spec as its source gave them (the apiserver's object, or
// a static manifest with the name and uid the node gives it), and the status the node works out
// for it, in the apiserver's words. Monitoring agents and `kubectl get --raw` read it.
import type { StatusContext } from "../cluster/api-status.js";
import { apiPodStatus } from "../cluster/api-status.js";
import type { PodTable } from "../agent/pod-table.js";
import type { SourcePod } from "../sources/static-pods.js";

export interface PodsViewSource {
  /** The pods the node accepted. */
  pods: () => Iterable<SourcePod>;
  /** What the status conversion needs of the node (its IP, the runtime's name, image digests). */
  context: () => Omit<StatusContext, "hostNetwork" | "current" | "generation">;
}

type Json = Record<string, any>;

export function podListItems(table: PodTable, nodeName: string, source: PodsViewSource): object[] {
  const context = source.context();
  const items: object[] = [];
  for (const pod of source.pods()) {
    const manifest = (pod.manifest ?? {}) as Json;
    const metadata: Json = { ...(manifest.metadata ?? {}), name: pod.spec.name, namespace: pod.spec.namespace, uid: pod.spec.uid };
    const spec: Json = { ...(manifest.spec ?? {}), nodeName: manifest.spec?.nodeName ?? nodeName };
    const core = table.statusOf(pod.spec.uid);
    const status = core
      ? apiPodStatus(core, { ...context, hostNetwork: pod.spec.hostNetwork, current: manifest.status, generation: metadata.generation, podSpec: manifest.spec })
      : { phase: "Pending" };
    const served = { ...(manifest.status?.qosClass ? { qosClass: manifest.status.qosClass } : {}), ...status };
    items.push({ kind: "Pod", apiVersion: "v1", metadata, spec, status: JSON.parse(JSON.stringify(served)) });
  }
  return items;
}

