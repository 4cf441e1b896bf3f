// The hardware managers from the host: the WIT's pure functions (take-cpus, merge-hints), the
// agent's hardware calls through the component, the state files' formats and checksums, and the
// device plugin and plugin registration APIs over real gRPC on unix sockets with the project's
// sample device plugin.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadLibrary } from "../../dist/core/library.js";
import { CoreAgent } from "../../dist/core/core.js";
import { cpuStateChecksum, formatCpuState, parseCpuState } from "../../dist/hardware/cpu-state-file.js";
import { DeviceManager } from "../../dist/devices/device-manager.js";
import { formatDeviceCheckpoint, parseDeviceCheckpoint } from "../../dist/devices/device-checkpoint.js";
import { readMachineTopology } from "../../dist/hardware/machine-topology.js";

const library = await loadLibrary();
const quiet = { log() {} };

/** 2 sockets, 2 NUMA nodes each, 2 cores per node, 2 threads per core: CPU n and n+8 share a core. */
const bigMachine = [];
for (let core = 0; core < 8; core++) {
  bigMachine.push({ id: core, core, socket: Math.floor(core / 4), numaNode: Math.floor(core / 2) });
  bigMachine.push({ id: core + 8, core, socket: Math.floor(core / 4), numaNode: Math.floor(core / 2) });
}

test("take-cpus: whole cores, then NUMA nodes and sockets, packed", () => {
  assert.equal(library.hardware.takeCpus(bigMachine, "0-15", 2), "0,8");
  assert.equal(library.hardware.takeCpus(bigMachine, "0-15", 8), "0-3,8-11");
  // CPU 0 is taken: its core's other thread (8) goes first, filling the half-used core.
  assert.equal(library.hardware.takeCpus(bigMachine, "1-15", 1), "8");
  assert.throws(() => library.hardware.takeCpus(bigMachine, "0-1", 3), (e) => e.payload === "not enough cpus available to satisfy request: requested=3, available=2");
  assert.throws(() => library.hardware.takeCpus(bigMachine, "x", 1), (e) => /invalid cpuset/.test(e.payload));
});

test("merge-hints: upstream's merge under each policy", () => {
  const hint = (mask, preferred) => ({ numaMask: BigInt(mask), preferred });
  const providers = [
    { resource: "cpu", noPreference: false, hints: [hint(1, true), hint(2, true), hint(3, false)] },
    { resource: "example.com/nic", noPreference: false, hints: [hint(2, true), hint(3, false)] },
  ];
  assert.deepEqual(library.hardware.mergeHints("restricted", 3n, providers), { hint: hint(2, true), admit: true });
  const apart = [{ resource: "cpu", noPreference: false, hints: [hint(1, true)] }, { resource: "dev", noPreference: false, hints: [hint(2, true)] }];
  assert.equal(library.hardware.mergeHints("restricted", 3n, apart).admit, false);
  assert.equal(library.hardware.mergeHints("best-effort", 3n, apart).admit, true);
  assert.equal(library.hardware.mergeHints("single-numa-node", 3n, [{ resource: "cpu", noPreference: false, hints: [hint(3, true)] }]).admit, false);
  assert.deepEqual(library.hardware.mergeHints("none", 3n, apart), { hint: hint(0, true), admit: true });
});

test("the agent's hardware: settings refused with upstream's words, state given back after a restart", async () => {
  const core = await CoreAgent.create({ nodeName: "n", relistPeriodMs: 1000, backoffInitialMs: 10000, backoffMaxMs: 300000, workerErrorBackoffMs: 10000, maxPods: 110 });
  const settings = {
    cpus: bigMachine, numaMemory: [], cpuPolicy: "static", reservedCpus: "", reservedCpuCount: 0, fullPcpusOnly: false,
    cpuReconcilePeriodMs: 10000n, memoryPolicy: "none", reservedMemory: [], topologyPolicy: "none", topologyScope: "container",
  };
  assert.throws(() => core.configureHardware(settings), /the static policy requires systemreserved.cpu \+ kubereserved.cpu to be greater than zero/);
  assert.throws(() => core.configureHardware({ ...settings, reservedCpus: "99" }), /not all on this machine/);
  core.configureHardware({ ...settings, reservedCpuCount: 2 });
  core.restoreHardware({
    defaultCpus: "", cpus: [{ podUid: "u1", containerName: "app", cpus: "2,10" }, { podUid: "u2", containerName: "gone", cpus: "99" }],
    devices: [{ podUid: "u1", containerName: "app", resource: "example.com/dev", deviceIds: ["b", "a"] }], memory: [],
  });
  const state = core.hardwareState();
  assert.deepEqual(state.cpus, [{ podUid: "u1", containerName: "app", cpus: "2,10" }]);
  assert.equal(state.defaultCpus, "0-1,3-9,11-15");
  assert.deepEqual(state.devices, [{ podUid: "u1", containerName: "app", resource: "example.com/dev", deviceIds: ["a", "b"] }]);
});

