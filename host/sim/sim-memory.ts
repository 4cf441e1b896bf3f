// Memory in the simulator: the kubelet's stats pass over the simulated containers' working sets
// (the timeline's, else their behaviour's), and the checks every eviction the core makes must pass.
import type { Core } from "../core/core.js";
import type { NodeStats, PodStatus } from "../core/types.js";
import type { EventQueue } from "./event-queue.js";
import { RankedPod, quantityBytes } from "./eviction-reference.js";
import type { Faults } from "./faults.js";
import { Invariants, SYSTEM_CRITICAL_PRIORITY } from "./invariants.js";
import type { SimPodSource } from "./pod-source.js";
import type { Scenario } from "./scenario.js";
import type { SimRuntime } from "./sim-runtime.js";

export interface SimMemoryContext {
  now(): number;
  queue: EventQueue;
  runtime: SimRuntime;
  pods: SimPodSource;
  invariants: Invariants;
  faults: Faults;
  scenario: Scenario;
  /** The last status the core published of each pod. */
  statuses: Map<string, PodStatus>;
  /** The pods refused so far, `<key>: <why>`. */
  refused(): string[];
  /** True while an agent runs (a core to take stats). */
  coreUp(): boolean;
  call<T>(fn: (core: Core) => T): T | undefined;
  askPump(): void;
  settleMs(): number;
}

export class SimMemory {
  /** Working sets set by the timeline, by `<pod key>/<container>`. */
  private readonly usage = new Map<string, number>();
  /** The stats last given to the core. */
  private lastStats: NodeStats | undefined;
  passes = 0;

  constructor(private ctx: SimMemoryContext) {}

  /** The timeline's `memory` action: a container's working set from now on. */
  setUsage(pod: string, container: string, bytes: number): void {
    this.usage.set(`${pod}/${container}`, bytes);
  }

  /** A container's working set: the timeline's, else its behaviour's, else 1 MiB. */
  private workingSetOf(podUid: string, name: string): number {
    const key = this.ctx.pods.keyOf(podUid);
    const set = key === undefined ? undefined : this.usage.get(`${key}/${name}`);
    return set ?? this.ctx.pods.podInfo(podUid)?.behaviour[name]?.memoryBytes ?? 1024 * 1024;
  }

  /** The kubelet's eviction monitoring: the node's memory and each pod's, every interval. */
  statsPass(): void {
    const m = this.ctx.scenario.memory!;
    this.ctx.queue.push(this.ctx.now() + m.intervalMs, "stats", () => this.statsPass());
    if (!this.ctx.coreUp()) return; // the agent is down: nobody takes stats
    const pods = new Map<string, NodeStats["pods"][number]>();
    let used = m.systemBytes;
    for (const c of this.ctx.runtime.containers.values()) {
      if (c.state !== "running") continue;
      const bytes = this.workingSetOf(c.podUid, c.name);
      used += bytes;
      let pod = pods.get(c.podUid);
      if (!pod) pods.set(c.podUid, (pod = { uid: c.podUid, memoryWorkingSetBytes: 0n, ephemeralStorageBytes: 0n, processCount: 0n, containers: [] }));
      pod.memoryWorkingSetBytes += BigInt(bytes);
      pod.processCount += 1n;
      pod.containers.push({ name: c.name, memoryWorkingSetBytes: BigInt(bytes) });
    }
    const stats: NodeStats = {
      signals: [{ signal: "memory.available", available: BigInt(m.capacityBytes - used), capacity: BigInt(m.capacityBytes) }],
      pods: [...pods.values()].sort((a, b) => (a.uid < b.uid ? -1 : 1)),
      volumes: [],
    };
    this.passes++;
    this.lastStats = stats;
    this.ctx.call((core) => core.handleNodeStats(this.ctx.now(), stats));
    this.ctx.askPump();
  }

  isCritical(uid: string): boolean {
    const spec = this.ctx.pods.desired.find((d) => d.spec?.uid === uid)?.spec;
    return this.ctx.scenario.source === "file" || (spec?.priority ?? 0) >= SYSTEM_CRITICAL_PRIORITY;
  }

  /**
   * The pods the core could have evicted at the last stats pass: active, not critical, not
   * marked or refused; `evicted` among them (its status already says Failed).
   */
  private evictionCandidates(evicted: string): RankedPod[] | undefined {
    const stats = this.lastStats;
    if (!stats) return undefined;
    const usage = new Map(stats.pods.map((p) => [p.uid, Number(p.memoryWorkingSetBytes)]));
    const out: RankedPod[] = [];
    for (const d of this.ctx.pods.desired) {
      const spec = d.spec;
      if (!spec || d.deleted || d.markedAtMs !== undefined || d.problem || this.isCritical(spec.uid)) continue;
      if (this.ctx.refused().some((r) => r.startsWith(`${d.key}:`))) continue;
      const phase = this.ctx.statuses.get(spec.uid)?.phase;
      if ((phase === "succeeded" || phase === "failed") && spec.uid !== evicted) continue;
      const requestBytes = spec.containers.reduce((sum, c) => {
        const q = c.requests.find((r) => r.name === "memory") ?? c.limits.find((r) => r.name === "memory");
        return sum + (q ? quantityBytes(q.quantity) : 0);
      }, 0);
      out.push({ uid: spec.uid, priority: spec.priority, hasStats: usage.has(spec.uid), usageBytes: usage.get(spec.uid) ?? 0, requestBytes });
    }
    return out;
  }

  onEviction(uid: string): void {
    if (this.ctx.invariants.evicted.has(uid)) return;
    const candidates = this.evictionCandidates(uid);
    this.ctx.invariants.onEviction(uid, this.isCritical(uid), candidates, this.ctx.scenario.memory?.intervalMs ?? 0, this.ctx.now());
    this.scheduleEvictedCheck(uid, this.ctx.now(), this.ctx.now() + 30_000 + this.ctx.settleMs());
  }

  /** An evicted pod's containers stop within its grace period and a relist, faults aside. */
  private scheduleEvictedCheck(uid: string, evictedAtMs: number, deadlineMs: number): void {
    this.ctx.queue.push(deadlineMs, "evicted check", () => {
      const running = [...this.ctx.runtime.containers.values()].filter((c) => c.podUid === uid && c.state === "running").length;
      if (running === 0) return;
      if (this.ctx.faults.calmSinceMs() >= evictedAtMs) {
        this.scheduleEvictedCheck(uid, this.ctx.now(), this.ctx.now() + this.ctx.settleMs());
        return;
      }
      this.ctx.invariants.evictedStillRunning(uid, running, this.ctx.now());
    });
  }
}
