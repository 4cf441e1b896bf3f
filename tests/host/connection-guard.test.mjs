// What a client without credentials can hold of the kubelet API (issue 36): half-open TLS
// handshakes (11 bytes of a ClientHello, then silence), idle sockets and slow request heads are
// counted and timed out; past the counts a new connection is closed at once; a client with a
// whole request still gets its answer during the flood. Limits are lowered for the test; the
// server is the real one on HTTPS with a real certificate.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import https from "node:https";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { FakeRuntime } from "../../dist/cri/fake-runtime.js";
import { Authenticator } from "../../dist/server/authn.js";
import { AlwaysAllow } from "../../dist/server/authz.js";
import { KubeletServer } from "../../dist/server/kubelet-server.js";
import { KUBELET_API_LIMITS } from "../../dist/server/connection-guard.js";
import { FileReadError, readBoundedFile, readKernelText } from "../../dist/files/bounded-file.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-guard-"));
execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", path.join(dir, "k.pem"), "-out", path.join(dir, "c.pem"), "-days", "1", "-subj", "/CN=node"], { stdio: "ignore" });
const tls = { certPem: fs.readFileSync(path.join(dir, "c.pem"), "utf8"), keyPem: fs.readFileSync(path.join(dir, "k.pem"), "utf8") };

const LIMITS = { ...KUBELET_API_LIMITS, maxPending: 20, maxPendingPerAddress: 8, pendingTimeoutMs: 1500 };

async function serve(limits = LIMITS) {
  const server = new KubeletServer({
    runtime: new FakeRuntime(), podLogsDir: dir, log: { log() {} }, limits,
    authenticator: new Authenticator({ anonymous: false }), authorizer: new AlwaysAllow(),
    pods: () => [], syncLoopProblem: () => undefined, configz: () => ({}),
  });
  const https = await server.listenHttps(0, "127.0.0.1", tls);
  return { server, port: https.address().port, counts: server.guards[0] };
}

/** A socket from `localAddress` that sends the first 11 bytes of a TLS ClientHello and waits. */
function halfOpen(port, localAddress = "127.0.0.1") {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: "127.0.0.1", localAddress }, () => {
      socket.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]));
      resolve(socket);
    });
    socket.closedAt = new Promise((r) => socket.on("close", r));
    socket.on("error", () => {});
  });
}

function get(port, localAddress = "127.0.0.1") {
  return new Promise((resolve, reject) => {
    const req = https.get({ host: "127.0.0.1", port, path: "/pods", localAddress, rejectUnauthorized: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode));
    });
    req.on("error", reject);
  });
}

after(() => fs.rmSync(dir, { recursive: true, force: true }));

test("half-open handshakes are capped per address and in all, closed after their time; an honest client still gets its 401", async () => {
  const { server, port, counts } = await serve();
  try {
    // 12 from one address: 8 are held, the rest closed at once.
    const one = await Promise.all(Array.from({ length: 12 }, () => halfOpen(port)));
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(counts.pending, 8);
    assert.ok(counts.refused >= 4, `refused ${counts.refused}`);
    // From two more addresses: 18 held in all.
    const others = [];
    for (let i = 2; i <= 3; i++) for (let j = 0; j < 5; j++) others.push(await halfOpen(port, `127.0.0.${i}`));
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(counts.pending, 18);
    // An honest client from another address is answered at once (401 without credentials)
    // while the flooding addresses hold all they may.
    assert.equal(await get(port, "127.0.0.9"), 401);
    // Past the total, a new connection is closed at once, whoever it is from.
    const extra = await Promise.all(Array.from({ length: 4 }, (_, i) => halfOpen(port, `127.0.0.${20 + i}`)));
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(counts.pending, LIMITS.maxPending);
    others.push(...extra);
    // Every half-open socket is closed by the agent within its time (plus the timer's slack).
    await Promise.all([...one, ...others].map((s) => s.closedAt));
    assert.equal(counts.pending, 0);
    assert.ok(counts.timedOut >= 8);
  } finally {
    server.close();
  }
});

test("a socket that never sends is closed after its time; nothing stays pending", async () => {
  const { server, port, counts } = await serve();
  try {
    const idle = await new Promise((resolve) => {
      const s = net.connect({ port, host: "127.0.0.1" }, () => resolve(s));
      s.on("error", () => {});
    });
    const closed = new Promise((r) => idle.on("close", r));
    await closed;
    // The server's own side may see the close a turn after the client's: wait for the state, bounded.
    for (let waited = 0; (counts.pending > 0 || counts.timedOut < 1) && waited < 5_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
    assert.equal(counts.pending, 0);
    assert.ok(counts.timedOut >= 1);
  } finally {
    server.close();
  }
});

test("many rounds of floods leave the agent's counts where they started (nothing grows per connection)", async () => {
  const { server, port, counts } = await serve({ ...LIMITS, pendingTimeoutMs: 300 });
  try {
    for (let round = 0; round < 5; round++) {
      const sockets = await Promise.all(Array.from({ length: 30 }, (_, i) => halfOpen(port, `127.0.1.${(i % 10) + 1}`)));
      await Promise.all(sockets.map((s) => s.closedAt));
      // The server counts a close when its own side sees it, which may come a turn after the
      // client's: wait for the state, bounded, instead of reading it at once.
      for (let waited = 0; counts.pending > 0 && waited < 5_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
      assert.equal(counts.pending, 0, `round ${round}`);
    }
    assert.equal(await get(port), 401);
  } finally {
    server.close();
  }
});

test("bounded reads: a device, a fifo, a directory and a file over the limit are refused by what they are", () => {
  const fifo = path.join(dir, "fifo");
  execFileSync("mkfifo", [fifo]);
  const big = path.join(dir, "big");
  fs.writeFileSync(big, "x".repeat(2048));
  const cases = [["/dev/zero", /a device, not a regular file/], [fifo, /a fifo, not a regular file/], [dir, /a directory/], [big, /too large: 2048 bytes, at most 1024/], [path.join(dir, "none"), /cannot open: ENOENT/]];
  for (const [file, expected] of cases) assert.throws(() => readBoundedFile(file, 1024), (e) => e instanceof FileReadError && expected.test(e.message), file);
  assert.equal(readBoundedFile(big, 4096).length, 2048);
});

test("kernel files (size 0 in /proc) are read to their end, bounded; not a regular file is refused", () => {
  const mounts = readKernelText("/proc/self/mountinfo", 64 * 1024 * 1024);
  assert.ok(mounts.split("\n").some((l) => l.split(" ")[4] === "/"), "the root mount is listed");
  assert.equal(readKernelText("/proc/sys/kernel/ostype", 1024).trim(), "Linux");
  const long = path.join(dir, "long");
  fs.writeFileSync(long, "y".repeat(40_000)); // several read steps
  assert.equal(readKernelText(long, 40_000).length, 40_000);
  assert.throws(() => readKernelText(long, 39_999), /too large: more than 39999 bytes/);
  assert.throws(() => readKernelText("/dev/zero", 1024), /a device, not a regular file/);
});
