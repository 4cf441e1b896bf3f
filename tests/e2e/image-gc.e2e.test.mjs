// Image garbage collection on a real containerd whose image filesystem is a small tmpfs of the
// test's own, filled past the high threshold by the test (the machine's disk is not read): unused
// images older than the minimum age go, the image a running pod uses and the sandbox image stay,
// and not being able to free enough is said as upstream says it.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { PAUSE_IMAGE, BUSYBOX_IMAGE, smallImageArchive } from "../../build/containerd.mjs";
import { Nanolet, podManifest, privateContainerdForFile, tempDir, waitFor } from "./harness.mjs";

const work = tempDir("nanolet-image-gc-");
// The image filesystem: containerd's root on a 96 MiB tmpfs, mounted before containerd starts.
const root = path.join(work, "containerd", "root");
fs.mkdirSync(root, { recursive: true });
execFileSync("mount", ["-t", "tmpfs", "-o", "size=96m", "tmpfs", root]);
const containerd = privateContainerdForFile(path.join(work, "containerd"));
after(() => {
  try {
    execFileSync("umount", ["-l", root], { stdio: "ignore" });
  } catch {
    // containerd's stop unmounted it
  }
});

/** A small image of its own content (busybox and a stamp), imported into containerd as `tag`. */
function importImage(tag) {
  containerd.ctr("images", "import", smallImageArchive(tag, { stamp: `${tag}\n` }, path.join(work, `${tag.replace(/[/:]/g, "_")}.tar`)));
}

/** The test's own pressure: the tmpfs filled to `fraction` of its size. */
function fillTo(fraction) {
  const s = fs.statfsSync(root);
  const capacity = s.blocks * s.bsize;
  const used = capacity - s.bavail * s.bsize;
  fs.writeFileSync(path.join(root, "filler"), Buffer.alloc(Math.max(0, Math.floor(capacity * fraction) - used)));
}

const images = () => containerd.ctr("images", "ls", "-q").split("\n").filter(Boolean);

describe("image garbage collection", { concurrency: false }, () => {
  test("over the high threshold: unused images go, the one in use and the sandbox image stay; not enough freed is reported", { timeout: 120_000 }, async () => {
    importImage("localhost/gc/unused:1");
    importImage("localhost/gc/in-use:1");
    const manifestDir = path.join(work, "manifests");
    fs.mkdirSync(manifestDir);
    fs.writeFileSync(path.join(manifestDir, "user.yaml"), podManifest("user", { image: "localhost/gc/in-use:1" }).replace("imagePullPolicy: Always", "imagePullPolicy: IfNotPresent"));
    const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir, rootDir: path.join(work, "nanolet-root"), logsDir: path.join(work, "logs") });
    nanolet.start(["--image-gc-high-threshold", "85", "--image-gc-low-threshold", "80", "--minimum-image-ttl-duration", "1s", "--image-gc-period", "1s"]);
    try {
      await nanolet.waitPod("user", (p) => p.phase === "Running", "Running", 60_000);
      // Under the threshold nothing goes.
      await waitFor("a pass under the threshold", () => nanolet.logLines(/nanolet started/).length > 0, 30_000);
      await new Promise((r) => setTimeout(r, 2500));
      assert.ok(images().includes("localhost/gc/unused:1"), "an unused image went while the disk was not full");
      fillTo(0.92);
      await waitFor("the unused images removed", () => !images().includes("localhost/gc/unused:1") && !images().includes(BUSYBOX_IMAGE), 30_000);
      const left = images();
      assert.ok(left.includes("localhost/gc/in-use:1"), `the image in use stays: ${left.join(", ")}`);
      assert.ok(left.includes(PAUSE_IMAGE), `the sandbox image stays: ${left.join(", ")}`);
      // The images were small beside the filler: upstream's warning says how far it fell short.
      await waitFor("FreeDiskSpaceFailed's words", () => nanolet.logLines(/Failed to garbage collect required amount of images\. Attempted to free \d+ bytes, but only found \d+ bytes eligible to free\./).length > 0, 10_000);
      assert.equal((await nanolet.pod("user")).phase, "Running", "the pod using the image runs on");
    } finally {
      fs.rmSync(path.join(root, "filler"), { force: true });
      fs.rmSync(path.join(manifestDir, "user.yaml"), { force: true });
      await waitFor("the pod removed", async () => (await nanolet.pods()).length === 0, 60_000).catch(() => {});
      await nanolet.stop();
    }
  });

  test("imagefs pressure: the eviction manager reclaims unused images before evicting, even with periodic image GC off; a static pod is not evicted", { timeout: 120_000 }, async () => {
    importImage("localhost/gc/reclaimable:1");
    importImage("localhost/gc/in-use:1");
    const manifestDir = path.join(work, "manifests-2");
    fs.mkdirSync(manifestDir);
    fs.writeFileSync(path.join(manifestDir, "user.yaml"), podManifest("user", { image: "localhost/gc/in-use:1" }).replace("imagePullPolicy: Always", "imagePullPolicy: IfNotPresent"));
    const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir, rootDir: path.join(work, "nanolet-root-2"), logsDir: path.join(work, "logs-2") });
    // Periodic image GC off (100); only the image filesystem's own threshold, measured on the tmpfs.
    nanolet.start(["--image-gc-high-threshold", "100", "--image-gc-low-threshold", "99", "--minimum-image-ttl-duration", "1s",
      "--imagefs-path", root, "--eviction-hard", "imagefs.available<15%", "--eviction-monitoring-interval", "1s"]);
    try {
      await nanolet.waitPod("user", (p) => p.phase === "Running", "Running", 60_000);
      await new Promise((r) => setTimeout(r, 1500)); // older than the minimum age
      fillTo(0.92);
      await waitFor("the reclaimable image removed", () => !images().includes("localhost/gc/reclaimable:1"), 30_000);
      assert.ok(images().includes("localhost/gc/in-use:1"));
      assert.ok(images().includes(PAUSE_IMAGE));
      assert.ok(nanolet.logLines(/attempting to reclaim node-level resources.*imagefs\.available/).length > 0, "the reclaim is logged with its signal");
      // Not enough freed (the filler stays), but the only pod is a static pod: critical, never
      // evicted, as upstream's. It runs on under DiskPressure.
      await waitFor("DiskPressure", () => nanolet.logLines(/Node pressure changed.*"?disk"?[:=]true/).length > 0, 10_000);
      await new Promise((r) => setTimeout(r, 3000));
      assert.equal((await nanolet.pod("user")).phase, "Running");
    } finally {
      fs.rmSync(path.join(root, "filler"), { force: true });
      fs.rmSync(path.join(manifestDir, "user.yaml"), { force: true });
      await waitFor("the pod removed", async () => (await nanolet.pods()).length === 0, 60_000).catch(() => {});
      await nanolet.stop();
    }
  });
});