test("cpu_manager_state: upstream's checksums, and a file of another policy refused", () => {
  // The two checkpoints of upstream's own state tests, with the checksums its kubelet wrote.
  assert.equal(cpuStateChecksum({ policyName: "none", defaultCpuSet: "4-6", entries: {} }), 354655845);
  assert.equal(cpuStateChecksum({ policyName: "none", defaultCpuSet: "1-3", entries: { pod: { container1: "4-6", container2: "1-3" } } }), 3610638499);
  const state = { policyName: "static", defaultCpuSet: "0,2-3", entries: { uid: { app: "1" } } };
  assert.deepEqual(parseCpuState(formatCpuState(state)), state);
  const tampered = formatCpuState(state).replace('"1"', '"2"');
  assert.throws(() => parseCpuState(tampered), /checkpoint is corrupted/);
});

test("the upstream kubelet's own state files (v1.36.2, written beside nanolet) check out", () => {
  const cpu = parseCpuState(fs.readFileSync("tests/fixtures/kubelet-cpu-manager-state.json", "utf8").trim());
  assert.equal(cpu.policyName, "static");
  assert.equal(cpu.defaultCpuSet, "0");
  const devices = parseDeviceCheckpoint(fs.readFileSync("tests/fixtures/kubelet-device-checkpoint.json", "utf8").trim());
  assert.deepEqual(devices.entries.map((e) => [e.containerName, e.resourceName, e.deviceIds]), [["main", "example.com/sample", ["dev-0", "dev-1"]]]);
  assert.deepEqual(devices.registered, { "example.com/sample": ["dev-0", "dev-1", "dev-2"] });
});

test("kubelet_internal_checkpoint keeps assignments and the plugin's answer; a damaged one is refused", () => {
  const checkpoint = { entries: [{ podUid: "u", containerName: "c", resourceName: "example.com/dev", deviceIds: ["d0", "d1"], allocResp: Buffer.from([1, 2, 3]) }], registered: { "example.com/dev": ["d0", "d1"] } };
  assert.deepEqual(parseDeviceCheckpoint(formatDeviceCheckpoint(checkpoint)), checkpoint);
  assert.throws(() => parseDeviceCheckpoint(formatDeviceCheckpoint(checkpoint).replace("d1", "d9")), /corrupted/);
});

test("machine topology from sysfs files: cores, sockets, NUMA nodes and their memory", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-sys-"));
  const write = (file, text) => {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  };
  write("devices/system/cpu/online", "0-3\n");
  for (let id = 0; id < 4; id++) {
    write(`devices/system/cpu/cpu${id}/topology/core_id`, `${id % 2}\n`);
    write(`devices/system/cpu/cpu${id}/topology/physical_package_id`, `${Math.floor(id / 2)}\n`);
  }
  write("devices/system/node/node0/cpulist", "0-1\n");
  write("devices/system/node/node0/meminfo", "Node 0 MemTotal:       1024 kB\n");
  write("devices/system/node/node1/cpulist", "2-3\n");
  write("devices/system/node/node1/meminfo", "Node 1 MemTotal:       2048 kB\n");
  const topology = readMachineTopology(root);
  assert.deepEqual(topology.cpus.map((c) => [c.id, c.core, c.socket, c.numaNode]), [[0, 0, 0, 0], [1, 1, 0, 0], [2, 0, 1, 1], [3, 1, 1, 1]]);
  assert.deepEqual(topology.numaMemory, [{ numaNode: 0, bytes: 1024 * 1024 }, { numaNode: 1, bytes: 2048 * 1024 }]);
});

