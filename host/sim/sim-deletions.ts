// Pods deleted through the apiserver, as the apiserver and the host's status manager handle them:
// marked with a grace period, reported finished, then deleted; and the check that each marked
// pod finished by its deadline (faults and restarts excused).
import type { PodStatus } from "../core/types.js";
import type { TraceWriter } from "../trace/recording-core.js";
import type { EventQueue } from "./event-queue.js";
import type { Faults } from "./faults.js";
import type { Invariants } from "./invariants.js";
import type { SimPodSource } from "./pod-source.js";
import type { SimApiserver } from "./sim-apiserver.js";

export interface DeletionContext {
  now(): number;
  queue: EventQueue;
  pods: SimPodSource;
  invariants: Invariants;
  faults: Faults;
  apiserver: SimApiserver;
  statuses: Map<string, PodStatus>;
  trace?: TraceWriter;
  sendPods(): void;
  settleMs(): number;
}

export class SimDeletions {
  constructor(private ctx: DeletionContext) {}

  /** A pod marked for deletion must have been reported finished (and so deleted) by its deadline. */
  private scheduleFinishedCheck(key: string, uid: string, markedAtMs: number, deadlineMs: number): void {
    this.ctx.queue.push(deadlineMs, "finished check", () => {
      if (!this.ctx.pods.isMarked(uid)) return; // finished and deleted, or replaced
      if (this.ctx.faults.calmSinceMs() >= markedAtMs) {
        // Faults or restarts may rightly delay it: look again once they have passed.
        this.scheduleFinishedCheck(key, uid, this.ctx.now(), this.ctx.now() + this.ctx.settleMs());
        return;
      }
      this.ctx.invariants.deletedPodNotFinished(key, uid, markedAtMs, this.ctx.now());
    });
  }

  /**
   * What the apiserver and the host's status manager do with a status: a terminal phase comes
   * back on the pod through the watch; a marked pod that finished is deleted, and leaves.
   */
  published(podUid: string, status: PodStatus): void {
    if (status.finished && this.ctx.pods.isMarked(podUid)) {
      this.ctx.invariants.onDeletedPodFinished(podUid, status.phase, this.ctx.now());
      const key = this.ctx.pods.keyOf(podUid);
      this.ctx.queue.push(this.ctx.now(), "apiserver delete", () => {
        this.ctx.trace?.sim(this.ctx.now(), "apiserver-delete", { pod: key });
        this.ctx.apiserver.forget(podUid);
        if (key !== undefined && this.ctx.pods.delete(key)) this.ctx.sendPods();
      });
      return;
    }
    if (this.ctx.pods.report(podUid, status.phase)) this.ctx.queue.push(this.ctx.now(), "apiserver phase", () => this.ctx.sendPods());
  }

  /** A pod deleted through the apiserver: marked with its grace period, then finished and removed. */
  deleteThroughApiserver(pod: string, graceSeconds: number | undefined): void {
    const now = this.ctx.now();
    const uid = this.ctx.pods.uidOf(pod);
    const deadlineMs = this.ctx.pods.mark(pod, graceSeconds);
    if (deadlineMs === undefined || uid === undefined) return;
    this.ctx.sendPods();
    this.scheduleFinishedCheck(pod, uid, now, deadlineMs);
    // A pod that had already finished (its status says so) is deleted at once by the host's
    // status manager, which looks again whenever the watch shows a change.
    const last = this.ctx.statuses.get(uid);
    if (last?.finished) this.published(uid, last);
  }
}
