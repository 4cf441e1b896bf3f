// The simulated pod source: the scenario's manifests turned into pod specs exactly as the static
// pod source turns files into them, edited, deleted and added back by the timeline. A pod that
// leaves the desired set starts a deadline by which nothing of it may be left in the runtime.
import type { PodSpec } from "../core/types.js";
import { ManifestError, podFromManifest } from "../sources/manifest.js";
import type { EventQueue } from "./event-queue.js";
import type { Faults } from "./faults.js";
import type { Invariants } from "./invariants.js";
import type { Scenario, ScenarioPod } from "./scenario.js";
import type { PodInfo } from "./sim-cri.js";
import type { SimRuntime } from "./sim-runtime.js";

const DEFAULT_GRACE_SECONDS = 30;
/** Upstream gives every container at least this long to stop (minimumGracePeriodInSeconds). */
const MINIMUM_GRACE_SECONDS = 2;

export interface DesiredPod {
  key: string;
  source: ScenarioPod;
  spec?: PodSpec;
  /** Manifest problem, when the static pod source would refuse it. */
  problem?: string;
  deleted: boolean;
  changedAtMs: number;
  /** Apiserver source: marked for deletion at this time (the pod stays until it finished). */
  markedAtMs?: number;
  markedGraceSeconds?: bigint;
  /** Apiserver source: the terminal phase the core published, as the watch shows it back. */
  reportedPhase?: "succeeded" | "failed";
}

interface Deletion {
  uid: string;
  key: string;
  deletedAtMs: number;
  deadlineMs: number;
}

export interface PodSourceTiming {
  now(): number;
  /** How long after the last disturbance the core must have caught up. */
  settleMs(): number;
  /** The slowest ordinary call. */
  maxLatencyMs: number;
}

export class SimPodSource {
  readonly desired: DesiredPod[] = [];
  private readonly info = new Map<string, PodInfo>();
  private readonly removedUids = new Set<string>();
  private readonly deletions = new Map<string, Deletion>();

  constructor(
    private scenario: Scenario,
    private queue: EventQueue,
    private runtime: SimRuntime,
    private invariants: Invariants,
    private faults: Faults,
    private timing: PodSourceTiming,
  ) {
    for (const pod of scenario.pods) this.desired.push({ key: pod.key, source: pod, deleted: false, changedAtMs: timing.now() });
    for (const d of this.desired) this.prepare(d);
  }

  podInfo(uid: string): PodInfo | undefined {
    return this.info.get(uid);
  }

  keyOf(uid: string): string | undefined {
    return this.desired.find((d) => d.spec?.uid === uid && !d.deleted)?.key;
  }

  uidOf(key: string): string | undefined {
    return this.desired.find((d) => d.key === key)?.spec?.uid;
  }

  /** The specs to give the core, and the key of each. */
  specs(): { specs: PodSpec[]; keys: string[] } {
    const specs: PodSpec[] = [];
    const keys: string[] = [];
    for (const d of this.desired) {
      if (d.deleted || !d.spec) continue;
      specs.push(this.specOf(d));
      keys.push(d.key);
    }
    return { specs, keys };
  }

  /** A new manifest for a pod, new or known (an edit, or a deleted pod back). */
  put(pod: ScenarioPod): void {
    const now = this.timing.now();
    const existing = this.desired.find((d) => d.key === pod.key);
    if (existing && !existing.deleted && existing.spec) this.forget(existing);
    if (existing) {
      // From an apiserver, the same object (same uid) keeps its deletion mark and its finished
      // phase through an edit: a deletionTimestamp is never taken back.
      const kept = this.scenario.source === "apiserver" && !existing.deleted && existing.spec
        ? { uid: existing.spec.uid, markedAtMs: existing.markedAtMs, markedGraceSeconds: existing.markedGraceSeconds, reportedPhase: existing.reportedPhase }
        : undefined;
      existing.markedAtMs = undefined;
      existing.reportedPhase = undefined;
      existing.source = pod;
      existing.deleted = false;
      existing.spec = undefined;
      existing.changedAtMs = now;
      this.prepare(existing);
      const spec = existing.spec as PodSpec | undefined; // set again by prepare
      if (kept && spec?.uid === kept.uid) {
        existing.markedAtMs = kept.markedAtMs;
        existing.markedGraceSeconds = kept.markedGraceSeconds;
        existing.reportedPhase = kept.reportedPhase;
      }
    } else {
      const d: DesiredPod = { key: pod.key, source: pod, deleted: false, changedAtMs: now };
      this.desired.push(d);
      this.prepare(d);
    }
  }

  /** The spec as the core gets it: with the apiserver's deletion mark and reported phase. */
  private specOf(d: DesiredPod): PodSpec {
    const spec = d.spec!;
    if (d.markedAtMs === undefined && d.reportedPhase === undefined) return spec;
    return { ...spec, deletionGracePeriodSeconds: d.markedGraceSeconds, reportedTerminalPhase: d.reportedPhase };
  }

  isMarked(uid: string): boolean {
    return this.desired.some((d) => d.spec?.uid === uid && !d.deleted && d.markedAtMs !== undefined);
  }

  isReportedTerminal(uid: string): boolean {
    return this.desired.some((d) => d.spec?.uid === uid && !d.deleted && d.reportedPhase !== undefined);
  }

