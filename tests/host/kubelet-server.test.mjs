// The kubelet API's pieces without a cluster: log options and the CRI log format, authorization
// attributes, the webhook caches, and the server itself on plain HTTP over the fake runtime: who
// gets 401/403, container logs, and exec relayed to a streaming server of the test's own (200
// sessions opened and dropped leave nothing behind).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { FakeRuntime } from "../../dist/cri/fake-runtime.js";
import { containerConfig, sandboxConfig } from "../../dist/agent/cri-requests.js";
import { Authenticator } from "../../dist/server/authn.js";
import { AlwaysAllow, requestAttributes } from "../../dist/server/authz.js";
import { LogQueryError, parseLogOptions } from "../../dist/server/container-logs.js";
import { LogLineJoiner, parseLogText } from "../../dist/server/cri-log.js";
import { KubeletServer } from "../../dist/server/kubelet-server.js";
import { TtlCache } from "../../dist/server/ttl-cache.js";

const quiet = { log() {} };

describe("log options as PodLogOptions decodes and validates them", () => {
  const parse = (q) => parseLogOptions(new URLSearchParams(q));
  const refused = (q, code) => assert.throws(() => parse(q), (e) => e instanceof LogQueryError && e.code === code, q);

  test("good options", () => {
    assert.deepEqual(parse("follow=true&tailLines=10&timestamps=1"), { follow: true, previous: false, timestamps: true, tailLines: 10, limitBytes: undefined, sinceSeconds: undefined });
    assert.equal(parse("sinceTime=2026-12-05T01:02:03.5Z").sinceTimeMs, Date.parse("2026-12-05T01:02:03.5Z"));
    assert.equal(parse("tail=3").tailLines, 3, "the old tail parameter");
    assert.equal(parse("tail=all&tailLines=3").tailLines, undefined);
    assert.equal(parse("previous=T").previous, true);
  });

  test("undecodable is 400, invalid is 422", () => {
    for (const q of ["follow=yes", "tailLines=ten", "tailLines=1.5", "sinceTime=yesterday", "sinceTime=2026-12-05", "limitBytes=0x10"]) refused(q, 400);
    for (const q of ["tailLines=-1", "limitBytes=0", "sinceSeconds=0", "sinceSeconds=5&sinceTime=2026-12-05T00:00:00Z"]) refused(q, 422);
  });
});

describe("the CRI log format", () => {
  test("partial records are joined into one line, per stream", () => {
    const text = [
      "2026-12-05T01:00:00.1Z stdout P hel",
      "2026-12-05T01:00:00.2Z stderr F oops",
      "2026-12-05T01:00:00.3Z stdout F lo",
      "2026-12-05T01:00:00.4Z stdout F ",
      "not a record",
      "2026-12-05T01:00:00.5Z stdout F half",
    ].join("\n");
    const { records, rest } = parseLogText(text);
    assert.deepEqual(records.map((r) => [r.stream, r.text, r.time]), [
      ["stderr", "oops\n", "2026-12-05T01:00:00.2Z"],
      ["stdout", "hello\n", "2026-12-05T01:00:00.1Z"],
      ["stdout", "\n", "2026-12-05T01:00:00.4Z"],
    ]);
    assert.equal(rest, "2026-12-05T01:00:00.5Z stdout F half", "a line without its newline waits");
  });

  test("a record with a bad time or stream is skipped", () => {
    const j = new LogLineJoiner();
    assert.equal(j.push("yesterday stdout F x"), undefined);
    assert.equal(j.push("2026-12-05T01:00:00Z stdin F x"), undefined);
  });
});

