// nanolet on a real containerd (Debian containerd + runc, private instance, local images).
// Tests run in order and share one containerd; each leaves no pod behind.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Nanolet, privateContainerdForFile, nanoletBin, podCgroupDirs, podManifest, runtimeContainers, tempDir, waitFor } from "./harness.mjs";

const work = tempDir("nanolet-e2e-");
const containerd = privateContainerdForFile(path.join(work, "containerd"));

/** Runs `body` with a fresh manifest dir and nanolet; always removes every pod afterwards. */
async function withNanolet(name, body) {
  const ctx = setup(name);
  try {
    await body(ctx);
  } finally {
    await drain(ctx.manifestDir, ctx.current ?? ctx.nanolet);
  }
}

function setup(name) {
  const dir = path.join(work, name);
  const manifestDir = path.join(dir, "manifests");
  fs.mkdirSync(manifestDir, { recursive: true });
  const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir, rootDir: path.join(dir, "root"), logsDir: path.join(dir, "logs") });
  return { dir, manifestDir, nanolet };
}

/** Removes every manifest and waits until nanolet has removed every pod from containerd. */
async function drain(manifestDir, nanolet) {
  for (const f of fs.readdirSync(manifestDir)) fs.rmSync(path.join(manifestDir, f));
  await waitFor("all pods removed from containerd", () => runtimeContainers(containerd).length === 0, 60_000);
  await nanolet.stop();
}

