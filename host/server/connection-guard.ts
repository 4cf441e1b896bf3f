// What a client can hold of the agent before it has said who it is. A TCP connection that has not
// finished its TLS handshake and sent a whole request head costs the agent a socket and an
// OpenSSL session (tens of KiB of native memory each) and proves nothing, so such connections are
// counted, per client address and in all, and each gets a fixed time to get that far. Past a count
// a new connection is closed at once; past its time a pending one is closed. A connection that
// has sent its request head is handed on to authentication, which answers it (401 without
// credentials); open connections of any kind are capped too (exec, attach and logs streams are
// long-lived, and have their own cap of 256).
import type http from "node:http";
import type { Socket } from "node:net";

export interface ConnectionLimits {
  /** Connections at once, of any kind (Node's `server.maxConnections`). */
  maxConnections: number;
  /** Connections that have not yet sent a request head, in all. */
  maxPending: number;
  /** Of those, from one client address. */
  maxPendingPerAddress: number;
  /** Time from accept to a whole request head (TLS handshake included). */
  pendingTimeoutMs: number;
  /** Time to send the rest of a request, body included (Node's `server.requestTimeout`). */
  requestTimeoutMs: number;
  /** Idle time between requests on a kept-alive connection. */
  keepAliveTimeoutMs: number;
  /** Request head lines and bytes. */
  maxHeadersCount: number;
}

/**
 * The kubelet API's limits. 10 s is what a handshake on a slow uplink needs several times over;
 * 128 pending connections (16 from one address) let real clients through a flood without letting
 * the flood past about 10 MiB of native memory.
 */
export const KUBELET_API_LIMITS: ConnectionLimits = {
  maxConnections: 1024,
  maxPending: 128,
  maxPendingPerAddress: 16,
  pendingTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
  maxHeadersCount: 100,
};

export interface GuardCounts {
  pending: number;
  refused: number;
  timedOut: number;
}

/** Applies `limits` to `server`; returns live counts (for tests and metrics). */
export function guardConnections(server: http.Server, limits: ConnectionLimits = KUBELET_API_LIMITS): GuardCounts {
  const counts: GuardCounts = { pending: 0, refused: 0, timedOut: 0 };
  const pendingByAddress = new Map<string, number>();
  const timers = new WeakMap<Socket, NodeJS.Timeout>();
  server.maxConnections = limits.maxConnections;
  server.requestTimeout = limits.requestTimeoutMs;
  server.headersTimeout = Math.min(limits.pendingTimeoutMs, limits.requestTimeoutMs);
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.maxHeadersCount = limits.maxHeadersCount;

  const release = (socket: Socket): void => {
    const timer = timers.get(socket);
    if (timer === undefined) return;
    clearTimeout(timer);
    timers.delete(socket);
    counts.pending--;
    const address = socket.remoteAddress ?? "";
    const left = (pendingByAddress.get(address) ?? 1) - 1;
    if (left > 0) pendingByAddress.set(address, left);
    else pendingByAddress.delete(address);
  };

  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress ?? "";
    const fromAddress = pendingByAddress.get(address) ?? 0;
    if (counts.pending >= limits.maxPending || fromAddress >= limits.maxPendingPerAddress) {
      counts.refused++;
      socket.destroy();
      return;
    }
    counts.pending++;
    pendingByAddress.set(address, fromAddress + 1);
    const timer = setTimeout(() => {
      counts.timedOut++;
      release(socket);
      socket.destroy();
    }, limits.pendingTimeoutMs);
    timer.unref();
    timers.set(socket, timer);
    socket.once("close", () => release(socket));
  });

  // A request head arrived: the connection goes on to authentication. Over TLS the request's
  // socket wraps the accepted one (`_parent`), which is what was counted.
  const admitted = (req: http.IncomingMessage): void => {
    const socket = req.socket as Socket & { _parent?: Socket };
    release(socket._parent ?? socket);
  };
  server.prependListener("request", admitted);
  server.prependListener("upgrade", admitted);
  return counts;
}
