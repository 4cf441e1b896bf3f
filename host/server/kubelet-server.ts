// The kubelet API on --port (10250, HTTPS): who asks is authenticated (client certificate, token
// review, or anonymous if allowed) and authorized (SubjectAccessReview or AlwaysAllow) on every
// request, upgrades included; then /healthz, /pods, /runningpods/, /configz, /containerLogs,
// /exec, /attach, /portForward, /stats and /metrics are served. A bad request is a 4xx with a
// message, never a crash of the agent.
import http from "node:http";
import https from "node:https";
import type { Duplex } from "node:stream";
import type { Runtime } from "../cri/runtime.js";
import type { Logger } from "../common/log.js";
import { Authenticator, type UserInfo } from "./authn.js";
import { type Authorizer, authorizationErrorMessage, forbiddenMessage, requestAttributes } from "./authz.js";
import { LogQueryError, parseLogOptions, writeContainerLog } from "./container-logs.js";
import { serveNodeLog } from "./node-logs.js";
import { PodLookup } from "./pod-lookup.js";
import { StreamRequestError, commandOptions, relayUpgrade } from "./streaming.js";
import { KUBELET_API_LIMITS, guardConnections, type ConnectionLimits, type GuardCounts } from "./connection-guard.js";

/** A handler of a plain (not upgraded) request: writes the answer. */
export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => Promise<void> | void;

export interface KubeletServerOptions {
  runtime: Runtime;
  podLogsDir: string;
  log: Logger;
  authenticator: Authenticator;
  authorizer: Authorizer;
  /** The pods this node runs, as v1 Pod objects (for /pods). */
  pods: () => object[];
  /**
   * The container's last termination as the node reports it (`lastState.terminated`'s container
   * ID, "" when none), for `--previous`; undefined when the node has no status of the pod.
   */
  lastTerminatedId?: (podUid: string, container: string) => string | undefined;
  /** The SyncLoop's health: undefined when healthy, else why not (for /healthz/syncloop). */
  syncLoopProblem: () => string | undefined;
  /** The configuration in effect (for /configz). */
  configz: () => object;
  /** More read-only endpoints by path (stats, metrics), added by their owners. */
  extraHandlers?: Record<string, Handler>;
  /** Where /logs/ serves from (/var/log). */
  nodeLogDir?: string;
  /** The read-only port: only /healthz, /pods, /stats and /metrics; no logs, exec or config. */
  readOnly?: boolean;
  /** What an unauthenticated client may hold (tests lower them). */
  limits?: ConnectionLimits;
  now?: () => number;
}

const READ_ONLY_PATHS = /^\/(healthz|pods|stats|metrics)(\/|$)/;

/** Most streaming sessions relayed at once; past it a new one gets 429 (a limit on everything). */
export const MAX_STREAMING_SESSIONS = 256;

export class HttpError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

function send(res: http.ServerResponse, code: number, body: string, type = "text/plain; charset=utf-8"): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(code, { "content-type": type });
  res.end(body);
}

function sendJson(res: http.ServerResponse, value: unknown): void {
  send(res, 200, JSON.stringify(value), "application/json");
}

/** A raw request path with a `.` or `..` segment, which URL parsing would silently resolve. */
function hasDotSegment(rawUrl: string): boolean {
  const pathPart = rawUrl.split("?")[0];
  return pathPart.split("/").some((s) => {
    const plain = s.toLowerCase().replace(/%2e/g, ".");
    return plain === "." || plain === "..";
  });
}

/** The request's URL, or undefined when it is not one or has dot segments (a 400). */
function requestUrl(req: http.IncomingMessage): URL | undefined {
  const raw = req.url ?? "/";
  if (hasDotSegment(raw)) return undefined;
  try {
    return new URL(raw, "https://node");
  } catch {
    return undefined;
  }
}

/** A path segment as the kubelet's router takes it: decoded, and never `.`, `..` or empty. */
function segment(raw: string): string {
  let s: string;
  try {
    s = decodeURIComponent(raw);
  } catch {
    throw new HttpError(400, `invalid path segment "${raw}"`);
  }
  if (s === "" || s === "." || s === ".." || s.includes("/")) throw new HttpError(400, `invalid path segment "${raw}"`);
  return s;
}

export class KubeletServer {
  private lookup: PodLookup;
  private now: () => number;
  /** Upgraded connections being relayed to the runtime. */
  readonly sessions = new Set<Duplex>();
  private servers: http.Server[] = [];
  /** Connections refused or timed out before sending a request, per listening server. */
  readonly guards: GuardCounts[] = [];

