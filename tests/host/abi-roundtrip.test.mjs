// Every WIT type crosses the component boundary and back unchanged (abi-check echoes), with
// values that catch layout mistakes: non-ASCII and empty strings, large 64-bit values, negative
// numbers, every enum and variant case, and nested lists.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { loadComponent } from "../../dist/core/core.js";

const { bindings } = await loadComponent();
const check = bindings.abiCheck;

// Every probe-handler case, each with values that move its fields (options, lists, 64-bit).
const handlers = [
  { tag: "exec", val: ["cat", "/tmp/héalthy", ""] },
  { tag: "http-get", val: { scheme: "HTTPS", host: "", port: "web", path: "/healthz?x=☃", headers: [{ name: "X-A", value: "1" }, { name: "Host", value: "" }] } },
  { tag: "tcp-socket", val: { host: "10.0.0.1", port: "8080" } },
  { tag: "grpc", val: { port: 65535, service: "liveness" } },
  { tag: "grpc", val: { port: 1, service: undefined } },
  { tag: "sleep", val: -(2n ** 62n) },
];

const probe = (i) => ({
  handler: handlers[i % handlers.length],
  initialDelaySeconds: i, timeoutSeconds: 1 + i, periodSeconds: 10 * (i + 1), successThreshold: 1, failureThreshold: 2147483647,
  terminationGracePeriodSeconds: i % 2 ? BigInt(i) * 2n ** 40n : undefined,
});

const containerSpec = (i) => ({
  name: `c-${i}`,
  image: "busybox:1.36 ☃",
  command: ["/bin/sh", "-c"],
  args: ["echo héllo; exit 3", ""],
  env: [
    { name: "A", value: "1", valueFrom: undefined },
    { name: "EMPTY", value: "", valueFrom: undefined },
    { name: "IP", value: "", valueFrom: { tag: "field-ref", val: "metadata.labels['ü']" } },
    { name: "MEM", value: "x", valueFrom: { tag: "resource-field-ref", val: { containerName: `c-${i}`, resource: "limits.memory", divisor: "1Mi" } } },
  ],
  workingDir: i % 2 ? "/work/dir" : undefined,
  requests: [{ name: "cpu", quantity: "250m" }],
  limits: i % 2 ? [] : [{ name: "memory", quantity: "64Mi" }, { name: "cpu", quantity: "1" }],
  restartOnResize: i % 2 ? ["memory"] : [],
  ports: i % 2 ? [] : [{ name: "web", containerPort: 8080, hostPort: 0, protocol: "TCP", hostIp: "" }, { name: "", containerPort: 53, hostPort: 5353, protocol: "UDP", hostIp: "::1" }],
  startupProbe: i % 3 === 0 ? probe(i) : undefined,
  livenessProbe: probe(i + 1),
  readinessProbe: i % 2 ? probe(i + 2) : undefined,
  restartPolicy: "", imagePullPolicy: ["", "Always", "IfNotPresent", "Never"][i % 4],
  postStart: i % 2 ? handlers[(i + 1) % handlers.length] : undefined,
  preStop: handlers[i % handlers.length],
});

const resources = (i) => ({
  cpuShares: 2n + BigInt(i), cpuWeight: 10_000n, cpuQuotaUs: i % 2 ? -1n : 50_000n, cpuPeriodUs: 100_000n,
  memoryLimitBytes: 2n ** 62n + BigInt(i), oomScoreAdj: i % 2 ? -997 : 1000,
});

