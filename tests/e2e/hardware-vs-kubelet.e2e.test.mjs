// Hardware beside the upstream kubelet (v1.36.2), both on one real kube-apiserver with the same
// static CPU policy and each with its own copy of the sample device plugin: the same cpusets for
// the same pods, the same extended resource on both Nodes, the same devices given to the same
// pods and the same refusal of a pod asking for too many; the upstream kubelet's own
// cpu_manager_state checks out with nanolet's checksum. The CSI test driver registered on
// nanolet shows in its CSINode; a pod whose volume the driver refuses gets FailedMount with the
// driver's error on both. Skipped, saying why, without KUBEBUILDER_ASSETS.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { stringify } from "yaml";
import { RealControlPlane, controlPlaneSkipReason } from "./control-plane.mjs";
import { Nanolet, privateContainerdForFile, repo, tempDir, waitFor } from "./harness.mjs";
import { UpstreamKubelet } from "./upstream-kubelet.mjs";
import { parseCpuState } from "../../dist/hardware/cpu-state-file.js";
import { parseDeviceCheckpoint } from "../../dist/devices/device-checkpoint.js";

const NANO = "hw-nanolet";
const KUBE = "hw-kubelet";
const skip = controlPlaneSkipReason();
const CPU = { cpuManagerPolicy: "static", reservedSystemCPUs: "0", cpuManagerReconcilePeriod: "2s" };
const RESOURCE = "example.com/sample";
const DRIVER = "csi.nanolet.test";

/** The cpuset.cpus of a container by its runtime ID, wherever its cgroup is (each agent has its root). */
function cpusetOf(containerId) {
  const search = (dir, depth) => {
    if (depth > 6) return undefined;
    let entries;
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return undefined;
    }
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      if (e.name === containerId) return fs.readFileSync(path.join(dir, e.name, "cpuset.cpus"), "utf8").trim();
      const found = search(path.join(dir, e.name), depth + 1);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return search("/sys/fs/cgroup/cpuset", 0);
}

