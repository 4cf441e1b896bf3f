// `/logs/`: the node's log files under /var/log, as the kubelet serves them (a directory answers a
// listing, a file its bytes), for `kubectl get --raw /api/v1/nodes/<node>/proxy/logs/`. Paths stay
// under the directory (symlinks leading out are refused), files are streamed, never read whole.
import fs from "node:fs";
import type http from "node:http";
import path from "node:path";
import { PathEscapeError, pathUnder } from "../safe-path.js";

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
  let target: string;
  try {
    target = rest === "" ? path.resolve(root) : pathUnder(root, rest);
    const real = fs.realpathSync(target);
    const realRoot = fs.realpathSync(root);
    if (real !== realRoot && !real.startsWith(realRoot + path.sep)) return fail(404, "404 page not found\n");
    target = real;
  } catch (error) {
    if (error instanceof PathEscapeError) return fail(400, "invalid path\n");
    return fail(404, "404 page not found\n");
  }
  const stat = fs.statSync(target);
  if (stat.isDirectory()) {
    const names = fs.readdirSync(target, { withFileTypes: true }).map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort();
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(`<pre>\n${names.map((n) => `<a href="${escapeHtml(encodeURI(n))}">${escapeHtml(n)}</a>`).join("\n")}\n</pre>\n`);
    return;
  }
  if (!stat.isFile()) return fail(404, "404 page not found\n");
  res.writeHead(200, { "content-type": "text/plain; charset=utf-8", "content-length": String(stat.size) });
  const stream = fs.createReadStream(target);
  stream.on("error", () => res.destroy());
  res.on("close", () => stream.destroy());
  stream.pipe(res);
}