  /**
   * Apiserver source: the apiserver marks the pod for deletion; it stays desired until the core
   * reports it finished. Returns the deadline by which it must have finished, or undefined if
   * there is no such pod (or it is already marked with a grace period no longer).
   */
  mark(key: string, graceSeconds: number | undefined): number | undefined {
    const d = this.desired.find((x) => x.key === key && !x.deleted);
    if (!d || !d.spec) return undefined;
    const now = this.timing.now();
    const specGrace = Number(d.spec.terminationGracePeriodSeconds ?? BigInt(DEFAULT_GRACE_SECONDS));
    // The apiserver never lengthens a grace period: a shorter request wins, also on a pod
    // already marked (deleted again, say with --grace-period=0).
    const current = d.markedGraceSeconds !== undefined && d.markedAtMs !== undefined ? Number(d.markedGraceSeconds) : specGrace;
    const grace = Math.min(graceSeconds ?? current, current);
    if (d.markedAtMs !== undefined && grace >= current) return undefined;
    d.markedGraceSeconds = BigInt(grace);
    d.markedAtMs = now;
    return now + Math.max(MINIMUM_GRACE_SECONDS, Number(d.markedGraceSeconds)) * 1000 + this.scenario.relistPeriodMs + this.longestCallMs() + 10 * this.timing.maxLatencyMs;
  }

  /** Apiserver source: a status arrived; a terminal phase is shown back on the pod. */
  report(uid: string, phase: string): boolean {
    const d = this.desired.find((x) => x.spec?.uid === uid && !x.deleted);
    if (!d || d.reportedPhase !== undefined || (phase !== "succeeded" && phase !== "failed")) return false;
    d.reportedPhase = phase;
    return true;
  }

  private longestCallMs(): number {
    return Math.max(...Object.values(this.scenario.latency).map((r) => r.maxMs));
  }

  /** Deletes the pod; false if there is no such pod to delete. */
  delete(key: string): boolean {
    const d = this.desired.find((x) => x.key === key && !x.deleted);
    if (!d) return false;
    this.forget(d);
    d.markedAtMs = undefined;
    d.reportedPhase = undefined;
    d.deleted = true;
    d.changedAtMs = this.timing.now();
    return true;
  }

  /** The node sleeps: clean-up deadlines move with it. */
  suspend(forMs: number): void {
    for (const d of this.deletions.values()) d.deadlineMs += forMs;
  }

  /** The pod's spec as the static pod source makes it, or the reason it cannot be one. */
  private prepare(d: DesiredPod): void {
    try {
      const fromApiserver = this.scenario.source === "apiserver";
      d.spec = podFromManifest(d.source.manifest, { nodeName: this.scenario.nodeName, source: this.scenario.file, documentIndex: this.desired.indexOf(d), fromApiserver });
      // From an apiserver a pod is not static (static pods are critical: never evicted).
      if (this.scenario.source === "apiserver") d.spec.staticPod = false;
      d.problem = undefined;
    } catch (error) {
      if (!(error instanceof ManifestError)) throw error;
      d.spec = undefined;
      d.problem = `${error.field}: ${error.message}`;
      return;
    }
    const uid = d.spec.uid;
    if (this.removedUids.has(uid)) {
      this.invariants.onReadded(uid);
      this.removedUids.delete(uid);
      this.deletions.delete(uid);
    }
    this.info.set(uid, { key: d.key, restartPolicy: d.spec.restartPolicy, behaviour: d.source.behaviour, spec: d.spec });
  }

  /** The pod leaves the desired set (deleted, or replaced by an edit): its deadline starts. */
  private forget(d: DesiredPod): void {
    if (!d.spec) return;
    const now = this.timing.now();
    const uid = d.spec.uid;
    const graceMs = Math.max(MINIMUM_GRACE_SECONDS, Number(d.spec.terminationGracePeriodSeconds ?? BigInt(DEFAULT_GRACE_SECONDS))) * 1000;
    // The core cannot cancel a call in flight (an image pull can take seconds): termination
    // starts when it returns. So the bound is the grace period, one relist, the longest call and
    // the few calls of the clean-up.
    const deadlineMs = now + graceMs + this.scenario.relistPeriodMs + this.longestCallMs() + 10 * this.timing.maxLatencyMs;
    const deletion: Deletion = { uid, key: d.key, deletedAtMs: now, deadlineMs };
    this.removedUids.add(uid);
    this.deletions.set(uid, deletion);
    this.scheduleGoneCheck(deletion);
  }

  private scheduleGoneCheck(deletion: Deletion): void {
    this.queue.push(deletion.deadlineMs, "gone check", () => {
      if (this.deletions.get(deletion.uid) !== deletion) return; // re-added since
      const now = this.timing.now();
      if (this.faults.calmSinceMs() >= deletion.deletedAtMs) {
        // Faults or restarts may rightly delay the clean-up: look again once they have passed.
        deletion.deletedAtMs = now;
        deletion.deadlineMs = now + this.timing.settleMs();
        this.scheduleGoneCheck(deletion);
        return;
      }
      this.invariants.checkGone(this.runtime, deletion.uid, deletion.key, deletion.deletedAtMs, now);
      this.deletions.delete(deletion.uid);
    });
  }
}
