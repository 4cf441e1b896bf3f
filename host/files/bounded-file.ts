// Every file the agent reads by a name it was given (its configuration, certificates, keys,
// kubeconfigs, resolv.conf, checkpoints) is read the same way: opened once without blocking (a
// FIFO or a device cannot hang the agent), checked to be a regular file on the descriptor that was
// opened (no swap between check and read), and read to a stated limit (a /dev/zero or a
// multi-gigabyte file cannot grow it). The error names the file and says what it is not; it never
// quotes what the file holds.
import fs from "node:fs";

/** Limits by kind of file; each is far above any real one. */
export const FILE_LIMITS = {
  /** A KubeletConfiguration, a kubeconfig (certificates inline), the pod runtime's own files. */
  configBytes: 1024 * 1024,
  /** A PEM bundle: a CA file with a few hundred certificates, or one certificate and its key. */
  pemBytes: 1024 * 1024,
  /** A token file, resolv.conf, a small state file of the agent's own. */
  smallBytes: 64 * 1024,
  /** A checkpoint of one pod (its spec and status). */
  checkpointBytes: 4 * 1024 * 1024,
} as const;

/** One read of a kernel file: a page of most, a piece of the long ones (the mount table). */
const KERNEL_READ_BYTES = 16 * 1024;

export class FileReadError extends Error {
  constructor(
    readonly file: string,
    readonly reason: string,
    readonly code?: string,
  ) {
    super(`${file}: ${reason}`);
    this.name = "FileReadError";
  }
}

function kindOf(stat: fs.Stats): string {
  if (stat.isDirectory()) return "a directory";
  if (stat.isFIFO()) return "a fifo";
  if (stat.isSocket()) return "a socket";
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return "a device";
  return "not a regular file";
}

/**
 * Opens `file` (never blocking on a fifo), checks it is a regular file and gives its descriptor to
 * `read`; every failure is a FileReadError naming the file, and the descriptor is always closed.
 */
function readRegularFile<T>(file: string, read: (fd: number, stat: fs.Stats) => T): T {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    throw new FileReadError(file, `cannot open: ${e.code ?? e.message}`, e.code);
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw new FileReadError(file, `${kindOf(stat)}, not a regular file`, "ENOTREG");
    return read(fd, stat);
  } catch (error) {
    if (error instanceof FileReadError) throw error;
    const e = error as NodeJS.ErrnoException;
    throw new FileReadError(file, `cannot read: ${e.code ?? e.message}`, e.code);
  } finally {
    fs.closeSync(fd);
  }
}

/** The bytes of regular file `file`, at most `maxBytes`; a FileReadError otherwise. */
export function readBoundedFile(file: string, maxBytes: number): Buffer {
  return readRegularFile(file, (fd, stat) => {
    if (stat.size > maxBytes) throw new FileReadError(file, `too large: ${stat.size} bytes, at most ${maxBytes} are read`, "EFBIG");
    // One byte past the limit: a file growing while it is read is refused, not cut short.
    const buffer = Buffer.alloc(Math.min(maxBytes, stat.size) + 1);
    let length = 0;
    for (;;) {
      const n = fs.readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
      if (length > maxBytes) throw new FileReadError(file, `too large: more than ${maxBytes} bytes`, "EFBIG");
      if (length === buffer.length) throw new FileReadError(file, "changed while it was read", "ECHANGED");
    }
    return buffer.subarray(0, length);
  });
}

/**
 * A kernel file of /proc or /sys as text, at most `maxBytes`: these say size 0 (or a page), so
 * they are read to their end in steps instead of by their size; a longer one is refused.
 */
export function readKernelText(file: string, maxBytes: number): string {
  return readRegularFile(file, (fd) => {
    // Read in pieces: the usual file is a line, and the limit is no reason to hold it in memory.
    const chunks: Buffer[] = [];
    let length = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(KERNEL_READ_BYTES, maxBytes + 1 - length));
      const n = fs.readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      chunks.push(chunk.subarray(0, n));
      length += n;
      if (length > maxBytes) throw new FileReadError(file, `too large: more than ${maxBytes} bytes`, "EFBIG");
    }
    return Buffer.concat(chunks, length).toString("utf8");
  });
}

/** As readBoundedFile, as UTF-8 text. */
export function readBoundedText(file: string, maxBytes: number): string {
  return readBoundedFile(file, maxBytes).toString("utf8");
}

/** The PEM blocks of `kind` (CERTIFICATE, ... PRIVATE KEY) in `text`; counts only, never their bytes. */
export function pemBlockCount(text: string, kind: RegExp): number {
  let n = 0;
  for (const m of text.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----/g)) if (kind.test(m[1])) n++;
  return n;
}
