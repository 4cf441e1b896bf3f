// Writing a state file as upstream's checkpoint manager does: the whole file under a temporary
// name, fsync, rename over the old one, fsync of the directory; reading it bounded and as a
// regular file only.
import fs from "node:fs";
import path from "node:path";
import { readBoundedText } from "../files/bounded-file.js";

/** State files hold a few entries per container: more than this is not ours. */
export const STATE_FILE_BYTES = 4 * 1024 * 1024;

export function writeDurably(file: string, text: string): void {
  const temporary = `${file}.tmp`;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  try {
    const fd = fs.openSync(temporary, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW, 0o600);
    try {
      fs.writeSync(fd, text);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temporary, file);
  } catch (error) {
    fs.rmSync(temporary, { force: true });
    throw error;
  }
  const dir = fs.openSync(path.dirname(file), "r");
  try {
    fs.fsyncSync(dir);
  } finally {
    fs.closeSync(dir);
  }
}

/**
 * One state file: written whole and durably, and not again while its text is what was last
 * written (each hardware change rewrites every file; a flash card need not see the same bytes twice).
 */
export class StateFile {
  private lastWritten: string | undefined;

  constructor(readonly file: string) {}

  read(): string | undefined {
    return readStateFile(this.file);
  }

  write(text: string): void {
    if (text === this.lastWritten) return;
    writeDurably(this.file, text);
    this.lastWritten = text;
  }
}

/** The file's text, or undefined when there is none; throws when it is not a regular file or too large. */
export function readStateFile(file: string): string | undefined {
  if (!fs.existsSync(file)) return undefined;
  return readBoundedText(file, STATE_FILE_BYTES);
}

/** FNV-1a, 32 bits: the hash upstream's checkpoint checksums use. */
export function fnv32a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, "utf8")) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** A Go map as upstream's hashing prints it inside a struct: `map[k:v k2:v2]`, keys sorted. */
export function goMap(entries: Record<string, string>): string {
  return `map[${Object.keys(entries).sort().map((k) => `${k}:${entries[k]}`).join(" ")}]`;
}
