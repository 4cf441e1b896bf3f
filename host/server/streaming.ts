// `/exec`, `/attach` and `/portForward`: the runtime serves the stream itself (CRI Exec, Attach and
// PortForward return a URL of its streaming server); the kubelet API checks who asks, asks the
// runtime for that URL and relays the upgraded connection both ways, whatever protocol the client
// and the runtime agree on (SPDY/3.1 or WebSocket `v4/v5.channel.k8s.io`, port-forward's too).
import http from "node:http";
import type { Duplex } from "node:stream";

/** The kubelet's query names for a remote command: `command` (repeated), `input`, `output`, `error`, `tty`. */
export interface CommandOptions {
  cmd: string[];
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

export class StreamRequestError extends Error {}

export function commandOptions(query: URLSearchParams, needCommand: boolean): CommandOptions {
  const flag = (name: string) => query.get(name) === "1" || query.get(name) === "true";
  const tty = flag("tty");
  const options = { cmd: query.getAll("command"), stdin: flag("input"), stdout: flag("output"), stderr: flag("error") && !tty, tty };
  if (needCommand && options.cmd.length === 0) throw new StreamRequestError("you must specify a command");
  if (!options.stdin && !options.stdout && !options.stderr && !(flag("error") && tty)) throw new StreamRequestError("you must specify at least 1 of stdin, stdout, stderr");
  return options;
}

/** Headers that belong to this hop, or to the caller's credentials towards the kubelet. */
const DROPPED_HEADERS = new Set(["host", "authorization", "proxy-authorization", "content-length"]);

/**
 * Relays one upgraded connection between `client` (its request `req`, the bytes it sent past the
 * headers in `head`) and the runtime's streaming `url`. Resolves when both sides are closed.
 * Either side closing or failing closes the other, so that a client that goes away frees the
 * runtime's session.
 */
export function relayUpgrade(req: http.IncomingMessage, client: Duplex, head: Buffer, url: string): Promise<void> {
  return new Promise((resolve) => {
    const target = new URL(url);
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined && !DROPPED_HEADERS.has(name)) headers[name] = value;
    }
    headers.host = target.host;
    let done = false;
    let upstreamSocket: Duplex | undefined;
    const finish = () => {
      if (done) return;
      done = true;
      client.destroy();
      upstreamSocket?.destroy();
      resolve();
    };
    client.once("close", finish);
    client.once("error", finish);
    const upstream = http.request({ host: target.hostname, port: target.port, path: target.pathname + target.search, method: req.method, headers });
    upstream.on("upgrade", (res, socket, upHead) => {
      upstreamSocket = socket;
      if (done) return finish();
      let status = `HTTP/1.1 ${res.statusCode} ${res.statusMessage}\r\n`;
      for (let i = 0; i < res.rawHeaders.length; i += 2) status += `${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}\r\n`;
      client.write(status + "\r\n");
      if (upHead.length > 0) client.write(upHead);
      if (head.length > 0) socket.write(head);
      socket.once("close", finish);
      socket.once("error", finish);
      socket.pipe(client);
      client.pipe(socket);
    });
    upstream.on("response", (res) => {
      // The runtime refused to upgrade: its answer goes to the client as it is.
      let status = `HTTP/1.1 ${res.statusCode} ${res.statusMessage}\r\nconnection: close\r\n`;
      const type = res.headers["content-type"];
      if (type) status += `content-type: ${type}\r\n`;
      client.write(status + "\r\n");
      res.pipe(client);
      res.once("end", finish);
      res.once("error", finish);
    });
    upstream.on("error", (error) => {
      if (!done) client.end(`HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nthe runtime's streaming server failed: ${error.message}\n`);
      finish();
    });
    upstream.end();
  });
}
