// How requests reach the apiserver: an exchange is one request and its streamed answer, whatever
// carries it. Over TLS that is one HTTP/2 connection for everything (http2-connection.ts); a
// plain-http server (a test apiserver, `kubectl proxy`) and a TLS server that will not speak h2
// get HTTP/1.1 with kept-alive sockets (this file).
import http from "node:http";
import https from "node:https";
import type { Readable } from "node:stream";

/** The answer's status and its body, read as a stream (a watch never ends on its own). */
export interface ApiResponse {
  status: number;
  body: Readable;
}

/** One request under way. */
export interface ApiExchange {
  /** Rejects when the request could not be sent or no answer began (a broken connection). */
  response: Promise<ApiResponse>;
  /** Gives the request up: its stream is reset, its body ends with an error or a close. */
  cancel(): void;
}

export interface ApiConnection {
  open(method: string, path: string, headers: Record<string, string>, payload?: Buffer): ApiExchange;
  /** New credentials: connections made from now on use them, the open ones are closed. */
  setClientCertificate(certPem: string, keyPem: string): void;
  /** Connections dialled so far (a client that re-dials per request shows it here). */
  readonly dials: number;
  close(): void;
}

export interface TlsMaterial {
  caPem?: string;
  certPem?: string;
  keyPem?: string;
  rejectUnauthorized: boolean;
}

/** HTTP/1.1 with kept-alive sockets: a request per socket at a time, sockets re-used. */
export class Http1Connection implements ApiConnection {
  private agent: http.Agent;
  private dialCount = 0;

  constructor(
    private readonly base: URL,
    private tls: TlsMaterial,
  ) {
    this.agent = this.newAgent();
  }

  get dials(): number {
    return this.dialCount;
  }

  private newAgent(): http.Agent {
    return this.base.protocol === "https:"
      ? new https.Agent({ keepAlive: true, ca: this.tls.caPem, cert: this.tls.certPem, key: this.tls.keyPem, rejectUnauthorized: this.tls.rejectUnauthorized })
      : new http.Agent({ keepAlive: true });
  }

  open(method: string, path: string, headers: Record<string, string>, payload?: Buffer): ApiExchange {
    const url = new URL(path, this.base);
    const req = (this.base.protocol === "https:" ? https : http).request({
      method,
      hostname: url.hostname,
      port: url.port,
      path: url.pathname + url.search,
      agent: this.agent,
      headers: payload ? { ...headers, "content-length": String(payload.length) } : headers,
    });
    // A socket the agent did not have kept alive is a new connection.
    req.once("socket", () => {
      if (!req.reusedSocket) this.dialCount++;
    });
    const response = new Promise<ApiResponse>((resolve, reject) => {
      req.on("error", reject);
      req.on("response", (res) => {
        // A connection cut mid-body ends the body with an error, as an HTTP/2 reset does.
        res.on("aborted", () => res.destroy(new Error("the connection closed mid-answer")));
        resolve({ status: res.statusCode ?? 0, body: res });
      });
    });
    req.end(payload);
    return { response, cancel: () => req.destroy() };
  }

  setClientCertificate(certPem: string, keyPem: string): void {
    this.tls = { ...this.tls, certPem, keyPem };
    const old = this.agent;
    this.agent = this.newAgent();
    old.destroy();
  }

  close(): void {
    this.agent.destroy();
  }
}