async function waitFor(what, check, timeoutMs = 20000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("the device plugin API: the sample plugin registers, announces, allocates and goes", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-dp-"));
  const seen = new Map();
  const manager = new DeviceManager({ dir, log: quiet, onDevices: (resource, list) => seen.set(resource, list) });
  await manager.start();
  const unhealthy = path.join(dir, "unhealthy");
  const plugin = spawn(process.execPath, ["examples/device-plugin/sample-device-plugin.mjs", "--resource", "example.com/sample", "--devices", "3", "--dir", dir, "--unhealthy", unhealthy], { stdio: "ignore" });
  try {
    await waitFor("the plugin's devices", () => seen.get("example.com/sample")?.length === 3);
    assert.deepEqual(manager.counts(), [{ resource: "example.com/sample", capacity: 3, allocatable: 3 }]);
    fs.writeFileSync(unhealthy, "dev-2\n");
    await waitFor("dev-2 unhealthy", () => manager.counts()[0].allocatable === 2);
    assert.equal(seen.get("example.com/sample").find((d) => d.id === "dev-2").healthy, false);
    const options = await manager.containerOptions([{ podUid: "u", containerName: "c", resource: "example.com/sample", deviceIds: ["dev-0", "dev-1"] }]);
    assert.deepEqual(options.envs, { SAMPLE_DEVICES: "dev-0,dev-1" });
    assert.deepEqual(options.devices.map((d) => d.containerPath), ["/dev/sample-dev-0", "/dev/sample-dev-1"]);
    assert.deepEqual(options.mounts.map((m) => m.containerPath), ["/var/run/sample/dev-0", "/var/run/sample/dev-1"]);
    assert.deepEqual(options.annotations, { "example.com/sample-devices": "dev-0,dev-1" });
    // The answer is in the checkpoint: a new manager gives the container the same without asking.
    const kept = parseDeviceCheckpoint(fs.readFileSync(path.join(dir, "kubelet_internal_checkpoint"), "utf8"));
    assert.deepEqual(kept.entries.map((e) => e.deviceIds), [["dev-0", "dev-1"]]);
    // Registrations the API refuses, in upstream's words.
    assert.equal(manager.register({ version: "v1alpha", endpoint: "x.sock", resourceName: "example.com/x" }), 'requested API version "v1alpha" is not supported by kubelet. Supported versions are ["v1beta1"]');
    assert.equal(manager.register({ version: "v1beta1", endpoint: "x.sock", resourceName: "cpu" }), 'the ResourceName "cpu" is invalid');
    assert.equal(manager.register({ version: "v1beta1", endpoint: "../x.sock", resourceName: "example.com/x" }), 'the Endpoint "../x.sock" is invalid');
    plugin.kill("SIGTERM");
    await waitFor("the plugin's devices unhealthy once it went", () => manager.counts()[0].allocatable === 0);
    assert.equal(manager.counts()[0].capacity, 3, "capacity stays through the grace period, as upstream's");
  } finally {
    plugin.kill("SIGKILL");
    manager.stop();
  }
  const again = new DeviceManager({ dir, log: quiet, onDevices: () => {} });
  await again.start();
  try {
    assert.deepEqual(again.keptAssignments(), [{ podUid: "u", containerName: "c", resource: "example.com/sample", deviceIds: ["dev-0", "dev-1"] }]);
    const options = await again.containerOptions(again.keptAssignments());
    assert.deepEqual(options.envs, { SAMPLE_DEVICES: "dev-0,dev-1" }, "from the checkpoint, with the plugin gone");
    assert.deepEqual(again.counts(), [{ resource: "example.com/sample", capacity: 0, allocatable: 0 }]);
  } finally {
    again.stop();
  }
});

