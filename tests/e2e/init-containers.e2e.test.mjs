// Init containers and sidecars on a real containerd: order and success before the regular
// containers, a failing init container under Never fails the pod, and a sidecar keeps running
// while its regular container is restarted, and stops after it.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { Nanolet, privateContainerdForFile, runtimeContainers, tempDir, waitFor } from "./harness.mjs";

const work = tempDir("nanolet-init-");
const containerd = privateContainerdForFile(path.join(work, "containerd"));

function manifest(name, policy, { init = [], main }) {
  const container = (c) => [
    `    - name: ${c.name}`,
    "      image: busybox",
    "      imagePullPolicy: IfNotPresent",
    `      command: ["/bin/sh", "-c", ${JSON.stringify(c.script)}]`,
    ...(c.sidecar ? ["      restartPolicy: Always"] : []),
  ];
  return [
    "apiVersion: v1",
    "kind: Pod",
    `metadata: {name: ${name}}`,
    "spec:",
    "  hostNetwork: true",
    `  restartPolicy: ${policy}`,
    "  terminationGracePeriodSeconds: 2",
    "  initContainers:",
    ...init.flatMap(container),
    "  containers:",
    ...container({ name: "main", script: main }),
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

describe("init containers on containerd", { concurrency: false }, () => {
  test("init containers run in order to success before the regular container; a failure under Never fails the pod", { timeout: 90_000 }, async () => {
    await withNanolet("order", async ({ manifestDir, nanolet }) => {
      fs.writeFileSync(path.join(manifestDir, "ok.yaml"), manifest("ok", "Always", {
        init: [{ name: "first", script: "sleep 1; echo first" }, { name: "second", script: "echo second" }],
        main: "sleep 3600",
      }));
      fs.writeFileSync(path.join(manifestDir, "bad.yaml"), manifest("bad", "Never", {
        init: [{ name: "setup", script: "echo broken; exit 3" }],
        main: "sleep 3600",
      }));
      nanolet.start();
      const ok = await nanolet.waitPod("ok", (p) => p.phase === "Running", "Running", 60_000);
      assert.deepEqual(ok.initContainers.map((c) => [c.name, c.state, c.reason, c.exitCode]), [["first", "terminated", "Completed", 0], ["second", "terminated", "Completed", 0]]);
      const created = nanolet.logLines(/msg="Container created"/).filter((l) => l.includes("ok-e2e-node")).map((l) => /container=(\S+)/.exec(l)[1]);
      assert.deepEqual(created, ["first", "second", "main"], "created one after the other, the regular container last");
      const bad = await nanolet.waitPod("bad", (p) => p.phase === "Failed", "Failed", 60_000);
      assert.equal(bad.initContainers[0].exitCode, 3);
      assert.equal(bad.containers[0].state, "waiting");
      assert.equal(bad.containers[0].reason, "PodInitializing");
      assert.ok(!nanolet.logLines(/msg="Container created"/).some((l) => l.includes("bad-e2e-node") && l.includes("container=main")), "the regular container never ran");
    });
  });

  test("a sidecar keeps running while its regular container restarts, and stops after it", { timeout: 120_000 }, async () => {
    await withNanolet("sidecar", async ({ manifestDir, nanolet }) => {
      fs.writeFileSync(path.join(manifestDir, "side.yaml"), manifest("side", "Always", {
        init: [{ name: "proxy", sidecar: true, script: "sleep 3600" }],
        main: "sleep 2; exit 1",
      }));
      nanolet.start();
      const first = await nanolet.waitPod("side", (p) => p.initContainers?.[0]?.state === "running", "the sidecar running", 60_000);
      const sidecarId = first.initContainers[0].containerId;
      const restarted = await nanolet.waitPod("side", (p) => p.containers[0].restartCount >= 1, "main restarted", 60_000);
      assert.equal(restarted.initContainers[0].containerId, sidecarId, "the sidecar is the same container");
      assert.equal(restarted.initContainers[0].restartCount, 0);
      assert.equal(restarted.initContainers[0].state, "running");
      fs.rmSync(path.join(manifestDir, "side.yaml"));
      await waitFor("the pod's containers stopped", () => runtimeContainers(containerd).length === 0, 60_000);
      // Both are told at once (Killing events, as upstream); the sidecar's StopContainer waits.
      const stops = nanolet.logLines(/msg="runtime call".*action=stop-container/).map((l) => /container=(\S+)/.exec(l)[1]);
      assert.equal(stops.at(-1), "proxy", `the sidecar stops last (${stops.join(",")})`);
    });
  });
});
