// The node's mount table as the volume manager needs it: is a path a mount point, mount a tmpfs
// (memory-backed emptyDir, secrets, projected tokens), unmount. Uses mount(8)/umount(8), which
// every node has; /proc/self/mountinfo tells what is mounted.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { readKernelText } from "../files/bounded-file.js";

/** The mount table read at most: 400,000 mounts of 160 bytes. */
const MOUNTINFO_BYTES = 64 * 1024 * 1024;

/**
 * Mount points of this mount namespace (fields 5 of /proc/self/mountinfo, unescaped). A table
 * that cannot be read throws: "nothing is mounted" would let a removal go through a mount.
 */
export function mountPoints(mountinfo = "/proc/self/mountinfo"): string[] {
  const text = readKernelText(mountinfo, MOUNTINFO_BYTES);
  const out: string[] = [];
  for (const line of text.split("\n")) {
    const fields = line.split(" ");
    if (fields.length > 4) out.push(fields[4].replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8))));
  }
  return out;
}

/**
 * `dir` as the mount table names it: with its symlinks resolved (a root directory reached through
 * a link, /var/lib -> /data/lib on many devices, is listed by where it really is).
 */
function asMounted(dir: string): string {
  const absolute = path.resolve(dir);
  try {
    return fs.realpathSync.native(absolute);
  } catch {
    return absolute;
  }
}

export function isMountPoint(dir: string): boolean {
  return mountPoints().includes(asMounted(dir));
}

/** Mount points at or under `dir`, deepest first (the order to unmount them in). */
export function mountsUnder(dir: string): string[] {
  const root = asMounted(dir);
  return mountPoints()
    .filter((m) => m === root || m.startsWith(root + "/"))
    .sort((a, b) => b.length - a.length);
}

/**
 * Whether tmpfs takes `noswap` (Linux 6.4 and later, as upstream decides it by the kernel's
 * version): a pod's memory-backed files, secrets among them, then never reach a swap device.
 */
export function tmpfsNoswapSupported(release = os.release()): boolean {
  const m = /^(\d+)\.(\d+)/.exec(release);
  if (!m) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > 6 || (major === 6 && minor >= 4);
}

/**
 * Mounts a tmpfs at `dir` (made if missing) unless one is there; `sizeBytes` 0: the kernel's
 * default. `noswap` where the kernel has it.
 */
export function mountTmpfs(dir: string, sizeBytes: number): void {
  fs.mkdirSync(dir, { recursive: true });
  if (isMountPoint(dir)) return;
  const options = [...(sizeBytes > 0 ? [`size=${Math.ceil(sizeBytes)}`] : []), ...(tmpfsNoswapSupported() ? ["noswap"] : [])];
  execFileSync("mount", ["-t", "tmpfs", ...(options.length > 0 ? ["-o", options.join(",")] : []), "tmpfs", dir], { stdio: ["ignore", "ignore", "pipe"] });
}

/** Unmounts everything at or under `dir`; throws with mount(8)'s words when one stays. */
export function unmountAll(dir: string): void {
  for (const m of mountsUnder(dir)) {
    try {
      execFileSync("umount", [m], { stdio: ["ignore", "ignore", "pipe"] });
    } catch (error) {
      const stderr = String((error as { stderr?: Buffer }).stderr ?? "").trim();
      throw new Error(`unmount of ${m} failed: ${stderr || (error as Error).message}`);
    }
  }
}

/**
 * Removes `dir` and everything in it, unless something is still mounted at or under it: a
 * recursive removal goes through mount points, and would delete what a bind mount (a subPath, a
 * hostPath) or a tmpfs shows there.
 */
export function removeUnmountedTree(dir: string): void {
  const left = mountsUnder(dir);
  if (left.length > 0) throw new Error(`refusing to remove ${dir}: ${left.length} mount(s) still under it (${left[0]})`);
  fs.rmSync(dir, { recursive: true, force: true });
}
