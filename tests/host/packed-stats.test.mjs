// The packed stats pass (handle-node-stats-packed, its text UTF-8) and the record one
// (handle-node-stats) are the same input: two cores given the same passes under memory pressure
// decide the same actions and evict the same pods in the same order. And the host's packer writes
// any text as TextEncoder does (pod uids and container names are ASCII once validated, but the
// interface takes any).
import { test } from "node:test";
import assert from "node:assert/strict";
import { CoreAgent, DEFAULT_CORE_CONFIG } from "../../dist/core/core.js";
import { packNodeStats } from "../../dist/core/stats-packing.js";

const MI = 1024 * 1024;
const NODE = {
  memoryCapacityBytes: 64 * 1024 * MI, allocatableMemoryBytes: 64 * 1024 * MI - 100 * MI, allocatableCpuMilli: 64_000,
  evictionHard: "memory.available<100Mi", evictionSoft: "", evictionSoftGracePeriod: "", evictionMinimumReclaim: "",
  evictionPressureTransitionPeriodMs: 300_000, evictionMaxPodGracePeriodSeconds: 0, evictionIntervalMs: 10_000,
};
// Lengths around the core's four-byte compare groups, and a long one.
const UIDS = ["plain-uid-0000", "u1", "uid", "uid-0003-x", "x", "uid-0005-ascii-longer-than-sixteen"];

const pods = Array.from({ length: 30 }, (_, i) => ({
  uid: `${UIDS[i % UIDS.length]}-${i}`, namespace: "default", name: `pod-${i}`, restartPolicy: "Always", terminationGracePeriodSeconds: 30n, hostNetwork: true,
  containers: [{ name: i % 4 === 0 ? "side" : "app", image: "busybox", command: [], args: [], env: [], workingDir: undefined, requests: i % 3 ? [{ name: "memory", quantity: `${16 + i}Mi` }] : [], limits: [], restartOnResize: [], ports: [], restartPolicy: "", imagePullPolicy: "" }],
  priority: i % 5 === 0 ? 1000 : 0, staticPod: false, toleratesMemoryPressure: false, readinessGates: [], initContainers: [], volumes: [], ephemeralContainers: [],
}));

function stats(live, round) {
  return {
    signals: [{ signal: "memory.available", available: BigInt(50 * MI), capacity: BigInt(64 * 1024 * MI) }],
    // Every pod measured, every working set distinct: upstream leaves the order of equals open.
    pods: live.map((p) => {
      const i = pods.indexOf(p);
      const bytes = BigInt((((i * 37 + round * 11) % 30) + 1) * 5 * MI + 4096);
      return { uid: p.uid, memoryWorkingSetBytes: bytes, ephemeralStorageBytes: 0n, processCount: 1n, containers: [{ name: p.containers[0].name, memoryWorkingSetBytes: bytes }] };
    }),
    volumes: [],
  };
}

const strip = (actions) => JSON.stringify(actions, (_k, v) => (typeof v === "bigint" ? v.toString() : v));

test("packed and record stats passes evict the same pods", async () => {
  const packed = await CoreAgent.create({ nodeName: "n", ...DEFAULT_CORE_CONFIG, node: NODE });
  const typed = await CoreAgent.create({ nodeName: "n", ...DEFAULT_CORE_CONFIG, node: NODE });
  let now = 1_000_000;
  packed.handlePods(now, pods);
  typed.handlePods(now, pods);
  const evicted = new Set();
  for (let round = 0; round < 12; round++) {
    const live = pods.filter((p) => !evicted.has(p.uid));
    const s = stats(live, round);
    now += 31_000;
    packed.handleNodeStats(now, s);
    typed.handleNodeStatsTyped(now, s);
    const a = packed.pollActions(now);
    const b = typed.pollActions(now);
    assert.equal(strip(a), strip(b), `round ${round}`);
    const event = a.find((x) => x.kind.tag === "pod-event" && x.kind.val.reason === "Evicted");
    if (!event) continue;
    assert.ok(live.some((p) => p.uid === event.podUid), `round ${round}: a pod of the node evicted`);
    evicted.add(event.podUid);
  }
  assert.ok(evicted.size >= 5, `evicted ${[...evicted]}`);
  assert.ok(new Set([...evicted].map((uid) => uid.replace(/-\d+$/, ""))).size >= 3, `evicted ${[...evicted]}`);
});

test("the stats packer writes uids and names as UTF-8, whatever they hold", () => {
  const texts = ["plain", "ünï", "🚀 rocket", "a\ud800b", "\udc00", "é".repeat(40), ""];
  const stats = { signals: [], volumes: [], pods: texts.map((uid, i) => ({ uid, memoryWorkingSetBytes: BigInt(i), ephemeralStorageBytes: 0n, processCount: 1n, containers: [{ name: texts[texts.length - 1 - i], memoryWorkingSetBytes: 5n }] })) };
  const packed = packNodeStats(stats);
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const read = (start, length) => packed.text.subarray(Number(start), Number(start) + Number(length));
  texts.forEach((uid, i) => {
    assert.deepEqual([...read(packed.pods[i * 6], packed.pods[i * 6 + 1])], [...encoder.encode(uid)], `uid ${JSON.stringify(uid)}`);
    assert.equal(decoder.decode(read(packed.containers[i * 3], packed.containers[i * 3 + 1])), decoder.decode(encoder.encode(texts[texts.length - 1 - i])));
  });
  assert.equal(packed.text.length, texts.reduce((n, t) => n + 2 * encoder.encode(t).length, 0), "nothing between or after the strings");
});
