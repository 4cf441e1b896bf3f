// Every request and watch to the apiserver over one HTTP/2 connection, as client-go keeps it: one
// TLS handshake (and one client certificate sent) for the node's whole conversation, headers
// compressed, watches as streams beside the requests. A link that went quiet is probed with an
// HTTP/2 ping after client-go's read-idle time and dropped when the ping is not answered, so a
// dead uplink is noticed in under a minute (the node lease lasts 40 s); a connection that cannot
// be dialled is dialled again with a doubling back-off, requests in between failing at once.
// A connection holds as many streams as the server allows at once (kube-apiserver: 1000); past
// that, as Go's transport does, another connection is dialled rather than a stream refused (a
// node with a watch per configMap and secret can pass 250), and it is closed once it is idle.
import http2 from "node:http2";
import net from "node:net";
import tls from "node:tls";
import { Http1Connection, type ApiConnection, type ApiExchange, type ApiResponse, type TlsMaterial } from "./api-connection.js";

/** client-go's HTTP/2 health check: a ping after 30 s without a frame, dropped after 15 s more. */
export const READ_IDLE_MS = 30_000;
export const PING_TIMEOUT_MS = 15_000;
/** Dials after a failed one wait 500 ms, doubling to 30 s; a connection that works resets it. */
export const DIAL_BACKOFF_INITIAL_MS = 500;
export const DIAL_BACKOFF_MAX_MS = 30_000;
/** Streams assumed allowed on a connection before the server's SETTINGS say (Go assumes the same). */
const INITIAL_MAX_STREAMS = 100;

export interface Http2Options {
  readIdleMs?: number;
  pingTimeoutMs?: number;
  /** Told when the connection is lost or falls back to HTTP/1.1, for the log. */
  onNotice?: (message: string, fields: Record<string, string | undefined>) => void;
}

/** One dialled connection and the streams open on it (it keeps the process alive only then). */
interface Dialled {
  session: http2.ClientHttp2Session;
  socket: tls.TLSSocket;
  streams: number;
  connected: boolean;
  /** Closed by us as an idle extra connection (nothing to tell). */
  retired?: boolean;
}

export class Http2Connection implements ApiConnection {
  /** The live connections; the first is the one kept when idle. */
  private live: Dialled[] = [];
  /** Set once the server is seen not to speak h2: everything goes over HTTP/1.1 from then on. */
  private fallback?: Http1Connection;
  private dialCount = 0;
  private failedDials = 0;
  private nextDialAtMs = 0;
  private closed = false;
  /** What the server allows per connection, as its last SETTINGS said: a new connection is filled no further. */
  private serverMaxStreams = INITIAL_MAX_STREAMS;

  constructor(
    private readonly base: URL,
    private tls: TlsMaterial,
    private readonly options: Http2Options = {},
  ) {}

  get dials(): number {
    return this.dialCount + (this.fallback?.dials ?? 0);
  }

  /** Whether the server was found not to speak HTTP/2 (requests go over HTTP/1.1). */
  get http1Fallback(): boolean {
    return this.fallback !== undefined;
  }

  open(method: string, path: string, headers: Record<string, string>, payload?: Buffer): ApiExchange {
    if (this.fallback) return this.fallback.open(method, path, headers, payload);
    const dialled = this.connection();
    if (typeof dialled === "string") return { response: Promise.reject(new Error(dialled)), cancel: () => {} };
    const url = new URL(path, this.base);
    const requestHeaders: http2.OutgoingHttpHeaders = { ":method": method, ":path": url.pathname + url.search, ...headers };
    if (payload) requestHeaders["content-length"] = String(payload.length);
    let stream: http2.ClientHttp2Stream;
    try {
      stream = dialled.session.request(requestHeaders, { endStream: !payload });
    } catch (error) {
      return { response: Promise.reject(error as Error), cancel: () => {} };
    }
    if (dialled.streams++ === 0) dialled.session.ref();
    stream.once("close", () => {
      if (--dialled.streams > 0 || dialled.session.destroyed) return;
      dialled.session.unref();
      // An extra connection, dialled because the others were full, goes once it is idle.
      if (this.live.indexOf(dialled) > 0) {
        this.forget(dialled);
        dialled.retired = true;
        dialled.session.close();
      }
    });
    let retried: ApiExchange | undefined;
    const response = new Promise<ApiResponse>((resolve, reject) => {
      let answered = false;
      stream.once("response", (h) => {
        answered = true;
        resolve({ status: Number(h[":status"] ?? 0), body: stream });
      });
      const failed = (error: Error) => {
        if (answered) return;
        answered = true;
        // The server turned out to speak only HTTP/1.1: it never read this request, so send it again there.
        if (this.fallback) {
          retried = this.fallback.open(method, path, headers, payload);
          retried.response.then(resolve, reject);
        } else reject(error);
      };
      stream.once("error", failed);
      stream.once("close", () => failed(new Error(`the stream closed before an answer (HTTP/2 code ${stream.rstCode})`)));
    });
    if (payload) stream.end(payload);
    return {
      response,
      cancel: () => {
        retried?.cancel();
        if (!stream.closed) stream.close(http2.constants.NGHTTP2_CANCEL);
      },
    };
  }

