// One stats pass of the node, read from the kernel rather than from CRI stats calls (those take
// seconds at 100 pods): the eviction signals (memory working set as the kubelet computes it:
// usage minus inactive file pages; statfs of the node and image filesystems; process IDs) and
// each pod's memory working set, processes and log bytes from its cgroup and its files.
import fs from "node:fs";
import { readKernelText } from "../files/bounded-file.js";
import path from "node:path";
import type { NodeStats, PodUsage, SignalObservation } from "../core/types.js";
import { CgroupVersion, cgroupVersion } from "./cgroup-manager.js";

export interface StatsPod {
  uid: string;
  /** Pod log directory (`<namespace>_<name>_<uid>` under the pod logs dir). */
  logDir: string;
  containers: { id: string; name: string }[];
}

export interface StatsOptions {
  cgroupRoot?: string;
  /** Filesystem of the agent's root directory (nodefs). */
  nodefsPath: string;
  /** Filesystem of the runtime's image store (imagefs); the nodefs path if the same. */
  imagefsPath: string;
  /** Memory pods may use (allocatable), for allocatableMemory.available. */
  allocatableMemoryBytes: number;
  /** /proc, replaceable in tests. */
  procRoot?: string;
}

const QOS_DIRS = ["kubepods", "kubepods/burstable", "kubepods/besteffort"];

/** A cgroup or /proc statistics file is a few lines; a list of processes a few thousand. */
const STATS_FILE_BYTES = 4 * 1024 * 1024;

export function readText(file: string): string | undefined {
  try {
    return readKernelText(file, STATS_FILE_BYTES);
  } catch {
    return undefined;
  }
}

function readNumber(file: string): number | undefined {
  const text = readText(file);
  if (text === undefined) return undefined;
  const n = Number(text.trim());
  return Number.isFinite(n) ? n : undefined;
}

/** A value of a `key value` file (memory.stat); undefined when absent. */
export function statField(text: string, key: string): number | undefined {
  const m = new RegExp(`(?:^|\n)${key} (\\d+)`).exec(text);
  return m ? Number(m[1]) : undefined;
}

/** A value of a `key value` file (memory.stat); 0 when absent. */
function statValue(text: string, key: string): number {
  return statField(text, key) ?? 0;
}

/** The node's working set from /proc/meminfo: total less free and inactive file pages. */
export function meminfoWorkingSetBytes(meminfo: Map<string, number>): number {
  const total = meminfo.get("MemTotal") ?? 0;
  return Math.max(0, total - (meminfo.get("MemFree") ?? 0) - (meminfo.get("Inactive(file)") ?? 0));
}

/** pid_max and the tasks running now (/proc/loadavg's total, as sysinfo's); undefined if unreadable. */
export function readProcessCounts(procRoot = "/proc"): { max: number; current: number } | undefined {
  const max = readNumber(path.join(procRoot, "sys/kernel/pid_max"));
  const loadavg = readText(path.join(procRoot, "loadavg"));
  const current = loadavg ? Number(loadavg.split(" ")[3]?.split("/")[1]) : NaN;
  return max === undefined || !Number.isFinite(current) ? undefined : { max, current };
}

/** Bytes under a directory (a pod's logs), without following links, at most `maxDepth` down. */
export function directoryBytes(dir: string, maxDepth = 8): number {
  let total = 0;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += maxDepth > 0 ? directoryBytes(p, maxDepth - 1) : 0;
    else if (e.isFile()) {
      try {
        total += fs.statSync(p).size;
      } catch {
        // removed meanwhile
      }
    }
  }
  return total;
}

/** Where each pod's cgroup is, given where a relative cgroup path lies: uid to `kubepods/<qos>/pod<uid>`. */
export function podCgroupPaths(memoryDirOf: (relative: string) => string): Map<string, string> {
  const out = new Map<string, string>();
  for (const qos of QOS_DIRS) {
    let names: string[] = [];
    try {
      names = fs.readdirSync(memoryDirOf(qos));
    } catch {
      continue;
    }
    for (const name of names) if (name.startsWith("pod")) out.set(name.slice(3), `${qos}/${name}`);
  }
  return out;
}

/** /proc/meminfo in bytes by field name. */
export function readMeminfo(procRoot = "/proc"): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of (readText(path.join(procRoot, "meminfo")) ?? "").split("\n")) {
    const m = /^([^:]+):\s+(\d+)(?: kB)?/.exec(line);
    if (m) out.set(m[1], Number(m[2]) * (line.endsWith("kB") ? 1024 : 1));
  }
  return out;
}