describe("authorization attributes", () => {
  test("subresources by path, verbs by method, fine-grained ones fall back to proxy", () => {
    assert.deepEqual(requestAttributes("GET", "/stats/summary"), [{ verb: "get", subresource: "stats" }]);
    assert.deepEqual(requestAttributes("GET", "/metrics/cadvisor"), [{ verb: "get", subresource: "metrics" }]);
    assert.deepEqual(requestAttributes("GET", "/logs/syslog"), [{ verb: "get", subresource: "log" }]);
    assert.deepEqual(requestAttributes("GET", "/healthz"), [{ verb: "get", subresource: "healthz" }, { verb: "get", subresource: "proxy" }]);
    assert.deepEqual(requestAttributes("GET", "/pods"), [{ verb: "get", subresource: "pods" }, { verb: "get", subresource: "proxy" }]);
    assert.deepEqual(requestAttributes("POST", "/exec/ns/p/c"), [{ verb: "create", subresource: "proxy" }]);
    assert.deepEqual(requestAttributes("GET", "/statsfoo"), [{ verb: "get", subresource: "proxy" }], "a prefix is not a path");
  });

  test("the webhook cache expires and stays bounded", () => {
    const c = new TtlCache(1000, 2);
    c.set("a", true, 0);
    assert.equal(c.get("a", 999), true);
    assert.equal(c.get("a", 1000), undefined);
    c.set("a", 1, 0);
    c.set("b", 2, 0);
    c.set("c", 3, 0);
    assert.equal(c.size, 2);
    assert.equal(c.get("a", 1), undefined, "the oldest went first");
    c.set("d", false, 0, 10);
    assert.equal(c.get("d", 11), undefined, "a shorter ttl for denials");
  });
});

