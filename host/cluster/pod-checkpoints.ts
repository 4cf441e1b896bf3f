// The apiserver's pods for this node, checkpointed so that a node restarted without its apiserver
// runs them again (upstream's kubelet forgets them until the apiserver answers). A pod is written
// when what the node acts on changes (spec, labels, annotations, deletion, terminal phase, start
// time), not at every status patch: an edge node's flash should not wear for heartbeats.
import type { CheckpointStore } from "../checkpoint/checkpoint-store.js";
import type { PodObject } from "./pod-reflector.js";

/** What of a pod is worth a write: all the node needs to run it again as it was. */
function checkpointKey(object: PodObject): string {
  const m = object.metadata ?? {};
  const s = object.status ?? {};
  return JSON.stringify([m.name, m.namespace, m.labels ?? null, m.annotations ?? null, m.deletionTimestamp ?? null, m.deletionGracePeriodSeconds ?? null, object.spec, s.phase ?? null, s.startTime ?? null]);
}

export class PodCheckpoints {
  private keys = new Map<string, string>();
  private swept = false;

  constructor(private store: CheckpointStore) {}

  /** Makes the checkpoints match `pods` (by uid): changed ones written, gone ones removed. */
  save(pods: ReadonlyMap<string, PodObject>): void {
    for (const [uid, object] of pods) {
      const key = checkpointKey(object);
      if (this.keys.get(uid) === key) continue;
      if (this.store.write(uid, object)) this.keys.set(uid, key);
    }
    for (const uid of [...this.keys.keys()]) {
      if (pods.has(uid)) continue;
      this.store.remove(uid);
      this.keys.delete(uid);
    }
    // Files of pods this process never saw (an earlier run's) that are no longer desired.
    if (!this.swept) for (const uid of this.store.names()) if (!pods.has(uid)) this.store.remove(uid);
    this.swept = true;
  }

  /** The checkpointed pods; unreadable files are reported by the store and left out. */
  load(): PodObject[] {
    const pods: PodObject[] = [];
    for (const [uid, data] of this.store.readAll()) {
      const object = data as PodObject;
      if (object?.metadata?.uid !== uid || typeof object.metadata.name !== "string" || typeof object.metadata.namespace !== "string") continue;
      this.keys.set(uid, checkpointKey(object));
      pods.push(object);
    }
    return pods;
  }
}
