// Finding and reading manifest files without trusting the directory: symlinks are followed by
// hand with a bound and loops refused, anything but a regular file is named and skipped, a file is
// opened without blocking (a fifo renamed into place cannot hang the agent) and read to its limit.
import fs from "node:fs";
import path from "node:path";
import { MAX_MANIFEST_BYTES, MAX_SYMLINK_HOPS } from "./limits.js";

export type ResolvedEntry =
  | { kind: "file"; target: string }
  | { kind: "skip" }
  | { kind: "problem"; message: string; code?: string };

function errorText(error: unknown): { message: string; code?: string } {
  const e = error as NodeJS.ErrnoException;
  return { message: e.code ? `${e.code}: ${e.message.replace(/^[A-Z]+: /, "")}` : String(e?.message ?? e), code: e.code };
}

/** What a directory entry leads to: a regular file to read, something to skip, or a problem. */
export function resolveEntry(entryPath: string): ResolvedEntry {
  const seen = new Set<string>();
  let current = entryPath;
  for (let hops = 0; ; hops++) {
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(current);
    } catch (error) {
      const { message, code } = errorText(error);
      if (code === "ENOENT" && hops > 0) return { kind: "problem", message: `a symlink to a missing file (${current})`, code };
      return { kind: "problem", message: `cannot read: ${message}`, code };
    }
    if (stat.isFile()) return { kind: "file", target: current };
    // Upstream does not recurse into directories either; editors and tools leave them around.
    if (stat.isDirectory()) return { kind: "skip" };
    if (!stat.isSymbolicLink()) {
      const what = stat.isFIFO() ? "a fifo" : stat.isSocket() ? "a socket" : stat.isCharacterDevice() || stat.isBlockDevice() ? "a device" : "not a regular file";
      return { kind: "problem", message: `not a manifest: ${what}; only regular files (or symlinks to them) are read` };
    }
    if (seen.has(current)) return { kind: "problem", message: `a symlink loop (${[...seen].join(" -> ")} -> ${current})` };
    seen.add(current);
    if (hops >= MAX_SYMLINK_HOPS) return { kind: "problem", message: `more than ${MAX_SYMLINK_HOPS} symlinks to follow` };
    let link: string;
    try {
      link = fs.readlinkSync(current);
    } catch (error) {
      return { kind: "problem", message: `cannot read symlink: ${errorText(error).message}` };
    }
    current = path.resolve(path.dirname(current), link);
  }
}

export type ReadResult =
  | { ok: true; bytes: Uint8Array; identity: string }
  | { ok: false; message: string; code?: string };

/**
 * Reads a regular file of at most MAX_MANIFEST_BYTES. `identity` (inode, size, change times)
 * tells whether the file changed since the last read without reading it.
 */
export function readManifestBytes(file: string): ReadResult {
  let fd: number;
  try {
    // O_NONBLOCK: if the file was swapped for a fifo since it was looked at, open does not wait.
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW);
  } catch (error) {
    return { ok: false, ...prefix(errorText(error)) };
  }
  try {
    const stat = fs.fstatSync(fd, { bigint: true });
    if (!stat.isFile()) return { ok: false, message: "not a manifest: not a regular file" };
    if (stat.size > BigInt(MAX_MANIFEST_BYTES)) {
      return { ok: false, message: `Too long: the file is ${stat.size} bytes; a manifest may have at most ${MAX_MANIFEST_BYTES}` };
    }
    // Read one byte past the size: a file that grows while it is read is read again next scan
    // (its last good pods are kept meanwhile), never cut short and parsed half.
    const size = Number(stat.size);
    const buffer = Buffer.alloc(size + 1);
    let length = 0;
    for (;;) {
      const n = fs.readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
      if (length > size) return { ok: false, message: "cannot read: the file changed while it was read", code: "ECHANGED" };
    }
    const identity = `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
    return { ok: true, bytes: new Uint8Array(buffer.buffer, buffer.byteOffset, length), identity };
  } catch (error) {
    return { ok: false, ...prefix(errorText(error)) };
  } finally {
    fs.closeSync(fd);
  }
}

function prefix(e: { message: string; code?: string }): { message: string; code?: string } {
  return { message: `cannot read: ${e.message}`, code: e.code };
}
