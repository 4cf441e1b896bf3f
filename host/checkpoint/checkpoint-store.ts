// Checkpoints on local disk: what the node must still know after a restart or a power loss with
// the apiserver out of reach (its pods, the configMaps, secrets and tokens their volumes use).
// One file per item, written as the kubelet's checkpoint manager writes them: the whole file to a
// temporary name, fsync, rename over the old one, fsync of the directory; so a power cut leaves
// the old file or the new one, never half of one. Each file carries a version and a checksum: a
// file that is truncated, not JSON, of another version or whose checksum does not match is
// reported and skipped, never a crash. Files are readable by root only (secrets are among them).
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Logger } from "../common/log.js";
import { FILE_LIMITS, readBoundedText } from "../files/bounded-file.js";

/** The checkpoint format; a file of another version is skipped (and reported). */
export const CHECKPOINT_VERSION = 1;

interface CheckpointFile {
  version: number;
  kind: string;
  /** sha256 of JSON.stringify(data), hex. */
  checksum: string;
  data: unknown;
}

export interface CheckpointProblem {
  file: string;
  reason: string;
}

/** Names are made of characters safe in a file name; anything else is hex-escaped. */
function fileNameOf(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, "0")}`) + ".json";
}

function nameOfFile(file: string): string {
  return file.slice(0, -".json".length).replace(/%([0-9a-f]{2})/g, (_, hex) => String.fromCharCode(parseInt(hex, 16)));
}

function checksumOf(text: string): string {
  return crypto.createHash("sha256").update(text).digest("hex");
}

export class CheckpointStore {
  /** The checksum last written per name: an unchanged item is not written again (flash wears). */
  private written = new Map<string, string>();
  private dirReady = false;

  constructor(
    readonly dir: string,
    /** What the items are (`pod`, `configmap`...), in the file and in messages. */
    readonly kind: string,
    private log: Logger,
    /** A checkpoint that could not be read (besides the log line): e.g. a Node event. */
    private onProblem?: (problem: CheckpointProblem) => void,
  ) {}

  private ensureDir(): void {
    if (this.dirReady) return;
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    fs.chmodSync(this.dir, 0o700);
    this.dirReady = true;
  }

  /** Writes `data` under `name` durably; false (logged) when the disk refused. */
  write(name: string, data: unknown): boolean {
    const dataText = JSON.stringify(data);
    const checksum = checksumOf(dataText);
    if (this.written.get(name) === checksum) return true;
    const file: CheckpointFile = { version: CHECKPOINT_VERSION, kind: this.kind, checksum, data };
    const target = path.join(this.dir, fileNameOf(name));
    const temporary = `${target}.tmp`;
    try {
      this.ensureDir();
      const fd = fs.openSync(temporary, "w", 0o600);
      try {
        fs.writeSync(fd, JSON.stringify(file));
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(temporary, target);
      this.syncDir();
      this.written.set(name, checksum);
      return true;
    } catch (error) {
      fs.rmSync(temporary, { force: true });
      this.log.log("error", `Cannot write the ${this.kind} checkpoint`, { file: target, error: (error as Error).message });
      return false;
    }
  }

  /** The rename itself is durable only once the directory is synced. */
  private syncDir(): void {
    const fd = fs.openSync(this.dir, "r");
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }

  remove(name: string): void {
    this.written.delete(name);
    try {
      fs.rmSync(path.join(this.dir, fileNameOf(name)), { force: true });
    } catch (error) {
      this.log.log("warn", `Cannot remove the ${this.kind} checkpoint`, { name, error: (error as Error).message });
    }
  }

  /** The item under `name`; undefined when there is none or it cannot be trusted (reported). */
  read(name: string): unknown {
    return this.readFile(fileNameOf(name));
  }

  /** Every readable item, by name; the unreadable ones are reported and left out. */
  readAll(): Map<string, unknown> {
    const items = new Map<string, unknown>();
    let files: string[];
    try {
      files = fs.readdirSync(this.dir);
    } catch {
      return items; // no checkpoints yet
    }
    for (const file of files) {
      if (file.endsWith(".tmp")) {
        // A write a power cut interrupted: the previous file (if any) is still whole.
        fs.rmSync(path.join(this.dir, file), { force: true });
        continue;
      }
      if (!file.endsWith(".json")) continue;
      const data = this.readFile(file);
      if (data !== undefined) items.set(nameOfFile(file), data);
    }
    return items;
  }

  /** Names of the items on disk (whatever their state). */
  names(): string[] {
    try {
      return fs.readdirSync(this.dir).filter((f) => f.endsWith(".json")).map(nameOfFile);
    } catch {
      return [];
    }
  }

  private readFile(file: string): unknown {
    const full = path.join(this.dir, file);
    let text: string;
    try {
      text = readBoundedText(full, FILE_LIMITS.checkpointBytes);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") this.problem(full, `unreadable: ${(error as Error).message}`);
      return undefined;
    }
    let parsed: CheckpointFile;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      this.problem(full, text.length === 0 ? "empty file" : `not JSON (truncated?): ${(error as Error).message}`);
      return undefined;
    }
    if (parsed === null || typeof parsed !== "object") return this.problem(full, "not a checkpoint object");
    if (parsed.version !== CHECKPOINT_VERSION) return this.problem(full, `version ${JSON.stringify(parsed.version)}, expected ${CHECKPOINT_VERSION}`);
    if (parsed.kind !== this.kind) return this.problem(full, `a ${JSON.stringify(parsed.kind)} checkpoint where a ${this.kind} one belongs`);
    const dataText = JSON.stringify(parsed.data);
    if (parsed.data === undefined || checksumOf(dataText) !== parsed.checksum) return this.problem(full, "checksum does not match its contents");
    this.written.set(nameOfFile(file), parsed.checksum);
    return parsed.data;
  }

  private problem(file: string, reason: string): undefined {
    this.log.log("error", `Skipping a ${this.kind} checkpoint that cannot be trusted`, { file, reason });
    this.onProblem?.({ file, reason });
    return undefined;
  }
}
