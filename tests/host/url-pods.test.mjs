// Static pods from a URL on their own: what a fetch accepts (200, bounded size, time and
// redirects), what the answer may be (a Pod, several, a PodList, YAML or JSON), and that a server
// that fails or answers garbage changes nothing.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fetchManifest, UrlPodSource, StaticPodSets } from "../../dist/sources/url-pods.js";

let answer = () => ({ status: 200, body: "" });
const seenHeaders = [];
const server = http.createServer((req, res) => {
  seenHeaders.push(req.headers);
  const a = answer(req);
  if (a.hang) return; // never answers
  res.writeHead(a.status, a.headers ?? {});
  if (a.stream) {
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const write = () => {
      while (res.write(chunk)) if (res.writableLength > 1 << 20) break;
    };
    write();
    res.on("drain", write);
    return;
  }
  res.end(a.body);
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const base = `http://127.0.0.1:${server.address().port}`;
after(() => {
  server.closeAllConnections();
  server.close();
});

const POD = (name, image = "busybox") => `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}}\nspec:\n  containers: [{name: main, image: ${image}}]\n`;

test("a fetch takes 200 only, sends the headers, and bounds the size, the time and the redirects", async () => {
  answer = () => ({ status: 200, body: POD("a") });
  const ok = await fetchManifest(`${base}/pods`, { "X-Token": ["t1"], Accept: ["a", "b"] });
  assert.equal(ok.ok, true);
  assert.equal(seenHeaders.at(-1)["x-token"], "t1");
  assert.equal(seenHeaders.at(-1).accept, "a, b");
  answer = () => ({ status: 404, body: "nope" });
  assert.match((await fetchManifest(`${base}/pods`, {})).message, /: 404 Not Found$/);
  answer = () => ({ status: 200, body: "" });
  assert.match((await fetchManifest(`${base}/pods`, {})).message, /^zero-length data received from /);
  answer = () => ({ status: 200, stream: true });
  assert.match((await fetchManifest(`${base}/big`, {}, 100_000)).message, /over 100000 bytes/);
  answer = () => ({ status: 200, body: "x".repeat(200_000), headers: { "content-length": "200000" } });
  assert.match((await fetchManifest(`${base}/big`, {}, 100_000)).message, /is 200000 bytes; a manifest may have at most 100000/);
  answer = () => ({ hang: true });
  assert.match((await fetchManifest(`${base}/slow`, {}, 100_000, 300)).message, /no complete answer in 0.3s/);
  answer = (req) => ({ status: 302, headers: { location: `/loop${req.url.length}` } });
  assert.match((await fetchManifest(`${base}/loop`, {})).message, /stopped after 10 redirects/);
  answer = () => ({ status: 302, headers: { location: "file:///etc/passwd" } });
  assert.match((await fetchManifest(`${base}/x`, {})).message, /only http and https are fetched/);
  // Credentials in the URL never reach a message.
  answer = () => ({ status: 500 });
  const secret = (await fetchManifest(`http://user:s3cret@127.0.0.1:${server.address().port}/x`, {})).message;
  assert.ok(!secret.includes("s3cret"), secret);
});

test("a Pod, several, a PodList in YAML or JSON become pods; garbage and failures keep the last good set; the last answer outlives a restart", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-url-"));
  const scans = [];
  const lines = [];
  const options = { url: `${base}/pods`, headers: {}, nodeName: "n1", periodMs: 3_600_000, cacheFile: path.join(dir, "last"), log: { log: (level, msg) => lines.push(msg) }, onScan: (s) => scans.push(s) };
  const source = new UrlPodSource(options);
  answer = () => ({ status: 200, body: POD("one") });
  await source.check();
  assert.deepEqual(scans.at(-1).pods.map((p) => p.spec.name), ["one-n1"]);
  assert.equal(scans.at(-1).pods[0].source, "http");
  const list = JSON.stringify({ apiVersion: "v1", kind: "PodList", items: [JSON.parse(JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "x" }, spec: { containers: [{ name: "c", image: "busybox" }] } })), { apiVersion: "v1", kind: "Pod", metadata: { name: "y" }, spec: { containers: [{ name: "c", image: "busybox" }] } }] });
  answer = () => ({ status: 200, body: list });
  await source.check();
  assert.deepEqual(scans.at(-1).pods.map((p) => p.spec.name), ["x-n1", "y-n1"]);
  const count = scans.length;
  answer = () => ({ status: 200, body: "<html>oops</html>" });
  await source.check();
  answer = () => ({ status: 503 });
  await source.check();
  await source.check();
  assert.equal(scans.length, count, "garbage and failures deliver nothing: the running pods stay");
  assert.equal(lines.filter((l) => l.startsWith("Unable to read the manifest URL")).length, 1, "one line per kind of failure");
  answer = () => ({ status: 200, body: `${POD("a")}---\n${POD("b")}` });
  await source.check();
  assert.deepEqual(scans.at(-1).pods.map((p) => p.spec.name), ["a-n1", "b-n1"]);
  assert.ok(lines.includes("Manifest URL readable again"));
  // A new agent with the server down runs what was served last.
  const restarted = [];
  answer = () => ({ status: 500 });
  await new UrlPodSource({ ...options, onScan: (s) => restarted.push(s) }).check();
  assert.deepEqual(restarted[0].pods.map((p) => p.spec.name), ["a-n1", "b-n1"]);
});

test("the static sources are one set once each has spoken", () => {
  const out = [];
  const sets = new StaticPodSets(["file", "http"], (s) => out.push(s));
  sets.set("http", { pods: [{ spec: { name: "h" } }], problems: [] });
  assert.equal(out.length, 0);
  sets.set("file", { pods: [{ spec: { name: "f" } }], problems: [] });
  assert.deepEqual(out.at(-1).pods.map((p) => p.spec.name), ["f", "h"]);
});

test("a URL's pod's mirror pod says it came from http, a file's from file", async () => {
  const { mirrorPodObject } = await import("../../dist/cluster/mirror-pods.js");
  const scans = [];
  const source = new UrlPodSource({ url: `${base}/pods`, headers: {}, nodeName: "n1", periodMs: 3_600_000, cacheFile: path.join(fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-url-")), "last"), log: { log: () => {} }, onScan: (s) => scans.push(s) });
  answer = () => ({ status: 200, body: POD("m") });
  await source.check();
  const mirror = mirrorPodObject(scans.at(-1).pods[0], "n1", "node-uid", "2026-01-01T00:00:00Z");
  assert.equal(mirror.metadata.annotations["kubernetes.io/config.source"], "http");
  const fileMirror = mirrorPodObject({ ...scans.at(-1).pods[0], source: undefined }, "n1", "node-uid", "2026-01-01T00:00:00Z");
  assert.equal(fileMirror.metadata.annotations["kubernetes.io/config.source"], "file");
});
