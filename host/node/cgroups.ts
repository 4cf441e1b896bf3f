// Pod-level cgroup directories. The runtime creates `/kubepods/<qos>/pod<uid>` (as the sandbox's
// cgroup parent) and removes the container directories below it, but not the pod's own: the
// agent removes those once the pod is gone, in every mounted hierarchy (cgroup v1 and v2).
import fs from "node:fs";
import path from "node:path";
import { pathUnder, safeComponent } from "../common/safe-path.js";

const QOS_DIRS = ["kubepods", "kubepods/burstable", "kubepods/besteffort"];

/** The directories that hold cgroup hierarchies: each v1 controller, or the v2 root. */
export function cgroupHierarchies(root = "/sys/fs/cgroup"): string[] {
  if (fs.existsSync(path.join(root, "cgroup.controllers"))) return [root]; // pure v2
  let names: string[] = [];
  try {
    names = fs.readdirSync(root);
  } catch {
    return [];
  }
  return names
    .map((n) => path.join(root, n))
    .filter((p) => {
      try {
        return fs.lstatSync(p).isDirectory(); // controllers mounted twice appear as symlinks
      } catch {
        return false;
      }
    });
}

/** Every existing pod cgroup directory of `podUid`. */
export function podCgroupDirs(podUid: string, root = "/sys/fs/cgroup"): string[] {
  const found: string[] = [];
  // A uid with a separator or `..` would name another cgroup: there is nothing of this pod there.
  if (!safeComponent(`pod${podUid}`) || podUid.includes("..")) return found;
  for (const hierarchy of cgroupHierarchies(root)) {
    for (const qos of QOS_DIRS) {
      const dir = pathUnder(hierarchy, qos, `pod${podUid}`);
      if (fs.existsSync(dir)) found.push(dir);
    }
  }
  return found;
}

/**
 * Removes the pod's cgroup directories (deepest first; a cgroup directory is removed with rmdir,
 * its control files go with it). Returns the directories that could not be removed.
 */
export function removePodCgroups(podUid: string, root = "/sys/fs/cgroup"): { dir: string; error: string }[] {
  const failures: { dir: string; error: string }[] = [];
  for (const dir of podCgroupDirs(podUid, root)) {
    let children: string[] = [];
    try {
      children = fs
        .readdirSync(dir, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => path.join(dir, d.name));
    } catch (error) {
      // Gone meanwhile (the runtime removed it) or unreadable: say so, try the directory itself.
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
      failures.push({ dir, error: (error as Error).message });
    }
    for (const child of [...children, dir]) {
      try {
        fs.rmdirSync(child);
      } catch (error) {
        failures.push({ dir: child, error: (error as Error).message });
      }
    }
  }
  return failures;
}