test("pod-spec round-trips, including option<s64> and option<string>", () => {
  const pods = [
    { uid: "u-1", namespace: "default", name: "web", restartPolicy: "Always", terminationGracePeriodSeconds: 30n, hostNetwork: true, containers: [containerSpec(0), containerSpec(1)], deletionGracePeriodSeconds: undefined, reportedTerminalPhase: undefined, priority: 2000001000, staticPod: true, toleratesMemoryPressure: false, readinessGates: [{ conditionType: "example.com/feature-1", status: "True" }, { conditionType: "b", status: "" }], initContainers: [{ ...containerSpec(3), restartPolicy: "Always" }, containerSpec(4)], activeDeadlineSeconds: 2n ** 40n, startTimeMs: 1796456026085n, volumes: [], ephemeralContainers: [{ container: containerSpec(6), targetContainerName: "web-0" }, { container: containerSpec(7), targetContainerName: "" }], overhead: [{ name: "cpu", quantity: "250m" }, { name: "memory", quantity: "120Mi" }] },
    { uid: "", namespace: "", name: "日本", restartPolicy: "", terminationGracePeriodSeconds: undefined, hostNetwork: false, containers: [], deletionGracePeriodSeconds: 0n, reportedTerminalPhase: "succeeded", priority: -2147483648, staticPod: false, toleratesMemoryPressure: true, readinessGates: [], initContainers: [], activeDeadlineSeconds: undefined, startTimeMs: undefined, volumes: [{ name: "kube-api-access-日本", kind: "projected", used: true, sourceVersion: "", sizeLimit: "" }, { name: "d", kind: "empty-dir", used: false, sourceVersion: "v9", sizeLimit: "1Gi" }], ephemeralContainers: [], overhead: [] },
    { uid: "u-3", namespace: "kube-system", name: "x", restartPolicy: "Never", terminationGracePeriodSeconds: -5n, hostNetwork: false, containers: [containerSpec(2)], deletionGracePeriodSeconds: 2n ** 62n, reportedTerminalPhase: "unknown", priority: 0, staticPod: true, toleratesMemoryPressure: true, readinessGates: [{ conditionType: "ü", status: "Unknown" }], initContainers: [containerSpec(5)], activeDeadlineSeconds: -1n, startTimeMs: 2n ** 64n - 1n, volumes: [], ephemeralContainers: [{ container: containerSpec(8), targetContainerName: "日本" }], overhead: [{ name: "日本", quantity: "" }] },
  ];
  assert.deepEqual(check.echoPods(pods), pods);
  assert.deepEqual(check.echoPods([]), []);
});

test("pod-rejection round-trips", () => {
  const items = [
    { index: 0, uid: "u", field: "spec.containers[0].name", message: 'Duplicate value: "a"' },
    { index: 4294967295, uid: "", field: "", message: "" },
  ];
  assert.deepEqual(check.echoRejections(items), items);
});

test("runtime-snapshot round-trips with every state", () => {
  const snapshot = {
    listedAtMs: 1_764_000_000_123n,
    sandboxes: [
      { id: "sb1", podUid: "u1", podName: "p", podNamespace: "ns", attempt: 2, state: "ready", createdAtNs: 1_764_000_000_000_000_001n, terminationGracePeriodSeconds: 30n },
      { id: "sb2", podUid: "u2", podName: "q", podNamespace: "ns", attempt: 0, state: "not-ready", createdAtNs: 0n, terminationGracePeriodSeconds: undefined },
    ],
    containers: ["created", "running", "exited", "unknown"].map((state, i) => ({
      id: `c${i}`, sandboxId: "sb1", podUid: "u1", name: `n${i}`, attempt: i * 1000, state, image: "img",
      specHash: "00ff", exitCode: i === 2 ? -1 : 137, reason: i === 2 ? "OOMKilled" : "", message: "ü",
      createdAtNs: 9_007_199_254_740_993n, startedAtNs: -1n, finishedAtNs: 2n ** 62n,
    })),
    uninspectedPodUids: ["u9", ""],
  };
  assert.deepEqual(check.echoSnapshot(snapshot), snapshot);
});

test("action-result round-trips both result cases and every error kind", () => {
  const results = [
    { actionId: 1n, outcome: { tag: "ok", val: "sandbox-id" } },
    { actionId: 2n ** 64n - 1n, outcome: { tag: "ok", val: "" } },
    ...["runtime", "image-pull", "timeout", "other"].map((kind, i) => ({
      actionId: BigInt(10 + i), outcome: { tag: "err", val: { kind, grpcCode: 14, message: `failed ${kind} ☃` } },
    })),
  ];
  assert.deepEqual(check.echoResults(results), results);
});

