// Static pod source: a directory of Pod manifests (YAML or JSON, several documents per file),
// rescanned every 20 s (kubelet's file check frequency) and on file-system events. Each scan
// gives the whole set; a file that cannot be read or parsed is reported and contributes nothing.
import fs from "node:fs";
import path from "node:path";
import type { PodSpec } from "../core/types.js";
import { MAX_MANIFEST_FILES } from "./limits.js";
import { ManifestError, podFromManifest } from "./manifest.js";
import { readManifestBytes, resolveEntry } from "./manifest-files.js";
import { decodeManifest } from "./manifest-text.js";
import { noteAllocation } from "../common/memory-relief.js";
import { parseManifestDocuments } from "./yaml-documents.js";
import { MAX_DOCUMENTS_PER_FILE } from "./limits.js";

export const STATIC_POD_RESCAN_MS = 20_000;
/** Quiet time after a change in the manifest directory before it is scanned. */
export const STATIC_POD_SETTLE_MS = 20;
export { MAX_MANIFEST_BYTES } from "./limits.js";

export interface SourcePod {
  spec: PodSpec;
  /** `file` or `file#doc` when the file holds several documents. */
  origin: string;
  /** The manifest as parsed: what a mirror pod is made from. */
  manifest?: Record<string, unknown>;
  /** Where it came from (the pod's `kubernetes.io/config.source`): a file unless said. */
  source?: "file" | "http";
}

export interface SourceProblem {
  origin: string;
  field: string;
  message: string;
}

/** A pod the node refused: where it came from, the field, why (a reason when admission refused it). */
export interface PodRefusal {
  index: number;
  origin: string;
  field: string;
  message: string;
  reason?: string;
  /** A new version of a running pod was refused: the accepted version keeps running. */
  keptRunning?: boolean;
}

export interface ScanResult {
  pods: SourcePod[];
  problems: SourceProblem[];
  /**
   * Set when the directory as a whole could not be read (not when it is missing): the scan
   * knows nothing, and the source keeps the pods of its last good scan.
   */
  failed?: string;
}

function isManifestName(name: string): boolean {
  // Upstream ignores dot-files (editor swap files and the like).
  return !name.startsWith(".") && /\.(ya?ml|json)$/i.test(name);
}

/**
 * Turns one file's text into pods and problems; never throws, whatever the text. `fromUrl`: the
 * text a `--manifest-url` served, where a document may also be a PodList (its items are pods).
 */
export function manifestsFromBytes(bytes: Uint8Array, file: string, nodeName: string, fromUrl = false): ScanResult {
  const pods: SourcePod[] = [];
  const problems: SourceProblem[] = [];
  const decoded = decodeManifest(bytes);
  if (!decoded.ok) return { pods, problems: [{ origin: file, field: "", message: decoded.message }] };
  const documents = parseManifestDocuments(decoded.text);
  const several = documents.length > 1;
  for (const doc of documents) {
    const origin = several ? `${file}#${doc.index}` : file;
    if (!doc.ok) {
      problems.push({ origin, field: doc.field, message: doc.message });
      continue;
    }
    const value = doc.value;
    if (value === null || value === undefined) continue; // an empty document, e.g. a trailing `---`
    if (fromUrl && isPodList(value)) {
      const items = (value as { items?: unknown }).items;
      if (!Array.isArray(items) || items.length > MAX_DOCUMENTS_PER_FILE) {
        problems.push({ origin, field: "items", message: Array.isArray(items) ? `more than ${MAX_DOCUMENTS_PER_FILE} pods in one list` : "a PodList needs a list of items" });
        continue;
      }
      items.forEach((item, i) => addPod(pods, problems, item, `${origin}#items[${i}]`, { nodeName, source: file, documentIndex: doc.index * MAX_DOCUMENTS_PER_FILE + i, fromUrl }));
      continue;
    }
    addPod(pods, problems, value, origin, { nodeName, source: file, documentIndex: doc.index, fromUrl });
  }
  return { pods, problems };
}

/** Whether a document is a PodList (or a v1 List), which a URL may serve instead of a Pod. */
function isPodList(value: unknown): boolean {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const kind = (value as { kind?: unknown }).kind;
  return kind === "PodList" || kind === "List";
}

