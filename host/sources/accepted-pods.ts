// The pods the node accepted, by uid: what keeps running when a later version of one cannot be
// honoured (a field nanolet does not implement, a spec its core refuses). An update the node
// cannot apply never stops a running pod; only a deletion of it still goes through.
import type { SourcePod } from "./static-pods.js";

export class AcceptedPods {
  private byUid = new Map<string, SourcePod>();

  get size(): number {
    return this.byUid.size;
  }

  /** Every accepted pod, in the order they were fed. */
  all(): IterableIterator<SourcePod> {
    return this.byUid.values();
  }

  /** The pods accepted by the last feed (every other one is forgotten). */
  replace(pods: Iterable<SourcePod>): void {
    this.byUid = new Map([...pods].map((p) => [p.spec.uid, p]));
  }

  /**
   * What runs in place of a refused version of pod `uid`: the accepted version, marked for
   * deletion when the refused one is (`deletionGracePeriodSeconds`); undefined for a pod the node
   * never accepted (it is refused as a whole).
   */
  keep(uid: string, deletionGracePeriodSeconds?: bigint): SourcePod | undefined {
    const held = this.byUid.get(uid);
    if (!held) return undefined;
    if (deletionGracePeriodSeconds === undefined || held.spec.deletionGracePeriodSeconds !== undefined) return held;
    return { ...held, spec: { ...held.spec, deletionGracePeriodSeconds } };
  }
}
