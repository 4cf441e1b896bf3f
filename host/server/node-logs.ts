// `/logs/`: the node's log files under /var/log, as the kubelet serves them (a directory answers a
// listing, a file its bytes), for `kubectl get --raw /api/v1/nodes/<node>/proxy/logs/`. Paths stay
// under the directory (symlinks leading out are refused), files are streamed, never read whole.
import fs from "node:fs";
import type http from "node:http";
import path from "node:path";
import { PathEscapeError, pathUnder } from "../common/safe-path.js";
import { fdPath, safeOpen, within } from "../files/safe-open.js";

export const NODE_LOG_DIR = "/var/log";

function escapeHtml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** Answers `/logs/<rest>`; `rest` is the decoded remainder of the path. */
export function serveNodeLog(res: http.ServerResponse, rest: string, root = NODE_LOG_DIR): void {
  const fail = (code: number, message: string) => {
    res.writeHead(code, { "content-type": "text/plain; charset=utf-8" });
    res.end(message);
  };
  // Resolved once, then opened component by component without following links: what is served
  // is what was opened, whatever is renamed under /var/log meanwhile.
  let fd: number;
  try {
    const realRoot = fs.realpathSync(root);
    const target = rest === "" ? realRoot : pathUnder(root, rest);
    const real = fs.realpathSync(target);
    if (!within(real, realRoot)) return fail(404, "404 page not found\n");
    fd = safeOpen(realRoot, path.relative(realRoot, real));
  } catch (error) {
    if (error instanceof PathEscapeError) return fail(400, "invalid path\n");
    return fail(404, "404 page not found\n");
  }
  let stat: fs.Stats;
  let readFd: number | undefined;
  try {
    stat = fs.fstatSync(fd);
    if (stat.isDirectory()) {
      const names = fs.readdirSync(fdPath(fd), { withFileTypes: true }).map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort();
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(`<pre>\n${names.map((n) => `<a href="${escapeHtml(encodeURI(n))}">${escapeHtml(n)}</a>`).join("\n")}\n</pre>\n`);
      return;
    }
    if (!stat.isFile()) return fail(404, "404 page not found\n");
    // Reopened for reading through the descriptor held, not through the path.
    readFd = fs.openSync(fdPath(fd), fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch {
    return fail(404, "404 page not found\n");
  } finally {
    fs.closeSync(fd);
  }
  res.writeHead(200, { "content-type": "text/plain; charset=utf-8", "content-length": String(stat.size) });
  const stream = fs.createReadStream("", { fd: readFd, start: 0, end: Math.max(0, stat.size - 1) });
  if (stat.size === 0) {
    stream.destroy();
    res.end();
    return;
  }
  stream.on("error", () => res.destroy());
  res.on("close", () => stream.destroy());
  stream.pipe(res);
}
