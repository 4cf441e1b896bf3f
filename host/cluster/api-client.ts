// A small Kubernetes REST client for the node's own needs: JSON requests with the node's
// credentials (bearer token or client certificate, the cluster's CA), a Status error for every
// failure, and watches read as a stream of JSON lines. No generated client: the kubelet's paths
// are few and fixed. Over TLS everything shares one HTTP/2 connection (http2-connection.ts).
import type { Readable } from "node:stream";
import { Http1Connection, type ApiConnection, type ApiExchange } from "./api-connection.js";
import { Http2Connection, type Http2Options } from "./http2-connection.js";
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

/**
 * A request whose answer neither begins nor moves on for this long is given up; watches have no
 * deadline (the server ends them, and the connection's ping finds a dead link).
 */
const REQUEST_IDLE_TIMEOUT_MS = 30_000;

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

/**
 * Asks for the answer as its metadata alone (the apiserver's PartialObjectMetadata), for writes
 * whose answer is not read: a pod's status patch is answered with the whole pod otherwise, which
 * the pod watch brings down again anyway. An apiserver that cannot do it answers in full.
 */
const METADATA_ONLY = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json";

export interface RequestOptions {
  /** The answer is not read beyond its metadata: ask for no more (less to download). */
  metadataOnly?: boolean;
}

export interface ApiClientOptions {
  /** No request goes out until `setClientCertificate` gives the node its credentials. */
  awaitCredentials?: boolean;
  /** The HTTP/2 connection's health-check times and log (TLS servers only). */
  http2?: Http2Options;
}

export class ApiClient {
  private connection: ApiConnection;
  private base: URL;
  private credentialsPending: boolean;
  private credentialListeners: (() => void)[] = [];

  constructor(
    private access: ClusterAccess,
    options: ApiClientOptions = {},
  ) {
    this.credentialsPending = options.awaitCredentials === true;
    this.base = new URL(access.server);
    const tls = { caPem: access.caPem, certPem: access.certPem, keyPem: access.keyPem, rejectUnauthorized: !access.insecureSkipTlsVerify };
    this.connection = this.base.protocol === "https:" ? new Http2Connection(this.base, tls, options.http2) : new Http1Connection(this.base, tls);
  }

  /** Connections dialled to the apiserver so far: one while the link holds. */
  get dials(): number {
    return this.connection.dials;
  }

