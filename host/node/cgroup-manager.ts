// The kubelet's cgroup manager for the cgroupfs driver: the QoS tree (`kubepods`,
// `kubepods/burstable`, `kubepods/besteffort`) and each pod's `pod<uid>` cgroup, created with the
// core's values before the sandbox and rewritten on an in-place resize. cgroup v1 (one hierarchy
// per controller, this machine's hybrid layout) and v2 (one unified tree) are both handled.
import fs from "node:fs";
import path from "node:path";
import { pathUnder } from "../common/safe-path.js";
import type { LinuxResources } from "../core/types.js";

/** Controllers the pod tree is made in, and values written to (cgroup v1). */
const V1_CONTROLLERS = ["cpu", "memory", "pids"];
const V2_CONTROLLERS = "+cpu +memory +pids";
/** cgroup v1 spells "no limit" -1; v2 spells it "max". */
const V1_UNLIMITED = "-1";
const V2_UNLIMITED = "max";
/** BestEffort pods share the least CPU weight there is (upstream MinShares). */
const BESTEFFORT_SHARES = 2;

export type CgroupVersion = 1 | 2;

export function cgroupVersion(root = "/sys/fs/cgroup"): CgroupVersion {
  return fs.existsSync(path.join(root, "cgroup.controllers")) ? 2 : 1;
}

/** The directories of one cgroup path: one per v1 controller, or the v2 one. */
export function cgroupDirs(cgroupPath: string, root = "/sys/fs/cgroup", version = cgroupVersion(root)): Map<string, string> {
  const relative = cgroupPath.replace(/^\/+/, "");
  // `relative` is a cgroup parent the core made from a pod uid: it must stay under the kubepods tree.
  if (version === 2) return new Map([["unified", pathUnder(root, relative)]]);
  return new Map(V1_CONTROLLERS.map((c) => [c, pathUnder(path.join(root, c), relative)]));
}

function write(file: string, value: string): void {
  fs.writeFileSync(file, value);
}

export class CgroupManager {
  readonly version: CgroupVersion;

  private podsLimitsWritten = false;

  /**
   * `podsLimits`: what `kubepods` may use when enforceNodeAllocatable has `pods` (capacity less
   * systemReserved and kubeReserved); none: no limit written.
   */
  constructor(readonly root = "/sys/fs/cgroup", private podsLimits?: { memoryBytes: number; cpuMilli: number }) {
    this.version = cgroupVersion(root);
  }

  /** Creates `kubepods` and its two QoS children (idempotent); BestEffort gets 2 shares. */
  ensureQosTree(): void {
    for (const qos of ["/kubepods", "/kubepods/burstable", "/kubepods/besteffort"]) this.ensure(qos);
    if (this.podsLimits && !this.podsLimitsWritten) this.writePodsLimits(this.podsLimits);
    const besteffort = cgroupDirs("/kubepods/besteffort", this.root, this.version);
    if (this.version === 1) write(path.join(besteffort.get("cpu")!, "cpu.shares"), String(BESTEFFORT_SHARES));
    else write(path.join(besteffort.get("unified")!, "cpu.weight"), "1");
  }

  /** Node allocatable on `kubepods`, as upstream's enforcement of `pods`: a memory limit and cpu shares, no quota. */
  private writePodsLimits(limits: { memoryBytes: number; cpuMilli: number }): void {
    const dirs = cgroupDirs("/kubepods", this.root, this.version);
    // MilliCPUToShares: 1024 per CPU, at least 2.
    const shares = Math.max(2, Math.floor((limits.cpuMilli * 1024) / 1000));
    if (this.version === 1) {
      write(path.join(dirs.get("memory")!, "memory.limit_in_bytes"), String(limits.memoryBytes));
      write(path.join(dirs.get("cpu")!, "cpu.shares"), String(shares));
    } else {
      const dir = dirs.get("unified")!;
      write(path.join(dir, "memory.max"), String(limits.memoryBytes));
      // The shares-to-weight conversion the runtimes use for cgroup v2.
      write(path.join(dir, "cpu.weight"), String(1 + Math.floor(((shares - 2) * 9999) / 262142)));
    }
    this.podsLimitsWritten = true;
  }

  /** Makes the cgroup directories of `cgroupPath` (and parents), controllers enabled on v2. */
  private ensure(cgroupPath: string): void {
    for (const dir of cgroupDirs(cgroupPath, this.root, this.version).values()) {
      if (this.version === 2) this.enableControllersDownTo(dir);
      fs.mkdirSync(dir, { recursive: true });
    }
  }

  /** v2: a child only gets cpu/memory/pids files if every ancestor delegates them. */
  private enableControllersDownTo(dir: string): void {
    const parts = path.relative(this.root, dir).split(path.sep);
    let current = this.root;
    for (const part of parts) {
      try {
        write(path.join(current, "cgroup.subtree_control"), V2_CONTROLLERS);
      } catch {
        // A parent with processes of its own cannot delegate (the "no internal processes"
        // rule): the values are then not enforced at this level, as on a busy root.
      }
      current = path.join(current, part);
      if (!fs.existsSync(current)) fs.mkdirSync(current);
    }
  }

  /** Creates the pod's cgroup under its QoS parent and writes the pod's values. */
  ensurePod(cgroupParent: string, resources: LinuxResources): void {
    this.ensureQosTree();
    this.ensure(cgroupParent);
    this.update(cgroupParent, resources);
  }

  /** Writes the values into the pod's existing cgroup (an in-place resize). */
  update(cgroupParent: string, r: LinuxResources): void {
    const dirs = cgroupDirs(cgroupParent, this.root, this.version);
    const quota = r.cpuQuotaUs > 0n ? String(r.cpuQuotaUs) : undefined;
    const memory = r.memoryLimitBytes > 0n ? String(r.memoryLimitBytes) : undefined;
    if (this.version === 1) {
      const cpu = dirs.get("cpu")!;
      write(path.join(cpu, "cpu.shares"), String(r.cpuShares));
      write(path.join(cpu, "cpu.cfs_period_us"), String(r.cpuPeriodUs));
      write(path.join(cpu, "cpu.cfs_quota_us"), quota ?? V1_UNLIMITED);
      write(path.join(dirs.get("memory")!, "memory.limit_in_bytes"), memory ?? V1_UNLIMITED);
      return;
    }
    const dir = dirs.get("unified")!;
    write(path.join(dir, "cpu.weight"), String(r.cpuWeight));
    write(path.join(dir, "cpu.max"), `${quota ?? V2_UNLIMITED} ${r.cpuPeriodUs}`);
    write(path.join(dir, "memory.max"), memory ?? V2_UNLIMITED);
  }
}
