// A real OOM kill on a real containerd: a container that outgrows its 32Mi memory limit is killed
// by its cgroup, and its status says OOMKilled (the runtime's exit reason, 137) at once; the OOM
// watcher reads the kernel's own report of it from /dev/kmsg and knows it for a container's OOM,
// not a system one.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { Nanolet, privateContainerdForFile, tempDir, waitFor } from "./harness.mjs";

const work = tempDir("nanolet-oom-");
const containerd = privateContainerdForFile(path.join(work, "containerd"));

describe("OOM kills", { concurrency: false }, () => {
  test("a container over its memory limit is OOMKilled, and the kernel's report is read", { timeout: 120_000 }, async (t) => {
    const manifestDir = path.join(work, "manifests");
    fs.mkdirSync(manifestDir);
    // A string that doubles until the cgroup's limit stops it.
    const hog = 'x=0123456789abcdef; while true; do x="$x$x"; done';
    fs.writeFileSync(path.join(manifestDir, "hog.yaml"), [
      "apiVersion: v1", "kind: Pod", "metadata: {name: hog}", "spec:", "  hostNetwork: true", "  restartPolicy: Never",
      "  containers:", "    - name: main", "      image: busybox", "      imagePullPolicy: IfNotPresent",
      `      command: ["/bin/sh", "-c", ${JSON.stringify(hog)}]`, "      resources: {limits: {memory: 32Mi}}", "",
    ].join("\n"));
    const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir, rootDir: path.join(work, "root"), logsDir: path.join(work, "logs") });
    nanolet.start();
    try {
      const pod = await nanolet.waitPod("hog", (p) => p.phase === "Failed", "Failed", 90_000);
      const main = pod.containers.find((c) => c.name === "main");
      assert.equal(main.reason, "OOMKilled", JSON.stringify(main));
      assert.equal(main.exitCode, 137);
      // The kernel's report of this OOM, read from /dev/kmsg: a container's, not a SystemOOM.
      if (nanolet.logLines(/Cannot watch for system OOMs/).length === 0) {
        await waitFor("the kernel's report read", () => nanolet.logLines(new RegExp(`A container's memory limit killed a process.*pod${pod.uid}`)).length > 0, 15_000);
        assert.equal(nanolet.logLines(/System OOM encountered/).length, 0);
        t.diagnostic(nanolet.logLines(/A container's memory limit killed a process/).at(-1));
      } else t.diagnostic("no /dev/kmsg here: the kernel's report was not checked");
    } finally {
      fs.rmSync(path.join(manifestDir, "hog.yaml"), { force: true });
      await waitFor("the pod removed", async () => (await nanolet.pods()).length === 0, 60_000).catch(() => {});
      await nanolet.stop();
    }
  });
});
