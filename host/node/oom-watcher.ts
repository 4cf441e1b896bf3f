// Upstream's OOMWatcher: the kernel's OOM kills read from /dev/kmsg, and a `SystemOOM` node event
// for each whose victim was not in a container's cgroup (the victim's memcg is the root, "/"), as
// the kubelet records them through cAdvisor's parser. A container killed by its own limit is not
// a system OOM: its status says OOMKilled (the runtime's exit reason).
//
// Reading is bounded and resumable: /dev/kmsg is read without blocking (one record per read,
// at most MAX_RECORDS_PER_PASS a pass, each at most KMSG_RECORD_BYTES), and the position (the
// last record read when an OOM was reported, or the agent stopped) is kept with the boot's id, so
// an agent restarted in the same boot neither repeats an OOM nor misses one from while it was down.
import fs from "node:fs";
import path from "node:path";
import type { Logger } from "../common/log.js";
import { readBoundedText } from "../files/bounded-file.js";

/** The kernel's largest printk record is under 1 KiB of text; 8 KiB holds any record with its prefix. */
const KMSG_RECORD_BYTES = 8192;
const MAX_RECORDS_PER_PASS = 2000;
/** Passes the first start may take to read past what the kernel held (a full ring is ~50 passes). */
const MAX_CATCH_UP_PASSES = 200;
/** Lines an OOM report may take between its first and last line before it is dropped as broken. */
const MAX_REPORT_LINES = 400;

export interface OomInstance {
  /** The killed process. */
  pid: number;
  processName: string;
  /** The memcg whose limit was hit ("/" for the whole node). */
  containerName: string;
  /** The memcg of the killed task ("/" when it was in none). */
  victimContainerName: string;
}

/** One /dev/kmsg record: `prio,seq,usec,flags[,...];message` (continuation lines after it are dropped). */
export function parseKmsgRecord(record: string): { seq: bigint; message: string } | undefined {
  const semicolon = record.indexOf(";");
  if (semicolon < 0) return undefined;
  const fields = record.slice(0, semicolon).split(",");
  if (fields.length < 3 || !/^\d+$/.test(fields[1])) return undefined;
  const newline = record.indexOf("\n", semicolon);
  return { seq: BigInt(fields[1]), message: record.slice(semicolon + 1, newline < 0 ? undefined : newline) };
}

const FIRST_LINE = /invoked oom-killer:/;
const CONTAINER_LINE = /oom-kill:constraint=[^,]*,nodemask=[^,]*,cpuset=[^,]*,mems_allowed=[^,]*,oom_memcg=([^,]*),task_memcg=([^,]*),task=([^,]*),pid=(\d+),uid=\d+/;
/** The kernels before 4.19 named the cgroups in a line of their own. */
const LEGACY_CONTAINER_LINE = /Task in (.*) killed as a result of limit of (.*)/;
const LAST_LINE = /Killed process (\d+) \((.+?)\)/;

/** cAdvisor's OOM parser, one kernel message at a time: an instance when its report ends. */
export class OomParser {
  private current: OomInstance | undefined;
  private lines = 0;

  feed(message: string): OomInstance | undefined {
    if (FIRST_LINE.test(message)) {
      this.current = { pid: 0, processName: "", containerName: "/", victimContainerName: "/" };
      this.lines = 0;
      return undefined;
    }
    const current = this.current;
    if (!current) return undefined;
    if (++this.lines > MAX_REPORT_LINES) {
      this.current = undefined;
      return undefined;
    }
    const container = CONTAINER_LINE.exec(message);
    if (container) {
      current.containerName = container[1] || "/";
      current.victimContainerName = container[2] || "/";
      current.processName = container[3];
      current.pid = Number(container[4]);
      return undefined;
    }
    const legacy = LEGACY_CONTAINER_LINE.exec(message);
    if (legacy) {
      current.victimContainerName = legacy[1] || "/";
      current.containerName = legacy[2] || "/";
      return undefined;
    }
    const last = LAST_LINE.exec(message);
    if (last) {
      current.pid = Number(last[1]);
      current.processName = last[2];
      this.current = undefined;
      return current;
    }
    return undefined;
  }
}

/** The node event upstream records for an OOM kill, or undefined when it records none. */
export function systemOomEvent(instance: OomInstance): { reason: string; message: string } | undefined {
  if (instance.victimContainerName !== "/") return undefined;
  let message = "System OOM encountered";
  if (instance.processName !== "" && instance.pid !== 0) message += `, victim process: ${instance.processName}, pid: ${instance.pid}`;
  return { reason: "SystemOOM", message };
}

