// The `agent` resource through the component, driven by a random sequence of calls: pod lists
// with random specs (probes, hooks, init containers, env sources), relists (record and packed
// paths) with random observations, action and probe results for real and made-up action ids, stats passes (packed and record paths), polls at times that may go
// backwards. Property: no call traps (a bad input is refused or ignored, never fatal).
import fc from "fast-check";
import { CoreAgent, CoreTrapError, DEFAULT_CORE_CONFIG } from "../../../dist/core/core.js";
import { arbOf } from "./wit-pure.mjs";
import { bool, enumOf, list, option, record, s32, s64, str, u32, u64 } from "../../library/abi-types.mjs";
import { someString } from "./pod-values.mjs";

const uid = fc.constantFrom("u1", "u2", "u3", "", "../x", "U-1");
const name = fc.oneof(fc.constantFrom("app", "side", "c", ""), someString);
const quantity = fc.record({ name: fc.constantFrom("cpu", "memory", "example.com/x", "hugepages-2Mi", ""), quantity: fc.oneof(fc.constantFrom("1", "100m", "64Mi", "1Ei", "-1", "x", ""), someString) });
const port = fc.oneof(fc.constantFrom("80", "web", "0", "70000", ""), someString);
const handler = fc.oneof(
  fc.array(someString, { maxLength: 2 }).map((val) => ({ tag: "exec", val })),
  fc.record({ scheme: fc.constantFrom("HTTP", "HTTPS", "FTP"), host: fc.constantFrom("", "127.0.0.1"), port, path: fc.constantFrom("/", "/healthz", ""), headers: fc.array(fc.record({ name: someString, value: someString }), { maxLength: 1 }) }).map((val) => ({ tag: "http-get", val })),
  fc.record({ host: fc.constantFrom("", "10.0.0.1"), port }).map((val) => ({ tag: "tcp-socket", val })),
  fc.record({ port: arbOf(s32), service: fc.option(someString, { nil: undefined }) }).map((val) => ({ tag: "grpc", val })),
  fc.bigInt({ min: -5n, max: 5n }).map((val) => ({ tag: "sleep", val })),
);
const small = fc.oneof(fc.integer({ min: -2, max: 12 }), arbOf(s32));
const probe = fc.record({
  handler, initialDelaySeconds: small, timeoutSeconds: small, periodSeconds: small, successThreshold: small, failureThreshold: small,
  terminationGracePeriodSeconds: fc.option(fc.bigInt({ min: -2n, max: 40n }), { nil: undefined }),
});
const envSource = fc.oneof(
  fc.constantFrom("metadata.name", "status.podIP", "metadata.labels['a']", "x").map((val) => ({ tag: "field-ref", val })),
  fc.record({ containerName: fc.constantFrom("", "app", "nope"), resource: fc.constantFrom("limits.cpu", "requests.memory", "x"), divisor: fc.constantFrom("", "1", "1Mi", "0") }).map((val) => ({ tag: "resource-field-ref", val })),
);
const container = fc.record({
  name, image: fc.constantFrom("busybox", "", " x"), command: fc.array(someString, { maxLength: 2 }), args: fc.array(someString, { maxLength: 2 }),
  env: fc.array(fc.record({ name: someString, value: someString, valueFrom: fc.option(envSource, { nil: undefined }) }), { maxLength: 2 }), workingDir: fc.option(someString, { nil: undefined }),
  requests: fc.array(quantity, { maxLength: 3 }), limits: fc.array(quantity, { maxLength: 3 }), restartOnResize: fc.array(fc.constantFrom("cpu", "memory", "gpu"), { maxLength: 2 }),
  ports: fc.array(fc.record({ name: fc.constantFrom("", "web"), containerPort: arbOf(s32), hostPort: arbOf(s32), protocol: fc.constantFrom("TCP", "UDP", ""), hostIp: fc.constantFrom("", "::1") }), { maxLength: 2 }),
  startupProbe: fc.option(probe, { nil: undefined }), livenessProbe: fc.option(probe, { nil: undefined }), readinessProbe: fc.option(probe, { nil: undefined }),
  restartPolicy: fc.constantFrom("", "", "Always", "Never"),
  postStart: fc.option(handler, { nil: undefined }), preStop: fc.option(handler, { nil: undefined }),
});
const smallS64 = fc.oneof(fc.bigInt({ min: -5n, max: 100n }), fc.constantFrom(-(2n ** 63n), 2n ** 63n - 1n));
const podSpec = fc.record({
  uid, namespace: fc.constantFrom("default", "kube-system", "", "NS"), name: fc.oneof(fc.constantFrom("p1", "p2", "p3"), someString),
  restartPolicy: fc.constantFrom("", "Always", "OnFailure", "Never", "Sometimes"), terminationGracePeriodSeconds: fc.option(smallS64, { nil: undefined }),
  hostNetwork: fc.boolean(), containers: fc.array(container, { maxLength: 3 }), deletionGracePeriodSeconds: fc.option(smallS64, { nil: undefined }),
  reportedTerminalPhase: fc.option(fc.constantFrom("pending", "running", "succeeded", "failed", "unknown"), { nil: undefined }),
  priority: arbOf(s32), staticPod: fc.boolean(), toleratesMemoryPressure: fc.boolean(),
  readinessGates: fc.array(fc.record({ conditionType: someString, status: fc.constantFrom("", "True", "False") }), { maxLength: 2 }),
  initContainers: fc.array(container, { maxLength: 2 }),
  volumes: fc.array(fc.record({
    name: fc.constantFrom("v", "w", "", "Bad_Name"),
    kind: fc.constantFrom("empty-dir", "host-path", "config-map", "secret", "downward-api", "projected", "persistent-volume-claim"),
    used: fc.boolean(),
    sourceVersion: fc.constantFrom("", "v1", "v2"),
    sizeLimit: fc.constantFrom("", "1Mi", "0", "-1", "bogus", "9Ei"),
  }), { maxLength: 3 }),
});
const nsTime = fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 62n }), fc.constantFrom(0n, -1n, 1764000000000000000n));
const sandbox = fc.record({
  id: fc.constantFrom("s1", "s2", "s3", ""), podUid: uid, podName: name, podNamespace: fc.constantFrom("default", ""), attempt: arbOf(u32),
  state: fc.constantFrom("ready", "not-ready"), createdAtNs: nsTime, terminationGracePeriodSeconds: fc.option(smallS64, { nil: undefined }),
});
const containerObs = fc.record({
  id: fc.constantFrom("c1", "c2", "c3", "c4", ""), sandboxId: fc.constantFrom("s1", "s2", "s3", "nope"), podUid: uid, name, attempt: arbOf(u32),
  state: fc.constantFrom("created", "running", "exited", "unknown"), image: fc.constantFrom("busybox", ""), specHash: someString, exitCode: arbOf(s32),
  reason: fc.constantFrom("", "OOMKilled", "Error", "Completed"), message: someString, createdAtNs: nsTime, startedAtNs: nsTime, finishedAtNs: nsTime,
});
const now = fc.nat({ max: 2 ** 50 });
const snapshot = fc.record({ listedAtMs: now.map(BigInt), sandboxes: fc.array(sandbox, { maxLength: 4 }), containers: fc.array(containerObs, { maxLength: 6 }), uninspectedPodUids: fc.array(uid, { maxLength: 2 }) });
const actionError = record([["kind", enumOf(["runtime", "image-pull", "timeout", "other", "config"])], ["grpcCode", u32], ["message", str]]);
const outcome = fc.oneof(someString.map((val) => ({ tag: "ok", val })), arbOf(actionError).map((val) => ({ tag: "err", val })));
const stats = arbOf(record([
  ["signals", list(record([["signal", str], ["available", s64], ["capacity", s64]]))],
  ["pods", list(record([["uid", str], ["memoryWorkingSetBytes", s64], ["ephemeralStorageBytes", s64], ["processCount", s64], ["containers", list(record([["name", str], ["memoryWorkingSetBytes", s64]]))]]))],
  ["volumes", list(record([["podUid", str], ["volume", str], ["usedBytes", s64]]))],
]));

