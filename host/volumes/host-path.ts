// hostPath volumes: the path itself, checked against its `type` with upstream's words; the
// OrCreate types make what is missing (a directory with its parents, a file without them).
import fs from "node:fs";
import { VolumeSetUpError } from "./payloads.js";

/** upstream's hostPath type checks (and the OrCreate types' creation), with its words. */
export function checkHostPath(p: string, type: string): string {
  let stat: fs.Stats | undefined;
  try {
    stat = fs.statSync(p);
  } catch {
    stat = undefined;
  }
  const fail = (what: string) => new VolumeSetUpError(`hostPath type check failed: ${p} is not ${what}`);
  switch (type) {
    case "":
      return p;
    case "DirectoryOrCreate":
      if (!stat) {
        fs.mkdirSync(p, { recursive: true, mode: 0o755 });
        return p;
      }
      if (!stat.isDirectory()) throw fail("a directory");
      return p;
    case "Directory":
      if (!stat) throw new VolumeSetUpError(`hostPath type check failed: ${p} is not a directory`);
      if (!stat.isDirectory()) throw fail("a directory");
      return p;
    case "FileOrCreate":
      if (!stat) {
        // Upstream makes the file only: a missing parent directory fails the volume.
        try {
          fs.writeFileSync(p, "", { mode: 0o644, flag: "a" });
        } catch (error) {
          const e = error as NodeJS.ErrnoException;
          throw new VolumeSetUpError(`open ${p}: ${e.code === "ENOENT" ? "no such file or directory" : e.code ?? e.message}`);
        }
        return p;
      }
      if (!stat.isFile()) throw fail("a file");
      return p;
    case "File":
      if (!stat || !stat.isFile()) throw fail("a file");
      return p;
    case "Socket":
      if (!stat || !stat.isSocket()) throw fail("a socket file");
      return p;
    case "CharDevice":
      if (!stat || !stat.isCharacterDevice()) throw fail("a character device");
      return p;
    case "BlockDevice":
      if (!stat || !stat.isBlockDevice()) throw fail("a block device");
      return p;
    default:
      throw new VolumeSetUpError(`hostPath type ${JSON.stringify(type)} is not supported`);
  }
}
