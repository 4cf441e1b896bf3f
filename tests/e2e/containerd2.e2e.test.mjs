// nanolet on containerd 2.x (Debian's newer package, build/containerd2.mjs), whose CRI streams
// every container change (GetContainerEvents): the evented PLEG. The stream drives the relists,
// the periodic relist slows to five minutes, and a broken stream (containerd restarted) brings
// the configured period back until the stream is up again. containerd 1.6's path (task exits
// hasten a relist that stays periodic) is in nanolet.e2e.test.mjs.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { freePort } from "./control-plane.mjs";
import { Nanolet, podManifest, privateContainerdForFile, runtimeContainers, tempDir, waitFor } from "./harness.mjs";

const work = tempDir("nanolet-e2e-cd2-");
const containerd = privateContainerdForFile(path.join(work, "containerd"), { version2: true });

/** The relists nanolet has made so far, from its /metrics on the read-only port. */
async function relists(port) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith("kubelet_pleg_relist_duration_seconds_count"));
  assert.ok(line, "the relist histogram is served");
  return Number(line.split(" ").at(-1));
}

describe("nanolet on containerd 2.x", { concurrency: false }, () => {
  test("the CRI event stream drives the PLEG: idle means no relist, a killed container is back by its event, a restarted containerd is followed", { timeout: 180_000 }, async () => {
    assert.match(containerd.ctr("version"), /Version:\s+v?2\./, "the containerd under test is 2.x");
    const dir = path.join(work, "evented");
    const manifestDir = path.join(dir, "manifests");
    fs.mkdirSync(manifestDir, { recursive: true });
    const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir, rootDir: path.join(dir, "root"), logsDir: path.join(dir, "logs") });
    const port = await freePort();
    try {
      fs.writeFileSync(path.join(manifestDir, "k.yaml"), podManifest("k", { script: "exec sleep 3600" }));
      nanolet.start(["--read-only-port", String(port)]); // the default relist period, 1 s
      const pod = await nanolet.waitPod("k", (p) => p.phase === "Running" && p.containers[0]?.state === "running", "Running", 60_000);
      await waitFor("the CRI stream up", () => nanolet.logLines(/msg="Runtime event source" source=cri reason=streaming/).length >= 1);
      await waitFor("the evented relist", () => nanolet.logLines(/msg="Runtime events drive the relist"/).length >= 1);
      assert.ok(nanolet.logLines(new RegExp(`msg="Relist asked by a runtime event" containerId=${pod.containers[0].containerId} event=started`)).length >= 1, "its start came as an event");

      // Nothing changes: with a 1 s period there would be relists; the stream leaves only the
      // five-minute safety net. (An upper bound: a slow machine makes no extra relist.)
      const idleFrom = await relists(port);
      await new Promise((r) => setTimeout(r, 6000));
      assert.equal(await relists(port), idleFrom, "no relist while nothing changed");

      const killed = pod.containers[0].containerId;
      containerd.ctr("tasks", "kill", "-s", "SIGKILL", killed);
      const replaced = await nanolet.waitPod("k", (p) => p.containers[0]?.state === "running" && p.containers[0].containerId !== killed, "a replacement running", 45_000);
      assert.equal(replaced.containers[0].restartCount, 1);
      assert.ok(nanolet.logLines(new RegExp(`msg="Relist asked by a runtime event" containerId=${killed} event=stopped`)).length >= 1, "the exit came as a CRI event");

      // containerd dies: the stream breaks, and periodic relists (1 s) find the runtime gone
      // and back; the stream comes up again and drives the relists once more.
      containerd.kill9();
      await waitFor("the stream seen broken", () => nanolet.logLines(/msg="Runtime events stopped; relisting every period"/).length >= 1, 30_000);
      await containerd.start({ images: false });
      await waitFor("the stream up again", () => nanolet.logLines(/msg="Runtime events drive the relist"/).length >= 2, 60_000);
      const afterRestart = await nanolet.waitPod("k", (p) => p.containers[0]?.state === "running", "running after containerd's restart", 30_000);
      assert.equal(afterRestart.containers[0].containerId, replaced.containers[0].containerId, "the running container adopted, not replaced");
      assert.equal(afterRestart.containers[0].restartCount, 1);

      fs.rmSync(path.join(manifestDir, "k.yaml"));
      await waitFor("the pod removed from containerd", () => runtimeContainers(containerd).length === 0, 60_000);
      // The event comes from containerd after the removal: ctr may show it gone first.
      await waitFor("removals come as events too", () => nanolet.logLines(/event=deleted/).length >= 1);
    } catch (error) {
      process.stderr.write(`nanolet's runtime-event lines:\n${nanolet.logLines(/Runtime event|Runtime events|relist/i).join("\n")}\n`);
      throw error;
    } finally {
      for (const f of fs.readdirSync(manifestDir)) fs.rmSync(path.join(manifestDir, f));
      await waitFor("all pods removed", () => runtimeContainers(containerd).length === 0, 60_000).catch(() => {});
      await nanolet.stop();
    }
  });
});
