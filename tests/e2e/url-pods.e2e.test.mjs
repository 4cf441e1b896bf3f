// Static pods from a web server (--manifest-url) on a real containerd: a pod served by a local
// HTTP server runs beside the directory's, follows edits of what is served, keeps running while
// the server fails or answers garbage, and runs again after an agent restart with the server down.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { Nanolet, podManifest, privateContainerdForFile, tempDir, waitFor } from "./harness.mjs";

const work = tempDir("nanolet-url-");
const containerd = privateContainerdForFile(path.join(work, "containerd"));

let served = { status: 200, body: "" };
const requests = [];
const server = http.createServer((req, res) => {
  requests.push(req.headers);
  res.writeHead(served.status, { "content-type": "application/yaml" });
  res.end(served.body);
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const url = `http://127.0.0.1:${server.address().port}/node/pods.yaml`;
after(() => {
  server.closeAllConnections();
  server.close();
});

describe("static pods from a URL", { concurrency: false }, () => {
  test("a served pod runs, follows edits, outlasts a failing server and an agent restart", { timeout: 180_000 }, async () => {
    const manifestDir = path.join(work, "manifests");
    fs.mkdirSync(manifestDir);
    fs.writeFileSync(path.join(manifestDir, "local.yaml"), podManifest("local"));
    served = { status: 200, body: podManifest("web", { script: "echo v1; sleep 3600" }) };
    const rootDir = path.join(work, "root");
    const start = () =>
      new Nanolet({ endpoint: containerd.endpoint, manifestDir, rootDir, logsDir: path.join(work, "logs") }).start([
        "--manifest-url", url, "--manifest-url-header", "X-Node:e2e,X-Fleet:a", "--manifest-url-header", "X-Fleet:b", "--http-check-frequency", "1s",
      ]);
    let nanolet = start();
    try {
      const first = await nanolet.waitPod("web", (p) => p.phase === "Running", "Running", 60_000);
      await nanolet.waitPod("local", (p) => p.phase === "Running", "Running", 60_000);
      assert.equal(requests.at(-1)["x-node"], "e2e");
      assert.equal(requests.at(-1)["x-fleet"], "a, b", "a repeated header keeps both values in order");

      // An edit is a new pod (its uid is the manifest's hash), as upstream.
      served = { status: 200, body: podManifest("web", { script: "echo v2; sleep 3600" }) };
      const second = await nanolet.waitPod("web", (p) => p.phase === "Running" && p.uid !== first.uid, "the edited pod", 60_000);
      await waitFor("the old version gone", async () => !(await nanolet.pods()).some((p) => p.uid === first.uid), 60_000);

      // A failing server, then garbage: the pod runs on.
      served = { status: 500, body: "down" };
      await waitFor("the failure logged", () => nanolet.logLines(/Unable to read the manifest URL/).length > 0, 30_000);
      served = { status: 200, body: "\u0000\u0001 not yaml {{{" };
      await waitFor("the garbage logged", () => nanolet.logLines(/not pods|Unable to read the manifest URL/).length > 1, 30_000);
      await new Promise((r) => setTimeout(r, 2500));
      assert.equal((await nanolet.pod("web")).uid, second.uid);
      assert.equal((await nanolet.pod("web")).phase, "Running");

      // Restarted while the server is down: the last good answer, kept on disk, is what runs.
      await nanolet.stop();
      nanolet = start();
      await waitFor("the restarted agent's pods", async () => (await nanolet.pods().catch(() => [])).some((p) => p.name === "web-e2e-node" && p.uid === second.uid && p.phase === "Running"), 60_000);
      assert.ok(nanolet.logLines(/Running the pods the manifest URL served last/).length > 0);

      // Served nothing any more (an empty list): the pod goes.
      served = { status: 200, body: JSON.stringify({ apiVersion: "v1", kind: "PodList", items: [] }) };
      await waitFor("the web pod removed", async () => !(await nanolet.pods()).some((p) => p.name === "web-e2e-node"), 60_000);
      assert.equal((await nanolet.pod("local")).phase, "Running", "the directory's pod is not touched");
    } finally {
      fs.rmSync(path.join(manifestDir, "local.yaml"), { force: true });
      served = { status: 200, body: JSON.stringify({ apiVersion: "v1", kind: "PodList", items: [] }) };
      await waitFor("the pods removed", async () => (await nanolet.pods()).length === 0, 60_000).catch(() => {});
      await nanolet.stop();
    }
  });
});
