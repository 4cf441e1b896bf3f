// Mirror pods: the apiserver's read-only copy of each static pod, so that `kubectl get pods`
// shows it. A mirror pod carries the annotation `kubernetes.io/config.mirror` with the static
// pod's hash (its uid here); one whose hash matches no static pod is deleted, an outdated one
// is replaced, a missing one created. Mirror pods are never run: the static pod is.
import type { Logger } from "../common/log.js";
import type { SourcePod } from "../sources/static-pods.js";
import { ApiClient, ApiStatusError, failureLevel, isRefusal } from "./api-client.js";
import type { PodObject } from "./pod-reflector.js";

export const MIRROR_ANNOTATION = "kubernetes.io/config.mirror";
export const HASH_ANNOTATION = "kubernetes.io/config.hash";
export const SOURCE_ANNOTATION = "kubernetes.io/config.source";
export const SEEN_ANNOTATION = "kubernetes.io/config.seen";

/** Every static pod tolerates every NoExecute taint, as upstream gives pods from files. */
const TOLERATE_NO_EXECUTE = { operator: "Exists", effect: "NoExecute" };

export function isMirrorPod(pod: PodObject): boolean {
  return pod.metadata?.annotations?.[MIRROR_ANNOTATION] !== undefined;
}

/** The mirror pod object for a static pod. */
export function mirrorPodObject(pod: SourcePod, nodeName: string, nodeUid: string, seenIso = new Date().toISOString()): PodObject {
  const manifest = (pod.manifest ?? {}) as PodObject;
  const metadata = manifest.metadata ?? {};
  const spec = manifest.spec ?? {};
  const tolerations = Array.isArray(spec.tolerations) ? spec.tolerations : [];
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: pod.spec.name,
      namespace: pod.spec.namespace,
      labels: metadata.labels,
      annotations: { ...(metadata.annotations ?? {}), [MIRROR_ANNOTATION]: pod.spec.uid, [HASH_ANNOTATION]: pod.spec.uid, [SEEN_ANNOTATION]: seenIso, [SOURCE_ANNOTATION]: pod.source ?? "file" },
      ownerReferences: [{ apiVersion: "v1", kind: "Node", name: nodeName, uid: nodeUid, controller: true }],
    },
    spec: { ...spec, nodeName, tolerations: [...tolerations, TOLERATE_NO_EXECUTE] },
  };
}

export class MirrorPods {
  private busy = new Set<string>();
  /** Static pods (uid) whose mirror pod the apiserver refused: tried again only once they change. */
  private refused = new Set<string>();
  /** When each static pod was first seen (the config.seen annotation), by uid. */
  private seen = new Map<string, string>();

  private seenAt(uid: string): string {
    let at = this.seen.get(uid);
    if (!at) {
      at = new Date().toISOString().replace("Z", "000000Z"); // RFC 3339 with nanoseconds, as the kubelet writes it
      this.seen.set(uid, at);
    }
    return at;
  }

  constructor(
    private client: ApiClient,
    private nodeName: string,
    private log: Logger,
    private nodeUid: () => string | undefined,
  ) {}

  /** Brings the mirror pods in line with the static pods, given the apiserver's pods. */
  reconcile(staticPods: SourcePod[], apiPods: Iterable<PodObject>): void {
    // A mirror pod is owned by its Node (NodeRestriction checks the owner's uid): none before
    // the Node is registered.
    if (this.nodeUid() === undefined) return;
    const byName = new Map<string, PodObject>();
    for (const p of apiPods) byName.set(`${p.metadata.namespace}/${p.metadata.name}`, p);
    const wanted = new Set<string>();
    const uids = new Set(staticPods.map((p) => p.spec.uid));
    for (const uid of this.seen.keys()) if (!uids.has(uid)) this.seen.delete(uid);
    for (const uid of this.refused) if (!uids.has(uid)) this.refused.delete(uid);
    for (const pod of staticPods) {
      const key = `${pod.spec.namespace}/${pod.spec.name}`;
      wanted.add(key);
      const existing = byName.get(key);
      if (existing && existing.metadata.annotations?.[MIRROR_ANNOTATION] === pod.spec.uid && !existing.metadata.deletionTimestamp) continue;
      if (this.refused.has(pod.spec.uid)) continue; // the static pod itself runs on; its mirror waits for an edit
      void this.run(key, async () => {
        if (existing) {
          if (!isMirrorPod(existing)) {
            this.log.log("warn", "A pod with the static pod's name exists and is not its mirror; not replacing it", { pod: key });
            return;
          }
          // Outdated (the static pod changed), or deleted by someone (marked; it waits for the
          // node, as every bound pod does): it goes at once and a new one takes its place.
          await this.delete(existing);
        }
        try {
          await this.client.request("POST", `/api/v1/namespaces/${encodeURIComponent(pod.spec.namespace)}/pods`, mirrorPodObject(pod, this.nodeName, this.nodeUid()!, this.seenAt(pod.spec.uid)), "application/json", { metadataOnly: true });
        } catch (error) {
          if (!isRefusal(error)) throw error;
          // The same object would be refused again: said once, tried again when the file changes.
          this.refused.add(pod.spec.uid);
          this.log.log("error", "Mirror pod refused by the apiserver; the static pod runs without one until its manifest changes", { pod: key, code: error.code, error: error.message.slice(0, 400) });
          return;
        }
        this.log.log("info", "Mirror pod created", { pod: key });
      });
    }
    for (const [key, p] of byName) {
      if (!isMirrorPod(p) || wanted.has(key)) continue;
      void this.run(key, () => this.delete(p)); // its static pod is gone
    }
  }

  private async delete(p: PodObject): Promise<void> {
    const path = `/api/v1/namespaces/${encodeURIComponent(p.metadata.namespace)}/pods/${encodeURIComponent(p.metadata.name)}`;
    try {
      await this.client.request("DELETE", path, { kind: "DeleteOptions", apiVersion: "v1", gracePeriodSeconds: 0, preconditions: { uid: p.metadata.uid } }, "application/json", { metadataOnly: true });
      this.log.log("info", "Mirror pod deleted", { pod: `${p.metadata.namespace}/${p.metadata.name}` });
    } catch (error) {
      if (!(error instanceof ApiStatusError && (error.code === 404 || error.code === 409))) throw error;
    }
  }

  private async run(key: string, work: () => Promise<void>): Promise<void> {
    if (this.busy.has(key)) return;
    this.busy.add(key);
    try {
      await work();
    } catch (error) {
      this.log.log(failureLevel(error), "Mirror pod not synced; will retry", { pod: key, error: (error as Error).message });
    } finally {
      this.busy.delete(key);
    }
  }
}
