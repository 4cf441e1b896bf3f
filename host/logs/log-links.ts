// The links log shippers read (fluent-bit, promtail, vector are configured for them):
// `/var/log/containers/<pod>_<namespace>_<container>-<container id>.log`, each pointing at the
// container's log under /var/log/pods, made once the container started and removed with it, as
// the kubelet makes them. Links left dangling (their log gone with a container removed while no
// agent ran) are swept with the container garbage collection.
import fs from "node:fs";
import path from "node:path";
import type { Logger } from "../common/log.js";

/** Where the kubelet keeps the links (upstream has no flag for it). */
export const CONTAINER_LOG_LINKS_DIR = "/var/log/containers";
const SUFFIX = ".log";
/** ext4's longest file name; upstream cuts the name (before the suffix) to fit. */
const MAX_FILE_NAME_BYTES = 255;
/** A container ID shorter than this cannot name a container (upstream's check). */
const MIN_CONTAINER_ID_LENGTH = 6;

/** The link's file name: `<pod>_<namespace>_<container>-<id>.log`, cut to fit a file name. */
export function logLinkName(podName: string, podNamespace: string, containerName: string, containerId: string): string {
  const stem = `${podName}_${podNamespace}_${containerName}-${containerId}`;
  return stem.slice(0, MAX_FILE_NAME_BYTES - SUFFIX.length) + SUFFIX;
}

/** The container ID a link's name ends with, or undefined when the name carries none. */
export function containerIdOfLink(name: string): string | undefined {
  if (!name.endsWith(SUFFIX)) return undefined;
  const id = name.slice(name.lastIndexOf("-") + 1, -SUFFIX.length);
  return id.length >= MIN_CONTAINER_ID_LENGTH && /^[0-9a-zA-Z]+$/.test(id) ? id : undefined;
}

export interface ContainerNames {
  podName: string;
  podNamespace: string;
  containerName: string;
  containerId: string;
}

export class ContainerLogLinks {
  constructor(
    private log: Logger,
    private dir = CONTAINER_LOG_LINKS_DIR,
  ) {}

  /** Links the started container's log, when the log exists (a link to nothing helps no one). */
  link(names: ContainerNames, logPath: string): void {
    const name = logLinkName(names.podName, names.podNamespace, names.containerName, names.containerId);
    if (name.includes("/") || name.startsWith(".")) return; // names are validated; this stays out of other directories regardless
    const link = path.join(this.dir, name);
    try {
      fs.lstatSync(logPath);
    } catch {
      return;
    }
    try {
      fs.mkdirSync(this.dir, { recursive: true, mode: 0o755 });
      // Made aside and renamed over: a link of the same name (an earlier agent's) is replaced whole.
      // (A short name: the link's own may already be the longest a file name can be.)
      const fresh = path.join(this.dir, `.nanolet-link-${process.pid}.tmp`);
      fs.rmSync(fresh, { force: true });
      fs.symlinkSync(logPath, fresh);
      fs.renameSync(fresh, link);
    } catch (error) {
      this.log.log("warn", "Failed to create the container's log link", { pod: `${names.podNamespace}/${names.podName}`, container: names.containerName, link, error: (error as Error).message });
    }
  }

  /** Removes the link of a container being removed (none there is fine). */
  unlink(names: ContainerNames): void {
    const name = logLinkName(names.podName, names.podNamespace, names.containerName, names.containerId);
    if (name.includes("/") || name.startsWith(".")) return;
    try {
      fs.unlinkSync(path.join(this.dir, name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
        this.log.log("warn", "Failed to remove the container's log link", { pod: `${names.podNamespace}/${names.podName}`, container: names.containerName, error: (error as Error).message });
      }
    }
  }

  /**
   * Removes links whose log is gone, unless the runtime still runs their container (`running`:
   * the IDs the last relist saw running). Returns how many went.
   */
  sweepDangling(running: ReadonlySet<string>): number {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return 0;
    }
    let removed = 0;
    for (const name of names) {
      if (!name.endsWith(SUFFIX)) continue;
      const link = path.join(this.dir, name);
      let dangling = false;
      try {
        if (!fs.lstatSync(link).isSymbolicLink()) continue; // only links are ours to sweep
        fs.statSync(link);
      } catch {
        dangling = true;
      }
      if (!dangling) continue;
      const id = containerIdOfLink(name);
      if (id !== undefined && running.has(id)) continue;
      try {
        fs.unlinkSync(link);
        removed++;
      } catch {
        // gone meanwhile, or not ours to remove: the next sweep looks again
      }
    }
    return removed;
  }
}