test("planned-action round-trips every action-kind case", () => {
  const sandbox = { podUid: "u1", podName: "p", podNamespace: "ns", attempt: 3, hostNetwork: true, terminationGracePeriodSeconds: 45n, cgroupParent: "/kubepods/besteffort/podu1", podResources: resources(0) };
  const status = {
    phase: "running", reason: "", message: "m", sandboxId: "sb",
    containerStatuses: ["waiting", "running", "terminated"].map((state, i) => ({
      name: `c${i}`, containerId: `id${i}`, image: "img", state, reason: "CrashLoopBackOff", message: "back-off 10s",
      exitCode: -2, restartCount: 7, ready: i === 1, startedAtNs: 5n, finishedAtNs: 6n, started: i === 1,
      lastState: i === 0 ? undefined : { containerId: `old${i}`, exitCode: -137, reason: "OOMKilled ☃", message: "", startedAtNs: -1n, finishedAtNs: 2n ** 62n },
      allocatedResources: i === 0 ? [] : [{ name: "memory", quantity: "64Mi" }],
      resourceRequests: [{ name: "cpu", quantity: `${i}00m` }],
      resourceLimits: i === 2 ? [{ name: "cpu", quantity: "1" }, { name: "memory", quantity: "1Gi" }] : [],
    })),
    version: 2n ** 40n,
    conditions: ["pod-scheduled", "pod-ready-to-start-containers", "initialized", "containers-ready", "ready", "disruption-target", "pod-resize-pending", "pod-resize-in-progress"].map((conditionType, i) => ({
      conditionType, status: i % 2 === 0, reason: i ? "ContainersNotReady" : "", message: "containers with unready status: [a b]", lastTransitionMs: 2n ** 63n + BigInt(i),
    })),
    startTimeMs: 1_764_000_000_123n,
    finished: true,
  };
  status.initContainerStatuses = [{ ...status.containerStatuses[2], name: "init ☃", reason: "PodInitializing" }];
  status.ephemeralContainerStatuses = [{ ...status.containerStatuses[1], name: "debugger-x7k2q", ready: false, started: false }];
  const kinds = [
    { tag: "relist" },
    { tag: "run-sandbox", val: sandbox },
    { tag: "stop-sandbox", val: "sb1" },
    { tag: "remove-sandbox", val: "sb2" },
    {
      tag: "create-container",
      val: {
        sandboxId: "sb1", sandbox, attempt: 4, specHash: "abc", container: containerSpec(1), resources: resources(1), targetContainerId: "c-target",
        cpusetCpus: "1-3,7", cpusetMems: "0", devices: [{ podUid: "u", containerName: "c ☃", resource: "example.com/dev", deviceIds: ["d1", "d2"] }, { podUid: "", containerName: "", resource: "", deviceIds: [] }],
      },
    },
    { tag: "create-container", val: { sandboxId: "", sandbox, attempt: 0, specHash: "", container: containerSpec(2), resources: resources(2), targetContainerId: "", cpusetCpus: "", cpusetMems: "", devices: [] } },
    { tag: "update-container-cpuset", val: { containerId: "c9", containerName: "n9", cpusetCpus: "0,2", cpusetMems: "" } },
    { tag: "hardware-state-changed" },
    { tag: "start-container", val: { containerId: "c1", containerName: "n1" } },
    { tag: "stop-container", val: { containerId: "c2", containerName: "n2", timeoutSeconds: 30n } },
    { tag: "remove-container", val: { containerId: "c3", containerName: "n3" } },
    { tag: "remove-pod-cgroup", val: "u1" },
    ...["pending", "running", "succeeded", "failed", "unknown"].map((phase) => ({ tag: "pod-status-changed", val: { ...status, phase } })),
    { tag: "pod-event", val: { containerName: "n", eventType: "warning", reason: "BackOff", message: "Back-off" } },
    { tag: "pod-event", val: { containerName: "", eventType: "normal", reason: "Started", message: "" } },
    { tag: "update-container-resources", val: { containerId: "c4", containerName: "n4 ☃", resources: resources(3) } },
    { tag: "update-pod-cgroup", val: { cgroupParent: "/kubepods/burstable/podu1", resources: resources(4) } },
    { tag: "node-pressure-changed", val: { memory: true, disk: false, pid: true } },
    { tag: "node-pressure-changed", val: { memory: false, disk: true, pid: false } },
    { tag: "reclaim-node-resources", val: "imagefs.available" },
    { tag: "shutdown-inhibit-lock", val: true },
    { tag: "shutdown-inhibit-lock", val: false },
    ...handlers.map((handler, i) => ({
      tag: "run-probe",
      val: { containerId: `c${i}`, containerName: "n ☃", probeType: ["startup", "liveness", "readiness"][i % 3], handler, timeoutSeconds: i - 1 },
    })),
    ...handlers.map((handler, i) => ({
      tag: "run-hook",
      val: { containerId: `h${i}`, containerName: "", hookType: i % 2 ? "pre-stop" : "post-start", handler, timeoutSeconds: BigInt(i) - 2n },
    })),
  ];
  const actions = kinds.map((kind, i) => ({ id: BigInt(i + 1), podUid: `u${i}`, podNamespace: "ns", podName: "p", kind }));
  assert.deepEqual(check.echoActions(actions), actions);
});

