// Every path nanolet builds from outside names (pod uids, namespaces, names, container names,
// cgroup parents) is checked to stay under the root it was meant for. The core refuses unsafe
// uids and names before they get here; this is the second lock, for whatever slips past it.
import path from "node:path";

export class PathEscapeError extends Error {
  constructor(
    readonly root: string,
    readonly relative: string,
  ) {
    super(`refusing a path outside ${root}: ${JSON.stringify(relative)}`);
    this.name = "PathEscapeError";
  }
}

/**
 * `root` joined with `parts`, which must stay strictly below `root` after `..` and `.` are
 * resolved (a leading `/` in a part means "under root", as cgroup parents are written).
 */
export function pathUnder(root: string, ...parts: string[]): string {
  const base = path.resolve(root);
  const relative = path.join(...parts.map((p) => p.replace(/^\/+/, "")));
  if (parts.some((p) => p.includes("\0"))) throw new PathEscapeError(base, relative);
  const joined = path.resolve(base, relative);
  if (joined === base || !joined.startsWith(base.endsWith(path.sep) ? base : base + path.sep)) throw new PathEscapeError(base, relative);
  return joined;
}

/** One path component made from a name: no separators, not `.` or `..`, not empty. */
export function safeComponent(name: string): boolean {
  return name.length > 0 && name !== "." && name !== ".." && !name.includes("/") && !name.includes("\0");
}
