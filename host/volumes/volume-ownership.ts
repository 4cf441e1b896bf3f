// What the volume manager does to the files of a volume that its pod can write: measure them
// (local storage eviction) and give them the pod's fsGroup. A container may rename, replace or
// link anything in its volume while this runs, so every entry is reached through a descriptor
// opened without following it (host/files/safe-open.ts), never through a path checked before.
import fs from "node:fs";
import { fdPath, walkTree } from "../files/safe-open.js";
import { isMountPoint } from "./mounts.js";

/** At most this many entries are counted when measuring a directory (a bound on one stats pass). */
const MAX_USAGE_ENTRIES = 1_000_000;
/** Directory levels a walk of a volume descends (a container can nest directories without end). */
const MAX_WALK_DEPTH = 256;

/**
 * Bytes a volume holds: a mount's used blocks, else the allocated blocks of what is under it,
 * walked without following links (a container may swap a directory for a link to `/` meanwhile).
 */
export function diskUsageBytes(dir: string): number {
  if (isMountPoint(dir)) {
    const st = fs.statfsSync(dir);
    return (st.blocks - st.bfree) * st.bsize;
  }
  let bytes = 0;
  walkTree(dir, { maxEntries: MAX_USAGE_ENTRIES, maxDepth: MAX_WALK_DEPTH }, (_fd, stat) => {
    bytes += stat.blocks * 512;
  });
  return bytes;
}

/** At most this many entries are walked to give a volume its fsGroup (a bound on one set-up). */
const MAX_OWNERSHIP_ENTRIES = 100_000;

/**
 * upstream SetVolumeOwnership for a writable volume: every file and directory gets the group and
 * group read-write (directories also setgid and group search). `OnRootMismatch` skips the walk
 * when the root already has the group and the mode. The volume is the pod's to change while this
 * runs: each entry is opened without following it and changed through what was opened, so an
 * entry swapped for a link to a host file never gives that file the pod's group.
 */
export function applyFsGroup(root: string, gid: number, policy: string): void {
  if (policy === "OnRootMismatch") {
    const st = fs.statSync(root);
    if (st.gid === gid && (st.mode & 0o2070) === 0o2070) return;
  }
  walkTree(root, { maxEntries: MAX_OWNERSHIP_ENTRIES, maxDepth: MAX_WALK_DEPTH }, (fd, stat) => {
    if (!stat.isFile() && !stat.isDirectory()) return; // links, devices, fifos, sockets: left alone
    fs.chownSync(fdPath(fd), -1, gid);
    fs.chmodSync(fdPath(fd), (stat.mode & 0o7777) | (stat.isDirectory() ? 0o2070 : 0o060));
  });
}