describe("the server over the fake runtime", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-kubelet-server-"));
  const runtime = new FakeRuntime();
  let server;
  let port;
  let denyAll;
  let streaming;
  const streamingSockets = new Set();
  let containerId;
  let sandboxId;
  let sandbox;
  let spec;
  /** What the node's status says of the container's last termination (undefined: no status). */
  let lastTerminated;
  const nodeLogDir = path.join(dir, "varlog");

  before(async () => {
    fs.mkdirSync(path.join(nodeLogDir, "sub"), { recursive: true });
    fs.writeFileSync(path.join(nodeLogDir, "syslog"), "boot\n");
    fs.symlinkSync("/etc/passwd", path.join(nodeLogDir, "escape"));
    spec = { podUid: "uid-1", podName: "web", podNamespace: "default", attempt: 0, hostNetwork: true, cgroupParent: "", terminationGracePeriodSeconds: 1 };
    sandbox = sandboxConfig(spec, dir);
    sandboxId = await runtime.runPodSandbox(sandbox);
    runtime.images.add("busybox");
    const create = { sandbox: spec, container: { name: "main", image: "busybox", command: [], args: [], env: [] }, attempt: 0, specHash: "h", resources: { cpuShares: 2n, cpuQuotaUs: 0n, cpuPeriodUs: 0n, memoryLimitBytes: 0n, oomScoreAdj: 0 } };
    containerId = await runtime.createContainer(sandboxId, containerConfig(create), sandbox);
    await runtime.startContainer(containerId);
    fs.mkdirSync(path.join(sandbox.logDirectory, "main"), { recursive: true });
    fs.writeFileSync(path.join(sandbox.logDirectory, "main", "0.log"), ["one", "two", "three"].map((t, i) => `2026-12-05T01:00:0${i}Z stdout F ${t}\n`).join(""));

    // A streaming server standing in for the runtime's: upgrades and echoes.
    streaming = http.createServer((_req, res) => res.writeHead(404).end("no such session"));
    streaming.on("upgrade", (req, socket) => {
      streamingSockets.add(socket);
      socket.on("close", () => streamingSockets.delete(socket));
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: ${req.headers.upgrade}\r\nConnection: Upgrade\r\nX-Path: ${req.url}\r\n\r\n`);
      socket.pipe(socket);
    });
    await new Promise((r) => streaming.listen(0, "127.0.0.1", r));
    runtime.streamingBaseUrl = `http://127.0.0.1:${streaming.address().port}`;

    denyAll = false;
    server = new KubeletServer({
      runtime,
      podLogsDir: dir,
      log: quiet,
      authenticator: new Authenticator({ anonymous: true }),
      authorizer: { allowed: async () => !denyAll },
      pods: () => [{ metadata: { name: "web" } }],
      syncLoopProblem: () => undefined,
      configz: () => ({ port: 0 }),
      nodeLogDir,
      lastTerminatedId: () => lastTerminated,
    });
    port = (await server.listenHttp(0, "127.0.0.1")).address().port;
  });

  after(() => {
    server.close();
    streaming.close();
  });

  const get = (p) => new Promise((resolve, reject) => {
    http.get({ host: "127.0.0.1", port, path: p }, (res) => {
      let body = "";
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ code: res.statusCode, body }));
    }).on("error", reject);
  });

  /** An upgrade request; resolves with the raw socket after the 101, or the refusal's text. */
  const upgrade = (p) => new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => {
      socket.write(`POST ${p} HTTP/1.1\r\nHost: node\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n`);
    });
    let head = "";
    const onData = (c) => {
      head += c;
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      socket.off("data", onData);
      resolve({ status: head.slice(0, head.indexOf("\r\n")), head: head.slice(0, end), rest: head.slice(end + 4), socket });
    };
    socket.on("data", onData);
    socket.on("error", reject);
  });

  test("healthz, pods and configz", async () => {
    assert.deepEqual(await get("/healthz"), { code: 200, body: "ok" });
    assert.equal(JSON.parse((await get("/pods")).body).items[0].metadata.name, "web");
    assert.deepEqual(JSON.parse((await get("/configz")).body), { kubeletconfig: { port: 0 } });
  });

  test("/run runs a command in the container and answers its output; only by POST", async () => {
    const post = (p) => new Promise((resolve, reject) => {
      const req = http.request({ host: "127.0.0.1", port, path: p, method: "POST" }, (res) => {
        let body = "";
        res.on("data", (c) => (body += c));
        res.on("end", () => resolve({ code: res.statusCode, body }));
      });
      req.on("error", reject);
      req.end();
    });
    assert.deepEqual(await post("/run/default/web/main?cmd=echo%20hi%20there"), { code: 200, body: "echo hi there\n" });
    assert.equal((await post("/run/default/web/main")).code, 400);
    assert.equal((await post("/run/default/nope/main?cmd=ls")).code, 404);
    assert.equal((await get("/run/default/web/main?cmd=ls")).code, 405);
  });

  test("/logs/ lists and serves the node's log files, and nothing outside them", async () => {
    const listing = await get("/logs/");
    assert.equal(listing.code, 200);
    assert.match(listing.body, /<a href="syslog">syslog<\/a>/);
    assert.match(listing.body, /<a href="sub\/">sub\/<\/a>/);
    assert.deepEqual(await get("/logs/syslog"), { code: 200, body: "boot\n" });
    assert.equal((await get("/logs/escape")).code, 404, "a symlink out of the directory");
    assert.equal((await get("/logs/nope")).code, 404);
    assert.equal((await get("/logs/sub/%2e%2e/%2e%2e/etc/passwd")).code, 400);
  });

  test("container logs with tail, timestamps and limit", async () => {
    assert.deepEqual(await get("/containerLogs/default/web/main"), { code: 200, body: "one\ntwo\nthree\n" });
    assert.equal((await get("/containerLogs/default/web/main?tailLines=1&timestamps=true")).body, "2026-12-05T01:00:02Z three\n");
    assert.equal((await get("/containerLogs/default/web/main?limitBytes=6")).body, "one\ntw");
    assert.equal((await get("/containerLogs/default/web/main?sinceTime=2026-12-05T01:00:01Z")).body, "two\nthree\n");
    assert.equal((await get("/containerLogs/default/web/main?tailLines=-1")).code, 422);
    assert.equal((await get("/containerLogs/default/nope/main")).code, 404);
  });

  test("403 with the kubelet's words when the authorizer says no; 401 without an identity", async () => {
    denyAll = true;
    try {
      assert.deepEqual(await get("/pods"), { code: 403, body: "Forbidden (user=system:anonymous, verb=get, resource=nodes, subresource(s)=[pods proxy])" });
      const refused = await upgrade("/exec/default/web/main?command=ls&output=1");
      assert.match(refused.status, /^HTTP\/1.1 403/);
      refused.socket.destroy();
    } finally {
      denyAll = false;
    }
    const strict = new KubeletServer({ runtime, podLogsDir: dir, log: quiet, authenticator: new Authenticator({ anonymous: false }), authorizer: new AlwaysAllow(), pods: () => [], syncLoopProblem: () => undefined, configz: () => ({}) });
    const p = (await strict.listenHttp(0, "127.0.0.1")).address().port;
    const code = await new Promise((r) => http.get({ host: "127.0.0.1", port: p, path: "/pods" }, (res) => r(res.statusCode)));
    strict.close();
    assert.equal(code, 401);
  });

  test("exec is relayed to the runtime's streaming URL, both ways", async () => {
    const s = await upgrade("/exec/default/web/main?command=echo&command=hi&output=1&error=1");
    assert.match(s.status, /^HTTP\/1.1 101/);
    assert.match(s.head, new RegExp(`X-Path: /exec/${containerId}`));
    s.socket.write("ping");
    const echoed = await new Promise((r) => s.socket.once("data", (c) => r(String(c))));
    assert.equal(echoed, "ping");
    s.socket.destroy();
    assert.ok(runtime.calls.includes(`Exec ${containerId}`));
  });

  test("a request that cannot stream is refused: no output asked, not running, no upgrade", async () => {
    const none = await upgrade("/exec/default/web/main?command=ls");
    assert.match(none.status, /^HTTP\/1.1 400/);
    none.socket.destroy();
    assert.deepEqual(await get("/exec/default/web/main?command=ls&output=1"), { code: 400, body: "Upgrade request required" });
  });

  test("50 followed logs dropped by their clients leave no file open", async () => {
    const fds = () => fs.readdirSync("/proc/self/fd").length;
    const before = fds();
    for (let i = 0; i < 50; i++) {
      await new Promise((resolve, reject) => {
        const req = http.get({ host: "127.0.0.1", port, path: "/containerLogs/default/web/main?follow=true" }, (res) => {
          res.once("data", () => {
            req.destroy(); // the client stops reading mid-follow
            resolve();
          });
        });
        req.on("error", (e) => (e.code === "ECONNRESET" ? resolve() : reject(e)));
      });
    }
    // Each follow notices its client is gone at its next poll (250 ms) and closes its file.
    for (let i = 0; i < 100 && fds() > before + 2; i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(fds() <= before + 2, `file descriptors: ${before} before, ${fds()} after`);
  });

  test("200 sessions opened and dropped by the client leave no session, socket or relay behind", async () => {
    for (let i = 0; i < 200; i++) {
      const s = await upgrade(`/attach/default/web/main?output=1`);
      assert.match(s.status, /^HTTP\/1.1 101/);
      s.socket.destroy();
    }
    const settled = async () => {
      for (let i = 0; i < 100 && (server.sessions.size > 0 || streamingSockets.size > 0); i++) await new Promise((r) => setTimeout(r, 20));
    };
    await settled();
    assert.equal(server.sessions.size, 0, "relayed sessions");
    assert.equal(streamingSockets.size, 0, "connections to the runtime's streaming server");
  });

  test("--previous is the status's last termination: the instance before the running one, or the newest while it waits to restart", async () => {
    assert.equal((await get("/containerLogs/default/web/main?previous=true")).code, 400, "no earlier instance");
    // A second instance (attempt 1) beside the first.
    const create = { sandbox: spec, container: { name: "main", image: "busybox", command: [], args: [], env: [] }, attempt: 1, specHash: "h", resources: { cpuShares: 2n, cpuQuotaUs: 0n, cpuPeriodUs: 0n, memoryLimitBytes: 0n, oomScoreAdj: 0 } };
    const second = await runtime.createContainer(sandboxId, containerConfig(create), sandbox);
    fs.writeFileSync(path.join(sandbox.logDirectory, "main", "1.log"), "2026-12-05T01:01:00Z stdout F four\n");
    lastTerminated = containerId; // attempt 1 runs; attempt 0 exited before it
    assert.deepEqual(await get("/containerLogs/default/web/main?previous=true"), { code: 200, body: "one\ntwo\nthree\n" });
    lastTerminated = second; // attempt 1 exited and waits to restart: it is the previous one
    assert.deepEqual(await get("/containerLogs/default/web/main?previous=true"), { code: 200, body: "four\n" });
    lastTerminated = "";
    const none = await get("/containerLogs/default/web/main?previous=true");
    assert.equal(none.code, 400);
    assert.match(none.body, /previous terminated container "main" in pod "web" not found/);
  });
});
