// The host's node-resource parts on file trees laid out like /sys/fs/cgroup and /proc: the
// cgroup manager's writes (v1 and v2), the stats pass, eviction flags, manifest fields, and the
// Node's pressure conditions.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CgroupManager } from "../../dist/node/cgroup-manager.js";
import { StatsCollector, readMeminfo } from "../../dist/node/stats.js";
import { hardMemoryThresholdBytes, nodeSettings } from "../../dist/node/eviction-flags.js";
import { nodeResources } from "../../dist/node/allocatable.js";
import { resolveConfig } from "../../dist/config/kubelet-config.js";
import { nodeConditions } from "../../dist/cluster/node-object.js";
import { podFromApiObject, podFromManifest } from "../../dist/sources/manifest.js";

const MI = 1024 * 1024;
const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-node-"));
const read = (...p) => fs.readFileSync(path.join(...p), "utf8");
const put = (file, text) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
};

const values = (over = {}) => ({ cpuShares: 256n, cpuWeight: 10n, cpuQuotaUs: 25_000n, cpuPeriodUs: 100_000n, memoryLimitBytes: BigInt(64 * MI), oomScoreAdj: 0, ...over });

test("cgroup v1: the QoS tree, a pod's values, and 'no limit' as -1", () => {
  const root = tmp();
  for (const c of ["cpu", "memory", "pids"]) fs.mkdirSync(path.join(root, c));
  const manager = new CgroupManager(root);
  assert.equal(manager.version, 1);
  manager.ensurePod("/kubepods/burstable/podu1", values());
  assert.equal(read(root, "cpu/kubepods/besteffort/cpu.shares"), "2");
  assert.equal(read(root, "cpu/kubepods/burstable/podu1/cpu.shares"), "256");
  assert.equal(read(root, "cpu/kubepods/burstable/podu1/cpu.cfs_quota_us"), "25000");
  assert.equal(read(root, "cpu/kubepods/burstable/podu1/cpu.cfs_period_us"), "100000");
  assert.equal(read(root, "memory/kubepods/burstable/podu1/memory.limit_in_bytes"), String(64 * MI));
  assert.ok(fs.existsSync(path.join(root, "pids/kubepods/burstable/podu1")));
  manager.update("/kubepods/burstable/podu1", values({ cpuQuotaUs: 0n, memoryLimitBytes: 0n }));
  assert.equal(read(root, "cpu/kubepods/burstable/podu1/cpu.cfs_quota_us"), "-1");
  assert.equal(read(root, "memory/kubepods/burstable/podu1/memory.limit_in_bytes"), "-1");
});

test("cgroup v2: controllers delegated down the tree, cpu.weight, cpu.max and memory.max", () => {
  const root = tmp();
  put(path.join(root, "cgroup.controllers"), "cpu memory pids");
  const manager = new CgroupManager(root);
  assert.equal(manager.version, 2);
  manager.ensurePod("/kubepods/podg", values());
  assert.equal(read(root, "cgroup.subtree_control"), "+cpu +memory +pids");
  assert.equal(read(root, "kubepods/cgroup.subtree_control"), "+cpu +memory +pids");
  assert.equal(read(root, "kubepods/podg/cpu.weight"), "10");
  assert.equal(read(root, "kubepods/podg/cpu.max"), "25000 100000");
  assert.equal(read(root, "kubepods/podg/memory.max"), String(64 * MI));
  assert.equal(read(root, "kubepods/besteffort/cpu.weight"), "1");
  manager.update("/kubepods/podg", values({ cpuQuotaUs: 0n, memoryLimitBytes: 0n }));
  assert.equal(read(root, "kubepods/podg/cpu.max"), "max 100000");
  assert.equal(read(root, "kubepods/podg/memory.max"), "max");
});

