// The host's table of desired pods and their newest status from the core: what `nanolet pods`
// shows. Kept in memory, served over the local socket and written to a state file.
import fs from "node:fs";
import path from "node:path";
import { MAX_REPORTED_PROBLEMS } from "../sources/limits.js";
import type { PodStatus } from "../core/types.js";
import { printable } from "../common/log.js";

export interface PodRow {
  uid: string;
  namespace: string;
  name: string;
  origin: string;
  phase: string;
  /** Pod-level reason and message (`Evicted` and why), empty when none. */
  reason?: string;
  message?: string;
  restarts: number;
  /** The Ready condition. */
  ready?: boolean;
  /** The init containers' states, in spec order (none for most pods). */
  initContainers?: PodRow["containers"];
  containers: { name: string; state: string; reason: string; message?: string; restartCount: number; containerId: string; exitCode: number; ready: boolean; started: boolean }[];
  statusVersion: number;
}

export interface PodTableSnapshot {
  writtenAtMs: number;
  nodeName: string;
  pods: PodRow[];
  problems: { origin: string; field: string; message: string }[];
}

export class PodTable {
  private rows = new Map<string, PodRow>();
  /** The core's newest status of each desired pod, as it said it (for the kubelet API's /pods). */
  private statuses = new Map<string, PodStatus>();
  /** When each pod was first seen, and whether it has run yet (kubelet_pod_start_duration_seconds). */
  private firstSeenMs = new Map<string, number | "started">();
  /** Called once per pod, when it first runs: seconds since it was first seen. */
  onPodStarted?: (seconds: number) => void;
  private problems: PodTableSnapshot["problems"] = [];
  private writeTimer?: NodeJS.Timeout;

  constructor(
    private nodeName: string,
    private stateFile?: string,
  ) {}

  /** Replaces the desired set, keeping statuses of pods that stay. */
  setDesired(pods: { uid: string; namespace: string; name: string; origin: string }[], problems: PodTableSnapshot["problems"]): void {
    const next = new Map<string, PodRow>();
    const nowMs = Date.now();
    const seen = new Map<string, number | "started">();
    for (const p of pods) seen.set(p.uid, this.firstSeenMs.get(p.uid) ?? nowMs);
    this.firstSeenMs = seen;
    for (const p of pods) {
      const old = this.rows.get(p.uid);
      next.set(p.uid, old ? { ...old, origin: p.origin } : { ...p, phase: "Pending", restarts: 0, containers: [], statusVersion: 0 });
    }
    this.rows = next;
    for (const uid of this.statuses.keys()) if (!next.has(uid)) this.statuses.delete(uid);
    // A bounded list for `nanolet pods` and the state file; the rest are counted in one line.
    this.problems = problems.length <= MAX_REPORTED_PROBLEMS ? problems : [
      ...problems.slice(0, MAX_REPORTED_PROBLEMS),
      { origin: "", field: "", message: `... and ${problems.length - MAX_REPORTED_PROBLEMS} more problems (see the agent's log)` },
    ];
    this.scheduleWrite();
  }

  /** The core's newest status of pod `uid`, while it is desired. */
  statusOf(uid: string): PodStatus | undefined {
    return this.statuses.get(uid);
  }

  /** A new core instance counts status versions from the start again. */
  resetVersions(): void {
    for (const row of this.rows.values()) row.statusVersion = 0;
  }

  applyStatus(uid: string, status: PodStatus): void {
    const row = this.rows.get(uid);
    if (!row) return;
    const version = Number(status.version);
    if (version <= row.statusVersion) return; // per-pod versions only increase
    row.statusVersion = version;
    this.statuses.set(uid, status);
    row.phase = status.phase.charAt(0).toUpperCase() + status.phase.slice(1);
    row.reason = status.reason;
    row.message = status.message;
    row.containers = status.containerStatuses.map((c) => ({
      name: c.name,
      state: c.state,
      reason: c.reason,
      ...(c.message ? { message: c.message } : {}),
      restartCount: c.restartCount,
      containerId: c.containerId,
      exitCode: c.exitCode,
      ready: c.ready,
      started: c.started,
    }));
    row.ready = status.conditions.some((c) => c.conditionType === "ready" && c.status);
    row.initContainers = (status.initContainerStatuses ?? []).map((c) => ({
      name: c.name,
      state: c.state,
      reason: c.reason,
      restartCount: c.restartCount,
      containerId: c.containerId,
      exitCode: c.exitCode,
      ready: c.ready,
      started: c.started,
    }));
    row.restarts = row.containers.reduce((sum, c) => sum + c.restartCount, 0);
    const seenMs = this.firstSeenMs.get(uid);
    if (row.phase === "Running" && typeof seenMs === "number") {
      this.firstSeenMs.set(uid, "started");
      this.onPodStarted?.((Date.now() - seenMs) / 1000);
    }
    this.scheduleWrite();
  }

  snapshot(): PodTableSnapshot {
    // Code-unit order, not localeCompare: the same on every machine, and no ICU collation data
    // paged in (about 3 MiB of the Node.js binary's resident pages).
    const key = (p: { namespace: string; name: string }) => `${p.namespace}/${p.name}`;
    const pods = [...this.rows.values()].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    return { writtenAtMs: Date.now(), nodeName: this.nodeName, pods, problems: this.problems };
  }

  private scheduleWrite(): void {
    if (!this.stateFile || this.writeTimer) return;
    this.writeTimer = setTimeout(() => {
      this.writeTimer = undefined;
      this.writeNow();
    }, 200);
  }

  writeNow(): void {
    if (!this.stateFile) return;
    const tmp = `${this.stateFile}.tmp`;
    fs.mkdirSync(path.dirname(this.stateFile), { recursive: true });
    fs.writeFileSync(tmp, JSON.stringify(this.snapshot(), null, 2));
    fs.renameSync(tmp, this.stateFile); // atomic: a reader never sees half a file
  }

  stop(): void {
    clearTimeout(this.writeTimer);
    this.writeTimer = undefined;
  }
}

/** The `nanolet pods` table, kubectl-style. */
export function formatPodTable(snapshot: PodTableSnapshot): string {
  const header = ["NAMESPACE", "NAME", "PHASE", "RESTARTS", "CONTAINERS"];
  const rows = snapshot.pods.map((p) => [
    printable(p.namespace, 253),
    printable(p.name, 253),
    p.reason ? `${p.phase}(${p.reason})` : p.phase,
    String(p.restarts),
    p.containers.map((c) => `${c.name}:${c.state}${c.reason ? `(${c.reason})` : ""}`).join(",") || "-",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join("   ");
  let out = [line(header), ...rows.map(line)].join("\n") + "\n";
  for (const problem of snapshot.problems) {
    out += printable(`refused: ${problem.origin}: ${problem.field ? problem.field + ": " : ""}${problem.message}`, 4096) + "\n";
  }
  return out;
}
