// Node resources on a real containerd: pod and container cgroups with the core's values (read
// back from the real cgroup files), an in-place resize through the apiserver's resize
// subresource, and eviction under memory pressure that the test's own pods make (the pods'
// working set against allocatable, whatever else the machine runs). The apiserver is the strict fake in this process.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { TestCluster } from "./cluster-harness.mjs";
import { Nanolet, tempDir, waitFor } from "./harness.mjs";

const NODE = "res-node";
const MI = 1024 * 1024;
const CGROUP = "/sys/fs/cgroup";
const V2 = fs.existsSync(path.join(CGROUP, "cgroup.controllers"));
const work = tempDir("nanolet-resources-e2e-");
let cluster;
let containerd;
let api;
let admin;
let nanolet;

function startNanolet(extra = []) {
  nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir: path.join(work, "manifests"), rootDir: path.join(work, "root"), logsDir: path.join(work, "logs"), node: NODE });
  nanolet.start(["--kubeconfig", cluster.kubeconfig, "--eviction-monitoring-interval", "2s", ...extra]);
}

function podObject(name, { requests, limits, script = "sleep 3600", resizePolicy } = {}) {
  const resources = {};
  if (requests) resources.requests = requests;
  if (limits) resources.limits = limits;
  return {
    metadata: { name, namespace: "default" },
    spec: {
      nodeName: NODE, hostNetwork: true, restartPolicy: "Always", terminationGracePeriodSeconds: 2,
      containers: [{ name: "main", image: "busybox", imagePullPolicy: "IfNotPresent", command: ["/bin/sh", "-c", script], resources, ...(resizePolicy ? { resizePolicy } : {}) }],
    },
  };
}

const getPod = (name) => api.get("pods", "default", name);
const running = (name) => waitFor(`${name} Running`, () => (getPod(name)?.status?.phase === "Running" ? getPod(name) : false), 60_000);
const containerIdOf = (pod) => pod.status.containerStatuses[0].containerID.replace("containerd://", "");

/** A cgroup file of a pod (or of one of its containers), v1 or v2 spelling. */
function cgroupFile(qosPath, uid, containerId, v1Controller, v1File, v2File) {
  const rel = path.join(qosPath, `pod${uid}`, containerId ?? "");
  const file = V2 ? path.join(CGROUP, rel, v2File) : path.join(CGROUP, v1Controller, rel, v1File);
  return fs.readFileSync(file, "utf8").trim();
}
const memoryLimit = (q, uid, cid) => cgroupFile(q, uid, cid, "memory", "memory.limit_in_bytes", "memory.max");
const cpuQuota = (q, uid, cid) => (V2 ? cgroupFile(q, uid, cid, "cpu", "", "cpu.max").split(" ")[0] : cgroupFile(q, uid, cid, "cpu", "cpu.cfs_quota_us", ""));

/** oom_score_adj of the container's first process. */
function oomScoreAdj(qosPath, uid, cid) {
  const procs = cgroupFile(qosPath, uid, cid, "memory", "cgroup.procs", "cgroup.procs").split("\n").filter(Boolean);
  return Number(fs.readFileSync(`/proc/${procs[0]}/oom_score_adj`, "utf8").trim());
}

/** The working set of every pod (the kubepods cgroup), as the kubelet computes it. */
function podsWorkingSetBytes() {
  const dir = V2 ? path.join(CGROUP, "kubepods") : path.join(CGROUP, "memory/kubepods");
  const usage = Number(fs.readFileSync(path.join(dir, V2 ? "memory.current" : "memory.usage_in_bytes"), "utf8"));
  const stat = fs.readFileSync(path.join(dir, "memory.stat"), "utf8");
  const inactive = Number(new RegExp(`(?:^|\\n)${V2 ? "inactive_file" : "total_inactive_file"} (\\d+)`).exec(stat)[1]);
  return usage - inactive;
}

/** The node's memory capacity as the agent reads it (MemTotal). */
const memoryCapacityBytes = () => Number(/MemTotal:\s+(\d+)/.exec(fs.readFileSync("/proc/meminfo", "utf8"))[1]) * 1024;

before(async () => {
  cluster = await TestCluster.start(work, NODE);
  ({ containerd, admin } = cluster);
  api = cluster.fake;
  fs.mkdirSync(path.join(work, "manifests"), { recursive: true });
  startNanolet();
});

after(() => cluster?.stop(nanolet));