export interface OomWatcherOptions {
  log: Logger;
  /** The kernel log (/dev/kmsg). */
  kmsgPath?: string;
  /** Where the last record seen is kept (under the root dir). */
  stateFile: string;
  /** This boot's id (/proc/sys/kernel/random/boot_id): a record number means nothing across boots. */
  bootId?: string;
  pollMs?: number;
  onOom: (instance: OomInstance) => void;
}

export class OomWatcher {
  private fd: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private parser = new OomParser();
  private lastSeq = -1n;
  private savedSeq = -1n;
  private buffer = Buffer.alloc(KMSG_RECORD_BYTES);
  private bootId: string;
  /** False while the first start reads past what the kernel held before (nothing reported). */
  private reporting = true;

  constructor(private options: OomWatcherOptions) {
    this.bootId = options.bootId ?? readBootId();
    this.lastSeq = this.loadState();
  }

  /** Opens the kernel log; false (with one log line) when it cannot be read. */
  start(): boolean {
    const file = this.options.kmsgPath ?? "/dev/kmsg";
    try {
      this.fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
      if (!fs.fstatSync(this.fd).isCharacterDevice()) throw new Error("not the kernel's log device");
    } catch (error) {
      if (this.fd !== undefined) fs.closeSync(this.fd);
      this.fd = undefined;
      this.options.log.log("warn", "Cannot watch for system OOMs: the kernel log cannot be read", { file, error: (error as Error).message });
      return false;
    }
    // The first start reads what the kernel already holds without reporting it (upstream starts at
    // the log's end) and keeps that position; a restart in the same boot goes on from it.
    if (this.lastSeq < 0n) {
      this.reporting = false;
      // The whole ring buffer (a few MiB at most), a pass at a time.
      for (let pass = 0; pass < MAX_CATCH_UP_PASSES && this.drain() === MAX_RECORDS_PER_PASS; pass++);
      this.reporting = true;
      this.saveState();
    }
    this.timer = setInterval(() => this.drain(), this.options.pollMs ?? 1000);
    this.timer.unref?.();
    this.drain();
    return true;
  }

  stop(): void {
    clearInterval(this.timer);
    this.saveState();
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }

  /** Reads what the kernel logged since the last pass (bounded); returns how many records. */
  private drain(): number {
    if (this.fd === undefined) return 0;
    let i = 0;
    for (; i < MAX_RECORDS_PER_PASS; i++) {
      let n: number;
      try {
        n = fs.readSync(this.fd, this.buffer, 0, this.buffer.length, null);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "EAGAIN") break;
        // EPIPE: records were overwritten before we read them; the next read goes on after them.
        if (code === "EPIPE") continue;
        this.options.log.log("warn", "Reading the kernel log failed", { error: (error as Error).message });
        break;
      }
      if (n === 0) break;
      this.record(this.buffer.toString("utf8", 0, n));
    }
    return i;
  }

  /** One record of the kernel log (also the tests' way in, with recorded lines). */
  record(text: string): void {
    const record = parseKmsgRecord(text);
    if (!record) return;
    if (record.seq <= this.lastSeq) return; // seen before this agent's restart
    this.lastSeq = record.seq;
    const instance = this.parser.feed(record.message);
    if (!instance || !this.reporting) return;
    this.options.onOom(instance);
    // The position is written with each OOM reported (and at stop), not with every record: a
    // busy kernel log must not become a write a second on the device's flash.
    this.saveState();
  }

  private loadState(): bigint {
    try {
      const text = readBoundedText(this.options.stateFile, 256);
      const m = /^(\S+) (\d+)$/.exec(text.trim());
      if (m && m[1] === this.bootId) return BigInt(m[2]);
    } catch {
      // none yet
    }
    return -1n;
  }

  private saveState(): void {
    if (this.lastSeq === this.savedSeq) return;
    try {
      fs.mkdirSync(path.dirname(this.options.stateFile), { recursive: true });
      const temporary = `${this.options.stateFile}.tmp`;
      fs.writeFileSync(temporary, `${this.bootId} ${this.lastSeq}\n`);
      fs.renameSync(temporary, this.options.stateFile);
      this.savedSeq = this.lastSeq;
    } catch (error) {
      this.options.log.log("debug", "Could not keep the kernel log position", { error: (error as Error).message });
    }
  }
}

function readBootId(): string {
  try {
    return fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim().slice(0, 64) || "unknown";
  } catch {
    return "unknown";
  }
}
