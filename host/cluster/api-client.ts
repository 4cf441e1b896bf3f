// A small Kubernetes REST client for the node's own needs: JSON requests with the node's
// credentials (bearer token or client certificate, the cluster's CA), a Status error for every
// failure, and watches read as a stream of JSON lines. No generated client: the kubelet's paths
// are few and fixed.
import http from "node:http";
import https from "node:https";
import type { ClusterAccess } from "./kubeconfig.js";

/** A failed request, as the apiserver's Status object says (or as the connection failed). */
export class ApiStatusError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiStatusError";
  }
}

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

export interface WatchEvent {
  type: WatchEventType;
  object: Record<string, any>;
}

/**
 * The largest answer read (a PodList of 110 pods is about 2 MiB) and the longest watch line (one
 * object: etcd stores at most 1.5 MiB): a stream past them is cut, not buffered without end.
 */
export const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
export const MAX_WATCH_LINE_BYTES = 4 * 1024 * 1024;
const WATCH_TYPES = new Set(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]);

/** Per-request deadline; watches have none (the server ends them). */
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * Said without sending anything while the node waits for its client certificate (TLS bootstrap):
 * a request without credentials would only be refused as system:anonymous.
 */
export const CREDENTIALS_PENDING = "CredentialsPending";

/**
 * Whether the apiserver refused the request itself (BadRequest, Forbidden, Invalid): sending the
 * same bytes again cannot help, unlike an outage or a timeout.
 */
export function isRefusal(error: unknown): error is ApiStatusError {
  return error instanceof ApiStatusError && (error.code === 400 || error.code === 403 || error.code === 422);
}

/** The log level of a failed call: a wait for the node's certificate is not a warning. */
export function failureLevel(error: unknown): "warn" | "debug" {
  return error instanceof ApiStatusError && error.reason === CREDENTIALS_PENDING ? "debug" : "warn";
}

export interface ApiClientOptions {
  /** No request goes out until `setClientCertificate` gives the node its credentials. */
  awaitCredentials?: boolean;
}

export class ApiClient {
  private agent: http.Agent;
  private base: URL;
  private credentialsPending: boolean;
  private credentialListeners: (() => void)[] = [];

  constructor(
    private access: ClusterAccess,
    options: ApiClientOptions = {},
  ) {
    this.credentialsPending = options.awaitCredentials === true;
    this.base = new URL(access.server);
    const tls = this.base.protocol === "https:";
    this.agent = tls
      ? new https.Agent({ keepAlive: true, ca: access.caPem, cert: access.certPem, key: access.keyPem, rejectUnauthorized: !access.insecureSkipTlsVerify })
      : new http.Agent({ keepAlive: true });
  }

  private open(method: string, path: string, headers: Record<string, string>, timeoutMs?: number): http.ClientRequest {
    const url = new URL(path, this.base);
    const options: https.RequestOptions = {
      method,
      hostname: url.hostname,
      port: url.port,
      path: url.pathname + url.search,
      agent: this.agent,
      headers: { accept: "application/json", "user-agent": "nanolet", ...headers },
      timeout: timeoutMs,
    };
    if (this.access.token) (options.headers as Record<string, string>).authorization = `Bearer ${this.access.token}`;
    return (this.base.protocol === "https:" ? https : http).request(options);
  }

  /** Whether requests wait for the node's client certificate (TLS bootstrap under way). */
  get awaitingCredentials(): boolean {
    return this.credentialsPending;
  }

  /** Calls `listener` each time the client gets new credentials (a bootstrap, a rotation). */
  onCredentials(listener: () => void): void {
    this.credentialListeners.push(listener);
  }

  private pendingError(method: string, path: string): ApiStatusError {
    return new ApiStatusError(0, CREDENTIALS_PENDING, `${method} ${path}: not sent: the node has no client certificate yet (TLS bootstrap under way)`);
  }

