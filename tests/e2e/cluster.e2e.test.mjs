// nanolet joined to a cluster, the same tests against two apiservers: the real kube-apiserver
// (KUBEBUILDER_ASSETS; skipped, saying why, where it is unset) and the strict fake in the test
// process. A real, private containerd either way; nanolet runs as a user runs it, with a
// kubeconfig for the node's identity (system:node:e2e-node).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { TestCluster } from "./cluster-harness.mjs";
import { controlPlaneSkipReason } from "./control-plane.mjs";
import { Nanolet, killSandbox, podManifest, runtimeContainers, tempDir, waitFor } from "./harness.mjs";

const NODE = "e2e-node";

function podObject(name, { script = "sleep 3600", policy = "Always", grace = 2, hostNetwork = true } = {}) {
  return {
    metadata: { name, namespace: "default" },
    spec: {
      nodeName: NODE,
      hostNetwork,
      restartPolicy: policy,
      terminationGracePeriodSeconds: grace,
      containers: [{ name: "main", image: "busybox", imagePullPolicy: "IfNotPresent", command: ["/bin/sh", "-c", script] }],
    },
  };
}

const podPath = (name) => `/api/v1/namespaces/default/pods/${name}`;

function clusterSuite(kind) {
  const work = tempDir(`nanolet-cluster-${kind}-e2e-`);
  let cluster;
  let containerd;
  let admin;
  let nanolet;
  let manifestDir;
  const getPod = (name) => cluster.get("pods", "default", name);
  const getNode = () => cluster.get("nodes", undefined, NODE);
  const events = () => cluster.list("events");

  const podPath = (name) => `/api/v1/namespaces/default/pods/${name}`;


  before(async () => {
    cluster = kind === "real" ? await TestCluster.startReal(work, NODE) : await TestCluster.start(work, NODE, { bookmarkIntervalMs: 5_000 });
    ({ containerd, admin } = cluster);
    manifestDir = path.join(work, "manifests");
    fs.mkdirSync(manifestDir, { recursive: true });
    nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir, rootDir: path.join(work, "root"), logsDir: path.join(work, "logs"), node: NODE });
    nanolet.start(["--kubeconfig", cluster.kubeconfig, ...cluster.nanoletArgs]);
  });

  after(async () => {
    for (const f of fs.readdirSync(manifestDir ?? work)) if (f.endsWith(".yaml")) fs.rmSync(path.join(manifestDir, f));
    await cluster?.stop(nanolet);
  });

  describe(`nanolet in a cluster (${kind} apiserver)`, { concurrency: false }, () => {
    test("the node registers Ready with machine facts, and its lease is renewed", { timeout: 60_000 }, async () => {
      const node = await waitFor("node Ready", async () => {
        const n = await getNode();
        return n?.status?.conditions?.find((c) => c.type === "Ready")?.status === "True" ? n : false;
      });
      assert.equal(node.metadata.labels["kubernetes.io/hostname"], NODE);
      assert.equal(node.metadata.labels["kubernetes.io/os"], "linux");
      assert.ok(["amd64", "arm64"].includes(node.metadata.labels["kubernetes.io/arch"]));
      assert.equal(node.status.capacity.pods, "110");
      assert.match(node.status.capacity.memory, /^\d+Ki$/);
      assert.ok(Number(node.status.capacity.cpu) >= 1);
      assert.match(node.status.nodeInfo.containerRuntimeVersion, /^containerd:\/\/1\./);
      assert.deepEqual(node.status.conditions.map((c) => c.type), ["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"]);
      assert.match(node.status.nodeInfo.containerRuntimeVersion, /^containerd:\/\/\d+\.\d+\.\d+$/, "the version as the kubelet parses it");
      for (const [, size] of fs.readdirSync("/sys/kernel/mm/hugepages").map((d) => /^hugepages-(\d+)kB$/.exec(d)).filter(Boolean)) {
        const name = Number(size) % 1048576 === 0 ? `hugepages-${Number(size) / 1048576}Gi` : `hugepages-${Number(size) / 1024}Mi`;
        assert.ok(node.status.capacity[name] !== undefined && node.status.allocatable[name] !== undefined, `${name} listed`);
      }
      const withImages = await waitFor("status.images", async () => ((await getNode()).status.images?.length > 0 ? getNode() : false));
      assert.ok(withImages.status.images.some((i) => i.names.some((n) => n.includes("busybox")) && i.sizeBytes > 0));
      const nodeEvents = await waitFor("node events", async () => {
        const reasons = (await events()).filter((e) => e.involvedObject.kind === "Node").map((e) => e.reason);
        return reasons.includes("NodeAllocatableEnforced") ? reasons : false;
      });
      for (const r of ["Starting", "NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID", "NodeReady"]) assert.ok(nodeEvents.includes(r), `${r} in ${nodeEvents}`);
      if (kind === "real") {
        const csiNode = await waitFor("the CSINode", () => cluster.get("csinodes", undefined, NODE));
        assert.equal(csiNode.metadata.ownerReferences[0].uid, withImages.metadata.uid);
        assert.equal((csiNode.spec.drivers ?? []).length, 0, "no CSI drivers yet");
      }
      const lease = await waitFor("lease", () => cluster.get("leases", "kube-node-lease", NODE));
      assert.equal(lease.spec.holderIdentity, NODE);
      assert.equal(lease.spec.leaseDurationSeconds, 40);
      assert.equal(lease.metadata.ownerReferences?.[0]?.uid, node.metadata.uid);
      const firstRenew = lease.spec.renewTime;
      await waitFor("lease renewed", async () => (await cluster.get("leases", "kube-node-lease", NODE)).spec.renewTime !== firstRenew, 15_000);
    });

    test("a pod created in the apiserver runs; its status shows Running with the real container ID", { timeout: 60_000 }, async () => {
      await admin.request("POST", "/api/v1/namespaces/default/pods", podObject("web"));
      const pod = await waitFor("web Running", async () => ((await getPod("web"))?.status?.phase === "Running" ? getPod("web") : false));
      const cs = pod.status.containerStatuses[0];
      assert.match(cs.containerID, /^containerd:\/\/[0-9a-f]{64}$/);
      const id = cs.containerID.slice("containerd://".length);
      assert.equal(runtimeContainers(containerd).find((c) => c.id === id)?.task, "RUNNING");
      assert.ok(cs.state.running.startedAt);
      assert.equal(cs.ready, true);
      assert.equal(cs.started, true);
      assert.equal(cs.restartCount, 0);
      const types = Object.fromEntries(pod.status.conditions.map((c) => [c.type, c.status]));
      assert.deepEqual(types, { PodReadyToStartContainers: "True", Initialized: "True", Ready: "True", ContainersReady: "True", PodScheduled: "True" });
      assert.ok(pod.status.startTime);
      assert.ok(pod.status.hostIP);
      assert.equal(pod.status.podIP, pod.status.hostIP, "a host-network pod has the node's IP");
      // The node never read a pod's status subresource, and never listed pods without its selector.
      const nodeRequests = cluster.requests().filter((r) => r.user === `system:node:${NODE}`);
      assert.ok(!nodeRequests.some((r) => r.method === "GET" && /\/pods\/[^/]+\/status/.test(r.path)));
      assert.ok(nodeRequests.filter((r) => r.method === "GET" && r.path.startsWith("/api/v1/pods")).every((r) => r.path.includes("fieldSelector=spec.nodeName%3De2e-node")));
      assert.ok(!nodeRequests.some((r) => r.code === 403), "the node stayed inside what the Node authorizer allows");
      const reasons = await waitFor("web's events", async () => {
        const r = (await events()).filter((e) => e.involvedObject.name === "web").map((e) => e.reason);
        return r.includes("Started") ? r : false;
      });
      for (const reason of ["Pulled", "Created", "Started"]) assert.ok(reasons.includes(reason), `${reason} event in ${reasons}`);
      const started = (await events()).find((e) => e.involvedObject.name === "web" && e.reason === "Started");
      assert.equal(started.message, "Container started");
      assert.equal(started.involvedObject.resourceVersion !== undefined, true, "the pod's version in the reference");
    });

    test("a container exit shows the restart count rising, with the exit as lastState", { timeout: 60_000 }, async () => {
      await admin.request("POST", "/api/v1/namespaces/default/pods", podObject("crashy", { script: "sleep 1; exit 3" }));
      const pod = await waitFor("crashy restarted", async () => ((await getPod("crashy"))?.status?.containerStatuses?.[0]?.restartCount >= 1 ? getPod("crashy") : false), 30_000);
      const cs = pod.status.containerStatuses[0];
      assert.equal(cs.lastState.terminated.exitCode, 3);
      assert.equal(cs.lastState.terminated.reason, "Error");
      const backOff = await waitFor("a BackOff event", async () => (await events()).find((e) => e.involvedObject.name === "crashy" && e.reason === "BackOff"), 30_000);
      assert.equal(backOff.type, "Warning");
      assert.equal(backOff.involvedObject.fieldPath, "spec.containers{main}");
      await admin.request("DELETE", podPath("crashy"), { gracePeriodSeconds: 0 });
    });

    test("deletion: the pod stops within its grace period, its final status is sent, then the node deletes it", { timeout: 60_000 }, async () => {
      const running = await waitFor("web still Running", async () => (await getPod("web"))?.status?.phase === "Running" && getPod("web"));
      const id = running.status.containerStatuses[0].containerID.slice("containerd://".length);
      const t0 = Date.now();
      await admin.request("DELETE", podPath("web"), { gracePeriodSeconds: 5 });
      await waitFor("web gone from the apiserver", async () => (await getPod("web")) === undefined, 30_000);
      assert.ok(Date.now() - t0 < 15_000, "stopped and deleted within its grace period and a few relists");
      const deletes = cluster.requests().filter((r) => r.user === `system:node:${NODE}` && r.method === "DELETE" && r.path === podPath("web"));
      assert.equal(deletes.length, 1, "the node deleted it once its final status was in");
      const patches = cluster.requests().filter((r) => r.user === `system:node:${NODE}` && r.method === "PATCH" && r.path === `${podPath("web")}/status`);
      assert.ok(patches.length >= 2);
      await waitFor("web's container removed from containerd", () => !runtimeContainers(containerd).some((c) => c.id === id), 30_000);
    });

    test("a pod on the pod network reports its sandbox's IP", { timeout: 60_000 }, async () => {
      await admin.request("POST", "/api/v1/namespaces/default/pods", podObject("netpod", { hostNetwork: false }));
      const pod = await waitFor("netpod Running with an IP", async () => ((await getPod("netpod"))?.status?.podIP ? getPod("netpod") : false));
      assert.match(pod.status.podIP, /^10\.89\.0\.\d+$/, "an address of the CNI bridge's range");
      assert.deepEqual(pod.status.podIPs, [{ ip: pod.status.podIP }]);
      assert.notEqual(pod.status.podIP, pod.status.hostIP);
      await admin.request("DELETE", podPath("netpod"), { gracePeriodSeconds: 1 });
      await waitFor("netpod deleted", async () => (await getPod("netpod")) === undefined, 30_000);
    });

    test("a pod whose sandbox dies gets a new one, and its new IP and restarts replace the old in the apiserver", { timeout: 90_000 }, async () => {
      await admin.request("POST", "/api/v1/namespaces/default/pods", podObject("sbx", { hostNetwork: false }));
      const before = await waitFor("sbx Running with an IP", async () => {
        const p = await getPod("sbx");
        return p?.status?.podIP && p.status.containerStatuses?.[0]?.state?.running ? p : false;
      });
      killSandbox(containerd, before.metadata.uid);
      const after = await waitFor("sbx's new sandbox in the apiserver", async () => {
        const p = await getPod("sbx");
        const cs = p?.status?.containerStatuses?.[0];
        return p?.status?.podIP && p.status.podIP !== before.status.podIP && cs?.state?.running && cs.restartCount >= 1 ? p : false;
      }, 60_000);
      assert.deepEqual(after.status.podIPs, [{ ip: after.status.podIP }], "one IP per family: the old one is gone");
      assert.notEqual(after.status.containerStatuses[0].containerID, before.status.containerStatuses[0].containerID);
      const refused = nanolet.lines.filter((l) => l.includes("sbx") && (l.includes("refused by the apiserver") || l.includes("Pod status not sent")));
      assert.deepEqual(refused, [], "every status patch was accepted");
      await admin.request("DELETE", podPath("sbx"), { gracePeriodSeconds: 1 });
      await waitFor("sbx deleted", async () => (await getPod("sbx")) === undefined, 30_000);
    });

    test("a static pod gets a mirror pod carrying its status", { timeout: 60_000 }, async () => {
      fs.writeFileSync(path.join(manifestDir, "static.yaml"), podManifest("static"));
      const mirror = await waitFor("mirror pod Running", async () => {
        const p = await getPod(`static-${NODE}`);
        return p?.status?.phase === "Running" ? p : false;
      });
      assert.ok(mirror.metadata.annotations["kubernetes.io/config.mirror"]);
      assert.match(mirror.metadata.annotations["kubernetes.io/config.seen"], /^\d{4}-\d{2}-\d{2}T/);
      assert.ok(mirror.spec.tolerations.some((t) => t.operator === "Exists" && t.effect === "NoExecute" && !t.key), "static pods tolerate every NoExecute taint");
      assert.equal(mirror.spec.nodeName, NODE);
      fs.rmSync(path.join(manifestDir, "static.yaml"));
      await waitFor("mirror pod deleted with its static pod", async () => (await getPod(`static-${NODE}`)) === undefined, 30_000);
    });

    test("the node turns NotReady while containerd is down, saying so, and Ready again when it is back", { timeout: 90_000 }, async () => {
      const ready = async () => (await getNode()).status.conditions.find((c) => c.type === "Ready");
      await waitFor("Ready", async () => (await ready()).status === "True");
      containerd.kill9();
      try {
        const down = await waitFor("NotReady", async () => ((await ready()).status === "False" ? ready() : false), 40_000);
        assert.equal(down.reason, "KubeletNotReady");
        assert.match(down.message, /container runtime is down/);
      } finally {
        await containerd.start({ images: false });
      }
      await waitFor("Ready again", async () => (await ready()).status === "True", 40_000);
    });

    test("an apiserver outage of 60 s disturbs no pod, and status catches up after it", { timeout: 150_000 }, async () => {
      await admin.request("POST", "/api/v1/namespaces/default/pods", podObject("steady"));
      await admin.request("POST", "/api/v1/namespaces/default/pods", podObject("flaky", { script: "sleep 20; exit 1" }));
      await waitFor("both Running", async () => (await getPod("steady"))?.status?.phase === "Running" && (await getPod("flaky"))?.status?.phase === "Running");
      const steadyId = (await getPod("steady")).status.containerStatuses[0].containerID;
      const before = (await getPod("flaky")).status.containerStatuses[0].restartCount;
      await cluster.stopApiserver();
      await new Promise((r) => setTimeout(r, 60_000));
      // While the apiserver was away, the pods kept running untouched.
      const running = runtimeContainers(containerd).filter((c) => c.task === "RUNNING").map((c) => `containerd://${c.id}`);
      assert.ok(running.includes(steadyId), "steady was not restarted");
      await cluster.startApiserver();
      await waitFor("flaky's restarts during the outage reach the apiserver", async () => (await getPod("flaky"))?.status?.containerStatuses?.[0]?.restartCount > before, 30_000);
      const steady = await getPod("steady");
      assert.equal(steady.status.containerStatuses[0].containerID, steadyId);
      assert.equal(steady.status.containerStatuses[0].restartCount, 0);
      for (const name of ["steady", "flaky"]) await admin.request("DELETE", podPath(name), { gracePeriodSeconds: 1 });
      await waitFor("both deleted", async () => (await getPod("steady")) === undefined && (await getPod("flaky")) === undefined, 30_000);
    });
  });
}

const skip = controlPlaneSkipReason();
if (skip) describe("nanolet in a cluster (real apiserver)", () => test(`skipped: ${skip}`, { skip }, () => {}));
else clusterSuite("real");
clusterSuite("fake");