describe("nanolet on containerd", { concurrency: false }, () => {
  test("a static pod runs and `nanolet pods` lists it", { timeout: 60_000 }, async () => {
    await withNanolet("basic", async (ctx) => {
      const { manifestDir, nanolet } = ctx;
      fs.writeFileSync(path.join(manifestDir, "web.yaml"), podManifest("web", { script: "echo hello from web; sleep 3600" }));
      nanolet.start();
      const pod = await nanolet.waitPod("web", (p) => p.phase === "Running", "Running");
      const containerId = pod.containers[0].containerId;
      assert.match(containerId, /^[0-9a-f]{64}$/);
      const inRuntime = runtimeContainers(containerd).find((c) => c.id === containerId);
      assert.equal(inRuntime?.task, "RUNNING", "the container nanolet reports runs in containerd");

      const table = execFileSync(process.execPath, [nanoletBin, "pods", "--root-dir", nanolet.rootDir], { encoding: "utf8" });
      assert.match(table, /default\s+web-e2e-node\s+Running\s+0\s+main:running/);
      assert.ok(nanolet.logLines(/msg="Container started" pod=default\/web-e2e-node container=main/).length >= 1);
      // The container's output lands where the kubelet puts it: <ns>_<pod>_<uid>/<container>/<restart>.log
      const logFile = path.join(nanolet.logsDir, `default_web-e2e-node_${pod.uid}`, "main", "0.log");
      const line = await waitFor("the container's log line", () => fs.existsSync(logFile) && fs.readFileSync(logFile, "utf8").split("\n").find((l) => l.endsWith("hello from web")), 10_000);
      assert.match(line, /^\S+ stdout F hello from web$/);
    });
  });

  test("a started container's log is linked in /var/log/containers, as log shippers expect, and the link goes with it", { timeout: 60_000 }, async () => {
    await withNanolet("log-links", async (ctx) => {
      const { manifestDir, nanolet } = ctx;
      fs.writeFileSync(path.join(manifestDir, "shipped.yaml"), podManifest("shipped", { script: "echo shipped line; sleep 3600" }));
      nanolet.start();
      const pod = await nanolet.waitPod("shipped", (p) => p.phase === "Running", "Running");
      const containerId = pod.containers[0].containerId;
      const link = path.join("/var/log/containers", `shipped-e2e-node_default_main-${containerId}.log`);
      const logFile = path.join(nanolet.logsDir, `default_shipped-e2e-node_${pod.uid}`, "main", "0.log");
      await waitFor("the log link", () => fs.existsSync(link), 10_000);
      assert.equal(fs.readlinkSync(link), logFile);
      await waitFor("the container's line through the link", () => fs.readFileSync(link, "utf8").includes("shipped line"), 10_000);
      fs.rmSync(path.join(manifestDir, "shipped.yaml"));
      await waitFor("the container removed", () => !runtimeContainers(containerd).some((c) => c.id === containerId), 60_000);
      await waitFor("the link removed with it", () => { try { fs.lstatSync(link); return false; } catch { return true; } }, 10_000);
    });
  });

  test("restart policies: Always backs off 10s then 20s; OnFailure restarts only failures; Never does not restart", { timeout: 240_000 }, async () => {
    await withNanolet("policies", async (ctx) => {
      const { manifestDir, nanolet } = ctx;
      fs.writeFileSync(path.join(manifestDir, "always.yaml"), podManifest("always", { policy: "Always", script: "sleep 1; exit 1" }));
      fs.writeFileSync(path.join(manifestDir, "never.yaml"), podManifest("never", { policy: "Never", script: "sleep 1; exit 3" }));
      fs.writeFileSync(path.join(manifestDir, "onfail-ok.yaml"), podManifest("onfail-ok", { policy: "OnFailure", script: "sleep 1; exit 0" }));
      fs.writeFileSync(path.join(manifestDir, "onfail-bad.yaml"), podManifest("onfail-bad", { policy: "OnFailure", script: "sleep 1; exit 1" }));
      nanolet.start();

      // Record when each restart of "always" appears.
      const restartSeenAt = new Map();
      const watcher = setInterval(async () => {
        const p = await nanolet.pod("always").catch(() => undefined);
        const n = p?.containers[0]?.restartCount;
        if (n !== undefined && !restartSeenAt.has(n)) restartSeenAt.set(n, Date.now());
      }, 100);
      try {
        await waitFor("3 restarts of always", () => restartSeenAt.has(3), 90_000);
      } finally {
        clearInterval(watcher);
      }
      const gap = (a, b) => (restartSeenAt.get(b) - restartSeenAt.get(a)) / 1000;
      // Each run lasts ~1 s; the waits before restarts 2 and 3 are the back-off: 10 s, then 20 s.
      const second = gap(1, 2);
      const third = gap(2, 3);
      assert.ok(second >= 10.5 && second < 16, `restart 1->2 took ${second}s, want 1s run + 10s back-off`);
      assert.ok(third >= 20.5 && third < 27, `restart 2->3 took ${third}s, want 1s run + 20s back-off`);
      assert.ok(nanolet.logLines(/Back-off restarting failed container main in pod always-e2e-node/).length >= 1);
      // Container garbage collection: of its 4 instances, the crash loop keeps exactly one dead
      // one (upstream's MaxPerPodContainer 1) beside the current one, and the logs of those removed go too.
      const always = await nanolet.pod("always");
      const instances = () => {
        const out = containerd.ctr("containers", "ls", `labels."io.kubernetes.pod.uid"==${always.uid},labels."io.kubernetes.container.name"==main`);
        const ids = out.split("\n").slice(1).map((l) => l.split(/\s+/)[0]).filter(Boolean);
        const live = new Set(containerd.ctr("tasks", "ls").split("\n").filter((l) => /RUNNING/.test(l)).map((l) => l.split(/\s+/)[0]));
        return { all: ids.length, dead: ids.filter((id) => !live.has(id)).length };
      };
      const logDir = path.join(nanolet.logsDir, `default_always-e2e-node_${always.uid}`, "main");
      await waitFor("the crash loop down to one dead instance (and the current one)", () => instances().dead === 1, 30_000);
      // A removed instance's log goes a minute after it (upstream's container GC period).
      await waitFor("the first instances' logs removed a minute after them", () => !fs.readdirSync(logDir).includes("0.log"), 90_000);

      const never = await nanolet.waitPod("never", (p) => p.phase === "Failed", "Failed");
      assert.equal(never.restarts, 0);
      assert.equal(never.containers[0].exitCode, 3);
      const ok = await nanolet.waitPod("onfail-ok", (p) => p.phase === "Succeeded", "Succeeded");
      assert.equal(ok.restarts, 0);
      const bad = await nanolet.waitPod("onfail-bad", (p) => p.restarts >= 1, "restarted");
      assert.equal(bad.phase, "Running");
    });
  });

  test("a removed manifest stops and removes its pod, containers, sandbox and pod cgroups", { timeout: 60_000 }, async () => {
    await withNanolet("removal", async (ctx) => {
      const { manifestDir, nanolet } = ctx;
      fs.writeFileSync(path.join(manifestDir, "keep.yaml"), podManifest("keep"));
      fs.writeFileSync(path.join(manifestDir, "gone.yaml"), podManifest("gone", { grace: 1, containers: [{ name: "a" }, { name: "b", script: "trap '' TERM; sleep 3600" }] }));
      nanolet.start();
      await nanolet.waitPod("keep", (p) => p.phase === "Running", "Running");
      const gone = await nanolet.waitPod("gone", (p) => p.phase === "Running", "Running");
      assert.ok(podCgroupDirs(gone.uid).length > 0, "the pod's cgroups exist while it runs");
      const goneIds = gone.containers.map((c) => c.containerId);
      const keepBefore = (await nanolet.pod("keep")).containers[0].containerId;

      fs.rmSync(path.join(manifestDir, "gone.yaml"));
      await waitFor("gone's containers removed", () => !runtimeContainers(containerd).some((c) => goneIds.includes(c.id)), 30_000);
      await waitFor("gone's pod cgroups removed", () => podCgroupDirs(gone.uid).length === 0, 10_000);
      assert.equal((await nanolet.pod("gone")), undefined);
      // b ignores SIGTERM: it is killed after the 1 s grace period.
      assert.ok(nanolet.logLines(/Stopping container b" pod=default\/gone-e2e-node/).length === 1);
      const keep = await nanolet.pod("keep");
      assert.equal(keep.containers[0].containerId, keepBefore, "the other pod was not touched");
      assert.equal(keep.phase, "Running");
    });
  });

  test("bad manifests are reported with file and field; the good pod runs; nothing crashes", { timeout: 60_000 }, async () => {
    await withNanolet("bad-input", async (ctx) => {
      const { manifestDir, nanolet } = ctx;
      const write = (name, text) => fs.writeFileSync(path.join(manifestDir, name), text);
      write("good.yaml", podManifest("good"));
      write("bad-yaml.yaml", "apiVersion: v1\nkind: Pod\nmetadata: [unclosed\n");
      write("no-name.yaml", podManifest("x").replace("  name: x\n", ""));
      write("dup.yaml", podManifest("dup", { containers: [{ name: "a" }, { name: "a" }] }));
      write("policy.yaml", podManifest("policy", { policy: "Sometimes" }));
      write("grace.yaml", podManifest("grace", { grace: -1 }));
      write("type.yaml", podManifest("typed").replace("hostNetwork: true", "hostNetwork: \"yes\""));
      write("image.yaml", podManifest("noimage", { image: "localhost/does-not-exist:1" }));
      nanolet.start();

      await nanolet.waitPod("good", (p) => p.phase === "Running", "Running");
      const refused = (file, field) =>
        waitFor(`refusal of ${file} naming ${field}`, () =>
          nanolet.logLines(/msg="Refused pod manifest"/).find((l) => l.includes(path.join(manifestDir, file)) && (field === "" || l.includes(`field=${field}`))), 10_000);
      await refused("bad-yaml.yaml", "");
      await refused("no-name.yaml", "metadata.name");
      await refused("dup.yaml", "spec.containers[1].name");
      await refused("policy.yaml", "spec.restartPolicy");
      await refused("grace.yaml", "spec.terminationGracePeriodSeconds");
      await refused("type.yaml", "spec.hostNetwork");
      const image = await nanolet.waitPod("noimage", (p) => /ImagePull/.test(p.containers[0]?.reason ?? ""), "an image pull error");
      assert.equal(image.phase, "Pending");
      assert.ok(nanolet.logLines(/Failed to pull image/).length >= 1);
      // No refused pod reached the runtime: only good's and noimage's sandboxes exist.
      const sandboxes = containerd.ctr("containers", "ls", "labels.\"io.cri-containerd.kind\"==sandbox").split("\n").slice(1).filter(Boolean);
      assert.equal(sandboxes.length, 2);
      assert.equal(nanolet.proc.exitCode, null, "the agent is still running");
    });
  });

  test("containerd killed with SIGKILL and restarted: no pod lost, no duplicate", { timeout: 90_000 }, async () => {
    await withNanolet("runtime-crash", async (ctx) => {
      const { manifestDir, nanolet } = ctx;
      fs.writeFileSync(path.join(manifestDir, "a.yaml"), podManifest("a"));
      fs.writeFileSync(path.join(manifestDir, "b.yaml"), podManifest("b"));
      nanolet.start();
      await nanolet.waitPod("a", (p) => p.phase === "Running", "Running");
      await nanolet.waitPod("b", (p) => p.phase === "Running", "Running");
      const before = runtimeContainers(containerd).map((c) => c.id).sort();
      assert.equal(before.length, 4); // two sandboxes, two containers

      containerd.kill9();
      await new Promise((r) => setTimeout(r, 3000)); // nanolet relists against a dead socket
      await containerd.start({ images: false });
      await new Promise((r) => setTimeout(r, 5000));
      const after = runtimeContainers(containerd);
      assert.deepEqual(after.map((c) => c.id).sort(), before, "same sandboxes and containers");
      assert.ok(after.every((c) => c.task === "RUNNING"));
      assert.equal((await nanolet.pod("a")).restarts, 0);
      assert.equal((await nanolet.pod("a")).phase, "Running");
    });
  });

  test("a killed container is relisted on containerd's exit event, not at the next period, and replaced", { timeout: 90_000 }, async () => {
    await withNanolet("exit-event", async (ctx) => {
      const { manifestDir, nanolet } = ctx;
      fs.writeFileSync(path.join(manifestDir, "k.yaml"), podManifest("k", { script: "exec sleep 3600" }));
      // A relist period of a minute: a replacement within the test's wait can only come from the event.
      nanolet.start(["--relist-period", "60s"]);
      const pod = await nanolet.waitPod("k", (p) => p.phase === "Running" && p.containers[0]?.state === "running", "Running", 60_000);
      const killed = pod.containers[0].containerId;
      containerd.ctr("tasks", "kill", "-s", "SIGKILL", killed);
      const replaced = await nanolet.waitPod("k", (p) => p.containers[0]?.state === "running" && p.containers[0].containerId !== killed, "a replacement running", 45_000);
      assert.equal(replaced.containers[0].restartCount, 1);
      assert.ok(nanolet.logLines(new RegExp(`msg="Relist asked by a runtime event" containerId=${killed}`)).length >= 1, "the exit came as an event");
      if (process.env.NANOLET_E2E_CONTAINERD !== "2") {
        // containerd 1.6's task-exit event says how the container exited: acted on before its CRI shows it.
        assert.equal(nanolet.logLines(new RegExp(`msg="Exit taken from containerd's event, ahead of its CRI" containerId=${killed} exitCode=137`)).length, 1);
      }
      assert.ok(nanolet.logLines(/msg="Runtime event source" source=(cri|containerd) reason=streaming/).length >= 1);
    });
  });

  test("the agent killed and restarted adopts the running pods instead of recreating them", { timeout: 60_000 }, async () => {
    await withNanolet("agent-crash", async (ctx) => {
      const { manifestDir, nanolet } = ctx;
      fs.writeFileSync(path.join(manifestDir, "a.yaml"), podManifest("a"));
      nanolet.start();
      const pod = await nanolet.waitPod("a", (p) => p.phase === "Running", "Running");
      const before = runtimeContainers(containerd).map((c) => c.id).sort();

      await nanolet.stop("SIGKILL");
      const second = new Nanolet({ ...nanolet }).start();
      ctx.current = second;
      const adopted = await second.waitPod("a", (p) => p.phase === "Running", "Running after restart");
      await new Promise((r) => setTimeout(r, 3000));
      assert.equal(adopted.containers[0].containerId, pod.containers[0].containerId);
      assert.deepEqual(runtimeContainers(containerd).map((c) => c.id).sort(), before);
      assert.equal(second.logLines(/msg="Container created"/).length, 0, "nothing was created again");
    });
  });

  test("`run --record` on containerd writes a trace that `sim --replay` re-runs without divergence", { timeout: 90_000 }, async () => {
    await withNanolet("record", async (ctx) => {
      const { manifestDir, nanolet, dir } = ctx;
      const trace = path.join(dir, "trace.jsonl");
      fs.writeFileSync(path.join(manifestDir, "crashy.yaml"), podManifest("crashy", { script: "sleep 1; exit 3" }));
      fs.writeFileSync(path.join(manifestDir, "steady.yaml"), podManifest("steady"));
      nanolet.start(["--record", trace]);
      await nanolet.waitPod("crashy", (p) => p.containers[0]?.restartCount >= 2, "two restarts", 45_000);
      fs.rmSync(path.join(manifestDir, "crashy.yaml"));
      fs.rmSync(path.join(manifestDir, "steady.yaml"));
      await waitFor("all pods removed", () => runtimeContainers(containerd).length === 0, 30_000);
      await nanolet.stop(); // SIGTERM: the recording is flushed and closed
      const lines = fs.readFileSync(trace, "utf8").trim().split("\n");
      assert.ok(lines.length > 50, `${lines.length} trace lines`);
      assert.ok(lines.some((l) => l.includes('"op":"relist"') && l.includes('"same":true')));
      const replay = execFileSync(process.execPath, [nanoletBin, "sim", "--replay", trace], { encoding: "utf8" });
      assert.match(replay, /calls, no divergence/);
    });
  });
});