function addPod(pods: SourcePod[], problems: SourceProblem[], value: unknown, origin: string, ctx: { nodeName: string; source: string; documentIndex: number; fromUrl: boolean }): void {
  try {
    pods.push({ spec: podFromManifest(value, ctx), origin, manifest: value as Record<string, unknown>, ...(ctx.fromUrl ? { source: "http" as const } : {}) });
  } catch (error) {
    if (error instanceof ManifestError) {
      for (const p of error.problems) problems.push({ origin, field: p.field, message: p.detail });
    } else {
      // A bug of ours met by this input: it stays this file's problem, not the agent's.
      problems.push({ origin, field: "", message: `could not be read: ${(error as Error)?.message ?? String(error)}` });
    }
  }
}

export function scanManifestFile(file: string, nodeName: string): ScanResult {
  const read = readManifestBytes(file);
  if (!read.ok) return { pods: [], problems: [{ origin: file, field: "", message: read.message }] };
  return manifestsFromBytes(read.bytes, file, nodeName);
}

/** One file's last read: reused while the file is unchanged, and kept when it cannot be read. */
interface CachedFile {
  identity: string;
  result: ScanResult;
}

/** Heap bytes parsing costs per byte of YAML, roughly (see limits.ts), for memory relief. */
const PARSE_COST_FACTOR = 100;

/** Errors that say the file is gone for good, as opposed to a read that failed this time. */
const GONE = new Set(["ENOENT", "ENOTDIR"]);

/**
 * Scans a manifest directory. With `cache`, a file whose inode, size and times are unchanged is
 * not parsed again, and a file that exists but cannot be read this time (EIO, EACCES, a change
 * while read) keeps the pods of its last good read, with a problem saying so.
 */
export function scanManifestDir(dir: string, nodeName: string, cache?: Map<string, CachedFile>): ScanResult {
  const result: ScanResult = { pods: [], problems: [] };
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter(isManifestName).sort();
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    // A missing directory means no static pods, as upstream; any other failure means unknown.
    if (e.code !== "ENOENT") result.failed = `cannot list: ${e.code ?? ""} ${e.message}`.trim();
    result.problems.push({ origin: dir, field: "", message: e.code === "ENOENT" ? "the directory does not exist" : `cannot list: ${e.message}` });
    cache?.clear();
    return result;
  }
  if (names.length > MAX_MANIFEST_FILES) {
    const { read, skipped } = filesWithinCap(dir, names, cache);
    for (const name of skipped) {
      result.problems.push({ origin: path.join(dir, name), field: "", message: `Too many: the directory has ${names.length} manifest files; ${MAX_MANIFEST_FILES} are read (those read before first, then the oldest), this one is not` });
    }
    names = read;
  }
  const present = new Set<string>();
  for (const name of names) {
    const file = path.join(dir, name);
    present.add(file);
    const one = scanEntry(file, nodeName, cache);
    result.pods.push(...one.pods);
    result.problems.push(...one.problems);
  }
  if (cache) for (const file of cache.keys()) if (!present.has(file)) cache.delete(file);
  return result;
}

/**
 * Which files to read when there are more than the cap. A cap must never stop what runs: the
 * files read before (their pods may be running) come first, then the oldest by modification time
 * (after an agent restart, the manifests that were there before a flood), then by name.
 */
function filesWithinCap(dir: string, names: string[], cache?: Map<string, CachedFile>): { read: string[]; skipped: string[] } {
  const mtimeMs = (name: string): number => {
    try {
      return fs.lstatSync(path.join(dir, name)).mtimeMs;
    } catch {
      return Number.MAX_SAFE_INTEGER;
    }
  };
  const known = names.filter((n) => cache?.has(path.join(dir, n)));
  const fresh = names.filter((n) => !cache?.has(path.join(dir, n))).map((n) => ({ n, t: mtimeMs(n) }));
  fresh.sort((a, b) => a.t - b.t || (a.n < b.n ? -1 : a.n > b.n ? 1 : 0));
  const chosen = new Set([...known, ...fresh.map((f) => f.n)].slice(0, MAX_MANIFEST_FILES));
  return { read: names.filter((n) => chosen.has(n)), skipped: names.filter((n) => !chosen.has(n)) };
}