  /** One JSON request; resolves with the decoded body, rejects with ApiStatusError. */
  request<T = any>(method: string, path: string, body?: unknown, contentType = "application/json"): Promise<T> {
    if (this.credentialsPending) return Promise.reject(this.pendingError(method, path));
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const req = this.open(method, path, payload ? { "content-type": contentType, "content-length": String(payload.length) } : {}, REQUEST_TIMEOUT_MS);
      req.on("timeout", () => req.destroy(new ApiStatusError(504, "Timeout", `${method} ${path}: no answer in ${REQUEST_TIMEOUT_MS} ms`)));
      req.on("error", (error) => reject(error instanceof ApiStatusError ? error : new ApiStatusError(0, "ConnectionFailed", `${method} ${path}: ${error.message}`)));
      req.on("response", (res) => {
        const chunks: Buffer[] = [];
        let bytes = 0;
        res.on("data", (c: Buffer) => {
          bytes += c.length;
          if (bytes > MAX_RESPONSE_BYTES) {
            req.destroy(new ApiStatusError(0, "ResponseTooLarge", `${method} ${path}: the answer passed ${MAX_RESPONSE_BYTES} bytes`));
            return;
          }
          chunks.push(c);
        });
        res.on("error", (error) => reject(new ApiStatusError(0, "ConnectionFailed", `${method} ${path}: ${error.message}`)));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let decoded: any;
          try {
            decoded = text ? JSON.parse(text) : undefined;
          } catch {
            decoded = undefined;
          }
          const code = res.statusCode ?? 0;
          if (code >= 200 && code < 300) return resolve(decoded as T);
          reject(new ApiStatusError(code, decoded?.reason ?? "Unknown", decoded?.message ?? `${method} ${path}: HTTP ${code}`));
        });
      });
      req.end(payload);
    });
  }

  /**
   * Watches `path` (which must ask for `watch=1`): calls `onEvent` for each event until the server
   * ends the stream, the connection breaks, or `signal` aborts. Resolves when the watch ends;
   * rejects with ApiStatusError when the server refuses it.
   */
  watch(path: string, onEvent: (event: WatchEvent) => void, signal?: AbortSignal): Promise<void> {
    if (this.credentialsPending) return Promise.reject(this.pendingError("watch", path));
    return new Promise((resolve, reject) => {
      const req = this.open("GET", path, {});
      const abort = () => req.destroy();
      signal?.addEventListener("abort", abort, { once: true });
      const finish = (error?: Error) => {
        signal?.removeEventListener("abort", abort);
        if (error) reject(error);
        else resolve();
      };
      req.on("error", (error) => (signal?.aborted ? finish() : finish(new ApiStatusError(0, "ConnectionFailed", `watch ${path}: ${error.message}`))));
      req.on("response", (res) => {
        const code = res.statusCode ?? 0;
        let buffer = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          buffer += chunk;
          if (buffer.length > MAX_WATCH_LINE_BYTES && buffer.indexOf("\n") < 0) {
            req.destroy();
            return finish(new ApiStatusError(0, "BadWatchStream", `watch ${path}: a line longer than ${MAX_WATCH_LINE_BYTES} bytes`));
          }
          if (code !== 200) return;
          let nl: number;
          while ((nl = buffer.indexOf("\n")) >= 0) {
            const line = buffer.slice(0, nl).trim();
            buffer = buffer.slice(nl + 1);
            if (!line) continue;
            let event: WatchEvent | undefined;
            try {
              event = JSON.parse(line) as WatchEvent;
            } catch {
              event = undefined;
            }
            // A stream that is not JSON lines of events cannot be followed: end the watch with an error.
            const valid = event !== null && typeof event === "object" && WATCH_TYPES.has(event.type) && event.object !== null && typeof event.object === "object" && !Array.isArray(event.object);
            if (!valid) {
              req.destroy();
              return finish(new ApiStatusError(0, "BadWatchStream", `watch ${path}: not a watch event: ${line.slice(0, 80)}`));
            }
            try {
              onEvent(event!);
            } catch (error) {
              // The receiver's failure must not escape into the socket's event handler.
              req.destroy();
              return finish(new ApiStatusError(0, "WatchHandlerFailed", `watch ${path}: ${(error as Error)?.message ?? error}`));
            }
          }
        });
        res.on("error", () => finish());
        res.on("end", () => {
          if (code === 200) return finish();
          let status: any;
          try {
            status = JSON.parse(buffer);
          } catch {
            status = undefined;
          }
          finish(new ApiStatusError(code, status?.reason ?? "Unknown", status?.message ?? `watch ${path}: HTTP ${code}`));
        });
      });
      req.end();
    });
  }

  /**
   * Uses a new client certificate from now on (a bootstrap or a rotation): new connections are
   * made with it; the old ones are closed, so watches reconnect with it.
   */
  setClientCertificate(certPem: string, keyPem: string): void {
    this.access = { ...this.access, certPem, keyPem, token: undefined };
    if (this.base.protocol !== "https:") return;
    const old = this.agent;
    this.agent = new https.Agent({ keepAlive: true, ca: this.access.caPem, cert: certPem, key: keyPem, rejectUnauthorized: !this.access.insecureSkipTlsVerify });
    old.destroy();
    this.credentialsPending = false;
    for (const listener of this.credentialListeners) listener();
  }

  close(): void {
    this.agent.destroy();
  }
}
