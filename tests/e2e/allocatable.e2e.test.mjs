// Reserved resources beside the upstream kubelet (v1.36.2): both nodes run with the same
// systemReserved, kubeReserved and hard eviction thresholds and report to one real kube-apiserver;
// their Nodes' capacity and allocatable must be the same, and a pod that does not fit is refused
// by both with the same reason and words. Skipped, saying why, without KUBEBUILDER_ASSETS.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { stringify } from "yaml";
import { RealControlPlane, controlPlaneSkipReason } from "./control-plane.mjs";
import { Nanolet, privateContainerdForFile, tempDir, waitFor } from "./harness.mjs";
import { UpstreamKubelet } from "./upstream-kubelet.mjs";

const NANO = "alloc-nanolet";
const KUBE = "alloc-kubelet";
const skip = controlPlaneSkipReason();

/** The same reservations for both: 1Gi and 500m for the system, 256Mi for the agent. */
const RESERVED = {
  systemReserved: { memory: "1Gi", cpu: "500m" },
  kubeReserved: { memory: "256Mi" },
  evictionHard: { "memory.available": "100Mi", "nodefs.available": "10%", "imagefs.available": "1%" },
};

if (skip) {
  describe("allocatable beside the upstream kubelet", () => test(`skipped: ${skip}`, { skip }, () => {}));
} else {
  const work = tempDir("nanolet-allocatable-");
  const containerd = privateContainerdForFile(path.join(work, "nanolet-containerd"));
  let cp;
  let nanolet;
  let kubelet;

  before(async () => {
    cp = await RealControlPlane.start(work, NANO);
    const config = path.join(work, "nanolet-config.yaml");
    fs.writeFileSync(config, stringify({
      apiVersion: "kubelet.config.k8s.io/v1beta1", kind: "KubeletConfiguration",
      authentication: { webhook: { enabled: false } }, authorization: { mode: "AlwaysAllow" },
      ...RESERVED,
    }));
    fs.mkdirSync(path.join(work, "manifests"));
    nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir: path.join(work, "manifests"), rootDir: path.join(work, "nanolet-root"), logsDir: path.join(work, "nanolet-logs"), node: NANO });
    // A dual-stack pair and a provider ID too: both show on the Node.
    nanolet.start(["--config", config, "--kubeconfig", cp.nodeKubeconfig, "--node-ip", "127.0.0.1,::1", "--provider-id", "nanolet://edge/alloc-1"]);
    kubelet = await UpstreamKubelet.start(path.join(work, "kubelet"), { node: KUBE, kubeconfig: cp.nodeKubeconfigFor(KUBE), config: RESERVED });
    for (const node of [NANO, KUBE]) await waitFor(`node ${node} registered`, () => cp.get("nodes", undefined, node), 60_000, 500);
  });

  after(async () => {
    for (const node of [NANO, KUBE]) await cp?.admin.request("DELETE", `/api/v1/namespaces/default/pods/too-big-${node}`, { gracePeriodSeconds: 0 }).catch(() => {});
    await nanolet?.stop();
    await kubelet?.stop();
    await cp?.stop();
  });

  describe("allocatable beside the upstream kubelet", { concurrency: false }, () => {
    test("with the same reservations, the Nodes' capacity and allocatable are the upstream kubelet's", { timeout: 120_000 }, async (t) => {
      const [mine, theirs] = await Promise.all([NANO, KUBE].map((node) => waitFor(`${node}'s allocatable`, async () => {
        const n = await cp.get("nodes", undefined, node);
        return n?.status?.allocatable?.memory ? n : false;
      }, 60_000)));
      assert.equal(mine.spec.providerID, "nanolet://edge/alloc-1");
      assert.deepEqual(mine.status.addresses.filter((a) => a.type === "InternalIP").map((a) => a.address), ["127.0.0.1", "::1"]);
      t.diagnostic(`nanolet: capacity ${JSON.stringify(mine.status.capacity)} allocatable ${JSON.stringify(mine.status.allocatable)}`);
      t.diagnostic(`kubelet: capacity ${JSON.stringify(theirs.status.capacity)} allocatable ${JSON.stringify(theirs.status.allocatable)}`);
      for (const resource of ["cpu", "memory", "pods"]) {
        assert.equal(mine.status.capacity[resource], theirs.status.capacity[resource], `capacity ${resource}`);
        assert.equal(mine.status.allocatable[resource], theirs.status.allocatable[resource], `allocatable ${resource}`);
      }
      for (const resource of Object.keys(theirs.status.capacity).filter((r) => r.startsWith("hugepages-"))) {
        assert.equal(mine.status.allocatable[resource], theirs.status.allocatable[resource], resource);
      }
      // The two root directories are on one filesystem: the same disk, the same storage figures.
      if (mine.status.capacity["ephemeral-storage"] === theirs.status.capacity["ephemeral-storage"]) {
        assert.equal(mine.status.allocatable["ephemeral-storage"], theirs.status.allocatable["ephemeral-storage"], "allocatable ephemeral-storage");
      }
      // The reservation is really out of it: at least 1Gi + 256Mi + 100Mi less memory than capacity.
      const ki = (q) => Number(q.replace(/Ki$/, "")) * (q.endsWith("Ki") ? 1024 : 1);
      if (mine.status.allocatable.memory.endsWith("Ki") && mine.status.capacity.memory.endsWith("Ki")) {
        assert.ok(ki(mine.status.capacity.memory) - ki(mine.status.allocatable.memory) >= (1024 + 256 + 100) * 1024 * 1024);
      }
    });

    test("a pod that does not fit is refused by both with the same reason and words", { timeout: 120_000 }, async () => {
      const node = await cp.get("nodes", undefined, KUBE);
      const allocatableCpu = node.status.allocatable.cpu;
      const milli = allocatableCpu.endsWith("m") ? Number(allocatableCpu.slice(0, -1)) : Number(allocatableCpu) * 1000;
      for (const n of [NANO, KUBE]) {
        await cp.admin.request("POST", "/api/v1/namespaces/default/pods", {
          apiVersion: "v1", kind: "Pod", metadata: { name: `too-big-${n}`, namespace: "default" },
          spec: {
            nodeName: n, hostNetwork: true, automountServiceAccountToken: false, terminationGracePeriodSeconds: 2,
            containers: [{ name: "main", image: "busybox", imagePullPolicy: "IfNotPresent", command: ["sleep", "3600"], resources: { requests: { cpu: `${milli + 1000}m` } } }],
          },
        });
      }
      const [mine, theirs] = await Promise.all([NANO, KUBE].map((n) => waitFor(`too-big on ${n} refused`, async () => {
        const p = await cp.get("pods", "default", `too-big-${n}`);
        return p?.status?.phase === "Failed" ? p : false;
      }, 60_000)));
      assert.equal(theirs.status.reason, "OutOfcpu");
      assert.equal(mine.status.reason, theirs.status.reason);
      assert.equal(mine.status.message, theirs.status.message);
    });
  });
}