test("the plugin watcher: a device plugin and a CSI driver found in plugins_registry, told their status, and let go with their sockets", async () => {
  const { PluginWatcher } = await import("../../dist/devices/plugin-watcher.js");
  const { CsiDrivers } = await import("../../dist/csi/csi-drivers.js");
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-pw-"));
  const seen = new Map();
  const devices = new DeviceManager({ dir: path.join(root, "device-plugins"), log: quiet, onDevices: (resource, list) => seen.set(resource, list) });
  await devices.start();
  const csi = new CsiDrivers({ rootDir: root, nodeName: "n", log: quiet });
  const watcher = new PluginWatcher({
    dir: path.join(root, "plugins_registry"), log: quiet, rescanMs: 200,
    handlers: {
      DevicePlugin: { register: (info, socket) => devices.register({ version: "v1beta1", endpoint: "", resourceName: info.name }, socket), unregister: (name) => devices.unregister(name) },
      CSIPlugin: csi,
    },
  });
  watcher.start();
  const plugin = spawn(process.execPath, ["examples/device-plugin/sample-device-plugin.mjs", "--resource", "example.com/reg", "--devices", "2", "--dir", path.join(root, "device-plugins"), "--via-registry"], { stdio: "ignore" });
  const driver = spawn(process.execPath, ["tests/fixtures/csi-test-driver.mjs", "--name", "csi.nanolet.test", "--root", root, "--data-dir", path.join(root, "csi-data")], { stdio: "ignore" });
  try {
    await waitFor("the device plugin through the registry", () => seen.get("example.com/reg")?.length === 2);
    await waitFor("the CSI driver registered", () => csi.names().includes("csi.nanolet.test"));
    // Publish and unpublish an inline volume in a pod directory, as the volume manager does.
    const podDir = path.join(root, "pods", "uid-1");
    const target = await csi.setUp(podDir, "scratch", { driver: "csi.nanolet.test", volumeHandle: "csi-abc", readOnly: false, fsType: "", volumeContext: { content: "hi" }, persistent: false });
    assert.equal(target, path.join(podDir, "volumes", "kubernetes.io~csi", "scratch", "mount"));
    assert.equal(fs.readFileSync(path.join(target, "data.txt"), "utf8"), "hi\n");
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(podDir, "volumes", "kubernetes.io~csi", "scratch", "vol_data.json"), "utf8")).volumeLifecycleMode, "Ephemeral");
    await csi.tearDownPod(podDir);
    assert.equal(fs.existsSync(path.join(root, "csi-data", "csi-abc")), false, "the driver removed the volume");
    await assert.rejects(csi.setUp(podDir, "bad", { driver: "csi.nanolet.test", volumeHandle: "csi-bad", readOnly: false, fsType: "", volumeContext: { fail: "disk on fire" }, persistent: false }), /rpc error: code = Internal desc = disk on fire/);
    await assert.rejects(csi.setUp(podDir, "x", { driver: "nope", volumeHandle: "h", readOnly: false, fsType: "", volumeContext: {}, persistent: false }), /driver name nope not found in the list of registered CSI drivers/);
    driver.kill("SIGTERM");
    await waitFor("the CSI driver let go", () => !csi.names().includes("csi.nanolet.test"));
    plugin.kill("SIGTERM");
    await waitFor("the device plugin's devices unhealthy", () => devices.counts().find((c) => c.resource === "example.com/reg")?.allocatable === 0);
  } finally {
    plugin.kill("SIGKILL");
    driver.kill("SIGKILL");
    watcher.stop();
    devices.stop();
  }
});

test("the simulator's hardware rules catch a CPU or device held twice and a reserved CPU given", async () => {
  const { SimHardware } = await import("../../dist/sim/sim-hardware.js");
  const violations = [];
  const invariants = { violate: (atMs, invariant, message) => violations.push(invariant) };
  const sim = new SimHardware({ cpus: 4, numaNodes: 2, cpuPolicy: "static", reservedCpus: "0", topologyPolicy: "none", topologyScope: "container", devices: {} }, invariants);
  const state = (cpus, defaultCpus, devices = []) => ({ hardwareState: () => ({ defaultCpus, cpus, devices, memory: [] }) });
  sim.onStateChanged(state([{ podUid: "a", containerName: "c", cpus: "1" }, { podUid: "a", containerName: "init", cpus: "1" }], "0,2-3"), 1);
  assert.deepEqual(violations, [], "a pod's init container hands its CPU on");
  sim.onStateChanged(state([{ podUid: "a", containerName: "c", cpus: "1" }, { podUid: "b", containerName: "c", cpus: "1" }], "0,2-3"), 2);
  sim.onStateChanged(state([{ podUid: "a", containerName: "c", cpus: "0" }], "1-3"), 3);
  sim.onStateChanged(state([], "0-2"), 4);
  sim.onStateChanged(state([], "0-3", [{ podUid: "a", containerName: "c", resource: "r", deviceIds: ["d"] }, { podUid: "b", containerName: "c", resource: "r", deviceIds: ["d"] }]), 5);
  assert.deepEqual(violations, ["hardware-cpu-held-once", "hardware-reserved-cpu", "hardware-shared-pool", "hardware-device-held-once"]);
});