describe("node resources on containerd", { concurrency: false }, () => {
  test("requests and limits reach the real cgroup files of the pod and its container", { timeout: 90_000 }, async () => {
    const both = { cpu: "250m", memory: "64Mi" };
    await admin.request("POST", "/api/v1/namespaces/default/pods", podObject("guaranteed", { requests: both, limits: both }));
    await admin.request("POST", "/api/v1/namespaces/default/pods", podObject("besteffort"));
    await admin.request("POST", "/api/v1/namespaces/default/pods", podObject("burstable", { requests: { memory: "256Mi" } }));
    const g = await running("guaranteed");
    const b = await running("besteffort");
    const u = await running("burstable");
    const gid = containerIdOf(g);
    assert.equal(memoryLimit("kubepods", g.metadata.uid, undefined), String(64 * MI), "pod memory limit");
    assert.equal(memoryLimit("kubepods", g.metadata.uid, gid), String(64 * MI), "container memory limit");
    assert.equal(cpuQuota("kubepods", g.metadata.uid, undefined), "25000", "pod CFS quota: 250m of 100 ms");
    assert.equal(cpuQuota("kubepods", g.metadata.uid, gid), "25000");
    if (!V2) {
      assert.equal(cgroupFile("kubepods", g.metadata.uid, gid, "cpu", "cpu.shares", ""), "256");
      assert.equal(fs.readFileSync(path.join(CGROUP, "cpu/kubepods/besteffort/cpu.shares"), "utf8").trim(), "2");
    }
    // containerd here must run with restrict_oom_score_adj (see CONTAINERD.md), which clamps the
    // Guaranteed -997 to containerd's own score; positive scores pass unchanged.
    assert.ok(oomScoreAdj("kubepods", g.metadata.uid, gid) <= 0, "Guaranteed: as low as the runtime allows");
    assert.equal(oomScoreAdj("kubepods/besteffort", b.metadata.uid, containerIdOf(b)), 1000);
    const memTotal = Number(/MemTotal:\s+(\d+)/.exec(fs.readFileSync("/proc/meminfo", "utf8"))[1]) * 1024;
    assert.equal(oomScoreAdj("kubepods/burstable", u.metadata.uid, containerIdOf(u)), 1000 - Math.floor((1000 * 256 * MI) / memTotal));
    const cs = g.status.containerStatuses[0];
    assert.deepEqual(cs.allocatedResources, both);
    assert.deepEqual(cs.resources, { requests: both, limits: both });
  });

  test("a pod resized in place keeps its container while its cgroup files change", { timeout: 90_000 }, async () => {
    await admin.request("POST", "/api/v1/namespaces/default/pods", podObject("resizable", {
      requests: { cpu: "100m", memory: "32Mi" }, limits: { cpu: "200m", memory: "64Mi" },
    }));
    const before = await running("resizable");
    const uid = before.metadata.uid;
    const id = containerIdOf(before);
    assert.equal(memoryLimit("kubepods/burstable", uid, id), String(64 * MI));
    const resources = { requests: { cpu: "100m", memory: "48Mi" }, limits: { cpu: "400m", memory: "128Mi" } };
    await admin.request("PATCH", "/api/v1/namespaces/default/pods/resizable/resize",
      { spec: { containers: [{ name: "main", resources }] } }, "application/strategic-merge-patch+json");
    await waitFor("container memory limit 128Mi", () => memoryLimit("kubepods/burstable", uid, id) === String(128 * MI), 30_000);
    assert.equal(cpuQuota("kubepods/burstable", uid, id), "40000");
    assert.equal(memoryLimit("kubepods/burstable", uid, undefined), String(128 * MI), "the pod cgroup grew too");
    const after = await waitFor("status shows the new resources", () => {
      const p = getPod("resizable");
      const c = p.status.containerStatuses[0];
      return c.resources?.limits?.memory === "128Mi" && !p.status.conditions.some((k) => k.type === "PodResizeInProgress") ? p : false;
    }, 30_000);
    const c = after.status.containerStatuses[0];
    assert.equal(containerIdOf(after), id, "the same container");
    assert.equal(c.restartCount, 0);
    assert.deepEqual(c.allocatedResources, resources.requests);
    assert.equal(after.status.observedGeneration, after.metadata.generation);
  });

  test("under memory pressure the pods are evicted in ranking order, one per interval; the others keep running", { timeout: 180_000 }, async () => {
    await admin.request("POST", "/api/v1/namespaces/default/pods", podObject("calm-be"));
    await admin.request("POST", "/api/v1/namespaces/default/pods", podObject("calm-bu", { requests: { memory: "64Mi" } }));
    await running("calm-be");
    await running("calm-bu");
    const baseline = podsWorkingSetBytes();
    // Two memory-hungry pods: a BestEffort one taking 500Mi and a Burstable one taking 400Mi of
    // its 50Mi request. Both exceed their requests at the same priority, so the larger excess
    // goes first; once it is gone the other one alone still breaches the threshold.
    const hog = (mib) => `x=$(head -c ${mib}m /dev/zero | tr '\\0' a); sleep 3600; echo \${#x}`;
    await admin.request("POST", "/api/v1/namespaces/default/pods", podObject("hog-big", { script: hog(500) }));
    await admin.request("POST", "/api/v1/namespaces/default/pods", podObject("hog-small", { requests: { memory: "50Mi" }, script: hog(400) }));
    await running("hog-big");
    await running("hog-small");
    // Each hog has filled its string (it once passed while hog-big was still filling, and
    // hog-small rightly went first).
    const usage = (name, qos) => {
      const p = getPod(name);
      return Number(cgroupFile(qos, p.metadata.uid, containerIdOf(p), "memory", "memory.usage_in_bytes", "memory.current"));
    };
    await waitFor("hogs filled", () => usage("hog-big", "kubepods/besteffort") > 500 * MI && usage("hog-small", "kubepods/burstable") > 400 * MI, 90_000, 500);

    // The pressure comes from these pods alone, whatever else the machine runs: upstream's
    // allocatableMemory.available (allocatable less the pods' working set), with a threshold
    // 250Mi of pod memory above what the calm pods use. Allocatable is the capacity less the
    // default hard memory.available (100Mi), which stays and only fires if the machine itself
    // runs out.
    const allocatable = memoryCapacityBytes() - 100 * MI;
    const thresholdMi = Math.floor((allocatable - baseline - 250 * MI) / MI);
    await nanolet.stop();
    startNanolet(["--eviction-hard", `allocatableMemory.available<${thresholdMi}Mi`]);

    const evicted = (name) => waitFor(`${name} evicted`, () => {
      const p = getPod(name);
      return p?.status?.phase === "Failed" && p.status.reason === "Evicted" ? { pod: p, at: Date.now() } : false;
    }, 90_000, 100);
    const big = await evicted("hog-big");
    const small = await evicted("hog-small");
    // One pod per interval: the two DisruptionTarget conditions were set at different passes.
    const evictedAt = (p) => Date.parse(p.status.conditions.find((c) => c.type === "DisruptionTarget").lastTransitionTime);
    const gapMs = Math.abs(evictedAt(small.pod) - evictedAt(big.pod));
    assert.ok(gapMs >= 1000, `the second eviction waited for the interval (${gapMs} ms apart)`);
    // Ranking order: the larger excess over its request goes first.
    assert.ok(evictedAt(big.pod) < evictedAt(small.pod), `hog-big is evicted first (hog-small went ${gapMs} ms earlier)`);
    const disruption = big.pod.status.conditions.find((c) => c.type === "DisruptionTarget");
    assert.equal(disruption?.status, "True");
    assert.equal(disruption?.reason, "TerminationByKubelet");
    assert.match(big.pod.status.message, /^The node was low on resource: memory\. Threshold quantity: \d+Mi, available: \d+/);
    assert.match(big.pod.status.message, /Container main was using \d+\S*, request is 0, has larger consumption of memory\./);
    const node = api.get("nodes", undefined, NODE);
    await waitFor("node MemoryPressure", () => api.get("nodes", undefined, NODE).status.conditions.find((c) => c.type === "MemoryPressure")?.status === "True", 30_000);
    assert.ok(node);
    // The rest were left alone and nothing evicted is started again.
    await new Promise((r) => setTimeout(r, 5000));
    for (const name of ["calm-be", "calm-bu"]) {
      const p = getPod(name);
      assert.equal(p.status.phase, "Running", `${name} still running`);
      assert.equal(p.status.containerStatuses[0].restartCount, 0);
    }
    for (const name of ["hog-big", "hog-small"]) assert.equal(getPod(name).status.containerStatuses[0].state.running, undefined);
    const events = api.store.list("events").items.filter((e) => e.reason === "Evicted").map((e) => e.involvedObject.name);
    assert.deepEqual(events.sort(), ["hog-big", "hog-small"]);
  });
});
