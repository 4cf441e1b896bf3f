// A stop storm on a real containerd: 40 static pods whose containers ignore SIGTERM (a shell as
// PID 1) are removed at once. Each must be stopped within its own grace period, as the kubelet
// stops them (31.7 s for 40 such pods with a 30 s grace, measured beside it); on the executor of
// dcdf406, where each StopContainer held one of 8 slots for the whole grace period, they stopped
// 8 at a time and the last ones only after five grace periods.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { PrivateContainerd, ensurePackages } from "../../build/containerd.mjs";
import { Nanolet, podManifest, runtimeContainers, tempDir, waitFor } from "./harness.mjs";

const PODS = 40;
const GRACE_SECONDS = 10;
/** Room for the runtime calls around the stops (StopPodSandbox, removals, a relist) on a loaded machine. */
const SLACK_SECONDS = 15;

let containerd;
const work = tempDir("nanolet-storm-");

before(async () => {
  ensurePackages();
  containerd = new PrivateContainerd(path.join(work, "containerd"));
  await containerd.start();
});

after(async () => {
  await containerd?.stop();
});

test(`${PODS} pods ignoring SIGTERM, removed at once, are all stopped within their grace period`, { timeout: 300_000 }, async () => {
  const manifestDir = path.join(work, "manifests");
  fs.mkdirSync(manifestDir, { recursive: true });
  const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir, rootDir: path.join(work, "root"), logsDir: path.join(work, "logs") });
  const docs = Array.from({ length: PODS }, (_, i) => podManifest(`storm-${i}`, { grace: GRACE_SECONDS, script: "sleep 3600" }));
  const file = path.join(manifestDir, "storm.yaml");
  fs.writeFileSync(file, docs.join("---\n"));
  nanolet.start();
  try {
    await waitFor(`${PODS} pods running`, async () => (await nanolet.pods()).filter((p) => p.phase === "Running").length === PODS, 240_000, 500);
    // ctr lists each sandbox (its pause container) beside the pod's own container.
    assert.equal(runtimeContainers(containerd).filter((c) => c.task === "RUNNING").length, 2 * PODS);
    const removedAtMs = Date.now();
    fs.rmSync(file);
    // Wait for the state (nothing left), then judge how long it took against the promise.
    await waitFor("every container gone from containerd", () => runtimeContainers(containerd).length === 0, 240_000, 250);
    const tookSeconds = (Date.now() - removedAtMs) / 1000;
    assert.ok(tookSeconds <= GRACE_SECONDS + SLACK_SECONDS, `${PODS} pods took ${tookSeconds.toFixed(1)} s to stop; each had ${GRACE_SECONDS} s`);
    // Each pod was told to go as its manifest went.
    assert.equal(nanolet.logLines(/msg="Pod removed from its source; stopping it"/).length, PODS);
    process.stdout.write(`# stop storm: ${PODS} pods with a ${GRACE_SECONDS} s grace stopped in ${tookSeconds.toFixed(1)} s\n`);
  } finally {
    if (fs.existsSync(file)) fs.rmSync(file);
    await waitFor("all pods removed", () => runtimeContainers(containerd).length === 0, 240_000).catch(() => {});
    await nanolet.stop();
  }
});