test("a CSI PersistentVolume of a driver that stages: staged at upstream's global path, published, then unpublished and unstaged", async () => {
  const { CsiDrivers } = await import("../../dist/csi/csi-drivers.js");
  const crypto = await import("node:crypto");
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-csipv-"));
  const csi = new CsiDrivers({ rootDir: root, nodeName: "n", log: quiet });
  const driver = spawn(process.execPath, ["tests/fixtures/csi-test-driver.mjs", "--name", "csi.stage.test", "--root", root, "--data-dir", path.join(root, "data"), "--stage"], { stdio: "ignore" });
  try {
    const socket = path.join(root, "plugins", "csi.stage.test", "csi.sock");
    await waitFor("the driver's socket", () => fs.existsSync(socket));
    assert.equal(await csi.register({ type: "CSIPlugin", name: "csi.stage.test", endpoint: socket, supportedVersions: ["1.0.0"] }, socket), "");
    assert.match(await csi.register({ type: "CSIPlugin", name: "csi.old", endpoint: socket, supportedVersions: ["0.3.0"] }, socket), /none of the CSI versions/);
    const podDir = path.join(root, "pods", "uid-2");
    await csi.setUp(podDir, "data", { driver: "csi.stage.test", volumeHandle: "pv-handle-1", readOnly: true, fsType: "ext4", volumeContext: {}, persistent: true });
    const staging = path.join(root, "plugins", "kubernetes.io", "csi", "csi.stage.test", crypto.createHash("sha256").update("pv-handle-1").digest("hex"), "globalmount");
    assert.ok(fs.existsSync(staging), "staged at upstream's global mount path");
    const target = path.join(podDir, "volumes", "kubernetes.io~csi", "data", "mount");
    assert.ok(fs.existsSync(path.join(target, "data.txt")));
    assert.throws(() => fs.writeFileSync(path.join(target, "x"), "x"), /EROFS|read-only/, "published read-only");
    await csi.tearDownPod(podDir);
    assert.equal(fs.existsSync(staging), false, "unstaged");
    assert.equal(fs.existsSync(target), false, "unpublished");
  } finally {
    driver.kill("SIGTERM");
  }
});

test("the managers' flags and fields: defaults, the reserved memory syntax, upstream's checks, and the core's settings", async () => {
  const { resolveConfig } = await import("../../dist/config/kubelet-config.js");
  const { hardwareSettings } = await import("../../dist/config/hardware-fields.js");
  const { config } = resolveConfig({ flags: {}, hasKubeconfig: false });
  assert.equal(config.cpuManagerPolicy, "none");
  assert.equal(config.cpuManagerReconcilePeriod, "10s");
  assert.equal(config.memoryManagerPolicy, "None");
  assert.equal(config.topologyManagerPolicy, "none");
  assert.equal(config.topologyManagerScope, "container");
  const given = resolveConfig({
    flags: { "cpu-manager-policy": "static", "cpu-manager-policy-options": "full-pcpus-only=true", "reserved-cpus": "0", "memory-manager-policy": "Static", "reserved-memory": "0:memory=1Gi;1:memory=512Mi", "topology-manager-policy": "single-numa-node", "topology-manager-scope": "pod" },
    hasKubeconfig: false,
  }).config;
  assert.deepEqual(given.reservedMemory, [{ numaNode: 0, limits: { memory: "1Gi" } }, { numaNode: 1, limits: { memory: "512Mi" } }]);
  const settings = hardwareSettings(given, { cpus: bigMachine, numaMemory: [] }, 0, 8 * 2 ** 30);
  assert.equal(settings.cpuPolicy, "static");
  assert.equal(settings.fullPcpusOnly, true);
  assert.equal(settings.memoryPolicy, "static");
  assert.deepEqual(settings.numaMemory, [{ numaNode: 0, bytes: 8n * 2n ** 30n }], "no NUMA nodes in sysfs: one node with all the memory");
  assert.deepEqual(settings.reservedMemory, [{ numaNode: 0, bytes: 2n ** 30n }, { numaNode: 1, bytes: 512n * 2n ** 20n }]);
  assert.equal(settings.topologyPolicy, "single-numa-node");
  assert.equal(settings.topologyScope, "pod");
  assert.throws(() => resolveConfig({ flags: { "cpu-manager-policy": "dynamic" }, hasKubeconfig: false }), /cpuManagerPolicy \(--cpu-manager-policy\) "dynamic" is not one of \["none","static"\]/);
  assert.throws(() => resolveConfig({ flags: { "memory-manager-policy": "Static" }, hasKubeconfig: false }), /needs reservedMemory/);
  assert.throws(() => resolveConfig({ flags: { "reserved-memory": "x" }, hasKubeconfig: false }), /the reserved memory has incorrect format/);
});
