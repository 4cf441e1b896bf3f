// subPath mounts without a check-then-use race (the CVE-2017-1002101 / CVE-2021-25741 class).
// A container can swap any entry of its volume between a directory and a symlink at any moment,
// so a path that was checked is not a path that may be handed to the runtime: runc would follow
// whatever is there when it mounts. Instead every component is opened one at a time below a
// directory already held open, refusing symlinks (O_NOFOLLOW), and the runtime is handed a bind
// mount of the opened file descriptor at a private path under the pod's directory
// (`<pod>/volume-subpaths/<volume>/<container>/<index>`, upstream's layout). Missing directories
// are made the same way, one `mkdir` per component below an opened parent (upstream's
// doSafeMakeDir), so a symlink can never make the agent create anything outside the volume.
//
// Node.js has no openat(2); `/proc/self/fd/<fd>/<name>` is its equivalent: the kernel resolves
// the fd's magic link to the directory that was opened and looks `<name>` up in it, and
// O_NOFOLLOW applies to `<name>`. Only a single component is ever appended to an opened fd.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { mountsUnder } from "./mounts.js";

/** O_PATH (Linux, the same value on x86_64 and arm64): a handle, no read; a fifo cannot block it. */
const O_PATH = 0o10000000;
const { O_NOFOLLOW, O_DIRECTORY } = fs.constants;

export const SUBPATHS_DIR = "volume-subpaths";

/** A subPath could not be opened or made inside its volume; `detail` is for the log, not the pod. */
export class SubPathError extends Error {
  constructor(readonly detail: string) {
    super(detail);
    this.name = "SubPathError";
  }
}

function within(child: string, base: string): boolean {
  return child === base || child.startsWith(base.endsWith("/") ? base : base + "/");
}

/** realpath(3), once; a path that changes under it is an error of the subPath, not of the agent. */
function resolve(p: string): string {
  try {
    return fs.realpathSync.native(p);
  } catch (error) {
    throw new SubPathError(`error resolving symlinks in ${p}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

function fdPath(fd: number, name?: string): string {
  return name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;
}

/** Opens `name` below the opened directory `parentFd` without following it; throws on a symlink. */
function openComponent(parentFd: number, name: string, shown: string): number {
  let fd: number;
  try {
    fd = fs.openSync(fdPath(parentFd, name), O_PATH | O_NOFOLLOW);
  } catch (error) {
    throw new SubPathError(`cannot open ${shown}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (fs.fstatSync(fd).isSymbolicLink()) {
    fs.closeSync(fd);
    throw new SubPathError(`unexpected symlink found ${shown}`);
  }
  return fd;
}

/** Opens the directory `base` itself, which must not be a symlink (it was resolved by the caller). */
function openBase(base: string): number {
  try {
    return fs.openSync(base, O_PATH | O_NOFOLLOW | O_DIRECTORY);
  } catch (error) {
    throw new SubPathError(`cannot open directory ${base}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/**
 * Opens `relative` (components without symlinks) below `base`, one component at a time; returns
 * an O_PATH descriptor of what is there. Any symlink on the way, even one swapped in a moment
 * after the path was resolved, is refused.
 */
export function safeOpen(base: string, relative: string): number {
  let fd = openBase(base);
  let shown = base;
  for (const segment of relative.split("/").filter((s) => s !== "" && s !== ".")) {
    if (segment === "..") {
      fs.closeSync(fd);
      throw new SubPathError(`path ${path.join(shown, segment)} is outside of allowed base ${base}`);
    }
    shown = path.join(shown, segment);
    try {
      const child = openComponent(fd, segment, shown);
      fs.closeSync(fd);
      fd = child;
    } catch (error) {
      fs.closeSync(fd);
      throw error;
    }
  }
  return fd;
}

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
  if (!within(existing, base)) throw new SubPathError(`path ${existing} is outside of allowed base ${base}`);
  let fd = safeOpen(base, path.relative(base, existing));
  let shown = existing;
  try {
    for (const segment of segments.slice(have)) {
      shown = path.join(shown, segment);
      try {
        fs.mkdirSync(fdPath(fd, segment), mode);
      } catch (error) {
        throw new SubPathError(`cannot create directory ${shown}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      }
      const child = openComponent(fd, segment, shown);
      fs.closeSync(fd);
      fd = child;
      if (!fs.fstatSync(fd).isDirectory()) throw new SubPathError(`${shown} is not a directory`);
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
  if (!within(resolved, base)) throw new SubPathError(`subpath ${JSON.stringify(resolved)} not within volume path ${JSON.stringify(base)}`);
  const fd = safeOpen(base, path.relative(base, resolved));
  try {
    const opened = fs.fstatSync(fd);
    const target = path.join(request.podDir, SUBPATHS_DIR, request.volumeName, request.containerName, String(request.mountIndex));
    if (mountsUnder(target).includes(target)) {
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
      throw new SubPathError(`error mounting ${resolved}: ${stderr || (error as Error).message}`);
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
  if (mountsUnder(dir).length > 0) throw new SubPathError(`subPath mounts are still mounted under ${dir}`);
  fs.rmSync(dir, { recursive: true, force: true });
}
