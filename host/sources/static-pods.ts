// Static pod source: a directory of Pod manifests (YAML or JSON, several documents per file),
// rescanned every 20 s (kubelet's file check frequency) and on file-system events. Each scan
// gives the whole set; a file that cannot be read or parsed is reported and contributes nothing.
import fs from "node:fs";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import type { PodSpec } from "../core-types.js";
import { ManifestError, podFromManifest } from "./manifest.js";

export const STATIC_POD_RESCAN_MS = 20_000;
/** A bound on what one scan reads (Tiger style): larger files are refused, not half-read. */
export const MAX_MANIFEST_BYTES = 1024 * 1024;

export interface SourcePod {
  spec: PodSpec;
  /** `file` or `file#doc` when the file holds several documents. */
  origin: string;
  /** The manifest as parsed: what a mirror pod is made from. */
  manifest?: Record<string, unknown>;
}

export interface SourceProblem {
  origin: string;
  field: string;
  message: string;
}

export interface ScanResult {
  pods: SourcePod[];
  problems: SourceProblem[];
}

function isManifestName(name: string): boolean {
  // Upstream ignores dot-files (editor swap files and the like).
  return !name.startsWith(".") && /\.(ya?ml|json)$/i.test(name);
}

export function scanManifestFile(file: string, nodeName: string): ScanResult {
  const pods: SourcePod[] = [];
  const problems: SourceProblem[] = [];
  let text: string;
  try {
    const stat = fs.statSync(file);
    if (stat.size > MAX_MANIFEST_BYTES) {
      return { pods, problems: [{ origin: file, field: "", message: `file is ${stat.size} bytes; the limit is ${MAX_MANIFEST_BYTES}` }] };
    }
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    return { pods, problems: [{ origin: file, field: "", message: `cannot read: ${(error as Error).message}` }] };
  }
  const documents = parseAllDocuments(text);
  const list = Array.isArray(documents) ? documents : [documents];
  const several = list.length > 1;
  list.forEach((doc, index) => {
    const origin = several ? `${file}#${index}` : file;
    if (doc.errors.length > 0) {
      const e = doc.errors[0];
      problems.push({ origin, field: "", message: `invalid YAML: ${e.message.split("\n")[0]}` });
      return;
    }
    const value = doc.toJS();
    if (value === null || value === undefined) return; // an empty document, e.g. a trailing `---`
    try {
      pods.push({ spec: podFromManifest(value, { nodeName, source: file, documentIndex: index }), origin, manifest: value });
    } catch (error) {
      if (!(error instanceof ManifestError)) throw error;
      problems.push({ origin, field: error.field, message: error.detail });
    }
  });
  return { pods, problems };
}

export function scanManifestDir(dir: string, nodeName: string): ScanResult {
  const result: ScanResult = { pods: [], problems: [] };
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter(isManifestName).sort();
  } catch (error) {
    result.problems.push({ origin: dir, field: "", message: `cannot list: ${(error as Error).message}` });
    return result;
  }
  for (const name of names) {
    const file = path.join(dir, name);
    if (!fs.statSync(file, { throwIfNoEntry: false })?.isFile()) continue;
    const one = scanManifestFile(file, nodeName);
    result.pods.push(...one.pods);
    result.problems.push(...one.problems);
  }
  return result;
}

/** Watches a manifest directory; calls `onScan` with every scan whose outcome changed. */
export class StaticPodSource {
  private timer?: NodeJS.Timeout;
  private watcher?: fs.FSWatcher;
  private debounce?: NodeJS.Timeout;
  private lastKey = "";

  constructor(
    private dir: string,
    private nodeName: string,
    private onScan: (result: ScanResult) => void,
    private rescanMs = STATIC_POD_RESCAN_MS,
  ) {}

  start(): void {
    this.scan();
    this.timer = setInterval(() => this.scan(), this.rescanMs);
    try {
      this.watcher = fs.watch(this.dir, () => {
        // Editors write in several steps: scan once things settle.
        clearTimeout(this.debounce);
        this.debounce = setTimeout(() => this.scan(), 100);
      });
      this.watcher.on("error", () => this.watcher?.close());
    } catch {
      // No watch support (or no directory yet): the periodic rescan still works.
    }
  }

  scan(): void {
    const result = scanManifestDir(this.dir, this.nodeName);
    const key = JSON.stringify(result, (_k, v) => (typeof v === "bigint" ? v.toString() : v));
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
