// The pure interfaces' signatures as canonical-ABI types, written out from wit/*.wit, for a host
// that has no component model: the generated .wast driver (wast-driver.mjs) lowers arguments
// and checks results by these layouts. If they disagree with the component's, the core module
// reads garbage and the wast host's answers differ from jco's, which the tests catch.

export const str = { k: "string" };
export const bool = { k: "bool" };
export const u32 = { k: "u32" };
export const s32 = { k: "s32" };
export const u64 = { k: "u64" };
export const s64 = { k: "s64" };
export const f32 = { k: "f32" };
export const list = (of) => ({ k: "list", of });
export const record = (fields) => ({ k: "record", fields });
export const enumOf = (cases) => ({ k: "enum", cases });
export const option = (of) => ({ k: "option", of });
export const result = (ok, err) => ({ k: "result", ok, err });
export const variant = (cases) => ({ k: "variant", cases });

const cpuInfo = record([["id", u32], ["core", u32], ["socket", u32], ["numaNode", u32]]);
const topologyHint = record([["numaMask", u64], ["preferred", bool]]);
const resourceHints = record([["resource", str], ["noPreference", bool], ["hints", list(topologyHint)]]);
const topologyPolicy = enumOf(["none", "best-effort", "restricted", "single-numa-node"]);
const resourceQuantity = record([["name", str], ["quantity", str]]);
const containerResources = record([["name", str], ["requests", list(resourceQuantity)], ["limits", list(resourceQuantity)]]);
const podResources = record([["uid", str], ["priority", s32], ["staticPod", bool], ["containers", list(containerResources)]]);
const cgroupValues = record([["cpuShares", u64], ["cpuWeight", u64], ["cpuQuotaUs", s64], ["cpuPeriodUs", u64], ["memoryLimitBytes", s64]]);
const qosClass = enumOf(["guaranteed", "burstable", "best-effort"]);
const containerOomScoreAdj = record([["name", str], ["oomScoreAdj", s32]]);
const containerStatusState = enumOf(["waiting", "running", "terminated"]);
const podPhase = enumOf(["pending", "running", "succeeded", "failed", "unknown"]);
const containerPhaseState = record([["name", str], ["state", containerStatusState], ["exitCode", s32], ["terminatedBefore", bool]]);
const initContainerPhaseSpec = record([["name", str], ["sidecar", bool]]);
const initContainerPhaseState = record([
  ["name", str], ["state", containerStatusState], ["exitCode", s32], ["terminatedBefore", bool], ["lastExitCode", s32], ["started", bool],
]);
const containerKind = enumOf(["regular", "init", "sidecar"]);
const probeType = enumOf(["startup", "liveness", "readiness"]);
const probeOutcome = enumOf(["success", "warning", "failure", "unknown", "error"]);
const probeResult = enumOf(["none", "success", "failure", "unknown"]);
const probeWorkerState = record([["containerId", str], ["result", probeResult], ["lastResult", probeResult], ["resultRun", s32], ["onHold", bool]]);
const probedContainer = record([["containerId", str], ["state", containerStatusState], ["startedAtNs", s64], ["started", bool]]);
const podProbeContext = enumOf(["running", "stopping", "finished"]);
const tickOutcome = record([["worker", probeWorkerState], ["decision", enumOf(["wait", "run", "stop"])], ["resultChanged", bool]]);
const recordedOutcome = record([["worker", probeWorkerState], ["resultChanged", bool], ["kill", bool]]);
const containerState = enumOf(["created", "running", "exited", "unknown"]);
const latestContainer = record([["state", containerState], ["exitCode", s32]]);
const backOffEntry = record([["durationMs", u64], ["lastUpdateMs", u64]]);
const thresholdValue = variant([["quantity", s64], ["percentage", f32]]);
const threshold = record([["signal", str], ["value", thresholdValue], ["gracePeriodMs", u64], ["minReclaim", option(thresholdValue)]]);
const rankedPod = record([["uid", str], ["critical", bool]]);
const metThreshold = record([["threshold", threshold], ["firstObservedMs", u64], ["gracePeriodMet", bool]]);
const signalObservation = record([["signal", str], ["available", s64], ["capacity", s64]]);
const containerUsage = record([["name", str], ["memoryWorkingSetBytes", s64]]);
const podUsage = record([
  ["uid", str], ["memoryWorkingSetBytes", s64], ["ephemeralStorageBytes", s64], ["processCount", s64], ["containers", list(containerUsage)],
]);
const sandboxObservation = record([
  ["id", str], ["podUid", str], ["podName", str], ["podNamespace", str], ["attempt", u32], ["state", enumOf(["ready", "not-ready"])],
  ["createdAtNs", s64], ["terminationGracePeriodSeconds", option(s64)],
]);
const containerObservation = record([
  ["id", str], ["sandboxId", str], ["podUid", str], ["name", str], ["attempt", u32], ["state", containerState], ["image", str],
  ["specHash", str], ["exitCode", s32], ["reason", str], ["message", str], ["createdAtNs", s64], ["startedAtNs", s64], ["finishedAtNs", s64],
]);
const runtimeSnapshot = record([
  ["listedAtMs", u64], ["sandboxes", list(sandboxObservation)], ["containers", list(containerObservation)], ["uninspectedPodUids", list(str)],
]);
const lifecycleEvent = record([["podUid", str], ["containerId", str], ["eventType", enumOf(["container-started", "container-died", "container-removed"])]]);

