// Static pods served by a web server (`--manifest-url`, upstream's http pod source): fetched every
// `httpCheckFrequency` (20 s), a Pod, several, or a PodList, in YAML or JSON, read with the same
// checks as a manifest file. A server that fails, answers slowly, too much, or garbage changes
// nothing: the pods it served last keep running, and why is logged once per kind of failure.
// The last good answer is kept on disk, so a node restarted while the server is down runs them.
import { createHash } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import path from "node:path";
import type { Logger } from "../common/log.js";
import { printable } from "../common/log.js";
import { MAX_MANIFEST_BYTES } from "./limits.js";
import { manifestsFromBytes, type ScanResult } from "./static-pods.js";
import { readManifestBytes } from "./manifest-files.js";

/** Upstream's http client time-out for the whole request. */
const FETCH_TIMEOUT_MS = 10_000;
/** Redirects followed at most (Go's http client stops after 10). */
const MAX_REDIRECTS = 10;

export type FetchResult = { ok: true; bytes: Uint8Array } | { ok: false; message: string };

/**
 * GETs `url` with `headers`: 200 and at most `limitBytes` of body, within the time-out, through at
 * most 10 redirects (http and https only). Never throws.
 */
export function fetchManifest(url: string, headers: Record<string, string[]>, limitBytes = MAX_MANIFEST_BYTES, timeoutMs = FETCH_TIMEOUT_MS): Promise<FetchResult> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (result: FetchResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const timer = setTimeout(() => {
      current?.destroy();
      done({ ok: false, message: `${shown(url)}: no complete answer in ${timeoutMs / 1000}s` });
    }, timeoutMs);
    let current: http.ClientRequest | undefined;
    const get = (target: string, hops: number) => {
      let parsed: URL;
      try {
        parsed = new URL(target);
      } catch {
        return done({ ok: false, message: `${shown(target)}: not a URL` });
      }
      if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return done({ ok: false, message: `${shown(target)}: only http and https are fetched` });
      const client = parsed.protocol === "https:" ? https : http;
      const flatHeaders: Record<string, string> = {};
      for (const [name, values] of Object.entries(headers)) flatHeaders[name] = values.join(", ");
      current = client.get(parsed, { headers: flatHeaders }, (response) => {
        const status = response.statusCode ?? 0;
        if (status >= 300 && status < 400 && response.headers.location) {
          response.resume();
          if (hops >= MAX_REDIRECTS) return done({ ok: false, message: `${shown(url)}: stopped after ${MAX_REDIRECTS} redirects` });
          return get(new URL(response.headers.location, parsed).toString(), hops + 1);
        }
        if (status !== 200) {
          response.resume();
          return done({ ok: false, message: `${shown(target)}: ${status} ${printable(response.statusMessage ?? "", 64)}` });
        }
        const declared = Number(response.headers["content-length"] ?? NaN);
        if (declared > limitBytes) {
          response.destroy();
          return done({ ok: false, message: `${shown(target)}: the answer is ${declared} bytes; a manifest may have at most ${limitBytes}` });
        }
        const chunks: Buffer[] = [];
        let length = 0;
        response.on("data", (chunk: Buffer) => {
          length += chunk.length;
          if (length > limitBytes) {
            response.destroy();
            return done({ ok: false, message: `${shown(target)}: the answer is over ${limitBytes} bytes, the most a manifest may have` });
          }
          chunks.push(chunk);
        });
        response.on("end", () => {
          if (length === 0) return done({ ok: false, message: `zero-length data received from ${shown(target)}` });
          done({ ok: true, bytes: new Uint8Array(Buffer.concat(chunks, length)) });
        });
        response.on("error", (error) => done({ ok: false, message: `${shown(target)}: ${error.message}` }));
      });
      current.on("error", (error) => done({ ok: false, message: `${shown(target)}: ${error.message}` }));
    };
    get(url, 0);
  });
}

/** A URL as a log line shows it: bounded, printable, without its credentials. */
function shown(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    return printable(parsed.toString(), 256);
  } catch {
    return printable(url, 256);
  }
}

export interface UrlPodSourceOptions {
  url: string;
  headers: Record<string, string[]>;
  nodeName: string;
  periodMs: number;
  /** Where the last good answer is kept (under the root dir). */
  cacheFile: string;
  log: Logger;
  /** Each new set of pods from the URL (the first call also when the URL failed: its last good set, or none). */
  onScan: (scan: ScanResult) => void;
}