const step = fc.oneof(
  fc.record({ op: fc.constant("pods"), now, pods: fc.array(podSpec, { maxLength: 4 }) }),
  fc.record({ op: fc.constant("relist"), now, packed: fc.boolean(), snapshot }),
  fc.record({ op: fc.constant("results"), now, results: fc.array(fc.record({ pick: fc.nat(), madeUp: fc.boolean(), outcome }), { maxLength: 4 }) }),
  fc.record({ op: fc.constant("stats"), now, packed: fc.boolean(), stats }),
  fc.record({ op: fc.constant("probes"), now, results: fc.array(fc.record({ pick: fc.nat(), madeUp: fc.boolean(), outcome: fc.constantFrom("success", "warning", "failure", "unknown", "error"), output: someString }), { maxLength: 4 }) }),
  fc.record({ op: fc.constant("poll"), now }),
);

export const arbitrary = fc.record({ maxPods: fc.constantFrom(0, 1, 2, 110), steps: fc.array(step, { minLength: 1, maxLength: 25 }) });

void bool; void option; void u64;

export async function property({ maxPods, steps }) {
  const core = await CoreAgent.create({ nodeName: "fuzz", ...DEFAULT_CORE_CONFIG, maxPods });
  core.configureNode({
    memoryCapacityBytes: 4 * 2 ** 30, allocatableMemoryBytes: 3 * 2 ** 30, allocatableCpuMilli: 2000, evictionHard: "memory.available<100Mi",
    evictionSoft: "", evictionSoftGracePeriod: "", evictionMinimumReclaim: "", evictionPressureTransitionPeriodMs: 300_000,
    evictionMaxPodGracePeriodSeconds: 0, evictionIntervalMs: 10_000,
  });
  let polled = [];
  let at = "";
  try {
    for (const s of steps) {
      at = s.op;
      if (s.op === "pods") core.handlePods(s.now, s.pods);
      else if (s.op === "relist") s.packed ? core.handleSnapshot(s.now, s.snapshot) : core.handleRelist(s.now, s.snapshot);
      else if (s.op === "results") {
        const results = s.results.map((r) => ({ actionId: r.madeUp || polled.length === 0 ? BigInt(r.pick) : polled[r.pick % polled.length], outcome: r.outcome }));
        core.handleActionResults(s.now, results);
      } else if (s.op === "probes") {
        const results = s.results.map((r) => ({ actionId: r.madeUp || polled.length === 0 ? BigInt(r.pick) : polled[r.pick % polled.length], outcome: r.outcome, output: r.output }));
        core.handleProbeResults(s.now, results);
      } else if (s.op === "stats") s.packed ? core.handleNodeStats(s.now, s.stats) : core.handleNodeStatsTyped(s.now, s.stats);
      else {
        polled = core.pollActions(s.now).map((a) => a.id);
        core.pollDeadline();
      }
    }
  } catch (error) {
    if (error instanceof CoreTrapError) throw new Error(`the core trapped in ${at}: ${error.message}`);
    // jco refusing a value it cannot lower is the host's refusal, not the core's failure.
    if (error instanceof RangeError || error instanceof TypeError) return;
    throw error;
  }
}
