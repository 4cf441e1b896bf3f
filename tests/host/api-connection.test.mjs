// The apiserver connection: over TLS every request and watch shares one HTTP/2 connection, a
// server that speaks only HTTP/1.1 still gets every request, a link that goes silent is found by
// ping and dialled again, and a server that cannot be reached is dialled with a back-off.
import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { ApiClient, ApiStatusError } from "../../dist/cluster/api-client.js";
import { FakeApiServer } from "../apiserver/fake-apiserver.mjs";
import { makeTestPki } from "../apiserver/throwaway-pki.mjs";

const pki = makeTestPki(fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-h2-")));
const access = (server) => ({ server, caPem: pki.ca, certPem: pki.nodeCert, keyPem: pki.nodeKey });
const node = { metadata: { name: "a" } };

async function waitFor(what, check, timeoutMs = 20_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A TCP relay that can go silent (a link that drops packets without a word) and speak again. */
async function relay(port) {
  const pairs = new Set();
  let silent = false;
  const server = net.createServer((down) => {
    const up = net.connect(port, "127.0.0.1");
    const pair = { down, up };
    pairs.add(pair);
    const forward = (from, to) => from.on("data", (chunk) => { if (!silent) to.write(chunk); });
    forward(down, up);
    forward(up, down);
    const close = () => { down.destroy(); up.destroy(); pairs.delete(pair); };
    down.on("close", close).on("error", close);
    up.on("close", close).on("error", close);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `https://127.0.0.1:${server.address().port}`,
    silence: (on) => { silent = on; },
    close: () => { for (const p of pairs) { p.down.destroy(); p.up.destroy(); } server.close(); },
  };
}

test("over TLS, requests and watches share one HTTP/2 connection; a cancelled watch leaves it open", async (t) => {
  const api = await FakeApiServer.start({ tls: { key: pki.serverKey, cert: pki.serverCert, ca: pki.ca } });
  t.after(() => api.stop());
  const client = new ApiClient(access(api.url));
  t.after(() => client.close());
  await client.request("POST", "/api/v1/nodes", node);
  const events = [];
  const stopWatches = new AbortController();
  const watches = [0, 1].map(() => client.watch("/api/v1/nodes?fieldSelector=metadata.name%3Da&watch=1&resourceVersion=0", (e) => events.push(e), stopWatches.signal));
  await waitFor("both watches' first event", () => events.length >= 2);
  await Promise.all([1, 2, 3, 4, 5].map(() => client.request("GET", "/api/v1/nodes/a")));
  await client.request("PATCH", "/api/v1/nodes/a/status", { status: { phase: "Running" } }, "application/merge-patch+json");
  await waitFor("the watches see the patch", () => events.filter((e) => e.type === "MODIFIED").length >= 2);
  stopWatches.abort();
  await Promise.all(watches);
  await client.request("GET", "/api/v1/nodes/a");
  assert.equal(api.connections, 1, "one TCP connection for every request and watch");
  assert.equal(client.dials, 1);
  assert.deepEqual([...new Set(api.requests.map((r) => r.httpVersion))], ["2.0"]);
  assert.ok(api.requests.every((r) => r.user === "system:node:a"));
});

test("a TLS server that speaks only HTTP/1.1 still gets every request, the first one included", async (t) => {
  const api = await FakeApiServer.start({ tls: { key: pki.serverKey, cert: pki.serverCert, ca: pki.ca, http2: false } });
  t.after(() => api.stop());
  const notices = [];
  const client = new ApiClient(access(api.url), { http2: { onNotice: (m) => notices.push(m) } });
  t.after(() => client.close());
  assert.equal((await client.request("POST", "/api/v1/nodes", node)).metadata.name, "a");
  assert.equal((await client.request("GET", "/api/v1/nodes/a")).metadata.name, "a");
  assert.deepEqual([...new Set(api.requests.map((r) => r.httpVersion))], ["1.1"]);
  assert.equal(api.requests.length, 2, "the first request was not lost nor sent twice");
  assert.match(notices.join("\n"), /does not speak HTTP\/2/);
});

test("a link gone silent is found by an unanswered ping: the watch ends and the next request dials again", async (t) => {
  const api = await FakeApiServer.start({ tls: { key: pki.serverKey, cert: pki.serverCert, ca: pki.ca } });
  t.after(() => api.stop());
  const link = await relay(api.port);
  t.after(() => link.close());
  const client = new ApiClient(access(link.url), { http2: { readIdleMs: 300, pingTimeoutMs: 2000 } });
  t.after(() => client.close());
  await client.request("POST", "/api/v1/nodes", node);
  let ended = false;
  const watch = client.watch("/api/v1/nodes?watch=1&fieldSelector=metadata.name%3Da&resourceVersion=0", () => {}).finally(() => (ended = true));
  // While the link carries frames, pings are answered and the watch stays open.
  await new Promise((r) => setTimeout(r, 1200));
  assert.equal(ended, false, "a healthy idle link is kept");
  link.silence(true);
  await watch; // ends (quietly: the caller opens another) once the ping goes unanswered
  link.silence(false);
  assert.equal((await client.request("GET", "/api/v1/nodes/a")).metadata.name, "a");
  assert.equal(client.dials, 2);
});

test("a server that cannot be reached is dialled with a back-off: requests in between fail at once, naming it", async (t) => {
  const closed = net.createServer();
  await new Promise((r) => closed.listen(0, "127.0.0.1", r));
  const port = closed.address().port;
  await new Promise((r) => closed.close(r));
  const client = new ApiClient(access(`https://127.0.0.1:${port}`));
  t.after(() => client.close());
  await assert.rejects(client.request("GET", "/api/v1/nodes/a"), (e) => e instanceof ApiStatusError && e.reason === "ConnectionFailed");
  await assert.rejects(client.request("GET", "/api/v1/nodes/a"), (e) => e.reason === "ConnectionFailed" && /not dialled: the last 1 dial .* failed; the next in \d+ ms/.test(e.message));
  assert.equal(client.dials, 1);
  // After the back-off, a server that came up is reached.
  const api = await FakeApiServer.start({ tls: { key: pki.serverKey, cert: pki.serverCert, ca: pki.ca } });
  t.after(() => api.stop());
  api.port = port;
  await api.stop();
  await api.start();
  await waitFor("the server reached after the back-off", () => client.request("POST", "/api/v1/nodes", node).then(() => true, () => false));
  assert.equal(api.requests.at(-1).httpVersion, "2.0");
});

test("a new client certificate: the old connection is closed (its watches end) and the next one carries it", async (t) => {
  const api = await FakeApiServer.start({ tls: { key: pki.serverKey, cert: pki.serverCert, ca: pki.ca } });
  t.after(() => api.stop());
  const client = new ApiClient(access(api.url));
  t.after(() => client.close());
  await client.request("POST", "/api/v1/nodes", node);
  const watch = client.watch("/api/v1/nodes?watch=1&fieldSelector=metadata.name%3Da&resourceVersion=0", () => {});
  await waitFor("the watch open", () => api.watches.size === 1);
  client.setClientCertificate(pki.nodeCert, pki.nodeKey);
  await watch;
  await client.request("GET", "/api/v1/nodes/a");
  assert.equal(client.dials, 2);
  assert.equal(api.connections, 2);
});

test("past the streams the server allows on a connection, another is dialled (never a stream refused) and closed once idle", async (t) => {
  const api = await FakeApiServer.start({ tls: { key: pki.serverKey, cert: pki.serverCert, ca: pki.ca, maxStreams: 2 } });
  t.after(() => api.stop());
  const client = new ApiClient(access(api.url));
  t.after(() => client.close());
  await client.request("POST", "/api/v1/nodes", node);
  const stop = new AbortController();
  const opened = [];
  const watches = [0, 1, 2, 3, 4].map((i) => client.watch("/api/v1/nodes?watch=1&fieldSelector=metadata.name%3Da&resourceVersion=0", () => {}, stop.signal, () => opened.push(i)));
  await waitFor("five watches open", () => opened.length === 5);
  assert.equal((await client.request("GET", "/api/v1/nodes/a")).metadata.name, "a", "a request beside them still goes");
  assert.ok(client.dials >= 3, `at least three connections for six streams at two each (${client.dials})`);
  stop.abort();
  await Promise.all(watches);
  // The extra connections close once idle; the first one stays.
  await waitFor("the extra connections closed", () => api.sockets.size === 1);
  await client.request("GET", "/api/v1/nodes/a");
  assert.equal(api.sockets.size, 1);
});