if (skip) {
  describe("hardware beside the upstream kubelet", () => test(`skipped: ${skip}`, { skip }, () => {}));
} else {
  const work = tempDir("nanolet-hardware-diff-");
  const containerd = privateContainerdForFile(path.join(work, "nanolet-containerd"));
  const nanoRoot = path.join(work, "nanolet-root");
  const children = [];
  const pods = [];
  let cp;
  let nanolet;
  let kubelet;

  // The upstream kubelet serves device plugins at /var/lib/kubelet/device-plugins whatever its
  // --root-dir (a fixed path in upstream); nanolet under its own root directory.
  const KUBELET_PLUGIN_DIR = "/var/lib/kubelet/device-plugins";
  const hadKubeletPluginDir = fs.existsSync(KUBELET_PLUGIN_DIR);
  const plugin = (dir) => {
    const child = spawn(process.execPath, [path.join(repo, "examples/device-plugin/sample-device-plugin.mjs"), "--resource", RESOURCE, "--devices", "3", "--dir", dir, "--state-dir", path.join(work, `plugin-state-${children.length}`)], { stdio: "ignore" });
    children.push(child);
  };

  before(async () => {
    cp = await RealControlPlane.start(work, NANO);
    const config = path.join(work, "nanolet.yaml");
    fs.writeFileSync(config, stringify({ apiVersion: "kubelet.config.k8s.io/v1beta1", kind: "KubeletConfiguration", authentication: { webhook: { enabled: false } }, authorization: { mode: "AlwaysAllow" }, ...CPU }));
    fs.mkdirSync(path.join(work, "manifests"));
    nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir: path.join(work, "manifests"), rootDir: nanoRoot, logsDir: path.join(work, "nanolet-logs"), node: NANO });
    nanolet.start(["--config", config, "--kubeconfig", cp.nodeKubeconfig]);
    kubelet = await UpstreamKubelet.start(path.join(work, "kubelet"), { node: KUBE, kubeconfig: cp.nodeKubeconfigFor(KUBE), config: CPU });
    for (const node of [NANO, KUBE]) await waitFor(`node ${node} registered`, () => cp.get("nodes", undefined, node), 60_000, 500);
    plugin(path.join(nanoRoot, "device-plugins"));
    plugin(KUBELET_PLUGIN_DIR);
    const driver = spawn(process.execPath, [path.join(repo, "tests/fixtures/csi-test-driver.mjs"), "--name", DRIVER, "--root", nanoRoot, "--data-dir", path.join(work, "csi-nano")], { stdio: "ignore" });
    children.push(driver);
    const driverForKubelet = spawn(process.execPath, [path.join(repo, "tests/fixtures/csi-test-driver.mjs"), "--name", DRIVER, "--root", path.join(work, "kubelet", "root"), "--data-dir", path.join(work, "csi-kube")], { stdio: "ignore" });
    children.push(driverForKubelet);
    // The kubelet publishes inline volumes only of a driver whose CSIDriver object allows them.
    await cp.create("/apis/storage.k8s.io/v1/csidrivers", { apiVersion: "storage.k8s.io/v1", kind: "CSIDriver", metadata: { name: DRIVER }, spec: { attachRequired: false, podInfoOnMount: false, volumeLifecycleModes: ["Ephemeral", "Persistent"] } });
  });

  after(async () => {
    for (const name of pods) await cp?.admin.request("DELETE", `/api/v1/namespaces/default/pods/${name}`, { gracePeriodSeconds: 0 }).catch(() => {});
    for (const child of children) child.kill("SIGTERM");
    await nanolet?.stop();
    await kubelet?.stop();
    await cp?.stop();
    if (!hadKubeletPluginDir) fs.rmSync("/var/lib/kubelet/device-plugins", { recursive: true, force: true });
  });

  const createPod = async (name, node, container, extra = {}) => {
    pods.push(`${name}-${node}`);
    await cp.create("/api/v1/namespaces/default/pods", {
      apiVersion: "v1", kind: "Pod", metadata: { name: `${name}-${node}` },
      spec: {
        nodeName: node, hostNetwork: true, automountServiceAccountToken: false, terminationGracePeriodSeconds: 1,
        containers: [{ name: "main", image: "busybox", imagePullPolicy: "IfNotPresent", command: ["/bin/sh", "-c", "sleep 3600"], ...container }],
        ...extra,
      },
    });
  };
  const podOf = (name, node) => cp.get("pods", "default", `${name}-${node}`);
  const running = (name, node) => waitFor(`${name} on ${node} running`, async () => {
    const p = await podOf(name, node);
    return p?.status?.phase === "Running" && p.status.containerStatuses?.[0]?.containerID ? p : false;
  }, 120_000, 500);

  describe("hardware beside the upstream kubelet", { concurrency: false }, () => {
    test("static CPU policy: the same cpusets for the same pods; the kubelet's state file checks out", { timeout: 240_000 }, async (t) => {
      const guaranteed = { resources: { requests: { cpu: "1", memory: "32Mi" }, limits: { cpu: "1", memory: "32Mi" } } };
      for (const node of [NANO, KUBE]) {
        await createPod("exclusive", node, guaranteed);
        await createPod("shared", node, {});
      }
      const cpus = {};
      for (const node of [NANO, KUBE]) {
        const exclusive = await running("exclusive", node);
        const shared = await running("shared", node);
        const id = (p) => p.status.containerStatuses[0].containerID.replace(/^[a-z]+:\/\//, "");
        cpus[node] = await waitFor(`${node}'s cpusets settled`, () => {
          const pair = [cpusetOf(id(exclusive)), cpusetOf(id(shared))];
          return pair[0] === "1" && pair[1] === "0" ? pair : false;
        }, 60_000, 500).catch(() => [cpusetOf(id(exclusive)), cpusetOf(id(shared))]);
      }
      t.diagnostic(`cpusets (exclusive, shared): nanolet ${cpus[NANO]}, kubelet ${cpus[KUBE]}`);
      assert.deepEqual(cpus[NANO], cpus[KUBE]);
      assert.deepEqual(cpus[NANO], ["1", "0"]);
      const theirs = fs.readFileSync(path.join(work, "kubelet", "root", "cpu_manager_state"), "utf8");
      t.diagnostic(`the kubelet's cpu_manager_state: ${theirs}`);
      const raw = JSON.parse(theirs);
      if (raw.entries !== undefined || raw.defaultCpuSet !== undefined) {
        const state = parseCpuState(theirs); // throws when nanolet's checksum disagrees with the kubelet's
        assert.equal(state.policyName, "static");
        assert.equal(state.defaultCpuSet, "0");
      }
    });

    test("the sample device plugin: the same capacity, the same devices to the same pods, the same refusal", { timeout: 240_000 }, async (t) => {
      for (const node of [NANO, KUBE]) {
        await waitFor(`${node} shows ${RESOURCE}`, async () => (await cp.get("nodes", undefined, node))?.status?.capacity?.[RESOURCE] === "3", 90_000, 500);
      }
      const [mine, theirs] = await Promise.all([NANO, KUBE].map((n) => cp.get("nodes", undefined, n)));
      assert.equal(mine.status.allocatable[RESOURCE], theirs.status.allocatable[RESOURCE]);
      const reader = { command: ["/bin/sh", "-c", 'echo "devices=$SAMPLE_DEVICES"; cat /var/run/sample/*; ls /dev/sample-dev-*; sleep 3600'], resources: { limits: { [RESOURCE]: "2" } } };
      for (const node of [NANO, KUBE]) await createPod("devices", node, reader);
      // What each container printed, from the CRI log files each agent keeps.
      const outputs = {};
      const logsDir = { [NANO]: path.join(work, "nanolet-logs"), [KUBE]: path.join(work, "kubelet", "pod-logs") };
      for (const node of [NANO, KUBE]) {
        const p = await running("devices", node);
        const file = path.join(logsDir[node], `default_devices-${node}_${p.metadata.uid}`, "main", "0.log");
        outputs[node] = await waitFor(`${node}'s container output`, () => {
          const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
          return text.includes("/dev/sample-dev-1") ? text.split("\n").filter(Boolean).map((l) => l.split(" ").slice(3).join(" ")).join("\n") : false;
        }, 60_000, 500);
      }
      const annotations = outputs;
      t.diagnostic(`nanolet: ${JSON.stringify(annotations[NANO])} kubelet: ${JSON.stringify(annotations[KUBE])}`);
      assert.equal(annotations[NANO], annotations[KUBE]);
      assert.match(annotations[NANO], /devices=dev-0,dev-1/);
      for (const node of [NANO, KUBE]) await createPod("too-many", node, { resources: { limits: { [RESOURCE]: "2" } } });
      const refusals = {};
      for (const node of [NANO, KUBE]) {
        const p = await waitFor(`too-many on ${node} refused`, async () => ((await podOf("too-many", node))?.status?.phase === "Failed" ? podOf("too-many", node) : false), 60_000, 500);
        refusals[node] = [p.status.reason, p.status.message];
      }
      t.diagnostic(`refusals: ${JSON.stringify(refusals)}`);
      assert.deepEqual(refusals[NANO], refusals[KUBE]);
      assert.equal(refusals[NANO][0], "UnexpectedAdmissionError");
      const checkpoint = path.join(KUBELET_PLUGIN_DIR, "kubelet_internal_checkpoint");
      const kubeletCheckpoint = fs.readFileSync(checkpoint, "utf8");
      t.diagnostic(`the kubelet's device checkpoint: ${kubeletCheckpoint.slice(0, 2000)}`);
      // nanolet reads the kubelet's checkpoint and its checksum (and writes its own the same way).
      assert.deepEqual(parseDeviceCheckpoint(kubeletCheckpoint).entries.map((e) => e.deviceIds), [["dev-0", "dev-1"]]);
    });

    test("CSI: the driver in nanolet's CSINode; a volume the driver refuses is FailedMount with its error on both", { timeout: 240_000 }, async (t) => {
      const csiNode = await waitFor("nanolet's CSINode lists the driver", async () => {
        const n = await cp.get("csinodes", undefined, NANO);
        return n?.spec?.drivers?.some((d) => d.name === DRIVER) ? n : false;
      }, 60_000, 500);
      assert.equal(csiNode.spec.drivers.find((d) => d.name === DRIVER).nodeID, "test-node");
      const volume = (attributes) => ({ volumes: [{ name: "scratch", csi: { driver: DRIVER, volumeAttributes: attributes } }] });
      const mount = { volumeMounts: [{ name: "scratch", mountPath: "/data" }], command: ["/bin/sh", "-c", "cat /data/data.txt; sleep 3600"] };
      for (const node of [NANO, KUBE]) {
        await createPod("csi-ok", node, mount, volume({ content: "from the driver" }));
        await createPod("csi-bad", node, mount, volume({ fail: "disk on fire" }));
      }
      for (const node of [NANO, KUBE]) await running("csi-ok", node);
      const messages = {};
      for (const node of [NANO, KUBE]) {
        messages[node] = await waitFor(`FailedMount for csi-bad on ${node}`, async () => {
          const events = await cp.list("events", "default");
          return events.find((e) => e.involvedObject?.name === `csi-bad-${node}` && e.reason === "FailedMount")?.message ?? false;
        }, 90_000, 1000);
      }
      t.diagnostic(`FailedMount: ${JSON.stringify(messages)}`);
      assert.equal(messages[NANO], messages[KUBE]);
      assert.match(messages[NANO], /disk on fire/);
    });
  });
}
