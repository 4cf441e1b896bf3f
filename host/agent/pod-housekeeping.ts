// What is left of pods on the node's disk and in its stats: the pods a stats pass measures, a
// pod's own directory removed once everything of it is gone, directories of orphaned pods, and
// log links whose log is gone.
import type { Logger } from "../common/log.js";
import { pathUnder, safeComponent } from "../common/safe-path.js";
import type { RuntimeSnapshot } from "../core/types.js";
import type { StatsPod } from "../node/stats.js";
import type { VolumeManager } from "../volumes/volume-manager.js";
import { removeUnmountedTree } from "../volumes/mounts.js";
import { cleanSubPaths } from "../volumes/subpath.js";
import { podLogDirectory } from "../logs/log-paths.js";
import type { ContainerLogLinks } from "../logs/log-links.js";

/** Pod directories are checked for orphans at most this often (upstream housekeeping: 2 s). */
const ORPHAN_CLEANUP_INTERVAL_MS = 30_000;
/** Dangling log links are swept this often (upstream's container garbage collection: 1 min). */
const LOG_LINK_SWEEP_INTERVAL_MS = 60_000;

/** The running pods of a relist, with their log directories and running containers, for a stats pass. */
export function podsToMeasure(snapshot: RuntimeSnapshot, podLogsDir: string): StatsPod[] {
  const pods = new Map<string, StatsPod>();
  for (const s of snapshot.sandboxes) {
    if (s.state !== "ready" || pods.has(s.podUid)) continue;
    let logDir: string;
    try {
      logDir = podLogDirectory(podLogsDir, s);
    } catch {
      continue; // a sandbox whose names would lead outside the log directory: not ours to measure
    }
    pods.set(s.podUid, { uid: s.podUid, logDir, containers: [] });
  }
  for (const c of snapshot.containers) if (c.state === "running") pods.get(c.podUid)?.containers.push({ id: c.id, name: c.name });
  return [...pods.values()];
}

export class PodDirectories {
  private lastOrphanCleanupMs = 0;
  private lastLinkSweepMs = 0;

  constructor(
    /** `<root-dir>/pods`; without it there is nothing to remove. */
    private podsDir: string | undefined,
    private volumes: VolumeManager | undefined,
    private log: Logger,
    private logLinks?: ContainerLogLinks,
  ) {}

  /** Removes log links whose log is gone and whose container the relist does not show running. */
  sweepLogLinks(snapshot: RuntimeSnapshot, nowMs: number): void {
    if (!this.logLinks || nowMs - this.lastLinkSweepMs < LOG_LINK_SWEEP_INTERVAL_MS) return;
    this.lastLinkSweepMs = nowMs;
    const running = new Set(snapshot.containers.filter((c) => c.state === "running").map((c) => c.id));
    const removed = this.logLinks.sweepDangling(running);
    if (removed > 0) this.log.log("info", "Removed dangling container log links", { count: removed });
  }

  /** The pod's files under `<root-dir>/pods/<uid>`, once everything of it is gone. */
  remove(uid: string, pod: string | undefined): void {
    if (!this.podsDir || !safeComponent(uid)) return;
    try {
      const dir = pathUnder(this.podsDir, uid);
      cleanSubPaths(dir);
      removeUnmountedTree(dir);
    } catch (error) {
      this.log.log("warn", "Could not remove the pod directory", { pod, error: (error as Error).message });
    }
  }

  /**
   * Pod directories of pods neither desired nor in the runtime (upstream cleanupOrphanedPodDirs):
   * after an agent restart, a pod deleted meanwhile leaves its volumes mounted otherwise.
   */
  cleanupOrphans(snapshot: RuntimeSnapshot, desiredUids: Iterable<string>, nowMs: number): void {
    if (!this.volumes || nowMs - this.lastOrphanCleanupMs < ORPHAN_CLEANUP_INTERVAL_MS) return;
    this.lastOrphanCleanupMs = nowMs;
    const keep = new Set<string>(desiredUids);
    for (const s of snapshot.sandboxes) keep.add(s.podUid);
    for (const c of snapshot.containers) keep.add(c.podUid);
    for (const uid of this.volumes.cleanupOrphans(keep)) this.log.log("info", "Cleaned up the directory of an orphaned pod", { uid });
  }
}
