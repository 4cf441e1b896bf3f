// Probes on a real containerd: an httpGet readiness probe against busybox httpd, an exec liveness
// probe that starts failing (the container is killed and restarted), and a startup probe that
// holds the others back. The tests wait for states, never for a number of probe periods.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { Nanolet, privateContainerdForFile, runtimeContainers, tempDir, waitFor } from "./harness.mjs";

const work = tempDir("nanolet-probes-");
const containerd = privateContainerdForFile(path.join(work, "containerd"));

async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function manifest(name, container) {
  return [
    "apiVersion: v1",
    "kind: Pod",
    `metadata: {name: ${name}}`,
    "spec:",
    "  hostNetwork: true",
    "  terminationGracePeriodSeconds: 2",
    "  containers:",
    "    - name: main",
    "      image: busybox",
    "      imagePullPolicy: IfNotPresent",
    ...container.map((line) => `      ${line}`),
    "",
  ].join("\n");
}

async function withNanolet(name, body) {
  const dir = path.join(work, name);
  const manifestDir = path.join(dir, "manifests");
  fs.mkdirSync(manifestDir, { recursive: true });
  const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir, rootDir: path.join(dir, "root"), logsDir: path.join(dir, "logs") });
  try {
    await body({ manifestDir, nanolet });
  } finally {
    for (const f of fs.readdirSync(manifestDir)) fs.rmSync(path.join(manifestDir, f));
    await waitFor("all pods removed from containerd", () => runtimeContainers(containerd).length === 0, 60_000);
    await nanolet.stop();
  }
}

describe("probes on containerd", { concurrency: false }, () => {
  test("an httpGet readiness probe makes the pod Ready only once httpd answers; a 404 keeps it unready", { timeout: 90_000 }, async () => {
    await withNanolet("readiness", async ({ manifestDir, nanolet }) => {
      const port = await freePort();
      const badPort = await freePort();
      // httpd starts 3 s after the container: the probe fails first, then passes. It listens on
      // every address: a host-network pod is probed on the node's IP, as upstream does.
      const serve = (p) => `mkdir -p /w && echo ok > /w/index.html && sleep 3 && exec httpd -f -p ${p} -h /w`;
      fs.writeFileSync(path.join(manifestDir, "web.yaml"), manifest("web", [
        `command: ["/bin/sh", "-c", ${JSON.stringify(serve(port))}]`,
        "ports: [{name: http, containerPort: " + port + "}]",
        "readinessProbe: {httpGet: {port: http, path: /index.html}, periodSeconds: 1}",
      ]));
      fs.writeFileSync(path.join(manifestDir, "missing.yaml"), manifest("missing", [
        `command: ["/bin/sh", "-c", ${JSON.stringify(serve(badPort))}]`,
        `readinessProbe: {httpGet: {port: ${badPort}, path: /nothing-here}, periodSeconds: 1}`,
      ]));
      nanolet.start();
      const running = await nanolet.waitPod("web", (p) => p.phase === "Running", "Running");
      assert.equal(running.containers[0].started, true);
      const ready = await nanolet.waitPod("web", (p) => p.containers[0]?.ready === true, "ready", 60_000);
      assert.equal(ready.ready, true, "the Ready condition follows the container");
      await waitFor("a 404 Unhealthy event", () => nanolet.logLines(/Readiness probe failed: HTTP probe failed with statuscode: 404/).find((l) => l.includes("missing-e2e-node")), 30_000);
      const missing = await nanolet.pod("missing");
      assert.equal(missing.phase, "Running");
      assert.equal(missing.containers[0].ready, false);
      assert.equal(missing.ready, false);
    });
  });

  test("a failing exec liveness probe kills the container and it is restarted", { timeout: 120_000 }, async () => {
    await withNanolet("liveness", async ({ manifestDir, nanolet }) => {
      // Healthy for 4 s, then the file the probe reads is gone.
      fs.writeFileSync(path.join(manifestDir, "sick.yaml"), manifest("sick", [
        `command: ["/bin/sh", "-c", "touch /tmp/alive; sleep 4; rm /tmp/alive; sleep 3600"]`,
        "livenessProbe: {exec: {command: [cat, /tmp/alive]}, periodSeconds: 1, failureThreshold: 2}",
      ]));
      nanolet.start();
      const restarted = await nanolet.waitPod("sick", (p) => p.containers[0]?.restartCount >= 1 && p.containers[0].state === "running", "restarted after a liveness failure", 90_000);
      assert.equal(restarted.phase, "Running");
      assert.ok(nanolet.logLines(/msg="Container main failed liveness probe, will be restarted"/).length >= 1, "a Killing event says why");
      assert.ok(nanolet.logLines(/msg="Liveness probe failed: cat: can't open '\/tmp\/alive': No such file or directory/).length >= 1, "an Unhealthy event carries the probe's output");
    });
  });

  test("a startup probe keeps the container unstarted and holds liveness back until it passes", { timeout: 90_000 }, async () => {
    await withNanolet("startup", async ({ manifestDir, nanolet }) => {
      fs.writeFileSync(path.join(manifestDir, "slow.yaml"), manifest("slow", [
        `command: ["/bin/sh", "-c", "sleep 4; touch /tmp/up; sleep 3600"]`,
        "startupProbe: {exec: {command: [cat, /tmp/up]}, periodSeconds: 1, failureThreshold: 30}",
        "livenessProbe: {exec: {command: [cat, /tmp/up]}, periodSeconds: 1, failureThreshold: 1}",
      ]));
      nanolet.start();
      const unstarted = await nanolet.waitPod("slow", (p) => p.containers[0]?.state === "running", "running");
      assert.equal(unstarted.containers[0].started, false);
      const started = await nanolet.waitPod("slow", (p) => p.containers[0]?.started === true, "started", 60_000);
      assert.equal(started.containers[0].restartCount, 0, "liveness never ran before startup passed");
      assert.equal(started.containers[0].ready, true);
      assert.equal(nanolet.logLines(/Liveness probe failed/).length, 0);
    });
  });
});