test("stats pass: working sets (usage minus inactive file), filesystems, pids and per-pod use", () => {
  const root = tmp();
  const proc = tmp();
  const logs = tmp();
  put(path.join(proc, "meminfo"), "MemTotal:       4194304 kB\nMemFree:        1048576 kB\nInactive(file):   10240 kB\n");
  put(path.join(proc, "sys/kernel/pid_max"), "32768\n");
  put(path.join(proc, "loadavg"), "0.10 0.20 0.30 2/468 12345\n");
  put(path.join(root, "memory/memory.usage_in_bytes"), String(1024 * MI));
  put(path.join(root, "memory/memory.stat"), `cache 1\ntotal_inactive_file ${24 * MI}\n`);
  put(path.join(root, "memory/kubepods/memory.usage_in_bytes"), String(300 * MI));
  put(path.join(root, "memory/kubepods/memory.stat"), `total_inactive_file ${50 * MI}\n`);
  const pod = "memory/kubepods/besteffort/poduid1";
  put(path.join(root, pod, "memory.usage_in_bytes"), String(200 * MI));
  put(path.join(root, pod, "memory.stat"), `inactive_file 7\ntotal_inactive_file ${10 * MI}\n`);
  put(path.join(root, pod, "cid1/memory.usage_in_bytes"), String(150 * MI));
  put(path.join(root, pod, "cid1/memory.stat"), `total_inactive_file ${5 * MI}\n`);
  put(path.join(root, "pids/kubepods/besteffort/poduid1/pids.current"), "3\n");
  const logDir = path.join(logs, "default_p_uid1");
  put(path.join(logDir, "app/0.log"), "x".repeat(1000));
  put(path.join(logDir, "app/1.log"), "y".repeat(24));
  const collector = new StatsCollector({ cgroupRoot: root, procRoot: proc, nodefsPath: logs, imagefsPath: logs, allocatableMemoryBytes: 4096 * MI - 100 * MI });
  const stats = collector.collect([
    { uid: "uid1", logDir, containers: [{ id: "cid1", name: "app" }, { id: "gone", name: "old" }] },
    { uid: "uid2", logDir: path.join(logs, "none"), containers: [] },
  ]);
  const signal = (name) => stats.signals.find((s) => s.signal === name);
  assert.deepEqual(signal("memory.available"), { signal: "memory.available", available: BigInt(4096 * MI - 1000 * MI), capacity: BigInt(4096 * MI) });
  assert.equal(signal("allocatableMemory.available").available, BigInt(3996 * MI - 250 * MI));
  assert.deepEqual(signal("pid.available"), { signal: "pid.available", available: 32768n - 468n, capacity: 32768n });
  for (const name of ["nodefs.available", "nodefs.inodesFree", "imagefs.available", "imagefs.inodesFree"]) {
    assert.ok(signal(name).capacity > 0n && signal(name).available <= signal(name).capacity, name);
  }
  assert.equal(stats.pods.length, 1, "a pod without a cgroup has no stats");
  assert.deepEqual(stats.pods[0], {
    uid: "uid1", memoryWorkingSetBytes: BigInt(190 * MI), ephemeralStorageBytes: 1024n, processCount: 3n,
    containers: [{ name: "app", memoryWorkingSetBytes: BigInt(145 * MI) }],
  });
  assert.equal(readMeminfo(proc).get("MemTotal"), 4096 * MI);
});

test("eviction flags: the hard memory threshold kept aside from allocatable", () => {
  assert.equal(hardMemoryThresholdBytes("memory.available<100Mi,nodefs.available<10%", 0), 100 * MI);
  assert.equal(hardMemoryThresholdBytes("nodefs.available<10%, memory.available<5%", 1000 * MI), 50 * MI);
  assert.equal(hardMemoryThresholdBytes("memory.available<1G", 0), 1e9);
  assert.equal(hardMemoryThresholdBytes("nodefs.available<10%", 0), 0);
  const machine = { memoryBytes: 1024 * MI, cpuCount: 2, ephemeralStorageBytes: 0, hugepages: [] };
  const resources = nodeResources(machine, { systemReserved: {}, kubeReserved: {}, reservedSystemCPUs: "", evictionHard: { "memory.available": "200Mi" }, maxPods: 110 });
  const s = nodeSettings(machine, resources, {
    evictionHard: "memory.available<200Mi", evictionSoft: "", evictionSoftGracePeriod: "", evictionMinimumReclaim: "",
    evictionPressureTransitionPeriodMs: 300_000, evictionMaxPodGracePeriodSeconds: 0, evictionIntervalMs: 10_000,
  });
  assert.equal(s.allocatableMemoryBytes, 824 * MI);
  assert.equal(s.allocatableCpuMilli, 2000);
});