export class UrlPodSource {
  private timer: NodeJS.Timeout | undefined;
  private lastError: string | undefined;
  /** A digest of the last answer delivered: an unchanged answer is not parsed again (nor kept). */
  private lastDigest: string | undefined;
  private delivered = false;
  private stopped = false;

  constructor(private options: UrlPodSourceOptions) {}

  start(): void {
    void this.check();
    this.timer = setInterval(() => void this.check(), this.options.periodMs);
    this.timer.unref?.();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** One fetch; resolves once its outcome is delivered (or kept). */
  async check(): Promise<void> {
    const { url, headers, log } = this.options;
    const result = await fetchManifest(url, headers);
    if (this.stopped) return;
    if (!result.ok) {
      if (result.message !== this.lastError) log.log("warn", "Unable to read the manifest URL; keeping the pods it served last", { error: result.message });
      this.lastError = result.message;
      // The first time: the last good answer from before a restart, else nothing (sources are ready).
      if (!this.delivered) this.deliver(this.readCache(), true);
      return;
    }
    if (this.lastError !== undefined) log.log("info", "Manifest URL readable again", { url: shown(url) });
    this.lastError = undefined;
    const digest = createHash("sha256").update(result.bytes).digest("hex");
    if (digest === this.lastDigest && this.delivered) return;
    const scan = manifestsFromBytes(result.bytes, url, this.options.nodeName, true);
    // Garbage (nothing that is a pod, only problems) is a failure of the server: keep what runs.
    if (scan.pods.length === 0 && scan.problems.length > 0) {
      const why = `${shown(url)}: not a Pod or PodList: ${scan.problems[0].field ? scan.problems[0].field + ": " : ""}${printable(scan.problems[0].message, 200)}`;
      if (why !== this.lastError) log.log("warn", "The manifest URL answered something that is not pods; keeping the pods it served last", { error: why });
      this.lastError = why;
      if (!this.delivered) this.deliver(this.readCache(), true);
      return;
    }
    this.lastDigest = digest;
    this.writeCache(result.bytes);
    this.deliver(scan, false);
  }

  private deliver(scan: ScanResult, fromCache: boolean): void {
    this.delivered = true;
    if (fromCache && scan.pods.length > 0) this.options.log.log("info", "Running the pods the manifest URL served last (kept from before)", { pods: scan.pods.length });
    this.options.onScan(scan);
  }

  /** The last good answer, read as a manifest file is read (no links followed, bounded, a regular file only). */
  private readCache(): ScanResult {
    const read = readManifestBytes(this.options.cacheFile);
    if (!read.ok) return { pods: [], problems: [] };
    return manifestsFromBytes(read.bytes, this.options.url, this.options.nodeName, true);
  }

  private writeCache(bytes: Uint8Array): void {
    try {
      fs.mkdirSync(path.dirname(this.options.cacheFile), { recursive: true, mode: 0o700 });
      const temporary = `${this.options.cacheFile}.tmp`;
      fs.writeFileSync(temporary, bytes, { mode: 0o600 });
      fs.renameSync(temporary, this.options.cacheFile);
    } catch (error) {
      this.options.log.log("warn", "Could not keep the manifest URL's answer on disk", { error: (error as Error).message });
    }
  }
}

/**
 * The static pod sources as one: each source's latest set, merged in source order once every
 * source has given one (upstream's sources-ready), then again on each change of any of them.
 */
export class StaticPodSets {
  private latest = new Map<string, ScanResult>();

  constructor(private sources: string[], private onScan: (scan: ScanResult) => void) {}

  set(source: string, scan: ScanResult): void {
    this.latest.set(source, scan);
    if (!this.sources.every((s) => this.latest.has(s))) return;
    if (this.sources.length === 1) return this.onScan(scan);
    const merged: ScanResult = { pods: [], problems: [] };
    const failed: string[] = [];
    for (const s of this.sources) {
      const part = this.latest.get(s)!;
      merged.pods.push(...part.pods);
      merged.problems.push(...part.problems);
      if (part.failed) failed.push(part.failed);
    }
    if (failed.length > 0) merged.failed = failed.join("; ");
    this.onScan(merged);
  }
}
