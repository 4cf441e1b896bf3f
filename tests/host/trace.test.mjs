// The trace file sink and codec: a size-limited recording stops at a line boundary and says so
// once; bad trace lines are named by line and field.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { FileTraceSink } from "../../dist/trace/file-sink.js";
import { TraceFormatError, decodeSnapshot } from "../../dist/trace/codec.js";
import { replayLines } from "../../dist/trace/replay.js";

test("a recording past its size limit stops at a line boundary and reports it once", () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-trace-")), "t.jsonl");
  const full = [];
  const sink = new FileTraceSink(file, { maxBytes: 1000, onFull: (bytes) => full.push(bytes) });
  for (let i = 0; i < 100; i++) sink.sink(JSON.stringify({ t: i, op: "sim", event: "x".repeat(20) }));
  sink.close();
  const text = fs.readFileSync(file, "utf8");
  assert.ok(text.length <= 1000 && text.length > 900, `${text.length} bytes`);
  assert.ok(text.endsWith("\n"));
  for (const line of text.trim().split("\n")) assert.equal(JSON.parse(line).op, "sim");
  assert.deepEqual(full, [text.length]);
});

test("bad trace lines are refused with their line and field", async () => {
  assert.throws(() => decodeSnapshot({ listedAtMs: "12", sandboxes: [], containers: [{ createdAtNs: "x" }] }), (e) => e instanceof TraceFormatError && /containers\[0\]\.createdAtNs: expected an integer/.test(e.message));
  await assert.rejects(replayLines(['{"t":1,"op":"poll","out":[]}']), /line 1: "poll" before any "create" line/);
  await assert.rejects(replayLines(["{not json"]), /line 1: not JSON/);
});

test("a recording with the hardware managers (static CPUs, a device plugin, a restored state) replays to the same outputs", async () => {
  const { CoreAgent } = await import("../../dist/core/core.js");
  const { RecordingCore, TraceWriter } = await import("../../dist/trace/recording-core.js");
  const lines = [];
  const trace = new TraceWriter((line) => lines.push(line));
  const cpus = [0, 1, 2, 3].map((id) => ({ id, core: id, socket: 0, numaNode: id < 2 ? 0 : 1 }));
  const config = {
    nodeName: "n", relistPeriodMs: 1000, backoffInitialMs: 10000, backoffMaxMs: 300000, workerErrorBackoffMs: 10000, maxPods: 110,
    hardware: {
      cpus, numaMemory: [{ numaNode: 0, bytes: 1n << 30n }, { numaNode: 1, bytes: 1n << 30n }], cpuPolicy: "static", reservedCpus: "0", reservedCpuCount: 0,
      fullPcpusOnly: false, cpuReconcilePeriodMs: 10000n, memoryPolicy: "none", reservedMemory: [], topologyPolicy: "best-effort", topologyScope: "container",
    },
  };
  const core = RecordingCore.wrap(await CoreAgent.create(config), trace, 0, config);
  core.restoreHardware({ defaultCpus: "", cpus: [{ podUid: "old", containerName: "c", cpus: "3" }], devices: [], memory: [] });
  core.handleDevices(1, "example.com/dev", [{ id: "a", healthy: true, numaNodes: [1] }, { id: "b", healthy: true, numaNodes: [0] }]);
  const pod = (uid, cpu, devices) => ({
    uid, namespace: "default", name: uid, restartPolicy: "Always", terminationGracePeriodSeconds: 30n, hostNetwork: true,
    containers: [{ name: "c", image: "busybox", imagePullPolicy: "IfNotPresent", command: [], args: [], env: [], workingDir: undefined, ports: [], restartOnResize: [], restartPolicy: "",
      requests: [{ name: "cpu", quantity: cpu }, { name: "memory", quantity: "64Mi" }], limits: [{ name: "cpu", quantity: cpu }, { name: "memory", quantity: "64Mi" }, { name: "example.com/dev", quantity: devices }] }],
    priority: 0, staticPod: false, toleratesMemoryPressure: false, readinessGates: [], initContainers: [], volumes: [], ephemeralContainers: [],
  });
  core.handlePods(2, [pod("u1", "1", "1")]);
  core.handleSnapshot(3, { listedAtMs: 3n, sandboxes: [], containers: [], uninspectedPodUids: [] });
  const actions = core.pollActions(4);
  assert.ok(actions.some((a) => a.kind.tag === "run-sandbox"));
  // CPU 0 is reserved and 3 held from before: the best-effort alignment puts u1 on CPU 1 with the
  // device of NUMA node 0; the pod that held CPU 3 is unknown once the sources spoke: freed.
  assert.deepEqual(core.hardwareState().cpus.map((c) => [c.podUid, c.cpus]), [["u1", "1"]]);
  assert.equal(core.hardwareState().defaultCpus, "0,2-3");
  assert.deepEqual(core.hardwareState().devices.map((d) => d.deviceIds), [["b"]]);
  const report = await replayLines(lines);
  assert.equal(report.divergence, undefined, JSON.stringify(report.divergence));
  assert.ok(report.calls >= 4);
});