test("manifests: resizePolicy, priority and the memory-pressure toleration; bad ones name the field", () => {
  const doc = {
    apiVersion: "v1", kind: "Pod", metadata: { name: "p", uid: "u", namespace: "default" },
    spec: {
      priority: 1000,
      tolerations: [{ key: "node.kubernetes.io/memory-pressure", operator: "Exists", effect: "NoSchedule" }],
      containers: [{ name: "a", image: "busybox", resizePolicy: [{ resourceName: "memory", restartPolicy: "RestartContainer" }, { resourceName: "cpu", restartPolicy: "NotRequired" }] }],
    },
  };
  const fromFile = podFromManifest(doc, { nodeName: "n", source: "p.yaml", documentIndex: 0 });
  assert.deepEqual(fromFile.containers[0].restartOnResize, ["memory"]);
  assert.equal(fromFile.priority, 1000);
  assert.equal(fromFile.staticPod, true);
  assert.equal(fromFile.toleratesMemoryPressure, true);
  const fromApi = podFromApiObject({ ...doc, spec: { ...doc.spec, tolerations: [{ operator: "Exists" }] } });
  assert.equal(fromApi.staticPod, false);
  assert.equal(fromApi.toleratesMemoryPressure, true, "an empty key with Exists tolerates every taint");
  assert.equal(podFromApiObject({ ...doc, spec: { ...doc.spec, tolerations: [{ key: "node.kubernetes.io/memory-pressure", effect: "NoExecute", operator: "Exists" }] } }).toleratesMemoryPressure, false);
  assert.throws(
    () => podFromApiObject({ ...doc, spec: { ...doc.spec, containers: [{ name: "a", image: "b", resizePolicy: [{ resourceName: "gpu", restartPolicy: "NotRequired" }] }] } }),
    (e) => e.field === "spec.containers[0].resizePolicy[0].resourceName",
  );
  assert.throws(() => podFromApiObject({ ...doc, spec: { ...doc.spec, priority: "high" } }), (e) => e.field === "spec.priority");
});

test("Node conditions carry the core's pressure with upstream's reasons", () => {
  const health = { runtimeReady: true, networkReady: true, lastRelistOkMs: 1, pressure: { memory: true, disk: false, pid: true } };
  const [memory, disk, pid] = nodeConditions(health, 2);
  assert.deepEqual([memory.status, memory.reason], ["True", "KubeletHasInsufficientMemory"]);
  assert.deepEqual([disk.status, disk.reason], ["False", "KubeletHasNoDiskPressure"]);
  assert.deepEqual([pid.status, pid.reason], ["True", "KubeletHasInsufficientPID"]);
});

test("allocatable is capacity less systemReserved, kubeReserved and the hard eviction thresholds, in the apiserver's canonical quantities", () => {
  const GI = 1024 * MI;
  // 4030036Ki of memory, 4 CPUs, a 100 GiB root filesystem, one 2Mi huge page pool of 4 pages.
  const machine = { memoryBytes: 4030036 * 1024, cpuCount: 4, ephemeralStorageBytes: 100 * GI, hugepages: [{ resource: "hugepages-2Mi", bytes: 8 * MI }] };
  const r = nodeResources(machine, {
    systemReserved: { memory: "1Gi", cpu: "500m" }, kubeReserved: { memory: "256Mi", "ephemeral-storage": "1Gi" },
    reservedSystemCPUs: "", evictionHard: { "memory.available": "100Mi", "nodefs.available": "10%" }, maxPods: 110,
  });
  assert.deepEqual(r.capacity, { cpu: "4", "ephemeral-storage": "100Gi", "hugepages-2Mi": "8Mi", memory: "4030036Ki", pods: "110" });
  // memory: 4030036Ki - 1Gi - 256Mi - 100Mi - 8Mi (the huge pages) = 2608724Ki
  // ephemeral-storage: 100Gi - 1Gi - int64(100Gi * float32(0.1)): upstream's percentage is a
  // float32, so 160 bytes more than a tenth go, and the rest is no whole Ki.
  assert.deepEqual(r.allocatable, { cpu: "3500m", "ephemeral-storage": String(100 * GI - GI - 10737418400), "hugepages-2Mi": "8Mi", memory: "2608724Ki", pods: "110" });
  assert.equal(r.allocatableCpuMilli, 3500);
  assert.equal(r.allocatableMemoryBytes, 2608724 * 1024);
  // A percentage that leaves no whole Ki is written in bytes.
  const odd = nodeResources({ ...machine, ephemeralStorageBytes: 1000 * MI + 4096 }, { systemReserved: {}, kubeReserved: {}, reservedSystemCPUs: "", evictionHard: { "nodefs.available": "7%" }, maxPods: 110 });
  assert.equal(odd.allocatable["ephemeral-storage"], String(1000 * MI + 4096 - Math.floor((1000 * MI + 4096) * Math.fround(Math.fround(7) / 100))));
  // kubepods: capacity less the reservations only.
  assert.equal(r.podsMemoryLimitBytes, 4030036 * 1024 - GI - 256 * MI);
  assert.equal(r.podsCpuMilli, 3500);
  // --reserved-cpus replaces both reservations' cpu by its count of CPUs.
  const cpus = nodeResources(machine, { systemReserved: { cpu: "500m" }, kubeReserved: { cpu: "1" }, reservedSystemCPUs: "0-1", evictionHard: {}, maxPods: 110 });
  assert.equal(cpus.allocatable.cpu, "2");
  // Never below zero; a whole Mi is written as Mi.
  const small = nodeResources({ memoryBytes: 512 * MI, cpuCount: 1, ephemeralStorageBytes: 0, hugepages: [] }, { systemReserved: { memory: "1Gi", cpu: "2" }, kubeReserved: {}, reservedSystemCPUs: "", evictionHard: {}, maxPods: 110 });
  assert.equal(small.allocatable.memory, "0");
  assert.equal(small.allocatable.cpu, "0");
  assert.equal(small.capacity.memory, "512Mi");
});

