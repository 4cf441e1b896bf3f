// The kubelet's stats Summary (`/stats/summary`, stats.k8s.io/v1alpha1) and what
// `/metrics/resource` derives from it, read from cgroup files, /proc and statfs, never from CRI
// stats calls (ListPodSandboxStats takes seconds on containerd). CPU rates (usageNanoCores) come
// from the previous reading of the same cgroup, as cadvisor computes them.
import fs from "node:fs";
import path from "node:path";
import type { RuntimeSnapshot } from "../core/types.js";
import { podLogDirectory } from "../logs/log-paths.js";
import { CgroupVersion, cgroupVersion } from "./cgroup-manager.js";
import { nodeIo, nodeNetwork, nodeSwap } from "./node-extras.js";
import { directoryBytes, meminfoWorkingSetBytes, podCgroupPaths, readMeminfo, readProcessCounts, readText, statField } from "./stats.js";

/** Readings kept for rates: one per cgroup seen, bounded. */
const MAX_CPU_READINGS = 4096;

export interface CpuStats {
  time: string;
  usageNanoCores?: number;
  usageCoreNanoSeconds: number;
}

export interface MemoryStats {
  time: string;
  availableBytes?: number;
  usageBytes: number;
  workingSetBytes: number;
  rssBytes?: number;
  pageFaults?: number;
  majorPageFaults?: number;
}

export interface FsStats {
  time: string;
  availableBytes?: number;
  capacityBytes?: number;
  usedBytes: number;
  inodesFree?: number;
  inodes?: number;
  inodesUsed?: number;
}

export interface SummaryOptions {
  cgroupRoot: string;
  nodeName: string;
  podLogsDir: string;
  nodefsPath: string;
  imagefsPath: string;
  procRoot?: string;
  /** /sys, replaceable in tests (network interfaces). */
  sysRoot?: string;
}

/** Bytes of each entry of `dir` (a directory's whole tree, a file's size). */
function entryBytes(dir: string): Map<string, number> {
  const out = new Map<string, number>();
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.set(e.name, directoryBytes(p));
    else if (e.isFile()) {
      try {
        out.set(e.name, fs.statSync(p).size);
      } catch {
        // removed meanwhile
      }
    }
  }
  return out;
}

export class SummaryProvider {
  private version: CgroupVersion;
  private procRoot: string;
  private cpuReadings = new Map<string, { ns: number; atMs: number }>();
  private startTime: string;

  constructor(private options: SummaryOptions) {
    this.version = cgroupVersion(options.cgroupRoot);
    this.procRoot = options.procRoot ?? "/proc";
    const btime = /(?:^|\n)btime (\d+)/.exec(readText(path.join(this.procRoot, "stat")) ?? "");
    this.startTime = new Date(btime ? Number(btime[1]) * 1000 : 0).toISOString();
  }

  private dir(controller: string, relative: string): string {
    return this.version === 1 ? path.join(this.options.cgroupRoot, controller, relative) : path.join(this.options.cgroupRoot, relative);
  }

  /** Cumulative CPU time of a cgroup in ns ("" is the root), and its rate since the last reading. */
  cpu(relative: string, nowMs: number): CpuStats | undefined {
    let ns: number | undefined;
    if (this.version === 1) {
      const t = readText(path.join(this.dir("cpuacct", relative), "cpuacct.usage"));
      ns = t === undefined ? undefined : Number(t.trim());
    } else if (relative === "") {
      // The v2 root has no cpu.stat: /proc/stat's busy time (USER_HZ ticks, 100 per second).
      const line = (readText(path.join(this.procRoot, "stat")) ?? "").split("\n")[0];
      const f = line.split(/\s+/).slice(1).map(Number);
      if (f.length >= 8) ns = (f[0] + f[1] + f[2] + f[5] + f[6] + f[7]) * 10_000_000;
    } else {
      const usec = statField(readText(path.join(this.dir("cpu", relative), "cpu.stat")) ?? "", "usage_usec");
      ns = usec === undefined ? undefined : usec * 1000;
    }
    if (ns === undefined || !Number.isFinite(ns)) return undefined;
    const before = this.cpuReadings.get(relative);
    if (!before && this.cpuReadings.size >= MAX_CPU_READINGS) this.cpuReadings.clear();
    this.cpuReadings.set(relative, { ns, atMs: nowMs });
    const stats: CpuStats = { time: new Date(nowMs).toISOString(), usageCoreNanoSeconds: ns };
    if (before && nowMs > before.atMs && ns >= before.ns) stats.usageNanoCores = Math.round(((ns - before.ns) / (nowMs - before.atMs)) * 1e6);
    return stats;
  }