  private open(method: string, path: string, headers: Record<string, string>, payload?: Buffer): ApiExchange {
    const all: Record<string, string> = { accept: "application/json", "user-agent": "nanolet", ...headers };
    if (this.access.token) all.authorization = `Bearer ${this.access.token}`;
    return this.connection.open(method, path, all, payload);
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
  async request<T = any>(method: string, path: string, body?: unknown, contentType = "application/json", options: RequestOptions = {}): Promise<T> {
    if (this.credentialsPending) throw this.pendingError(method, path);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = payload ? { "content-type": contentType } : {};
    if (options.metadataOnly) headers.accept = METADATA_ONLY;
    const exchange = this.open(method, path, headers, payload);
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        exchange.cancel();
      }, REQUEST_IDLE_TIMEOUT_MS);
    };
    const failure = (error: unknown) =>
      error instanceof ApiStatusError ? error
        : timedOut ? new ApiStatusError(504, "Timeout", `${method} ${path}: no answer in ${REQUEST_IDLE_TIMEOUT_MS} ms`)
        : new ApiStatusError(0, "ConnectionFailed", `${method} ${path}: ${(error as Error)?.message ?? error}`);
    arm();
    try {
      const res = await exchange.response;
      const text = await readAll(res.body, MAX_RESPONSE_BYTES, arm).catch((error: Error) => {
        throw error.message === TOO_LARGE ? new ApiStatusError(0, "ResponseTooLarge", `${method} ${path}: the answer passed ${MAX_RESPONSE_BYTES} bytes`) : error;
      });
      let decoded: any;
      try {
        decoded = text ? JSON.parse(text) : undefined;
      } catch {
        decoded = undefined;
      }
      if (res.status >= 200 && res.status < 300) return decoded as T;
      throw new ApiStatusError(res.status, decoded?.reason ?? "Unknown", decoded?.message ?? `${method} ${path}: HTTP ${res.status}`);
    } catch (error) {
      exchange.cancel();
      throw failure(error);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Watches `path` (which must ask for `watch=1`): calls `onEvent` for each event until the server
   * ends the stream, the connection breaks, or `signal` aborts; `onOpen` once the server accepted
   * it. Resolves when the watch ends; rejects with ApiStatusError when the server refuses it.
   */
  async watch(path: string, onEvent: (event: WatchEvent) => void, signal?: AbortSignal, onOpen?: () => void): Promise<void> {
    if (this.credentialsPending) throw this.pendingError("watch", path);
    if (signal?.aborted) return;
    const exchange = this.open("GET", path, {});
    const abort = () => exchange.cancel();
    signal?.addEventListener("abort", abort, { once: true });
    try {
      let res;
      try {
        res = await exchange.response;
      } catch (error) {
        if (signal?.aborted) return;
        throw new ApiStatusError(0, "ConnectionFailed", `watch ${path}: ${(error as Error).message}`);
      }
      if (res.status !== 200) {
        const text = await readAll(res.body, MAX_WATCH_LINE_BYTES, () => {}).catch(() => "");
        let status: any;
        try {
          status = JSON.parse(text);
        } catch {
          status = undefined;
        }
        throw new ApiStatusError(res.status, status?.reason ?? "Unknown", status?.message ?? `watch ${path}: HTTP ${res.status}`);
      }
      onOpen?.();
      await readEvents(path, res.body, onEvent);
    } catch (error) {
      exchange.cancel();
      if (signal?.aborted && !(error instanceof ApiStatusError && error.reason === "WatchHandlerFailed")) return;
      throw error;
    } finally {
      signal?.removeEventListener("abort", abort);
    }
  }

  /**
   * Uses a new client certificate from now on (a bootstrap or a rotation): new connections are
   * made with it; the old ones are closed, so watches reconnect with it.
   */
  setClientCertificate(certPem: string, keyPem: string): void {
    this.access = { ...this.access, certPem, keyPem, token: undefined };
    if (this.base.protocol !== "https:") return;
    this.connection.setClientCertificate(certPem, keyPem);
    this.credentialsPending = false;
    for (const listener of this.credentialListeners) listener();
  }

  close(): void {
    this.connection.close();
  }
}

const TOO_LARGE = "too large";

/** The whole body as text, at most `limit` bytes; `progress` is told of each chunk. */
function readAll(body: Readable, limit: number, progress: () => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let ended = false;
    body.on("data", (c: Buffer) => {
      progress();
      bytes += c.length;
      if (bytes > limit) {
        ended = true;
        body.destroy();
        return reject(new Error(TOO_LARGE));
      }
      chunks.push(c);
    });
    body.once("end", () => {
      ended = true;
      resolve(Buffer.concat(chunks).toString("utf8"));
    });
    body.once("error", (error) => {
      ended = true;
      reject(error);
    });
    body.once("close", () => {
      if (!ended) reject(new Error("the connection closed mid-answer"));
    });
  });
}

/**
 * A watch body read as JSON lines of events until it ends; the end of the connection ends the
 * watch quietly (the caller opens another), a stream that is not events ends it with an error.
 */
function readEvents(path: string, body: Readable, onEvent: (event: WatchEvent) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    let buffer = "";
    let done = false;
    const finish = (error?: ApiStatusError) => {
      if (done) return;
      done = true;
      if (error) {
        body.destroy();
        reject(error);
      } else resolve();
    };
    body.setEncoding("utf8");
    body.on("data", (chunk: string) => {
      if (done) return;
      buffer += chunk;
      if (buffer.length > MAX_WATCH_LINE_BYTES && buffer.indexOf("\n") < 0) {
        return finish(new ApiStatusError(0, "BadWatchStream", `watch ${path}: a line longer than ${MAX_WATCH_LINE_BYTES} bytes`));
      }
      let nl: number;
      while (!done && (nl = buffer.indexOf("\n")) >= 0) {
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
        if (!valid) return finish(new ApiStatusError(0, "BadWatchStream", `watch ${path}: not a watch event: ${line.slice(0, 80)}`));
        try {
          onEvent(event!);
        } catch (error) {
          // The receiver's failure must not escape into the socket's event handler.
          return finish(new ApiStatusError(0, "WatchHandlerFailed", `watch ${path}: ${(error as Error)?.message ?? error}`));
        }
      }
    });
    body.once("end", () => finish());
    body.once("error", () => finish());
    body.once("close", () => finish());
  });
}