export class StatsCollector {
  private root: string;
  private version: CgroupVersion;
  private procRoot: string;

  constructor(private options: StatsOptions) {
    this.root = options.cgroupRoot ?? "/sys/fs/cgroup";
    this.version = cgroupVersion(this.root);
    this.procRoot = options.procRoot ?? "/proc";
  }

  private memoryDir(relative: string): string {
    return this.version === 1 ? path.join(this.root, "memory", relative) : path.join(this.root, relative);
  }

  private pidsDir(relative: string): string {
    return this.version === 1 ? path.join(this.root, "pids", relative) : path.join(this.root, relative);
  }

  /** Usage minus inactive file pages of a cgroup (cadvisor's working set); undefined if absent. */
  workingSetBytes(relative: string): number | undefined {
    const dir = this.memoryDir(relative);
    const usage = readNumber(path.join(dir, this.version === 1 ? "memory.usage_in_bytes" : "memory.current"));
    if (usage === undefined) return undefined;
    const stat = readText(path.join(dir, "memory.stat")) ?? "";
    const inactive = statValue(stat, this.version === 1 ? "total_inactive_file" : "inactive_file");
    return Math.max(0, usage - inactive);
  }

  /** The node's working set: the root cgroup's on v1; from /proc/meminfo on v2 (no root files). */
  private nodeWorkingSetBytes(meminfo: Map<string, number>): number {
    if (this.version === 1) {
      const ws = this.workingSetBytes("");
      if (ws !== undefined) return ws;
    }
    return meminfoWorkingSetBytes(meminfo);
  }

  /** Where each pod's cgroup is, relative to a hierarchy root: `kubepods/<qos>/pod<uid>`. */
  private podCgroups(): Map<string, string> {
    return podCgroupPaths((relative) => this.memoryDir(relative));
  }

  private filesystem(signalPrefix: string, dir: string): SignalObservation[] {
    try {
      const s = fs.statfsSync(dir);
      return [
        { signal: `${signalPrefix}.available`, available: BigInt(s.bavail * s.bsize), capacity: BigInt(s.blocks * s.bsize) },
        { signal: `${signalPrefix}.inodesFree`, available: BigInt(s.ffree), capacity: BigInt(s.files) },
      ];
    } catch {
      return [];
    }
  }

  /** pid.available: pid_max less the tasks running now (/proc/loadavg's total, as sysinfo's). */
  private pids(): SignalObservation[] {
    const p = readProcessCounts(this.procRoot);
    if (!p) return [];
    return [{ signal: "pid.available", available: BigInt(p.max - p.current), capacity: BigInt(p.max) }];
  }

  collect(pods: StatsPod[]): NodeStats {
    const meminfo = readMeminfo(this.procRoot);
    const capacity = meminfo.get("MemTotal") ?? 0;
    const signals: SignalObservation[] = [
      { signal: "memory.available", available: BigInt(capacity - this.nodeWorkingSetBytes(meminfo)), capacity: BigInt(capacity) },
    ];
    const podsWorkingSet = this.workingSetBytes("kubepods");
    if (podsWorkingSet !== undefined && this.options.allocatableMemoryBytes > 0) {
      const allocatable = this.options.allocatableMemoryBytes;
      signals.push({ signal: "allocatableMemory.available", available: BigInt(allocatable - podsWorkingSet), capacity: BigInt(allocatable) });
    }
    signals.push(...this.filesystem("nodefs", this.options.nodefsPath));
    signals.push(...this.filesystem("imagefs", this.options.imagefsPath));
    signals.push(...this.pids());

    const cgroups = this.podCgroups();
    const usage: PodUsage[] = [];
    for (const pod of pods) {
      const relative = cgroups.get(pod.uid);
      if (!relative) continue; // no cgroup, no stats: ranked first, as upstream ranks pods without stats
      const workingSet = this.workingSetBytes(relative);
      if (workingSet === undefined) continue;
      const processes = readNumber(path.join(this.pidsDir(relative), "pids.current")) ?? 0;
      usage.push({
        uid: pod.uid,
        memoryWorkingSetBytes: BigInt(workingSet),
        ephemeralStorageBytes: BigInt(directoryBytes(pod.logDir)),
        processCount: BigInt(processes),
        containers: pod.containers.flatMap((c) => {
          const ws = this.workingSetBytes(`${relative}/${c.id}`);
          return ws === undefined ? [] : [{ name: c.name, memoryWorkingSetBytes: BigInt(ws) }];
        }),
      });
    }
    return { signals, pods: usage, volumes: [] };
  }
}
