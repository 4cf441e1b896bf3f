// The kubelet's atomic writer for configMap, secret, downward API and projected volumes: every
// version of the files goes into a new hidden directory `..<time>`, then the symlink `..data` is
// swapped to it by a rename (atomic), and each top-level name is a symlink through `..data`. A
// reader opening `cfg/key` sees the old file or the new one, never half of an update, and files
// of one version are always seen together.
import { randomInt } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { descendingPathProblem } from "../sources/volume-fields.js";

export const DATA_DIR_NAME = "..data";
const DATA_DIR_TMP_NAME = "..data_tmp";

export interface PayloadFile {
  content: Buffer;
  /** File mode bits (0644 unless a mode says otherwise). */
  mode: number;
  /** The file's owner, when not root (a projected token of a pod that runs as one user). */
  uid?: number;
}

/** Relative path -> file. */
export type Payload = Map<string, PayloadFile>;

export interface Ownership {
  /** `fsGroup`: files and directories get this group and group read (and write unless read-only). */
  gid?: number;
  readOnly: boolean;
}

/** A path a payload may not use: absolute, with `..`, or hidden behind the writer's own names. */
export function payloadPathProblem(p: string): string | undefined {
  if (p === "") return "empty path";
  const problem = descendingPathProblem(p);
  if (problem) return problem;
  if (p.startsWith("..")) return "must not start with '..'";
  if (p.split("/").some((part) => part === "" || part === ".")) return "must not contain empty or '.' elements";
  return undefined;
}

function timestampName(nowMs: number): string {
  const d = new Date(nowMs);
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  return `..${d.getUTCFullYear()}_${pad(d.getUTCMonth() + 1)}_${pad(d.getUTCDate())}_${pad(d.getUTCHours())}_${pad(d.getUTCMinutes())}_${pad(d.getUTCSeconds())}.`;
}

/** A new `..<time>.<number>` directory, named as upstream's writer names it (Go's MkdirTemp). */
function makeVersionDir(dir: string, nowMs: number): string {
  for (let attempt = 0; attempt < 100; attempt++) {
    const version = path.join(dir, timestampName(nowMs) + String(randomInt(0, 2 ** 32 - 1)));
    try {
      fs.mkdirSync(version);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") continue;
      throw error;
    }
    fs.chmodSync(version, 0o755);
    return version;
  }
  throw new Error(`could not make a new version directory in ${dir}`);
}

/** The files of the version `..data` points to, or undefined when there is none. */
function currentVersion(dir: string): string | undefined {
  try {
    const target = fs.readlinkSync(path.join(dir, DATA_DIR_NAME));
    return path.join(dir, target);
  } catch {
    return undefined;
  }
}

function sameAsWritten(versionDir: string, payload: Payload, ownership: Ownership): boolean {
  let count = 0;
  const walk = (rel: string): boolean => {
    for (const entry of fs.readdirSync(path.join(versionDir, rel), { withFileTypes: true })) {
      const relPath = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!walk(relPath)) return false;
        continue;
      }
      const want = payload.get(relPath);
      if (!want) return false;
      const stat = fs.statSync(path.join(versionDir, relPath));
      if ((stat.mode & 0o7777) !== fileMode(want.mode, ownership)) return false;
      if (ownership.gid !== undefined && stat.gid !== ownership.gid) return false;
      if (want.uid !== undefined && stat.uid !== want.uid) return false;
      if (!fs.readFileSync(path.join(versionDir, relPath)).equals(want.content)) return false;
      count++;
    }
    return true;
  };
  try {
    return walk("") && count === payload.size;
  } catch {
    return false;
  }
}

function fileMode(mode: number, ownership: Ownership): number {
  if (ownership.gid === undefined) return mode & 0o7777;
  return (mode | (ownership.readOnly ? 0o440 : 0o660)) & 0o7777;
}

/**
 * Writes `payload` into `dir` atomically. Returns false when the files already were exactly
 * this (nothing written). Throws on a bad path: nothing is changed then.
 */
export function writeAtomically(dir: string, payload: Payload, ownership: Ownership, nowMs = Date.now()): boolean {
  for (const p of payload.keys()) {
    const problem = payloadPathProblem(p);
    if (problem) throw new Error(`invalid path "${p}": ${problem}`);
  }
  fs.mkdirSync(dir, { recursive: true });
  const old = currentVersion(dir);
  if (old && sameAsWritten(old, payload, ownership)) return false;

  const version = makeVersionDir(dir, nowMs);
  for (const [rel, file] of [...payload.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const target = path.join(version, rel);
    fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o755 });
    fs.writeFileSync(target, file.content, { mode: 0o600 });
    fs.chmodSync(target, fileMode(file.mode, ownership));
    if (ownership.gid !== undefined || file.uid !== undefined) fs.chownSync(target, file.uid ?? -1, ownership.gid ?? -1);
  }
  if (ownership.gid !== undefined) {
    // Directories of the version: the group may enter them, and new files inherit it.
    const dirs = (rel: string): void => {
      const full = path.join(version, rel);
      fs.chownSync(full, -1, ownership.gid!);
      fs.chmodSync(full, 0o755 | 0o2000 | (ownership.readOnly ? 0o050 : 0o070));
      for (const entry of fs.readdirSync(full, { withFileTypes: true })) if (entry.isDirectory()) dirs(rel ? `${rel}/${entry.name}` : entry.name);
    };
    dirs("");
  }

  // The swap: a new symlink renamed over the old one is one atomic step for readers.
  const tmpLink = path.join(dir, DATA_DIR_TMP_NAME);
  fs.rmSync(tmpLink, { force: true });
  fs.symlinkSync(path.basename(version), tmpLink);
  fs.renameSync(tmpLink, path.join(dir, DATA_DIR_NAME));

  // User-visible names: one symlink per top-level element, through ..data.
  const topLevel = new Set([...payload.keys()].map((p) => p.split("/")[0]));
  for (const name of topLevel) {
    const link = path.join(dir, name);
    const want = path.join(DATA_DIR_NAME, name);
    let current: string | undefined;
    try {
      current = fs.readlinkSync(link);
    } catch {
      current = undefined;
    }
    if (current === want) continue;
    fs.rmSync(link, { force: true, recursive: true });
    fs.symlinkSync(want, link);
  }
  // What the new version no longer has: old links and old versions.
  for (const entry of fs.readdirSync(dir)) {
    if (entry === DATA_DIR_NAME || entry === path.basename(version)) continue;
    if (entry.startsWith("..")) fs.rmSync(path.join(dir, entry), { recursive: true, force: true });
    else if (!topLevel.has(entry)) fs.rmSync(path.join(dir, entry), { recursive: true, force: true });
  }
  return true;
}
