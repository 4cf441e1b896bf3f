// Hardware on a real containerd: the static CPU policy (`--cpu-manager-policy static
// --reserved-cpus 0`) gives a Guaranteed container of 1 CPU a CPU of its own, read from its
// cgroup's cpuset.cpus, and everyone else the rest, kept over an agent restart; a changed policy is
// refused at start as upstream refuses it. The project's sample device plugin registers, a pod gets
// two devices (their environment, files and device nodes inside the container), and one asking for
// more than there are is refused with upstream's reason. A pod's inline CSI volume of the test
// driver is published, read inside the container, and unpublished when the pod goes.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Nanolet, privateContainerdForFile, repo, tempDir, waitFor } from "./harness.mjs";

const dir = tempDir("nanolet-hardware-");
const containerd = privateContainerdForFile(path.join(dir, "containerd"));
const manifestDir = path.join(dir, "manifests");
const rootDir = path.join(dir, "root");
fs.mkdirSync(manifestDir, { recursive: true });
const nanolet = () => new Nanolet({ endpoint: containerd.endpoint, manifestDir, rootDir, logsDir: path.join(dir, "logs"), node: "hw" });
const FLAGS = ["--cpu-manager-policy", "static", "--reserved-cpus", "0", "--cpu-manager-reconcile-period", "2s"];
const children = [];
let agent;

after(async () => {
  for (const f of fs.readdirSync(manifestDir)) fs.rmSync(path.join(manifestDir, f));
  if (agent?.proc?.exitCode === null) {
    await waitFor("every pod gone", async () => (await agent.pods()).length === 0, 60_000).catch(() => {});
    await agent.stop();
  }
  for (const child of children) child.kill("SIGTERM");
});

function writePod(name, { resources, script = "sleep 3600", volumes, volumeMounts } = {}) {
  const pod = {
    apiVersion: "v1", kind: "Pod", metadata: { name },
    spec: {
      hostNetwork: true, terminationGracePeriodSeconds: 1,
      containers: [{ name: "main", image: "busybox", imagePullPolicy: "IfNotPresent", command: ["/bin/sh", "-c", script], ...(resources ? { resources } : {}), ...(volumeMounts ? { volumeMounts } : {}) }],
      ...(volumes ? { volumes } : {}),
    },
  };
  fs.writeFileSync(path.join(manifestDir, `${name}.yaml`), JSON.stringify(pod));
}

/** The cpuset of pod `uid`'s container, from its cgroup (v1 cpuset hierarchy or v2 unified). */
function containerCpus(uid, containerId) {
  for (const base of ["/sys/fs/cgroup/cpuset", "/sys/fs/cgroup"]) {
    for (const qos of ["kubepods", "kubepods/burstable", "kubepods/besteffort"]) {
      const file = path.join(base, qos, `pod${uid}`, containerId, base.endsWith("cpuset") ? "cpuset.cpus" : "cpuset.cpus.effective");
      if (fs.existsSync(file)) return fs.readFileSync(file, "utf8").trim();
    }
  }
  return undefined;
}

function logOf(pod) {
  const file = path.join(dir, "logs", `default_${pod.name}_${pod.uid}`, "main", "0.log");
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
}

const guaranteed = { requests: { cpu: "1", memory: "32Mi" }, limits: { cpu: "1", memory: "32Mi" } };