  constructor(private options: KubeletServerOptions) {
    this.lookup = new PodLookup(options.runtime, options.podLogsDir);
    this.now = options.now ?? Date.now;
  }

  /** HTTPS with the serving certificate; client certificates are asked for and checked against `clientCaPem`. */
  listenHttps(port: number, address: string, tls: { certPem: string; keyPem: string; clientCaPem?: string }): Promise<https.Server> {
    const server = https.createServer({
      cert: tls.certPem,
      key: tls.keyPem,
      ca: tls.clientCaPem,
      requestCert: tls.clientCaPem !== undefined,
      rejectUnauthorized: false, // no certificate (or a bad one) is not an identity; tokens may still be
      handshakeTimeout: (this.options.limits ?? KUBELET_API_LIMITS).pendingTimeoutMs,
    });
    return this.listen(server, port, address);
  }

  /** Plain HTTP (the read-only port, or tests). */
  listenHttp(port: number, address: string): Promise<http.Server> {
    return this.listen(http.createServer(), port, address);
  }

  private listen<S extends http.Server>(server: S, port: number, address: string): Promise<S> {
    server.on("request", (req, res) => void this.onRequest(req, res));
    server.on("upgrade", (req, socket, head) => void this.onUpgrade(req, socket, head));
    server.on("clientError", (_error, socket) => socket.destroy());
    this.guards.push(guardConnections(server, this.options.limits ?? KUBELET_API_LIMITS));
    this.servers.push(server);
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, address, () => {
        server.off("error", reject);
        resolve(server);
      });
    });
  }

  close(): void {
    for (const s of this.servers) s.close();
    for (const s of this.sessions) s.destroy();
  }

  /** Authenticates and authorizes: the user, or the code and message to refuse with (401, 403, 500). */
  private async admit(req: http.IncomingMessage, pathname: string): Promise<{ user: UserInfo } | { code: number; message: string }> {
    const nowMs = this.now();
    let user: UserInfo | undefined;
    try {
      user = await this.options.authenticator.authenticate(req, nowMs);
    } catch (error) {
      this.options.log.log("warn", "Kubelet API: authentication failed", { path: pathname, error: (error as Error).message });
      return { code: 401, message: "Unauthorized" };
    }
    if (!user) return { code: 401, message: "Unauthorized" };
    const attributes = requestAttributes(req.method ?? "GET", pathname);
    for (const a of attributes) {
      try {
        if (await this.options.authorizer.allowed(user, a, nowMs)) return { user };
      } catch (error) {
        const message = authorizationErrorMessage(user, attributes);
        this.options.log.log("warn", "Kubelet API: authorization failed", { path: pathname, error: (error as Error).message });
        return { code: 500, message };
      }
    }
    return { code: 403, message: forbiddenMessage(user, attributes) };
  }

  private async onRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = requestUrl(req);
    if (!url) return send(res, 400, `invalid path segment in "${req.url}"\n`);
    try {
      const admitted = await this.admit(req, url.pathname);
      if ("code" in admitted) return send(res, admitted.code, admitted.message);
      await this.route(req, res, url);
    } catch (error) {
      if (error instanceof HttpError) return send(res, error.code, error.message);
      this.options.log.log("error", "Kubelet API: request failed", { path: url.pathname, error: (error as Error).message });
      send(res, 500, `internal error: ${(error as Error).message}`);
    }
  }

  private async route(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    const p = url.pathname;
    let m: RegExpExecArray | null;
    if (this.options.readOnly && !READ_ONLY_PATHS.test(p)) throw new HttpError(404, "404 page not found\n");
    if (/^\/(exec|attach|portForward)(\/|$)/.test(p)) throw new HttpError(400, "Upgrade request required");
    if ((m = /^\/run\/([^/]+)\/([^/]+)\/(?:([^/]+)\/)?([^/]+)\/?$/.exec(p))) {
      if (req.method !== "POST") throw new HttpError(405, `method ${req.method} not allowed`);
      return this.run(res, url, segment(m[1]), segment(m[2]), m[3] === undefined ? undefined : segment(m[3]), segment(m[4]));
    }
    if (req.method !== "GET" && req.method !== "HEAD") throw new HttpError(405, `method ${req.method} not allowed`);
    if (p === "/healthz" || p === "/healthz/ping" || p === "/healthz/log") return send(res, 200, "ok");
    if (p === "/healthz/syncloop") {
      const problem = this.options.syncLoopProblem();
      return problem === undefined ? send(res, 200, "ok") : send(res, 500, `[-]syncloop failed: ${problem}\n`);
    }
    if (p === "/pods" || p === "/pods/") return sendJson(res, { kind: "PodList", apiVersion: "v1", metadata: {}, items: this.options.pods() });
    if (p === "/runningpods" || p === "/runningpods/") return sendJson(res, await this.runningPods());
    if (p === "/configz") return sendJson(res, { kubeletconfig: this.options.configz() });
    if ((m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)\/?$/.exec(p))) return this.containerLogs(res, url, segment(m[1]), segment(m[2]), segment(m[3]));
    if (/^\/containerLogs(\/|$)/.test(p)) throw new HttpError(400, `{"message": "Missing podID."}`);
    if (p === "/logs" || p.startsWith("/logs/")) return serveNodeLog(res, decodeURIComponent(p.slice("/logs/".length)), this.options.nodeLogDir);
    const extra = this.options.extraHandlers?.[p];
    if (extra) return extra(req, res, url);
    throw new HttpError(404, "404 page not found\n");
  }

  private async containerLogs(res: http.ServerResponse, url: URL, namespace: string, pod: string, container: string): Promise<void> {
    let options;
    try {
      options = parseLogOptions(url.searchParams);
    } catch (error) {
      if (error instanceof LogQueryError) throw new HttpError(error.code, `{"message": "${error.message}"}`);
      throw error;
    }
    const found = await this.lookup.container(namespace, pod, container);
    if (!found) throw new HttpError(404, `pod "${pod}" does not exist`);
    let target = options.previous ? found.previous : found.current;
    // `--previous` is the status's last termination, as upstream's: the instance before the
    // running one, or the newest one itself while it waits to restart.
    const lastId = options.previous ? this.options.lastTerminatedId?.(found.sandbox.podUid, container) : undefined;
    if (lastId !== undefined) target = lastId === "" ? undefined : found.all.find((c) => c.id === lastId.replace(/^[a-z0-9]+:\/\//, ""));
    if (!target) {
      if (!found.current) throw new HttpError(404, `container "${container}" not found in pod "${pod}"`);
      throw new HttpError(400, `previous terminated container "${container}" in pod "${pod}" not found`);
    }
    const file = PodLookup.logFile(found, container, target.attempt);
    res.writeHead(200, { "content-type": "text/plain", "transfer-encoding": "chunked" });
    const runtime = this.options.runtime;
    try {
      await writeContainerLog(res, { file, stillRunning: async () => (await runtime.containerStatus(target.id)).state === "running" }, options, this.now());
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    res.end();
  }

  /** `POST /run/{ns}/{pod}[/{uid}]/{container}?cmd=...`: runs the command (split on spaces) and answers its output. */
  private async run(res: http.ServerResponse, url: URL, namespace: string, pod: string, uid: string | undefined, container: string): Promise<void> {
    const cmd = (url.searchParams.get("cmd") ?? "").split(/\s+/).filter(Boolean);
    if (cmd.length === 0) throw new HttpError(400, "you must specify a command (cmd)");
    const found = await this.lookup.container(namespace, pod, container);
    if (!found || (uid !== undefined && uid !== found.sandbox.podUid)) throw new HttpError(404, `pod "${pod}" does not exist`);
    if (!found.current || found.current.state !== "running") throw new HttpError(404, `container "${container}" not found in pod "${pod}"`);
    const out = await this.options.runtime.execSync(found.current.id, cmd, 0);
    res.writeHead(200, { "content-type": "text/plain" });
    res.end(Buffer.concat([out.stdout, out.stderr]));
  }

  private async runningPods(): Promise<object> {
    const containers = await this.options.runtime.listContainers({ "nanolet.io/managed": "true" });
    const sandboxes = await this.options.runtime.listPodSandboxes({ "nanolet.io/managed": "true" });
    const items = sandboxes
      .filter((s) => s.state === "ready")
      .map((s) => ({
        metadata: { name: s.podName, namespace: s.podNamespace, uid: s.podUid },
        spec: { containers: containers.filter((c) => c.sandboxId === s.id && c.state === "running").map((c) => ({ name: c.name, image: c.image })) },
        status: {},
      }));
    return { kind: "PodList", apiVersion: "v1", metadata: {}, items };
  }

  private async onUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const reject = (code: number, message: string) => {
      socket.end(`HTTP/1.1 ${code} ${http.STATUS_CODES[code] ?? ""}\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n\r\n${message}`);
    };
    socket.on("error", () => socket.destroy());
    const url = requestUrl(req);
    if (!url) return reject(400, `invalid path segment in "${req.url}"\n`);
    try {
      const admitted = await this.admit(req, url.pathname);
      if ("code" in admitted) return reject(admitted.code, admitted.message);
      if (this.options.readOnly) return reject(404, "404 page not found\n");
      if (this.sessions.size >= MAX_STREAMING_SESSIONS) return reject(429, `too many streaming sessions (at most ${MAX_STREAMING_SESSIONS})`);
      const streamUrl = await this.streamingUrl(url);
      this.sessions.add(socket);
      try {
        await relayUpgrade(req, socket, head, streamUrl);
      } finally {
        this.sessions.delete(socket);
      }
    } catch (error) {
      if (error instanceof HttpError) return reject(error.code, error.message);
      if (error instanceof StreamRequestError) return reject(400, error.message);
      this.options.log.log("warn", "Kubelet API: streaming request failed", { path: url.pathname, error: (error as Error).message });
      reject(500, (error as Error).message);
    }
  }

  /** The runtime's URL for an exec, attach or port-forward request. */
  private async streamingUrl(url: URL): Promise<string> {
    const p = url.pathname;
    let m: RegExpExecArray | null;
    // /exec/{ns}/{pod}/{container} and /exec/{ns}/{pod}/{uid}/{container}; the same for attach.
    if ((m = /^\/(exec|attach)\/([^/]+)\/([^/]+)\/(?:([^/]+)\/)?([^/]+)\/?$/.exec(p))) {
      const kind = m[1] as "exec" | "attach";
      const [namespace, pod, container] = [segment(m[2]), segment(m[3]), segment(m[5])];
      const options = commandOptions(url.searchParams, kind === "exec");
      const found = await this.lookup.container(namespace, pod, container);
      if (!found) throw new HttpError(404, `pod "${pod}" does not exist`);
      if (m[4] !== undefined && segment(m[4]) !== found.sandbox.podUid) throw new HttpError(404, `pod "${pod}" with uid ${m[4]} does not exist`);
      if (!found.current || found.current.state !== "running") throw new HttpError(400, `container ${container} is not running`);
      const { stdin, stdout, stderr, tty } = options;
      return kind === "exec"
        ? this.options.runtime.streamingUrl({ kind, containerId: found.current.id, cmd: options.cmd, stdin, stdout, stderr, tty })
        : this.options.runtime.streamingUrl({ kind, containerId: found.current.id, stdin, stdout, stderr, tty });
    }
    if ((m = /^\/portForward\/([^/]+)\/([^/]+)(?:\/([^/]+))?\/?$/.exec(p))) {
      const [namespace, pod] = [segment(m[1]), segment(m[2])];
      const sandbox = await this.lookup.sandbox(namespace, pod);
      if (!sandbox || sandbox.state !== "ready") throw new HttpError(404, `pod "${pod}" does not exist`);
      if (m[3] !== undefined && segment(m[3]) !== sandbox.podUid) throw new HttpError(404, `pod "${pod}" with uid ${m[3]} does not exist`);
      const ports = url.searchParams.getAll("port").map((s) => Number(s));
      if (ports.some((n) => !Number.isInteger(n) || n < 1 || n > 65535)) throw new HttpError(400, "invalid port: must be 1-65535");
      return this.options.runtime.streamingUrl({ kind: "portforward", sandboxId: sandbox.id, ports });
    }
    throw new HttpError(404, "404 page not found\n");
  }
}

/** The healthz server on --healthz-bind-address:--healthz-port (127.0.0.1:10248): no auth, as upstream. */
export function startHealthzServer(port: number, address: string, syncLoopProblem: () => string | undefined): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const p = (req.url ?? "/").split("?")[0];
    if (p === "/healthz" || p === "/healthz/syncloop") {
      const problem = syncLoopProblem();
      return problem === undefined ? send(res, 200, "ok") : send(res, 500, `[-]syncloop failed: ${problem}\n`);
    }
    send(res, 404, "404 page not found\n");
  });
  guardConnections(server);
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, address, () => resolve(server));
  });
}