function scanEntry(file: string, nodeName: string, cache?: Map<string, CachedFile>): ScanResult {
  const entry = resolveEntry(file);
  if (entry.kind === "skip") {
    cache?.delete(file);
    return { pods: [], problems: [] };
  }
  const read = entry.kind === "file" ? readManifestBytes(entry.target) : { ok: false as const, message: entry.message, code: entry.code };
  if (!read.ok) {
    const last = cache?.get(file);
    const transient = entry.kind === "file" && !GONE.has(read.code ?? "");
    if (last && transient && last.result.pods.length > 0) {
      const kept = `${read.message}; keeping its ${last.result.pods.length} pod(s) from the last good read`;
      return { pods: last.result.pods, problems: [{ origin: file, field: "", message: kept }] };
    }
    cache?.delete(file);
    return { pods: [], problems: [{ origin: file, field: "", message: read.message }] };
  }
  const cached = cache?.get(file);
  if (cached && cached.identity === read.identity) return cached.result;
  const result = manifestsFromBytes(read.bytes, file, nodeName);
  // A file that grew past one of nanolet's own limits (documents, nesting, values) is refused,
  // but a cap never stops what runs: its last good pods are kept, with the problem said.
  const last = cache?.get(file);
  if (result.pods.length === 0 && last && last.result.pods.length > 0 && result.problems.some((p) => /^Too (many|deep|long)/.test(p.message))) {
    const kept = result.problems.map((p) => ({ ...p, message: `${p.message}; keeping its ${last.result.pods.length} pod(s) from the last good read` }));
    return { pods: last.result.pods, problems: kept };
  }
  noteAllocation(read.bytes.length * PARSE_COST_FACTOR);
  cache?.set(file, { identity: read.identity, result });
  return result;
}

/** Watches a manifest directory; calls `onScan` with every scan whose outcome changed. */
export class StaticPodSource {
  private timer?: NodeJS.Timeout;
  private watcher?: fs.FSWatcher;
  private debounce?: NodeJS.Timeout;
  private lastKey = "";
  private files = new Map<string, CachedFile>();
  private lastGood: ScanResult = { pods: [], problems: [] };
  private failure: string | undefined;

  constructor(
    private dir: string,
    private nodeName: string,
    private onScan: (result: ScanResult) => void,
    private rescanMs = STATIC_POD_RESCAN_MS,
    /** The directory could not be read (`error`), or can be again (`error` undefined). */
    private onFailure?: (error: string | undefined, pods: number) => void,
  ) {}

  start(): void {
    this.scan();
    this.timer = setInterval(() => this.scan(), this.rescanMs);
    try {
      this.watcher = fs.watch(this.dir, () => {
        // Editors and tools write in several steps (create, write, rename): scan once things
        // settle for STATIC_POD_SETTLE_MS. 100 ms cost a new pod's first start a third of the kubelet's whole
        // start (tests/bench/pulls-vs-kubelet.mjs); the steps of one write are microseconds apart.
        clearTimeout(this.debounce);
        this.debounce = setTimeout(() => this.scan(), STATIC_POD_SETTLE_MS);
      });
      this.watcher.on("error", () => this.watcher?.close());
    } catch {
      // No watch support (or no directory yet): the periodic rescan still works.
    }
  }

  scan(): void {
    let result: ScanResult;
    try {
      result = scanManifestDir(this.dir, this.nodeName, this.files);
    } catch (error) {
      // Every file is contained in scanManifestDir; this is the last guard of the directory.
      result = { pods: [], problems: [], failed: `scan failed: ${(error as Error)?.message ?? String(error)}` };
    }
    if (result.failed !== undefined) {
      // Knowing nothing is not knowing there are no pods: keep the last good set.
      if (this.failure !== result.failed) this.onFailure?.(result.failed, this.lastGood.pods.length);
      this.failure = result.failed;
      result = { pods: this.lastGood.pods, problems: [...result.problems, ...this.lastGood.problems] };
    } else {
      if (this.failure !== undefined) this.onFailure?.(undefined, result.pods.length);
      this.failure = undefined;
      this.lastGood = result;
    }
    const key = scanKey(result);
    if (key === this.lastKey) return;
    this.lastKey = key;
    this.onScan(result);
  }

  stop(): void {
    clearInterval(this.timer);
    clearTimeout(this.debounce);
    this.watcher?.close();
  }
}

/** What tells two scans apart: the pods' specs and origins, and the problems. */
function scanKey(result: ScanResult): string {
  return JSON.stringify([result.pods.map((p) => [p.origin, p.spec]), result.problems], (_k, v) => (typeof v === "bigint" ? v.toString() : v));
}