test("the reservation settings are checked as upstream checks them", () => {
  const dir = tmp();
  const check = (body) => {
    const f = path.join(dir, `c${Math.random()}.yaml`);
    fs.writeFileSync(f, `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n${body}`);
    return () => resolveConfig({ file: f, flags: {}, hasKubeconfig: false });
  };
  assert.throws(check("systemReserved: {gpu: '1'}\n"), /systemReserved \(--system-reserved\): cannot reserve "gpu" resource/);
  assert.throws(check("kubeReserved: {memory: '-1Gi'}\n"), /resource quantity for "memory" cannot be negative: -1Gi/);
  assert.throws(check("enforceNodeAllocatable: [pods, system-reserved]\n"), /systemReservedCgroup \(--system-reserved-cgroup\) must be specified when "system-reserved" contained in enforceNodeAllocatable/);
  assert.throws(check("enforceNodeAllocatable: [none, pods]\n"), /may not contain additional enforcements when "none" is specified/);
  assert.throws(check("reservedSystemCPUs: '0-1'\nkubeReservedCgroup: /kube\n"), /can't use reservedSystemCPUs \(--reserved-cpus\) with systemReservedCgroup/);
  assert.throws(check("reservedSystemCPUs: 'a-b'\n"), /unable to parse reservedSystemCPUs \(--reserved-cpus\) a-b/);
  const flags = resolveConfig({ flags: { "system-reserved": "cpu=250m,memory=512Mi" }, hasKubeconfig: false }).config;
  assert.deepEqual(flags.systemReserved, { cpu: "250m", memory: "512Mi" });
  assert.deepEqual(flags.enforceNodeAllocatable, ["pods"]);
});

test("enforcing pods limits the kubepods cgroup to capacity less the reservations", () => {
  const root = tmp();
  put(path.join(root, "cgroup.controllers"), "cpu memory pids");
  const manager = new CgroupManager(root, { memoryBytes: 3 * 1024 * MI, cpuMilli: 3500 });
  manager.ensureQosTree();
  assert.equal(read(root, "kubepods", "memory.max"), String(3 * 1024 * MI));
  // 3500m: 3584 shares, weight 1 + (3582 * 9999) / 262142.
  assert.equal(read(root, "kubepods", "cpu.weight"), String(1 + Math.floor((3582 * 9999) / 262142)));
});

test("--node-ip takes one address or a dual-stack pair, as upstream parses it", async () => {
  const { parseNodeIps } = await import("../../dist/cli/run-settings.js");
  assert.deepEqual(parseNodeIps("10.0.0.5"), ["10.0.0.5"]);
  assert.deepEqual(parseNodeIps("10.0.0.5, fd00::5"), ["10.0.0.5", "fd00::5"]);
  assert.throws(() => parseNodeIps("10.0.0.5,10.0.0.6"), /bad --node-ip "10.0.0.5,10.0.0.6": must contain either a single IP or a dual-stack pair of IPs/);
  assert.throws(() => parseNodeIps("0.0.0.0,::1"), /dual-stack node IP cannot include '0.0.0.0' or '::'/);
  assert.throws(() => parseNodeIps("ten"), /could not parse "ten"/);
});
