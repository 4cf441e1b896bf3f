// What must hold at every step of a simulation, checked against the simulated runtime (the truth)
// and the statuses the core publishes. Each rule is an independent model of upstream behaviour,
// not a call into the core: a core bug cannot hide itself.
import type { SimContainer, SimRuntime } from "./sim-runtime.js";
import { RankedPod, rankMemoryPressure } from "./eviction-reference.js";

/** Upstream's SystemCriticalPriority: pods at or above it, and static pods, are never evicted. */
export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

export interface Violation {
  atMs: number;
  invariant: string;
  message: string;
}

export interface InvariantConfig {
  backoffInitialMs: number;
  backoffMaxMs: number;
  /** Calls finish within this: tolerance for decisions the oracle sees a little late. */
  latencySlackMs: number;
}

interface BackoffEntry {
  backoffMs: number;
  lastUpdateMs: number;
}

export class Invariants {
  readonly violations: Violation[] = [];
  /** client-go Backoff, modelled per (pod uid, container name, spec hash) as upstream keys it. */
  private backoff = new Map<string, BackoffEntry>();
  /** Terminal phase per pod uid, once reached. */
  private terminal = new Map<string, string>();
  restartsSeen = 0;
  /** Pods the core evicted (uid), and when the last eviction was. */
  readonly evicted = new Set<string>();
  private lastEvictionAtMs: number | undefined;
  evictions = 0;

  constructor(private config: InvariantConfig) {}

  /** Records a broken rule (also for the checks kept in other files). */
  violate(atMs: number, invariant: string, message: string): void {
    this.violations.push({ atMs, invariant, message });
  }

  /** Called as the runtime starts container `c`: it must be the only one of its name running. */
  onStart(runtime: SimRuntime, c: SimContainer, nowMs: number): void {
    const running = runtime.runningNamed(c.podUid, c.name);
    if (running.length > 1) {
      this.violate(nowMs, "one-running-container", `pod ${c.podUid} has ${running.length} running "${c.name}" containers: ${running.map((x) => x.id.slice(0, 12)).join(", ")}`);
    }
  }

  /**
   * Called as the runtime creates container `c` of a pod with `restartPolicy`, which the core
   * decided at `nowMs` (the create may land much later: a slow call, a suspend). When the newest
   * earlier instance of the name has exited, this is a restart: the restart policy must allow
   * it, and at the decision the crash-loop back-off must have run out.
   */
  onCreate(runtime: SimRuntime, c: SimContainer, restartPolicy: string, nowMs: number): void {
    let previous: SimContainer | undefined;
    for (const other of runtime.containers.values()) {
      if (other === c || other.podUid !== c.podUid || other.name !== c.name) continue;
      if (!previous || other.createdAtMs > previous.createdAtMs || (other.createdAtMs === previous.createdAtMs && other.attempt > previous.attempt)) previous = other;
    }
    if (!previous || previous.state !== "exited") return;
    this.restartsSeen++;
    // Replacing a container the core stopped because its spec changed is not a restart in the
    // policy's sense: upstream does it whatever the policy, and without a back-off (even when
    // the container happened to exit on its own while it was being stopped).
    if (previous.stopRequested && previous.specHash !== c.specHash) return;
    // A container the core killed while it ran (a failed liveness or startup probe) is started
    // again in the same sync upstream; its back-off is judged against an older exit, which this
    // model does not follow: the policy still holds, the back-off is not checked.
    const killedRunning = previous.stopRequested && previous.exitCode !== 0 && previous.killedWhileRunning === true;
    const policy = restartPolicy || "Always";
    if (policy === "Never" || (policy === "OnFailure" && previous.exitCode === 0)) {
      this.violate(nowMs, "restart-policy", `container "${c.name}" of pod ${c.podUid} restarted under restartPolicy ${policy} after exit code ${previous.exitCode}`);
    }
    const key = `${c.podUid}/${c.name}/${c.specHash}`;
    if (killedRunning) return;
    const entry = this.backoff.get(key);
    const { backoffInitialMs, backoffMaxMs, latencySlackMs } = this.config;
    // An entry idle for 2 x max is gone: client-go judges that from the exit time, and the
    // core's collection (every minute, as upstream's) drops it by the clock. Where the two could
    // disagree, within the slack of the calls between decision and create, the oracle takes the
    // lenient side: the entry is gone and the wait starts over.
    const limitMs = 2 * backoffMaxMs - latencySlackMs;
    const gone = entry === undefined || previous.finishedAtMs - entry.lastUpdateMs > limitMs || nowMs - entry.lastUpdateMs > limitMs;
    if (!gone && nowMs - previous.finishedAtMs < entry.backoffMs) {
      this.violate(
        nowMs,
        "crash-loop-back-off",
        `container "${c.name}" of pod ${c.podUid} restarted ${nowMs - previous.finishedAtMs} ms after it exited; the back-off was ${entry.backoffMs} ms`,
      );
    }
    this.backoff.set(key, { backoffMs: gone ? backoffInitialMs : Math.min(entry.backoffMs * 2, backoffMaxMs), lastUpdateMs: nowMs });
  }

  /** The agent restarted: its back-off memory is gone, as upstream's is after a kubelet restart. */
  onAgentRestart(): void {
    this.backoff.clear();
  }