  /** A live connection with room for a stream, dialled if there is none; a reason when dialling must wait. */
  private connection(): Dialled | string {
    if (this.closed) return "the client is closed";
    this.live = this.live.filter((d) => !d.session.closed && !d.session.destroyed);
    const room = this.live.find((d) => d.streams < this.serverMaxStreams);
    if (room) return room;
    const waitMs = this.nextDialAtMs - Date.now();
    if (this.failedDials > 0 && waitMs > 0) {
      return `not dialled: the last ${this.failedDials} dial${this.failedDials === 1 ? "" : "s"} to ${this.base.host} failed; the next in ${waitMs} ms`;
    }
    return this.dial();
  }

  private dial(): Dialled {
    this.dialCount++;
    const host = this.base.hostname.replace(/^\[(.*)\]$/, "$1");
    const socket = tls.connect({
      host,
      port: Number(this.base.port || 443),
      // SNI carries names only: an address is not sent.
      servername: net.isIP(host) ? undefined : host,
      ALPNProtocols: ["h2", "http/1.1"],
      ca: this.tls.caPem,
      cert: this.tls.certPem,
      key: this.tls.keyPem,
      rejectUnauthorized: this.tls.rejectUnauthorized,
    });
    socket.once("secureConnect", () => {
      if (socket.alpnProtocol === "h2" || this.fallback) return;
      this.fallback = new Http1Connection(this.base, this.tls);
      this.options.onNotice?.("The apiserver does not speak HTTP/2; using HTTP/1.1", { server: this.base.host, alpn: socket.alpnProtocol || "none" });
    });
    const session = http2.connect(this.base.origin, { createConnection: () => socket });
    const dialled: Dialled = { session, socket, streams: 0, connected: false };
    session.unref();
    session.on("remoteSettings", (settings) => {
      if (settings.maxConcurrentStreams !== undefined) this.serverMaxStreams = settings.maxConcurrentStreams;
    });
    session.on("connect", () => {
      dialled.connected = true;
      this.failedDials = 0;
    });
    // Each stream carries the failure to its caller; the session's own error is only noted.
    let lastError = "";
    session.on("error", (error: Error) => {
      lastError = error.message;
    });
    session.on("goaway", () => {
      // The server is closing this connection: new requests go to a new one at once.
      this.forget(dialled);
    });
    session.on("close", () => {
      this.forget(dialled);
      if (!dialled.connected) {
        this.failedDials++;
        const delayMs = Math.min(DIAL_BACKOFF_INITIAL_MS * 2 ** (this.failedDials - 1), DIAL_BACKOFF_MAX_MS);
        this.nextDialAtMs = Date.now() + delayMs;
      } else if (!this.closed && !dialled.retired) {
        this.options.onNotice?.("The apiserver connection closed; the next request dials again", { server: this.base.host, error: lastError || undefined });
      }
    });
    this.watchHealth(dialled);
    this.live.push(dialled);
    return dialled;
  }

  private forget(dialled: Dialled): void {
    const i = this.live.indexOf(dialled);
    if (i >= 0) this.live.splice(i, 1);
  }

  /** Pings a connection that has read nothing for a while; one that does not answer is dropped. */
  private watchHealth(dialled: Dialled): void {
    const readIdleMs = this.options.readIdleMs ?? READ_IDLE_MS;
    const pingTimeoutMs = this.options.pingTimeoutMs ?? PING_TIMEOUT_MS;
    const { session, socket } = dialled;
    let lastBytes = socket.bytesRead;
    let lastReadAtMs = Date.now();
    let pinging = false;
    const timer = setInterval(() => {
      if (!dialled.connected || session.destroyed) return;
      const now = Date.now();
      if (socket.bytesRead !== lastBytes) {
        lastBytes = socket.bytesRead;
        lastReadAtMs = now;
        return;
      }
      if (pinging || now - lastReadAtMs < readIdleMs) return;
      pinging = true;
      const deadline = setTimeout(() => session.destroy(new Error(`no answer to an HTTP/2 ping in ${pingTimeoutMs} ms`)), pingTimeoutMs);
      deadline.unref();
      const sent = session.ping((error) => {
        clearTimeout(deadline);
        pinging = false;
        if (error) session.destroy(error);
        else lastReadAtMs = Date.now();
      });
      if (!sent) {
        clearTimeout(deadline);
        pinging = false;
      }
    }, Math.max(50, Math.floor(Math.min(readIdleMs, pingTimeoutMs) / 3)));
    timer.unref();
    session.once("close", () => clearInterval(timer));
  }

  setClientCertificate(certPem: string, keyPem: string): void {
    this.tls = { ...this.tls, certPem, keyPem };
    this.fallback?.setClientCertificate(certPem, keyPem);
    // Streams on the old connections (watches) end and are opened again with the new identity.
    const old = this.live;
    this.live = [];
    this.failedDials = 0;
    for (const d of old) d.session.destroy();
  }

  close(): void {
    this.closed = true;
    for (const d of this.live) d.session.destroy();
    this.live = [];
    this.fallback?.close();
  }
}
