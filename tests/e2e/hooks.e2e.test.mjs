// Lifecycle hooks on a real containerd: postStart runs in the container before it counts as
// running, preStop runs before the stop (an httpGet the test serves, and an exec whose output
// reaches the container's log), and a failing postStart kills the container.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { Nanolet, privateContainerdForFile, runtimeContainers, tempDir, waitFor } from "./harness.mjs";

const work = tempDir("nanolet-hooks-");
const containerd = privateContainerdForFile(path.join(work, "containerd"));

test("postStart and preStop hooks run in order; a failing postStart kills the container", { timeout: 120_000 }, async (t) => {
  const calls = [];
  const server = http.createServer((req, res) => {
    calls.push(req.url);
    res.end("ok");
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const port = server.address().port;
  const manifestDir = path.join(work, "manifests");
  const logsDir = path.join(work, "logs");
  fs.mkdirSync(manifestDir, { recursive: true });
  // The hooks write to the main process's stdout (/proc/1/fd/1): their words land in the log.
  fs.writeFileSync(path.join(manifestDir, "hooked.yaml"), `apiVersion: v1
kind: Pod
metadata: {name: hooked}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 10
  containers:
    - name: main
      image: busybox
      imagePullPolicy: IfNotPresent
      command: ["/bin/sh", "-c", "echo main started; trap 'echo got TERM; exit 0' TERM; while :; do sleep 1; done"]
      lifecycle:
        postStart: {exec: {command: ["/bin/sh", "-c", "echo hello from postStart > /proc/1/fd/1"]}}
        preStop: {httpGet: {host: 127.0.0.1, port: ${port}, path: /pre-stop}}
`);
  fs.writeFileSync(path.join(manifestDir, "broken.yaml"), `apiVersion: v1
kind: Pod
metadata: {name: broken}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  containers:
    - name: main
      image: busybox
      imagePullPolicy: IfNotPresent
      command: ["sleep", "3600"]
      lifecycle:
        postStart: {exec: {command: ["/bin/sh", "-c", "exit 7"]}}
`);
  const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir, rootDir: path.join(work, "root"), logsDir });
  nanolet.start();
  try {
    const pod = await nanolet.waitPod("hooked", (p) => p.phase === "Running", "Running", 60_000);
    const logFile = path.join(logsDir, `default_hooked-e2e-node_${pod.uid}`, "main", "0.log");
    await waitFor("postStart's words in the log", () => fs.existsSync(logFile) && fs.readFileSync(logFile, "utf8").includes("hello from postStart"), 20_000);
    await waitFor("a FailedPostStartHook event", () => nanolet.logLines(/reason=FailedPostStartHook/).find((l) => l.includes("broken-e2e-node")), 60_000);
    assert.ok(nanolet.logLines(/msg="Lifecycle hook failed"/).some((l) => l.includes("exited with 7")), "the hook's error is logged");
    fs.rmSync(path.join(manifestDir, "hooked.yaml"));
    await waitFor("the preStop call", () => calls.includes("/pre-stop"), 30_000);
    await waitFor("the container told to stop after preStop", () => fs.readFileSync(logFile, "utf8").includes("got TERM"), 30_000);
  } finally {
    for (const f of fs.readdirSync(manifestDir)) fs.rmSync(path.join(manifestDir, f));
    await waitFor("all pods removed from containerd", () => runtimeContainers(containerd).length === 0, 60_000);
    await nanolet.stop();
  }
});
