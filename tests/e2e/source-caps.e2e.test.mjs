// What a flood or a duplicate in the manifest directory may do to pods that run (issue 36): 2,000
// valid manifests dropped beside three running pods must not stop them (the cap of 1,000 files
// read keeps the files read before, and says which files it did not read); a duplicate that
// shadowed a running pod and is removed again gives the pod back.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { Nanolet, privateContainerdForFile, podManifest, runtimeContainers, tempDir, waitFor } from "./harness.mjs";

const work = tempDir("nanolet-caps-");
const containerd = privateContainerdForFile(path.join(work, "containerd"));

function agent(name, args = []) {
  const dir = path.join(work, name);
  fs.mkdirSync(path.join(dir, "manifests"), { recursive: true });
  const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir: path.join(dir, "manifests"), rootDir: path.join(dir, "root"), logsDir: path.join(dir, "logs") });
  return { manifests: path.join(dir, "manifests"), nanolet: nanolet.start(args) };
}

const running = (p) => p.phase === "Running" && p.containers.every((c) => c.state === "running");

test("2,000 manifests beside three running pods: the pods keep their containers, the files not read are named", { timeout: 240_000 }, async () => {
  // --max-pods 3: the flood's pods are refused at admission, so only the cap is under test.
  const { manifests, nanolet } = agent("flood", ["--max-pods", "3"]);
  try {
    for (const name of ["x1", "x2", "x3"]) fs.writeFileSync(path.join(manifests, `${name}.yaml`), podManifest(name));
    for (const name of ["x1", "x2", "x3"]) await nanolet.waitPod(name, running, "running", 60_000);
    const before = Object.fromEntries((await nanolet.pods()).map((p) => [p.name, p.containers.map((c) => c.containerId)]));
    // Named to sort before the running ones: a cap by name alone would read these first.
    for (let i = 0; i < 2000; i++) fs.writeFileSync(path.join(manifests, `a${String(i).padStart(4, "0")}.yaml`), podManifest(`a${i}`));
    await waitFor("the flood scanned", () => nanolet.logLines(/msg="Refused pod manifest".*Too many/).length > 0, 90_000, 500);
    // Two more full scans (the rescan is every 20 s; a change is seen at once): still running.
    fs.writeFileSync(path.join(manifests, "a9999.yaml"), podManifest("late"));
    await new Promise((r) => setTimeout(r, 3000));
    const after = Object.fromEntries((await nanolet.pods()).map((p) => [p.name, p.containers.map((c) => c.containerId)]));
    for (const name of Object.keys(before)) assert.deepEqual(after[name], before[name], `${name} kept its container`);
    assert.deepEqual(nanolet.logLines(/Pod removed from its source.*pod=default\/x\d/), [], "no running pod was removed");
    const notRead = nanolet.logLines(/msg="Refused pod manifest".*Too many/);
    assert.ok(notRead.every((l) => !/x\d\.yaml/.test(l)), "the running pods' files are read");
  } finally {
    await nanolet.stop();
  }
});

test("a duplicate that shadowed a running static pod is removed: the pod runs again", { timeout: 180_000 }, async () => {
  const { manifests, nanolet } = agent("duplicate");
  try {
    fs.writeFileSync(path.join(manifests, "x1.yaml"), podManifest("x1"));
    const first = await nanolet.waitPod("x1", running, "running", 60_000);
    // Same name, another file that sorts first: x1's own file is refused as the duplicate.
    fs.writeFileSync(path.join(manifests, "a-x1.yaml"), podManifest("x1", { script: "sleep 7200" }));
    await waitFor("x1.yaml refused as a duplicate", () => nanolet.logLines(/msg="Refused pod manifest".*x1\.yaml.*Duplicate value/).length > 0, 30_000);
    await waitFor("the shadowing pod running", async () => {
      const p = await nanolet.pod("x1");
      return p && p.uid !== first.uid && running(p);
    }, 60_000);
    const firstId = first.containers[0].containerId;
    await waitFor("the shadowed x1's container stopped in the runtime", () => runtimeContainers(containerd).every((c) => c.id !== firstId || c.task !== "RUNNING"), 60_000);
    fs.rmSync(path.join(manifests, "a-x1.yaml"));
    // Before the fix the pod stayed terminated (its old container exited) until the agent restarted.
    const back = await nanolet.waitPod("x1", (p) => p.uid === first.uid && running(p) && p.containers[0].containerId !== firstId, "x1 running again from its own file, in a new container", 60_000);
    assert.equal(back.origin.endsWith("/x1.yaml"), true);
  } finally {
    await nanolet.stop();
  }
});

test("a pod name too long for its log directory fails its sandbox with the reason, not its containers in a loop", { timeout: 120_000 }, async () => {
  const { manifests, nanolet } = agent("long-name");
  try {
    // 215 characters + "-e2e-node": a valid name (253 at most) whose log directory
    // `default_<name>_<uid>` is longer than the 255 bytes a file name may have.
    const name = "a".repeat(215);
    fs.writeFileSync(path.join(manifests, "long.yaml"), podManifest(name));
    fs.writeFileSync(path.join(manifests, "short.yaml"), podManifest("short"));
    await nanolet.waitPod("short", running, "the other pod running", 60_000);
    await waitFor("the sandbox refused with the reason", () => nanolet.logLines(/create pod log directory .*file name too long/).length > 0, 60_000);
    const pod = await nanolet.pod(name);
    assert.equal(pod.phase, "Pending");
    assert.equal(pod.restarts, 0);
    assert.deepEqual(nanolet.logLines(new RegExp(`Container started.*pod=default/${name}`)), []);
  } finally {
    await nanolet.stop();
  }
});