const gcImage = record([["id", str], ["sizeBytes", u64], ["inUse", bool], ["pinned", bool], ["firstDetectedMs", u64], ["lastUsedMs", u64]]);
const gcPolicy = record([["highThresholdPercent", u32], ["lowThresholdPercent", u32], ["minimumAgeMs", u64], ["maximumAgeMs", u64]]);
const gcPlan = record([["removeForAge", list(str)], ["removeForSpace", list(str)], ["usagePercent", u32], ["bytesToFree", u64], ["bytesFreed", u64]]);

const fn = (iface, name, params, res) => ({ export: `nanolet:core/${iface}@0.1.0#${name}`, params, result: res });

/** By [interface, function] as jco names them (cases.mjs `fn`). */
export const SIGNATURES = {
  "qos.podQosClass": fn("qos", "pod-qos-class", [podResources], result(qosClass, str)),
  "qos.oomScoreAdjust": fn("qos", "oom-score-adjust", [podResources, u64], result(list(containerOomScoreAdj), str)),
  "cgroups.containerCgroup": fn("cgroups", "container-cgroup", [containerResources], result(cgroupValues, str)),
  "cgroups.podCgroup": fn("cgroups", "pod-cgroup", [podResources], result(cgroupValues, str)),
  "cgroups.podCgroupParent": fn("cgroups", "pod-cgroup-parent", [podResources], result(str, str)),
  "status.podPhaseOf": fn("status", "pod-phase-of", [str, list(initContainerPhaseSpec), list(str), list(initContainerPhaseState), list(containerPhaseState), bool, bool], result(podPhase, str)),
  "restart.shouldRestart": fn("restart", "should-restart", [containerKind, str, bool, option(latestContainer)], result(bool, str)),
  "probe.tick": fn("probe", "tick", [probeType, s32, probeWorkerState, option(probedContainer), podProbeContext, bool, u64], result(tickOutcome, str)),
  "probe.recordOutcome": fn("probe", "record-outcome", [probeType, s32, s32, probeWorkerState, str, probeOutcome], result(recordedOutcome, str)),
  "probe.firstTickAt": fn("probe", "first-tick-at", [str, str, probeType, s32, u64, u64], result(u64, str)),
  "probe.nextTickAt": fn("probe", "next-tick-at", [u64, s32, u64], result(u64, str)),
  "restart.backOffStep": fn("restart", "back-off-step", [option(backOffEntry), u64, u64, u64, u64], result(backOffEntry, str)),
  "restart.inBackOff": fn("restart", "in-back-off", [backOffEntry, u64, u64, u64], result(bool, str)),
  "eviction.parseThresholds": fn("eviction", "parse-thresholds", [str, str, str, str, list(str)], result(list(threshold), str)),
  "eviction.thresholdsMet": fn("eviction", "thresholds-met", [list(threshold), list(signalObservation), list(metThreshold), u64], result(list(metThreshold), str)),
  "imageGc.plan": fn("image-gc", "plan", [list(gcImage), u64, u64, gcPolicy, u64, u64, bool], result(gcPlan, str)),
  "eviction.rankPods": fn("eviction", "rank-pods", [str, list(podResources), list(podUsage)], result(list(rankedPod), str)),
  "pleg.relistEvents": fn("pleg", "relist-events", [runtimeSnapshot, runtimeSnapshot], result(list(lifecycleEvent), str)),
  "hardware.takeCpus": fn("hardware", "take-cpus", [list(cpuInfo), str, u32], result(str, str)),
  "hardware.mergeHints": fn("hardware", "merge-hints", [topologyPolicy, u64, list(resourceHints)], record([["hint", topologyHint], ["admit", bool]])),
};

