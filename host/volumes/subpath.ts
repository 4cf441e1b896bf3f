// subPath mounts without a check-then-use race (the CVE-2017-1002101 / CVE-2021-25741 class).
// A container can swap any entry of its volume between a directory and a symlink at any moment,
// so a path that was checked is not a path that may be handed to the runtime: runc would follow
// whatever is there when it mounts. Instead every component is opened one at a time below a
// directory already held open, refusing symlinks (O_NOFOLLOW), and the runtime is handed a bind
// mount of the opened file descriptor at a private path under the pod's directory
// (`<pod>/volume-subpaths/<volume>/<container>/<index>`, upstream's layout). Missing directories
// are made the same way, one `mkdir` per component below an opened parent (upstream's
// doSafeMakeDir), so a symlink can never make the agent create anything outside the volume.
// (Opening without following links: host/files/safe-open.ts.)
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { isMountPoint, mountsUnder } from "./mounts.js";
import { UnsafePathError, fdPath, openComponent, resolveOnce as resolve, safeOpen, within } from "../files/safe-open.js";

/** A subPath could not be opened or made inside its volume; the message is for the log, not the pod. */
export { UnsafePathError as SubPathError } from "../files/safe-open.js";
export { safeOpen } from "../files/safe-open.js";

export const SUBPATHS_DIR = "volume-subpaths";

/** The longest prefix of `segments` that exists below `base` (following links, as upstream). */
function existingPrefix(base: string, segments: string[]): number {
  for (let i = segments.length; i > 0; i--) {
    try {
      fs.statSync(path.join(base, ...segments.slice(0, i)));
      return i;
    } catch {
      // not there (or not reachable): try a shorter prefix
    }
  }
  return 0;
}

/**
 * Makes the directory `subPath` below the volume at `volumePath` with `mode`, creating each
 * missing component below an opened, symlink-free parent. What exists is resolved once and must
 * lie in the volume; nothing is created anywhere else. A path that exists already is left as it
 * is (the bind step checks it).
 */
export function safeMakeDir(volumePath: string, subPath: string, mode: number): void {
  const base = resolve(volumePath);
  const segments = subPath.split("/").filter((s) => s !== "" && s !== ".");
  const have = existingPrefix(base, segments);
  if (have === segments.length) return;
  const existing = resolve(path.join(base, ...segments.slice(0, have)));
  if (!within(existing, base)) throw new UnsafePathError(`path ${existing} is outside of allowed base ${base}`);
  let fd = safeOpen(base, path.relative(base, existing));
  let shown = existing;
  try {
    for (const segment of segments.slice(have)) {
      shown = path.join(shown, segment);
      try {
        fs.mkdirSync(fdPath(fd, segment), mode);
      } catch (error) {
        throw new UnsafePathError(`cannot create directory ${shown}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      }
      const child = openComponent(fd, segment, shown);
      fs.closeSync(fd);
      fd = child;
      if (!fs.fstatSync(fd).isDirectory()) throw new UnsafePathError(`${shown} is not a directory`);
      // mkdir was narrowed by the umask; the container must get the volume's own mode.
      fs.chmodSync(fdPath(fd), mode);
    }
  } finally {
    fs.closeSync(fd);
  }
}

export interface SubPathMount {
  /** `<root-dir>/pods/<uid>`. */
  podDir: string;
  volumeName: string;
  containerName: string;
  /** The mount's index in the container's volumeMounts. */
  mountIndex: number;
  /** The volume's directory on the node. */
  volumePath: string;
  /** The subPath, already checked to be relative and without `..`. */
  subPath: string;
}

function sameFile(a: fs.Stats, b: fs.Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/**
 * Opens the subPath safely and bind-mounts the opened descriptor at the mount's private target;
 * returns the target, the path to give the runtime. A target already bound to the same file is
 * reused; one bound elsewhere is unmounted first.
 */
export function bindSubPath(request: SubPathMount): string {
  const base = resolve(request.volumePath);
  const resolved = resolve(path.join(base, request.subPath));
  if (!within(resolved, base)) throw new UnsafePathError(`subpath ${JSON.stringify(resolved)} not within volume path ${JSON.stringify(base)}`);
  const fd = safeOpen(base, path.relative(base, resolved));
  try {
    const opened = fs.fstatSync(fd);
    const target = path.join(request.podDir, SUBPATHS_DIR, request.volumeName, request.containerName, String(request.mountIndex));
    if (isMountPoint(target)) {
      if (sameFile(fs.statSync(target), opened)) return target;
      unmount(target);
    }
    fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o750 });
    // A file target serves every non-directory (a bind mount onto it takes the source's type).
    if (opened.isDirectory()) fs.mkdirSync(target, { recursive: true, mode: 0o750 });
    else if (!fs.existsSync(target)) fs.writeFileSync(target, "", { mode: 0o640 });
    try {
      execFileSync("mount", ["--no-canonicalize", "--bind", `/proc/${process.pid}/fd/${fd}`, target], { stdio: ["ignore", "ignore", "pipe"] });
    } catch (error) {
      const stderr = String((error as { stderr?: Buffer }).stderr ?? "").trim();
      throw new UnsafePathError(`error mounting ${resolved}: ${stderr || (error as Error).message}`);
    }
    return target;
  } finally {
    fs.closeSync(fd);
  }
}

function unmount(target: string): void {
  execFileSync("umount", [target], { stdio: ["ignore", "ignore", "pipe"] });
}

/**
 * Unmounts every subPath bind of the pod and removes `<pod>/volume-subpaths`. Must run before
 * anything under the pod directory is removed recursively: a removal that went through a bind
 * mount would delete the volume's (or the host's) files.
 */
export function cleanSubPaths(podDir: string): void {
  const dir = path.join(podDir, SUBPATHS_DIR);
  for (const m of mountsUnder(dir)) unmount(m);
  if (mountsUnder(dir).length > 0) throw new UnsafePathError(`subPath mounts are still mounted under ${dir}`);
  fs.rmSync(dir, { recursive: true, force: true });
}
