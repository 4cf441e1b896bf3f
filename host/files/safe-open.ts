// Opening a path below a directory without letting anyone who can write in it redirect the open:
// each component is opened on its own below the directory opened before it, never following a
// symlink (O_NOFOLLOW), and what was opened (a descriptor) is what gets used: no path checked and
// then used again. Node.js has no openat(2); `/proc/self/fd/<fd>/<name>` is its equivalent: the
// kernel resolves the fd's magic link to the directory that was opened and looks `<name>` up in
// it, and O_NOFOLLOW applies to `<name>`. Only one component is ever appended to an opened fd.
import fs from "node:fs";
import path from "node:path";

/** O_PATH (Linux, the same value on x86_64 and arm64): a handle, no read; a fifo cannot block it. */
export const O_PATH = 0o10000000;
const { O_NOFOLLOW, O_DIRECTORY } = fs.constants;

/** A path that could not be opened safely; the message is for the log (it names host paths). */
export class UnsafePathError extends Error {
  constructor(readonly detail: string) {
    super(detail);
    this.name = "UnsafePathError";
  }
}

export function within(child: string, base: string): boolean {
  return child === base || child.startsWith(base.endsWith("/") ? base : base + "/");
}

/** realpath(3), once; a path that changes under it is an UnsafePathError, not the agent's. */
export function resolveOnce(p: string): string {
  try {
    return fs.realpathSync.native(p);
  } catch (error) {
    throw new UnsafePathError(`error resolving symlinks in ${p}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/** The path that names what `fd` holds (or `name` below it, for a directory). */
export function fdPath(fd: number, name?: string): string {
  return name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;
}

/** Opens `name` below the opened directory `parentFd` without following it; throws on a symlink. */
export function openComponent(parentFd: number, name: string, shown: string): number {
  let fd: number;
  try {
    fd = fs.openSync(fdPath(parentFd, name), O_PATH | O_NOFOLLOW);
  } catch (error) {
    throw new UnsafePathError(`cannot open ${shown}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (fs.fstatSync(fd).isSymbolicLink()) {
    fs.closeSync(fd);
    throw new UnsafePathError(`unexpected symlink found ${shown}`);
  }
  return fd;
}

/** Opens the directory `base` itself, which must not be a symlink (it was resolved by the caller). */
function openBase(base: string): number {
  try {
    return fs.openSync(base, O_PATH | O_NOFOLLOW | O_DIRECTORY);
  } catch (error) {
    throw new UnsafePathError(`cannot open directory ${base}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
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
      throw new UnsafePathError(`path ${path.join(shown, segment)} is outside of allowed base ${base}`);
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

export interface TreeLimits {
  /** Entries visited at most. */
  maxEntries: number;
  /** Directory levels below the root descended at most. */
  maxDepth: number;
}

/**
 * Visits every entry below the directory `root` (not the root itself), each through a descriptor
 * opened without following it: `visit` gets an O_PATH fd and its lstat. Symlinks are visited (to
 * be skipped or counted) but never followed, so an entry swapped for a link while the walk runs
 * cannot lead it out of the tree. Stops at the limits.
 */
export function walkTree(root: string, limits: TreeLimits, visit: (fd: number, stat: fs.Stats) => void): void {
  let seen = 0;
  const walk = (dirFd: number, depth: number): void => {
    let names: string[];
    try {
      names = fs.readdirSync(fdPath(dirFd));
    } catch {
      return; // gone or unreadable meanwhile
    }
    for (const name of names) {
      if (++seen > limits.maxEntries) return;
      let fd: number;
      try {
        fd = fs.openSync(fdPath(dirFd, name), O_PATH | O_NOFOLLOW);
      } catch {
        continue;
      }
      try {
        const stat = fs.fstatSync(fd);
        visit(fd, stat);
        if (stat.isDirectory() && depth < limits.maxDepth) walk(fd, depth + 1);
      } finally {
        fs.closeSync(fd);
      }
    }
  };
  const rootFd = fs.openSync(root, O_PATH | O_DIRECTORY);
  try {
    walk(rootFd, 1);
  } finally {
    fs.closeSync(rootFd);
  }
}