  memory(relative: string, nowMs: number): MemoryStats | undefined {
    const dir = this.dir("memory", relative);
    const usage = Number((readText(path.join(dir, this.version === 1 ? "memory.usage_in_bytes" : "memory.current")) ?? "").trim() || NaN);
    if (!Number.isFinite(usage)) return undefined;
    const stat = readText(path.join(dir, "memory.stat")) ?? "";
    const v1 = this.version === 1;
    const inactive = statField(stat, v1 ? "total_inactive_file" : "inactive_file") ?? 0;
    return {
      time: new Date(nowMs).toISOString(),
      usageBytes: usage,
      workingSetBytes: Math.max(0, usage - inactive),
      rssBytes: statField(stat, v1 ? "total_rss" : "anon"),
      pageFaults: statField(stat, v1 ? "total_pgfault" : "pgfault"),
      majorPageFaults: statField(stat, v1 ? "total_pgmajfault" : "pgmajfault"),
    };
  }

  private filesystem(dir: string, nowMs: number): FsStats | undefined {
    try {
      const s = fs.statfsSync(dir);
      return {
        time: new Date(nowMs).toISOString(),
        availableBytes: s.bavail * s.bsize,
        capacityBytes: s.blocks * s.bsize,
        usedBytes: (s.blocks - s.bfree) * s.bsize,
        inodesFree: s.ffree,
        inodes: s.files,
        inodesUsed: s.files - s.ffree,
      };
    } catch {
      return undefined;
    }
  }

  private podCgroups(): Map<string, string> {
    return podCgroupPaths((relative) => this.dir("memory", relative));
  }

  /** The Summary for the pods of `snapshot` (the last relist): node first, then each pod. */
  summary(snapshot: RuntimeSnapshot | undefined, nowMs: number): Record<string, unknown> {
    const time = new Date(nowMs).toISOString();
    const meminfo = readMeminfo(this.procRoot);
    const nodeMemory = this.memory("", nowMs);
    const total = meminfo.get("MemTotal") ?? 0;
    // The root cgroup on v1; /proc/meminfo where there is none (v2), as the eviction signals.
    const ws = nodeMemory && this.version === 1 ? nodeMemory.workingSetBytes : meminfoWorkingSetBytes(meminfo);
    const memory = nodeMemory && this.version === 1
      ? { ...nodeMemory, availableBytes: Math.max(0, total - ws) }
      : { time, availableBytes: total - ws, usageBytes: total - (meminfo.get("MemFree") ?? 0), workingSetBytes: ws };
    const processes = readProcessCounts(this.procRoot);
    const nodefs = this.filesystem(this.options.nodefsPath, nowMs);
    const node = {
      nodeName: this.options.nodeName,
      systemContainers: [] as unknown[],
      startTime: this.startTime,
      cpu: this.cpu("", nowMs),
      memory,
      fs: nodefs,
      runtime: { imageFs: this.filesystem(this.options.imagefsPath, nowMs) },
      rlimit: { time, ...(processes ? { maxpid: processes.max, curproc: processes.current } : {}) },
      io: nodeIo(time, this.procRoot),
      network: nodeNetwork(time, this.options.sysRoot),
      swap: nodeSwap(time, meminfo),
    };
    const cgroups = this.podCgroups();
    const running = new Map<string, RuntimeSnapshot["containers"]>();
    for (const c of snapshot?.containers ?? []) {
      if (c.state !== "running") continue;
      const list = running.get(c.sandboxId);
      if (list) list.push(c);
      else running.set(c.sandboxId, [c]);
    }
    const pods: unknown[] = [];
    for (const sandbox of snapshot?.sandboxes ?? []) {
      if (sandbox.state !== "ready") continue;
      const relative = cgroups.get(sandbox.podUid);
      let logDir: string | undefined;
      try {
        logDir = podLogDirectory(this.options.podLogsDir, sandbox);
      } catch {
        logDir = undefined;
      }
      // One walk of the pod's log directory: each container's directory, and their sum for the pod.
      const logBytesByEntry = logDir ? entryBytes(logDir) : new Map<string, number>();
      const containers = (running.get(sandbox.id) ?? [])
        .map((c) => {
          const logBytes = logBytesByEntry.get(c.name) ?? 0;
          return {
            name: c.name,
            startTime: new Date(Number(c.startedAtNs / 1_000_000n)).toISOString(),
            cpu: relative ? this.cpu(`${relative}/${c.id}`, nowMs) : undefined,
            memory: relative ? this.memory(`${relative}/${c.id}`, nowMs) : undefined,
            logs: { ...(nodefs ?? { time }), usedBytes: logBytes },
          };
        });
      const logBytes = [...logBytesByEntry.values()].reduce((sum, n) => sum + n, 0);
      const processes = relative ? Number((readText(path.join(this.dir("pids", relative), "pids.current")) ?? "").trim()) : NaN;
      pods.push({
        podRef: { name: sandbox.podName, namespace: sandbox.podNamespace, uid: sandbox.podUid },
        startTime: new Date(Number(sandbox.createdAtNs / 1_000_000n)).toISOString(),
        containers,
        cpu: relative ? this.cpu(relative, nowMs) : undefined,
        memory: relative ? this.memory(relative, nowMs) : undefined,
        "ephemeral-storage": { ...(nodefs ?? { time }), usedBytes: logBytes },
        ...(Number.isFinite(processes) ? { process_stats: { process_count: processes } } : {}),
      });
    }
    return { node, pods };
  }
}
