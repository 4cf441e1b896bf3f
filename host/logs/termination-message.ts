// Termination messages as the kubelet gives them: an empty file on the node mounted at the
// container's `terminationMessagePath` (default /dev/termination-log); after the container exits,
// what it wrote (at most 4096 bytes) becomes `state.terminated.message`, or, with
// `FallbackToLogsOnError` and a failure exit, the end of its log (80 lines, 2048 bytes).
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { pathUnder, safeComponent } from "../common/safe-path.js";

export const ANNOTATION_TERMINATION_FILE = "nanolet.io/termination-message-file";
export const ANNOTATION_TERMINATION_POLICY = "nanolet.io/termination-message-policy";
export const ANNOTATION_LOG_FILE = "nanolet.io/log-file";
export const DEFAULT_TERMINATION_MESSAGE_PATH = "/dev/termination-log";

const MAX_MESSAGE_BYTES = 4096;
const MAX_LOG_LINES = 80;
const MAX_LOG_BYTES = 2048;

/** Makes the node-side file (`<podsDir>/<uid>/containers/<name>/<random>`); returns its path. */
export function prepareTerminationMessageFile(podsDir: string, podUid: string, containerName: string): string {
  if (!safeComponent(podUid) || !safeComponent(containerName)) throw new Error(`termination message: unsafe name ${podUid}/${containerName}`);
  const dir = pathUnder(pathUnder(pathUnder(podsDir, podUid), "containers"), containerName);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, crypto.randomBytes(4).toString("hex"));
  fs.writeFileSync(file, "");
  // Containers often run as another user: the file must be writable for them, as upstream makes it.
  fs.chmodSync(file, 0o666);
  return file;
}

function readAtMost(file: string, maxBytes: number): string {
  // The file is the container's to write: opened without following a link or waiting on a fifo,
  // and read only if it is a regular file.
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) return "";
    const size = stat.size;
    const length = Math.min(size, maxBytes);
    const buffer = Buffer.alloc(length);
    fs.readSync(fd, buffer, 0, length, size - length);
    return buffer.toString();
  } finally {
    fs.closeSync(fd);
  }
}

/** The end of a CRI log file: its last lines' contents (partial lines joined), bounded. */
function logTail(file: string): string {
  let text: string;
  try {
    text = readAtMost(file, 64 * 1024);
  } catch {
    return "";
  }
  const lines: string[] = [];
  let partial = "";
  for (const raw of text.split("\n")) {
    const m = /^\S+ (?:stdout|stderr) ([PF]) (.*)$/.exec(raw);
    if (!m) continue;
    partial += m[2];
    if (m[1] === "F") {
      lines.push(partial);
      partial = "";
    }
  }
  const tail = lines.slice(-MAX_LOG_LINES).join("\n");
  const bytes = Buffer.from(tail);
  return bytes.length <= MAX_LOG_BYTES ? tail : bytes.subarray(bytes.length - MAX_LOG_BYTES).toString();
}

/** The termination message of an exited container, from its annotations; "" if none. */
export function terminationMessage(annotations: Record<string, string>, exitCode: number, reason: string): string {
  const file = annotations[ANNOTATION_TERMINATION_FILE];
  const fallback = annotations[ANNOTATION_TERMINATION_POLICY] === "FallbackToLogsOnError" && exitCode !== 0 && reason !== "ContainerCannotRun";
  let message = "";
  if (file) {
    try {
      message = readAtMost(file, MAX_MESSAGE_BYTES);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") return `Error on reading termination log ${file}: ${(error as Error).message}`;
    }
  }
  if (message === "" && fallback && annotations[ANNOTATION_LOG_FILE]) message = logTail(annotations[ANNOTATION_LOG_FILE]);
  return message;
}