  /** Called with every phase the core publishes. */
  onPhase(podUid: string, phase: string, nowMs: number): void {
    const was = this.terminal.get(podUid);
    if (was !== undefined && phase !== was) {
      this.violate(nowMs, "terminal-phase", `pod ${podUid} went from ${was} to ${phase}`);
      return;
    }
    if (phase === "succeeded" || phase === "failed") this.terminal.set(podUid, phase);
  }

  /** The pod was removed and added again: a new life, which may end differently. */
  onReadded(podUid: string): void {
    this.terminal.delete(podUid);
    this.evicted.delete(podUid);
  }

  /** A sandbox or container was asked for before every volume of its pod was set up. */
  startedBeforeVolumes(podUid: string, call: string, nowMs: number): void {
    this.violate(nowMs, "volumes-before-start", `pod ${podUid}: ${call} before all its volumes were set up`);
  }

  /** A pod left the core (nothing of it in the runtime) with its volumes still set up. */
  mountedAfterRemoval(podUid: string, nowMs: number): void {
    this.violate(nowMs, "deleted-pod-unmounted", `pod ${podUid}: its volumes are still set up after everything else of it was removed`);
  }

  /** A deleted pod's deadline passed: nothing of it may be left. */
  checkGone(runtime: SimRuntime, podUid: string, podName: string, deletedAtMs: number, nowMs: number): void {
    const sandboxes = [...runtime.sandboxes.values()].filter((s) => s.podUid === podUid);
    if (sandboxes.length === 0) return;
    this.violate(
      nowMs,
      "deleted-pod-cleaned-up",
      `pod ${podName} (${podUid}) deleted at ${deletedAtMs} ms still has ${sandboxes.length} sandbox(es) (${sandboxes.map((s) => s.state).join(", ")}) at ${nowMs} ms`,
    );
  }

  /** At the end: a desired pod that can run must be running or finished. */
  checkSettled(podName: string, podUid: string, phase: string | undefined, nowMs: number): void {
    if (phase === "running" || phase === "succeeded" || phase === "failed") return;
    this.violate(nowMs, "pod-settles", `pod ${podName} (${podUid}) is ${phase ?? "without a status"} at the end of the run`);
  }

  /** The core asked to start something of a pod the apiserver marked for deletion. */
  startedWhileDeleted(podUid: string, call: string, nowMs: number): void {
    this.violate(nowMs, "deleted-pod-not-started", `pod ${podUid} is marked for deletion, yet the core asked for ${call}`);
  }

  /** The core asked to start something of a pod the apiserver shows finished. */
  startedAfterFinished(podUid: string, call: string, nowMs: number): void {
    this.violate(nowMs, "finished-pod-not-restarted", `pod ${podUid} is finished in the apiserver, yet the core asked for ${call}`);
  }

  /** A deleted pod's last status: it must end in a terminal phase (upstream since v1.27). */
  onDeletedPodFinished(podUid: string, phase: string, nowMs: number): void {
    if (phase === "succeeded" || phase === "failed") return;
    this.violate(nowMs, "deleted-pod-terminal", `pod ${podUid} was reported finished in phase ${phase}`);
  }

  /** A pod marked for deletion was not reported finished by its grace period and a relist. */
  deletedPodNotFinished(podName: string, podUid: string, markedAtMs: number, nowMs: number): void {
    this.violate(nowMs, "deleted-pod-finishes", `pod ${podName} (${podUid}) marked for deletion at ${markedAtMs} ms is not finished at ${nowMs} ms`);
  }

  /**
   * The core evicted `uid` (a status with reason Evicted and a DisruptionTarget condition).
   * It must not be critical; the previous eviction must be an interval ago; and no candidate
   * may rank before it by upstream's memory order, as computed here from the stats the core was
   * given (`candidates`: the active, non-critical pods then).
   */
  onEviction(uid: string, critical: boolean, candidates: RankedPod[] | undefined, intervalMs: number, nowMs: number): void {
    if (this.evicted.has(uid)) return;
    this.evicted.add(uid);
    this.evictions++;
    if (critical) this.violate(nowMs, "critical-pod-not-evicted", `pod ${uid} is critical (static or system priority) yet was evicted`);
    if (this.lastEvictionAtMs !== undefined && nowMs - this.lastEvictionAtMs < intervalMs) {
      this.violate(nowMs, "one-eviction-per-interval", `pod ${uid} evicted ${nowMs - this.lastEvictionAtMs} ms after the previous eviction; the interval is ${intervalMs} ms`);
    }
    this.lastEvictionAtMs = nowMs;
    if (!candidates) return;
    const first = rankMemoryPressure(candidates)[0];
    if (first && first.uid !== uid) {
      this.violate(nowMs, "eviction-ranking", `pod ${uid} was evicted, but ${first.uid} ranks first (${JSON.stringify(first)}; evicted: ${JSON.stringify(candidates.find((c) => c.uid === uid) ?? "not a candidate")})`);
    }
  }

  /** The core asked to start something of a pod it evicted. */
  startedAfterEviction(podUid: string, call: string, nowMs: number): void {
    this.violate(nowMs, "evicted-pod-not-restarted", `pod ${podUid} was evicted, yet the core asked for ${call}`);
  }

  /** An evicted pod still has a running container long after its grace period. */
  evictedStillRunning(podUid: string, running: number, nowMs: number): void {
    this.violate(nowMs, "evicted-pod-stops", `pod ${podUid} was evicted, yet ${running} container(s) still run`);
  }

  trap(nowMs: number, message: string): void {
    this.violate(nowMs, "core-never-traps", message);
  }
}