describe("hardware on a real containerd", { concurrency: false }, () => {
  test("static CPU policy: the Guaranteed container on CPU 1 alone, the BestEffort one on CPU 0, after a restart too", { timeout: 180_000 }, async (t) => {
    writePod("exclusive", { resources: guaranteed });
    writePod("shared");
    agent = nanolet().start(FLAGS);
    const exclusive = await agent.waitPod("exclusive", (p) => p.phase === "Running", "Running", 90_000);
    const shared = await agent.waitPod("shared", (p) => p.phase === "Running", "Running", 90_000);
    const exclusiveCpus = await waitFor("the exclusive cpuset", () => containerCpus(exclusive.uid, exclusive.containers[0].containerId) === "1" && "1", 30_000);
    // The shared pool shrinks to CPU 0 once the exclusive CPU is taken: written by the reconcile.
    await waitFor("the shared container on CPU 0", () => containerCpus(shared.uid, shared.containers[0].containerId) === "0", 30_000);
    t.diagnostic(`exclusive ${exclusiveCpus}, shared 0`);
    const state = JSON.parse(fs.readFileSync(path.join(rootDir, "cpu_manager_state"), "utf8"));
    assert.equal(state.policyName, "static");
    assert.equal(state.defaultCpuSet, "0");
    assert.deepEqual(state.entries, { [exclusive.uid]: { main: "1" } });
    assert.equal(typeof state.checksum, "number");

    await agent.stop();
    agent = nanolet().start(FLAGS);
    await agent.waitPod("exclusive", (p) => p.phase === "Running" && p.containers[0].containerId === exclusive.containers[0].containerId, "Running, same container", 60_000);
    await new Promise((r) => setTimeout(r, 5000)); // two reconcile periods
    assert.equal(containerCpus(exclusive.uid, exclusive.containers[0].containerId), "1", "kept after the restart");
    assert.equal(containerCpus(shared.uid, shared.containers[0].containerId), "0");
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(rootDir, "cpu_manager_state"), "utf8")).entries, { [exclusive.uid]: { main: "1" } });
  });

  test("a changed CPU manager policy is refused at start, as upstream refuses it", { timeout: 60_000 }, async () => {
    await agent.stop();
    const refused = nanolet().start(["--cpu-manager-policy", "none"]);
    const { code } = await refused.exited;
    assert.notEqual(code, 0);
    assert.ok(refused.lines.some((l) => l.includes('configured policy \\"none\\" differs from state checkpoint policy \\"static\\"') || l.includes('configured policy "none" differs from state checkpoint policy "static"')), refused.lines.slice(-5).join("\n"));
    agent = nanolet().start(FLAGS);
    await agent.waitPod("exclusive", (p) => p.phase === "Running", "Running again", 60_000);
  });

  test("the sample device plugin: two devices in a pod, a pod asking for too many refused", { timeout: 120_000 }, async () => {
    const plugin = spawn(process.execPath, [path.join(repo, "examples/device-plugin/sample-device-plugin.mjs"), "--resource", "example.com/sample", "--devices", "3", "--dir", path.join(rootDir, "device-plugins")], { stdio: "ignore" });
    children.push(plugin);
    await waitFor("the plugin registered", () => agent.logLines(/Registered device plugin/).length > 0, 30_000);
    writePod("two-devices", {
      resources: { limits: { "example.com/sample": "2" } },
      script: 'echo "devices=$SAMPLE_DEVICES"; cat /var/run/sample/*; ls /dev/sample-dev-*; sleep 3600',
    });
    const pod = await agent.waitPod("two-devices", (p) => p.phase === "Running", "Running", 60_000);
    const log = await waitFor("the container's output", () => /dev\/sample-dev-1/.test(logOf(pod)) && logOf(pod), 20_000);
    assert.match(log, /devices=dev-0,dev-1/);
    assert.match(log, /example\.com\/sample dev-0/);
    assert.match(log, /\/dev\/sample-dev-0/);
    writePod("too-many", { resources: { limits: { "example.com/sample": "2" } } });
    const refused = await agent.waitPod("too-many", (p) => p.phase === "Failed", "Failed", 30_000);
    assert.equal(refused.reason, "UnexpectedAdmissionError");
    assert.equal(refused.message, "Pod was rejected: Allocate failed due to requested number of devices unavailable for example.com/sample. Requested: 2, Available: 1, which is unexpected");
    fs.rmSync(path.join(manifestDir, "too-many.yaml"));
    fs.rmSync(path.join(manifestDir, "two-devices.yaml"));
  });

  test("an inline CSI volume of the test driver: published, read inside the container, unpublished when the pod goes", { timeout: 120_000 }, async () => {
    const dataDir = path.join(dir, "csi-data");
    const driver = spawn(process.execPath, [path.join(repo, "tests/fixtures/csi-test-driver.mjs"), "--name", "csi.nanolet.test", "--root", rootDir, "--data-dir", dataDir], { stdio: "ignore" });
    children.push(driver);
    await waitFor("the CSI driver registered", () => agent.logLines(/Registered CSI driver/).length > 0, 30_000);
    writePod("csi-reader", {
      script: "cat /data/data.txt; sleep 3600",
      volumes: [{ name: "scratch", csi: { driver: "csi.nanolet.test", volumeAttributes: { content: "hello from the csi driver" } } }],
      volumeMounts: [{ name: "scratch", mountPath: "/data" }],
    });
    const pod = await agent.waitPod("csi-reader", (p) => p.phase === "Running", "Running", 60_000);
    await waitFor("the driver's file read in the container", () => logOf(pod).includes("hello from the csi driver"), 20_000);
    const target = path.join(rootDir, "pods", pod.uid, "volumes", "kubernetes.io~csi", "scratch", "mount");
    const mounted = () => fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n").some((l) => l.split(" ")[4] === target);
    assert.ok(mounted(), "published at upstream's path");
    assert.equal(fs.readdirSync(dataDir).length, 1, "one volume directory in the driver");
    fs.rmSync(path.join(manifestDir, "csi-reader.yaml"));
    await waitFor("the pod gone", async () => !(await agent.pod("csi-reader")), 60_000);
    await waitFor("the volume unpublished", () => !mounted() && fs.readdirSync(dataDir).length === 0, 30_000);
  });
});