test("probe-result round-trips with every outcome", () => {
  const results = ["success", "warning", "failure", "unknown", "error"].map((outcome, i) => ({ actionId: 2n ** 63n + BigInt(i), outcome, output: i % 2 ? "HTTP probe failed with statuscode: 500 ☃" : "" }));
  assert.deepEqual(check.echoProbeResults(results), results);
  assert.deepEqual(check.echoProbeResults([]), []);
});

test("node-stats round-trips with signals, pods and their containers", () => {
  const stats = {
    signals: [
      { signal: "memory.available", available: -5n, capacity: 2n ** 62n },
      { signal: "nodefs.inodesFree ☃", available: 0n, capacity: 1n },
    ],
    pods: [
      { uid: "u1", memoryWorkingSetBytes: 123_456_789n, ephemeralStorageBytes: 2n ** 40n, processCount: 7n, containers: [{ name: "a", memoryWorkingSetBytes: 1n }, { name: "", memoryWorkingSetBytes: -1n }] },
      { uid: "", memoryWorkingSetBytes: 0n, ephemeralStorageBytes: 0n, processCount: 0n, containers: [] },
    ],
    volumes: [{ podUid: "u1", volume: "scratch ☃", usedBytes: 2n ** 62n }, { podUid: "", volume: "", usedBytes: -1n }],
  };
  assert.deepEqual(check.echoNodeStats(stats), stats);
  assert.deepEqual(check.echoNodeStats({ signals: [], pods: [], volumes: [] }), { signals: [], pods: [], volumes: [] });
});

test("option<u64> round-trips", () => {
  assert.equal(check.echoDeadline(undefined), undefined);
  assert.equal(check.echoDeadline(0n), 0n);
  assert.equal(check.echoDeadline(2n ** 64n - 2n), 2n ** 64n - 2n);
});

test("memory stays flat over many calls (arguments and return arena are freed)", async () => {
  // Instantiate by hand to see the core module's memory.
  const { instantiate } = await import("../../build/out/core-js/nanolet-core.js");
  const dir = new URL("../../build/out/core-js/", import.meta.url);
  const memories = [];
  const diagnostics = { reportTrap() {} };
  const own = await instantiate(
    async (name) => WebAssembly.compile(await readFile(new URL(name, dir))),
    { "nanolet:core/diagnostics": diagnostics },
    async (module, imports) => {
      const instance = await WebAssembly.instantiate(module, imports);
      if (instance.exports.memory) memories.push(instance.exports.memory);
      return instance;
    },
  );
  const pods = Array.from({ length: 50 }, (_, i) => ({ uid: `u${i}`, namespace: "d", name: "n", restartPolicy: "Always", terminationGracePeriodSeconds: 1n, hostNetwork: false, containers: [containerSpec(i)], readinessGates: [], initContainers: [], volumes: [], ephemeralContainers: [], overhead: [] }));
  for (let i = 0; i < 200; i++) own.abiCheck.echoPods(pods);
  const sizeAfterWarmUp = memories.map((m) => m.buffer.byteLength);
  for (let i = 0; i < 3000; i++) own.abiCheck.echoPods(pods);
  assert.deepEqual(memories.map((m) => m.buffer.byteLength), sizeAfterWarmUp);
  assert.ok(memories.length > 0);
});