const alignTo = (n, a) => Math.ceil(n / a) * a;

/** Canonical-ABI alignment in bytes. */
export function alignment(t) {
  switch (t.k) {
    case "bool": return 1;
    case "u32": case "s32": case "f32": case "string": case "list": return 4;
    case "u64": case "s64": return 8;
    case "enum": return 1;
    case "record": return Math.max(1, ...t.fields.map(([, f]) => alignment(f)));
    default: return Math.max(1, ...cases(t).map((c) => (c ? alignment(c) : 1)));
  }
}

/** Canonical-ABI size in bytes. */
export function size(t) {
  switch (t.k) {
    case "bool": case "enum": return 1;
    case "u32": case "s32": case "f32": return 4;
    case "u64": case "s64": case "string": case "list": return 8;
    case "record": {
      let at = 0;
      for (const [, f] of t.fields) at = alignTo(at, alignment(f)) + size(f);
      return alignTo(at, alignment(t));
    }
    default: return alignTo(payloadOffset(t) + Math.max(0, ...cases(t).map((c) => (c ? size(c) : 0))), alignment(t));
  }
}

/** The case types of a variant-like type (null for a case without payload). */
export function cases(t) {
  if (t.k === "option") return [null, t.of];
  if (t.k === "result") return [t.ok, t.err];
  if (t.k === "variant") return t.cases.map(([, c]) => c);
  throw new Error(`not a variant: ${t.k}`);
}

/** Where a variant's payload starts (its discriminant is one byte: fewer than 256 cases). */
export function payloadOffset(t) {
  return alignTo(1, Math.max(1, ...cases(t).map((c) => (c ? alignment(c) : 1))));
}

/** Field offsets of a record. */
export function fieldOffsets(t) {
  const out = [];
  let at = 0;
  for (const [, f] of t.fields) {
    at = alignTo(at, alignment(f));
    out.push(at);
    at += size(f);
  }
  return out;
}

/** The core wasm types a value flattens to. */
export function flatten(t) {
  switch (t.k) {
    case "bool": case "u32": case "s32": case "enum": return ["i32"];
    case "u64": case "s64": return ["i64"];
    case "f32": return ["f32"];
    case "string": case "list": return ["i32", "i32"];
    case "record": return t.fields.flatMap(([, f]) => flatten(f));
    default: {
      const joined = [];
      for (const c of cases(t)) {
        if (!c) continue;
        flatten(c).forEach((ft, i) => {
          if (i >= joined.length) joined.push(ft);
          else if (joined[i] !== ft) joined[i] = (joined[i] === "i32" && ft === "f32") || (joined[i] === "f32" && ft === "i32") ? "i32" : "i64";
        });
      }
      return ["i32", ...joined];
    }
  }
}
