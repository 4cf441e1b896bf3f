// The kubelet API's connection handling under what clients without credentials can do (issue
// 36): many connections at once, each one of: a half-open TLS handshake, silence, a request head
// sent in pieces with pauses, bytes that are not TLS, a whole request without credentials, an
// early close. Properties: the server never throws; after every client is gone and the pending
// time has passed, nothing is pending; an honest request is still answered (401); the count of
// pending connections never went over the limit.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import https from "node:https";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import tls from "node:tls";
import fc from "fast-check";
import { FakeRuntime } from "../../../dist/cri/fake-runtime.js";
import { Authenticator } from "../../../dist/server/authn.js";
import { AlwaysAllow } from "../../../dist/server/authz.js";
import { KubeletServer } from "../../../dist/server/kubelet-server.js";
import { KUBELET_API_LIMITS } from "../../../dist/server/connection-guard.js";

const LIMITS = { ...KUBELET_API_LIMITS, maxPending: 12, maxPendingPerAddress: 5, pendingTimeoutMs: 250, requestTimeoutMs: 500 };

const client = fc.record({
  kind: fc.constantFrom("half-hello", "silent", "slow-head", "not-tls", "request", "close-early"),
  from: fc.integer({ min: 1, max: 6 }),
  pauseMs: fc.integer({ min: 0, max: 60 }),
  bytes: fc.uint8Array({ minLength: 1, maxLength: 64 }),
});
export const arbitrary = fc.array(client, { minLength: 1, maxLength: 40 });

export async function setup() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-fuzz-conn-"));
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", path.join(dir, "k.pem"), "-out", path.join(dir, "c.pem"), "-days", "1", "-subj", "/CN=node"], { stdio: "ignore" });
  const server = new KubeletServer({
    runtime: new FakeRuntime(), podLogsDir: dir, log: { log() {} }, limits: LIMITS,
    authenticator: new Authenticator({ anonymous: false }), authorizer: new AlwaysAllow(),
    pods: () => [], syncLoopProblem: () => undefined, configz: () => ({}),
  });
  const listening = await server.listenHttps(0, "127.0.0.1", { certPem: fs.readFileSync(path.join(dir, "c.pem"), "utf8"), keyPem: fs.readFileSync(path.join(dir, "k.pem"), "utf8") });
  const counts = server.guards[0];
  let maxSeen = 0;
  const watch = setInterval(() => (maxSeen = Math.max(maxSeen, counts.pending)), 5);
  return { dir, server, port: listening.address().port, counts, watch, maxSeen: () => maxSeen };
}

export async function teardown(ctx) {
  clearInterval(ctx.watch);
  ctx.server.close();
  fs.rmSync(ctx.dir, { recursive: true, force: true });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function run(c, port) {
  return new Promise((resolve) => {
    const localAddress = `127.0.2.${c.from}`;
    if (c.kind === "request") {
      const req = https.get({ host: "127.0.0.1", port, path: "/pods", localAddress, rejectUnauthorized: false, agent: false }, (res) => {
        res.resume();
        res.on("end", resolve);
      });
      req.on("error", resolve);
      return;
    }
    if (c.kind === "slow-head") {
      const s = tls.connect({ host: "127.0.0.1", port, localAddress, rejectUnauthorized: false }, async () => {
        for (const part of ["GET /po", "ds HTTP/1.1\r\n", "Host: x\r\n"]) {
          if (s.destroyed) break;
          s.write(part);
          await sleep(c.pauseMs);
        }
      });
      s.on("error", () => {});
      s.on("close", resolve);
      return;
    }
    const s = net.connect({ host: "127.0.0.1", port, localAddress }, async () => {
      if (c.kind === "half-hello") s.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]));
      if (c.kind === "not-tls") s.write(c.bytes);
      if (c.kind === "close-early") {
        await sleep(c.pauseMs);
        s.destroy();
      }
    });
    s.on("error", () => {});
    s.on("close", resolve);
  });
}

export async function property(clients, ctx) {
  await Promise.all(clients.map((c) => run(c, ctx.port)));
  // Every client is gone (the agent closed the ones that held on): nothing is left pending once
  // the server has seen the last close (a client's close can arrive a moment before the server's).
  for (let i = 0; i < 100 && ctx.counts.pending !== 0; i++) await sleep(20);
  if (ctx.counts.pending !== 0) throw new Error(`${ctx.counts.pending} connections still pending`);
  if (ctx.maxSeen() > LIMITS.maxPending) throw new Error(`${ctx.maxSeen()} pending at once, over the limit of ${LIMITS.maxPending}`);
  const status = await new Promise((resolve, reject) => {
    https.get({ host: "127.0.0.1", port: ctx.port, path: "/pods", localAddress: "127.0.2.99", rejectUnauthorized: false, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode);
    }).on("error", reject);
  });
  if (status !== 401) throw new Error(`an honest request after the flood got ${status}`);
}
