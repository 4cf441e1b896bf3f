// The pure interfaces' cases, shared by every host that runs the core (tests/library/README.md):
// Node.js through jco, Chromium through jco, and the core module alone under wabt. Values are
// jco's JavaScript shapes (u64/s64 as BigInt, enums as strings, variants as {tag, val}, none as
// undefined). `ok` is the exact result; `err` the exact error string. Expectations come from the
// upstream rules in ../shared/design/KUBELET-FACTS.md, worked out by hand in the comments.

const Mi = 1024n * 1024n;
const Gi = 1024n * Mi;

const q = (name, quantity) => ({ name, quantity });
const container = (name, requests = {}, limits = {}) => ({
  name,
  requests: Object.entries(requests).map(([k, v]) => q(k, v)),
  limits: Object.entries(limits).map(([k, v]) => q(k, v)),
});
const pod = (uid, containers, priority = 0, staticPod = false) => ({ uid, priority, staticPod, containers });

const cgroup = (cpuShares, cpuWeight, cpuQuotaUs, memoryLimitBytes) => ({
  cpuShares, cpuWeight, cpuQuotaUs, cpuPeriodUs: 100000n, memoryLimitBytes,
});

const QUANTITY_RULE = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

// ---- qos ----------------------------------------------------------------------------------
const qos = [
  { id: "qos/guaranteed", fn: ["qos", "podQosClass"], ok: "guaranteed",
    args: [pod("u", [container("c", { cpu: "500m", memory: "128Mi" }, { cpu: "500m", memory: "128Mi" })])] },
  { id: "qos/guaranteed-from-limits", fn: ["qos", "podQosClass"], ok: "guaranteed", // requests default to limits
    args: [pod("u", [container("c", {}, { cpu: "1", memory: "64Mi" })])] },
  { id: "qos/burstable-request-only", fn: ["qos", "podQosClass"], ok: "burstable",
    args: [pod("u", [container("c", { memory: "64Mi" })])] },
  { id: "qos/burstable-request-below-limit", fn: ["qos", "podQosClass"], ok: "burstable",
    args: [pod("u", [container("c", { cpu: "250m", memory: "64Mi" }, { cpu: "500m", memory: "64Mi" })])] },
  { id: "qos/burstable-one-of-two", fn: ["qos", "podQosClass"], ok: "burstable",
    args: [pod("u", [container("a", {}, { cpu: "1", memory: "1Gi" }), container("b")])] },
  { id: "qos/best-effort", fn: ["qos", "podQosClass"], ok: "best-effort", args: [pod("u", [container("a"), container("b")])] },
  { id: "qos/best-effort-other-resources", fn: ["qos", "podQosClass"], ok: "best-effort", // only cpu and memory count
    args: [pod("u", [container("a", { "ephemeral-storage": "1Gi" })])] },
  { id: "qos/bad-quantity", fn: ["qos", "podQosClass"],
    err: `spec.containers[0].resources.limits[memory]: Invalid value: "12x": ${QUANTITY_RULE}`,
    args: [pod("u", [container("c", {}, { memory: "12x" })])] },
  { id: "qos/bad-negative", fn: ["qos", "podQosClass"],
    err: 'spec.containers[1].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0',
    args: [pod("u", [container("a"), container("b", { cpu: "-1" })])] },
  { id: "qos/bad-request-above-limit", fn: ["qos", "podQosClass"],
    err: 'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1',
    args: [pod("u", [container("c", { cpu: "2" }, { cpu: "1" })])] },
  { id: "qos/bad-extended-resource-overcommit", fn: ["qos", "podQosClass"],
    err: 'spec.containers[0].resources.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2',
    args: [pod("u", [container("c", { "example.com/gpu": "1" }, { "example.com/gpu": "2" })])] },
  { id: "qos/bad-no-containers", fn: ["qos", "podQosClass"], err: "spec.containers: Required value", args: [pod("u", [])] },
  { id: "qos/bad-duplicate-name", fn: ["qos", "podQosClass"], err: 'spec.containers[1].name: Duplicate value: "a"',
    args: [pod("u", [container("a"), container("a")])] },

  // OOM score adjust on a 4Gi node.
  { id: "oom/guaranteed", fn: ["qos", "oomScoreAdjust"], ok: [{ name: "c", oomScoreAdj: -997 }],
    args: [pod("u", [container("c", {}, { cpu: "1", memory: "1Gi" })]), 4n * Gi] },
  { id: "oom/best-effort", fn: ["qos", "oomScoreAdjust"], ok: [{ name: "c", oomScoreAdj: 1000 }],
    args: [pod("u", [container("c")]), 4n * Gi] },
  // 1000 - 1000 * 1Gi / 4Gi = 750; the container without a memory request: 1000 -> 999.
  { id: "oom/burstable", fn: ["qos", "oomScoreAdjust"], ok: [{ name: "a", oomScoreAdj: 750 }, { name: "b", oomScoreAdj: 999 }],
    args: [pod("u", [container("a", { memory: "1Gi" }), container("b", { cpu: "100m" })]), 4n * Gi] },
  // 1000 - 1000 * 4Gi / 4Gi = 0, raised to 1000 + (-997) = 3.
  { id: "oom/burstable-floor", fn: ["qos", "oomScoreAdjust"], ok: [{ name: "a", oomScoreAdj: 3 }],
    args: [pod("u", [container("a", { memory: "4Gi" })]), 4n * Gi] },
  // 1000 - 1000 * 3Gi / 4Gi = 250.
  { id: "oom/burstable-limit-as-request", fn: ["qos", "oomScoreAdjust"], ok: [{ name: "a", oomScoreAdj: 250 }],
    args: [pod("u", [container("a", { cpu: "100m" }, { memory: "3Gi" })]), 4n * Gi] },
  { id: "oom/node-critical", fn: ["qos", "oomScoreAdjust"], ok: [{ name: "a", oomScoreAdj: -997 }],
    args: [pod("u", [container("a")], 2000001000), 4n * Gi] },
  { id: "oom/system-critical-is-not-node-critical", fn: ["qos", "oomScoreAdjust"], ok: [{ name: "a", oomScoreAdj: 1000 }],
    args: [pod("u", [container("a")], 2000000000), 4n * Gi] },
  { id: "oom/unknown-capacity", fn: ["qos", "oomScoreAdjust"], ok: [{ name: "a", oomScoreAdj: 999 }],
    args: [pod("u", [container("a", { memory: "1Gi" })]), 0n] },
  { id: "oom/bad-quantity", fn: ["qos", "oomScoreAdjust"],
    err: `spec.containers[0].resources.requests[memory]: Invalid value: "1 Gi": ${QUANTITY_RULE}`,
    args: [pod("u", [container("a", { memory: "1 Gi" })]), 4n * Gi] },
  { id: "oom/bad-empty-name", fn: ["qos", "oomScoreAdjust"], err: "spec.containers[1].name: Required value",
    args: [pod("u", [container("a"), container("")]), 4n * Gi] },
];

// ---- cgroups ------------------------------------------------------------------------------
// shares = milliCPU * 1024 / 1000 within [2, 262144]; weight = 1 + (shares - 2) * 9999 / 262142;
// quota = milliCPU * 100000 / 1000, at least 1000.
const cgroups = [
  // 250m: shares 256, weight 1 + 254 * 9999 / 262142 = 10.
  { id: "cgroup/cpu-request", fn: ["cgroups", "containerCgroup"], ok: cgroup(256n, 10n, 0n, 0n),
    args: [container("c", { cpu: "250m" })] },
  // limit 500m: quota 50000; memory 128Mi.
  { id: "cgroup/limits", fn: ["cgroups", "containerCgroup"], ok: cgroup(256n, 10n, 50000n, 128n * Mi),
    args: [container("c", { cpu: "250m" }, { cpu: "500m", memory: "128Mi" })] },
  // 1m: shares 1 -> 2, weight 1; quota 100 -> 1000.
  { id: "cgroup/minimums", fn: ["cgroups", "containerCgroup"], ok: cgroup(2n, 1n, 1000n, 0n),
    args: [container("c", {}, { cpu: "1m" })] },
  { id: "cgroup/nothing", fn: ["cgroups", "containerCgroup"], ok: cgroup(2n, 1n, 0n, 0n), args: [container("c")] },
  // 1000 cpus: 1024000 shares -> 262144, weight 10000.
  { id: "cgroup/maximum-shares", fn: ["cgroups", "containerCgroup"], ok: cgroup(262144n, 10000n, 0n, 0n),
    args: [container("c", { cpu: "1000" })] },
  // 1.5Gi; 100m of a byte rounds up to 1 byte, as Quantity.Value() does.
  { id: "cgroup/fractional-memory", fn: ["cgroups", "containerCgroup"], ok: cgroup(2n, 1n, 0n, 1610612736n),
    args: [container("c", {}, { memory: "1.5Gi" })] },
  { id: "cgroup/sub-byte-memory", fn: ["cgroups", "containerCgroup"], ok: cgroup(2n, 1n, 0n, 1n),
    args: [container("c", {}, { memory: "100m" })] },
  { id: "cgroup/bad-quantity", fn: ["cgroups", "containerCgroup"],
    err: `resources.limits[cpu]: Invalid value: "abc": ${QUANTITY_RULE}`, args: [container("c", {}, { cpu: "abc" })] },
  { id: "cgroup/bad-negative", fn: ["cgroups", "containerCgroup"],
    err: 'resources.limits[memory]: Invalid value: "-64Mi": must be greater than or equal to 0', args: [container("c", {}, { memory: "-64Mi" })] },
  { id: "cgroup/bad-request-above-limit", fn: ["cgroups", "containerCgroup"],
    err: 'resources.requests: Invalid value: "500m": must be less than or equal to cpu limit of 250m',
    args: [container("c", { cpu: "500m" }, { cpu: "250m" })] },
  // Sum of requests 400m: shares 409, weight 1 + 407 * 9999 / 262142 = 16; limits 600m and
  // 128Mi, every container limited.
  { id: "pod-cgroup/burstable", fn: ["cgroups", "podCgroup"], ok: cgroup(409n, 16n, 60000n, 128n * Mi),
    args: [pod("u", [container("a", { cpu: "100m" }, { cpu: "200m", memory: "64Mi" }), container("b", { cpu: "300m" }, { cpu: "400m", memory: "64Mi" })])] },
  // One container without limits leaves the pod without quota and memory limit.
  { id: "pod-cgroup/one-unlimited", fn: ["cgroups", "podCgroup"], ok: cgroup(409n, 16n, 0n, 0n),
    args: [pod("u", [container("a", { cpu: "100m" }, { cpu: "200m", memory: "64Mi" }), container("b", { cpu: "300m" })])] },
  { id: "pod-cgroup/best-effort", fn: ["cgroups", "podCgroup"], ok: cgroup(2n, 1n, 0n, 0n), args: [pod("u", [container("a")])] },
  { id: "pod-cgroup/bad-quantity", fn: ["cgroups", "podCgroup"],
    err: `spec.containers[0].resources.requests[cpu]: Invalid value: "1..5": ${QUANTITY_RULE}`,
    args: [pod("u", [container("a", { cpu: "1..5" })])] },
  { id: "pod-cgroup/bad-request-above-limit", fn: ["cgroups", "podCgroup"],
    err: 'spec.containers[1].resources.requests: Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi',
    args: [pod("u", [container("a"), container("b", { memory: "2Gi" }, { memory: "1Gi" })])] },
  { id: "cgroup-parent/guaranteed", fn: ["cgroups", "podCgroupParent"], ok: "/kubepods/pod1234",
    args: [pod("1234", [container("a", {}, { cpu: "1", memory: "1Gi" })])] },
  { id: "cgroup-parent/burstable", fn: ["cgroups", "podCgroupParent"], ok: "/kubepods/burstable/pod1234",
    args: [pod("1234", [container("a", { cpu: "1" })])] },
  { id: "cgroup-parent/best-effort", fn: ["cgroups", "podCgroupParent"], ok: "/kubepods/besteffort/pod1234",
    args: [pod("1234", [container("a")])] },
  { id: "cgroup-parent/bad-uid", fn: ["cgroups", "podCgroupParent"], err: "metadata.uid: Required value", args: [pod("", [container("a")])] },
  { id: "cgroup-parent/bad-quantity", fn: ["cgroups", "podCgroupParent"],
    err: `spec.containers[0].resources.limits[cpu]: Invalid value: "one": ${QUANTITY_RULE}`, args: [pod("1234", [container("a", {}, { cpu: "one" })])] },
];

// ---- status -------------------------------------------------------------------------------
const st = (name, state, exitCode = 0, terminatedBefore = false) => ({ name, state, exitCode, terminatedBefore });
/** An init container's status: `last` is lastState.terminated's exit code (undefined: none). */
const ist = (name, state, { exitCode = 0, last, started = false } = {}) =>
  ({ name, state, exitCode, terminatedBefore: last !== undefined, lastExitCode: last ?? 0, started });
const init = (name, sidecar = false) => ({ name, sidecar });
const phaseCall = (policy, names, statuses, terminal, { inits = [], initStatuses = [], initialized = false } = {}) =>
  [policy, inits, names, initStatuses, statuses, initialized, terminal];
const phase = (id, policy, names, statuses, terminal, expected, withInit) =>
  ({ id: `phase/${id}`, fn: ["status", "podPhaseOf"], args: phaseCall(policy, names, statuses, terminal, withInit), ok: expected });
const phaseErr = (id, args, err) => ({ id: `phase/${id}`, fn: ["status", "podPhaseOf"], args, err });
const status = [
  phase("running", "Always", ["a"], [st("a", "running")], false, "running"),
  phase("waiting-to-start", "Always", ["a", "b"], [st("a", "running"), st("b", "waiting")], false, "pending"),
  phase("no-status-yet", "Always", ["a", "b"], [st("a", "running")], false, "pending"),
  phase("crash-looping", "Always", ["a"], [st("a", "waiting", 0, true)], false, "running"),
  phase("always-all-exited", "Always", ["a"], [st("a", "terminated", 0)], false, "running"),
  phase("default-policy", "", ["a"], [st("a", "terminated", 0)], false, "running"),
  phase("never-succeeded", "Never", ["a", "b"], [st("a", "terminated", 0), st("b", "terminated", 0)], false, "succeeded"),
  phase("never-failed", "Never", ["a", "b"], [st("a", "terminated", 0), st("b", "terminated", 1)], false, "failed"),
  phase("on-failure-restarting", "OnFailure", ["a"], [st("a", "terminated", 1)], false, "running"),
  phase("on-failure-succeeded", "OnFailure", ["a"], [st("a", "terminated", 0)], false, "succeeded"),
  phase("terminal-succeeded", "Always", ["a"], [st("a", "terminated", 0)], true, "succeeded"),
  phase("terminal-failed", "Always", ["a"], [st("a", "terminated", 137)], true, "failed"),
  phase("terminal-never-started", "Always", ["a"], [], true, "failed"),
  // Init containers (upstream getPhase's table): not done keeps the pod Pending.
  phase("init-not-started", "Always", ["a"], [], false, "pending", { inits: [init("i")] }),
  phase("init-running", "Always", ["a"], [], false, "pending", { inits: [init("i")], initStatuses: [ist("i", "running")] }),
  phase("init-waiting-first-time", "Always", ["a"], [], false, "pending", { inits: [init("i")], initStatuses: [ist("i", "waiting")] }),
  phase("init-done-regular-running", "Always", ["a"], [st("a", "running")], false, "running", { inits: [init("i")], initStatuses: [ist("i", "terminated")] }),
  phase("init-second-pending", "Always", ["a"], [], false, "pending", { inits: [init("i"), init("j")], initStatuses: [ist("i", "terminated")] }),
  phase("init-failed-never", "Never", ["a"], [], false, "failed", { inits: [init("i")], initStatuses: [ist("i", "terminated", { exitCode: 1 })] }),
  phase("init-failed-restarting-always", "Always", ["a"], [], false, "pending", { inits: [init("i")], initStatuses: [ist("i", "waiting", { last: 1 })] }),
  phase("init-failed-before-never", "Never", ["a"], [], false, "failed", { inits: [init("i")], initStatuses: [ist("i", "waiting", { last: 2 })] }),
  phase("init-failed-on-failure", "OnFailure", ["a"], [], false, "pending", { inits: [init("i")], initStatuses: [ist("i", "terminated", { exitCode: 1 })] }),
  // Sidecars: started ones count as running; one not started keeps a new pod Pending.
  phase("sidecar-started", "Always", ["a"], [st("a", "running")], false, "running", { inits: [init("s", true)], initStatuses: [ist("s", "running", { started: true })] }),
  phase("sidecar-not-started", "Always", ["a"], [], false, "pending", { inits: [init("s", true)], initStatuses: [ist("s", "running")] }),
  phase("sidecar-not-started-initialized", "Always", ["a"], [st("a", "running")], false, "running",
    { inits: [init("s", true)], initStatuses: [ist("s", "running")], initialized: true }),
  phase("sidecar-restarting", "Always", ["a"], [st("a", "running")], false, "running", { inits: [init("s", true)], initStatuses: [ist("s", "waiting", { last: 1 })] }),
  phase("sidecar-outlives-job", "Never", ["a"], [st("a", "terminated", 0)], false, "succeeded", { inits: [init("s", true)], initStatuses: [ist("s", "terminated", { exitCode: 137 })] }),
  phase("sidecar-running-job-done", "Never", ["a"], [st("a", "terminated", 0)], false, "running", { inits: [init("s", true)], initStatuses: [ist("s", "running", { started: true })] }),
  phase("sidecar-no-status", "Always", ["a"], [st("a", "running")], false, "pending", { inits: [init("s", true)], initialized: true }),
  phaseErr("bad-policy", phaseCall("Sometimes", ["a"], [], false),
    'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'),
  phaseErr("bad-unknown-container", phaseCall("Always", ["a"], [st("b", "running")], false), 'status.containerStatuses[0].name: Not found: "b"'),
  phaseErr("bad-no-containers", phaseCall("Never", [], [], false), "spec.containers: Required value"),
  phaseErr("bad-duplicate-status", phaseCall("Never", ["a"], [st("a", "running"), st("a", "running")], false), 'status.containerStatuses[1].name: Duplicate value: "a"'),
  phaseErr("bad-init-named-as-container", phaseCall("Always", ["a"], [], false, { inits: [init("a")] }), 'spec.initContainers[0].name: Duplicate value: "a"'),
  phaseErr("bad-init-empty-name", phaseCall("Always", ["a"], [], false, { inits: [init("")] }), "spec.initContainers[0].name: Required value"),
  phaseErr("bad-unknown-init-status", phaseCall("Always", ["a"], [], false, { inits: [init("i")], initStatuses: [ist("a", "running")] }),
    'status.initContainerStatuses[0].name: Not found: "a"'),
];

// ---- restart ------------------------------------------------------------------------------
const should = (id, policy, latest, expected, deleted = false, kind = "regular") =>
  ({ id: `should-restart/${id}`, fn: ["restart", "shouldRestart"], args: [kind, policy, deleted, latest], ok: expected });
const entry = (durationMs, lastUpdateMs) => ({ durationMs, lastUpdateMs });
const step = (id, previous, eventTimeMs, nowMs, expected) =>
  ({ id: `back-off/${id}`, fn: ["restart", "backOffStep"], args: [previous, eventTimeMs, nowMs, 10000n, 300000n], ok: expected });
const waiting = (id, e, eventTimeMs, nowMs, expected) =>
  ({ id: `in-back-off/${id}`, fn: ["restart", "inBackOff"], args: [e, eventTimeMs, nowMs, 300000n], ok: expected });
const exited = (exitCode) => ({ state: "exited", exitCode });
const restart = [
  should("never-created", "Never", undefined, true),
  should("running", "Always", { state: "running", exitCode: 0 }, false),
  // Upstream recreates a container left created or unknown, whatever the policy.
  should("created", "Never", { state: "created", exitCode: 0 }, true),
  should("unknown", "Never", { state: "unknown", exitCode: 0 }, true),
  should("always-exit-0", "Always", exited(0), true),
  should("on-failure-exit-0", "OnFailure", exited(0), false),
  should("on-failure-exit-1", "OnFailure", exited(1), true),
  should("never-exit-1", "Never", exited(1), false),
  // A pod marked for deletion restarts nothing.
  should("pod-deleted", "Always", exited(1), false, true),
  should("pod-deleted-never-created", "Always", undefined, false, true),
  // Init containers run to success: done at exit 0 whatever the policy, again after a failure
  // unless the pod's policy is Never.
  should("init-exit-0-always", "Always", exited(0), false, false, "init"),
  should("init-exit-1-always", "Always", exited(1), true, false, "init"),
  should("init-exit-1-on-failure", "OnFailure", exited(1), true, false, "init"),
  should("init-exit-1-never", "Never", exited(1), false, false, "init"),
  should("init-never-created", "Never", undefined, true, false, "init"),
  should("init-running", "Always", { state: "running", exitCode: 0 }, false, false, "init"),
  should("init-pod-deleted", "Always", exited(1), false, true, "init"),
  // Sidecars are kept running whatever the pod's policy.
  should("sidecar-exit-0-never", "Never", exited(0), true, false, "sidecar"),
  should("sidecar-exit-1-on-failure", "OnFailure", exited(1), true, false, "sidecar"),
  should("sidecar-running", "Never", { state: "running", exitCode: 0 }, false, false, "sidecar"),
  should("sidecar-pod-deleted", "Always", exited(1), false, true, "sidecar"),
  { id: "should-restart/bad-policy", fn: ["restart", "shouldRestart"], args: ["regular", "always", false, undefined],
    err: 'restartPolicy: Unsupported value: "always": supported values: "Always", "OnFailure", "Never"' },
  { id: "should-restart/bad-policy-deleted-pod", fn: ["restart", "shouldRestart"], args: ["regular", "Sometimes", true, { state: "running", exitCode: 0 }],
    err: 'restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"' },
  { id: "should-restart/bad-policy-sidecar", fn: ["restart", "shouldRestart"], args: ["sidecar", "Sometimes", false, undefined],
    err: 'restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"' },
  // 10 s, doubling to 300 s; an entry more than 2 x 300 s older than the event starts over.
  step("first", undefined, 5000n, 6000n, entry(10000n, 6000n)),
  step("doubles", entry(10000n, 1000n), 5000n, 20000n, entry(20000n, 20000n)),
  step("capped", entry(160000n, 0n), 100000n, 100000n, entry(300000n, 100000n)),
  step("stays-capped", entry(300000n, 0n), 100000n, 100000n, entry(300000n, 100000n)),
  step("expired", entry(80000n, 0n), 600001n, 700000n, entry(10000n, 700000n)),
  step("not-yet-expired", entry(80000n, 0n), 600000n, 700000n, entry(160000n, 700000n)),
  { id: "back-off/bad-initial", fn: ["restart", "backOffStep"], args: [undefined, 0n, 0n, 0n, 300000n],
    err: "initial-ms: Invalid value: 0: must be greater than 0" },
  { id: "back-off/bad-initial-above-max", fn: ["restart", "backOffStep"], args: [undefined, 0n, 0n, 400000n, 300000n],
    err: "initial-ms: Invalid value: 400000: must be less than or equal to max-ms (300000)" },
  { id: "back-off/bad-previous-above-max", fn: ["restart", "backOffStep"], args: [entry(600000n, 0n), 0n, 0n, 10000n, 300000n],
    err: "previous.duration-ms: Invalid value: 600000: must be less than or equal to max-ms (300000)" },
  waiting("within", entry(10000n, 0n), 5000n, 14999n, true),
  waiting("over", entry(10000n, 0n), 5000n, 15000n, false),
  waiting("expired", entry(300000n, 0n), 600001n, 600002n, false),
  { id: "in-back-off/bad-max", fn: ["restart", "inBackOff"], args: [entry(10000n, 0n), 0n, 0n, 0n], err: "max-ms: Invalid value: 0: must be greater than 0" },
  { id: "in-back-off/bad-wait-above-max", fn: ["restart", "inBackOff"], args: [entry(400000n, 0n), 0n, 0n, 300000n],
    err: "entry.duration-ms: Invalid value: 400000: must be less than or equal to max-ms (300000)" },
];

// ---- probe --------------------------------------------------------------------------------
const worker = (containerId = "", result = "none", lastResult = "none", resultRun = 0, onHold = false) => ({ containerId, result, lastResult, resultRun, onHold });
const NEW = worker();
const S = 1_000_000_000n; // ns per second
const box = (containerId, state, startedAtNs, started) => ({ containerId, state, startedAtNs, started });
const tick = (id, type, delay, w, container, expected, { pod = "running", neverRestart = false, nowMs = 100_000n } = {}) =>
  ({ id: `probe-tick/${id}`, fn: ["probe", "tick"], args: [type, delay, w, container, pod, neverRestart, nowMs], ok: expected });
const ticked = (w, decision, resultChanged) => ({ worker: w, decision, resultChanged });
const rec = (id, type, success, failure, w, containerId, outcome, expected) =>
  ({ id: `probe-record/${id}`, fn: ["probe", "recordOutcome"], args: [type, success, failure, w, containerId, outcome], ok: expected });
const recorded = (w, resultChanged, kill) => ({ worker: w, resultChanged, kill });
const probe = [
  // A new container: the type's initial result (readiness failure, liveness success, startup unknown).
  tick("new-readiness", "readiness", 0, NEW, box("c1", "running", 90n * S, true), ticked(worker("c1", "failure"), "run", true)),
  tick("new-liveness", "liveness", 0, NEW, box("c1", "running", 90n * S, true), ticked(worker("c1", "success"), "run", true)),
  tick("new-startup", "startup", 0, NEW, box("c1", "running", 90n * S, false), ticked(worker("c1", "unknown"), "run", true)),
  tick("no-status", "readiness", 0, NEW, undefined, ticked(NEW, "wait", false)),
  tick("waiting-container", "liveness", 0, worker("c1", "success"), box("c1", "waiting", 0n, false), ticked(worker("c1", "success"), "wait", false)),
  // initialDelaySeconds: 95 s started, 10 s delay at 100 s: wait; at 106 s: run.
  tick("initial-delay", "liveness", 10, worker("c1", "success"), box("c1", "running", 95n * S, true), ticked(worker("c1", "success"), "wait", false)),
  tick("initial-delay-over", "liveness", 10, worker("c1", "success"), box("c1", "running", 95n * S, true), ticked(worker("c1", "success"), "run", false), { nowMs: 106_000n }),
  // Liveness and readiness wait for startup; a startup probe stops once started.
  tick("liveness-before-startup", "liveness", 0, worker("c1", "success"), box("c1", "running", 90n * S, false), ticked(worker("c1", "success"), "wait", false)),
  tick("startup-after-started", "startup", 0, worker("c1", "success"), box("c1", "running", 90n * S, true), ticked(worker("c1", "success"), "wait", false)),
  tick("on-hold", "liveness", 0, worker("c1", "failure", "none", 0, true), box("c1", "running", 90n * S, true), ticked(worker("c1", "failure", "none", 0, true), "wait", false)),
  // A new container lifts the hold and starts afresh.
  tick("new-container-lifts-hold", "liveness", 0, worker("c1", "failure", "none", 0, true), box("c2", "running", 90n * S, true), ticked(worker("c2", "success"), "run", true)),
  tick("ended-container", "readiness", 0, worker("c1", "success", "success", 1), box("c1", "terminated", 90n * S, true), ticked(worker("c1", "failure", "success", 1), "wait", true)),
  tick("ended-for-good", "readiness", 0, worker("c1", "success", "success", 1), box("c1", "terminated", 90n * S, true), ticked(worker("c1", "failure", "success", 1), "stop", true), { neverRestart: true }),
  // A pod being stopped: liveness ends quietly with success; readiness keeps probing.
  tick("stopping-liveness", "liveness", 0, worker("c1", "failure", "failure", 1), box("c1", "running", 90n * S, true), ticked(worker("c1", "success", "failure", 1), "stop", true), { pod: "stopping" }),
  tick("stopping-readiness", "readiness", 0, worker("c1", "success", "success", 1), box("c1", "running", 90n * S, true), ticked(worker("c1", "success", "success", 1), "run", false), { pod: "stopping" }),
  tick("finished-pod", "readiness", 0, worker("c1", "success"), box("c1", "running", 90n * S, true), ticked(worker("c1", "success"), "stop", true), { pod: "finished" }),
  { id: "probe-tick/bad-delay", fn: ["probe", "tick"], args: ["liveness", -1, NEW, undefined, "running", false, 0n], err: "initial-delay-seconds: Invalid value: -1: must be greater than or equal to 0" },
  // Thresholds: readiness needs 2 successes here; liveness 3 failures, then a kill and a hold.
  rec("readiness-first-success", "readiness", 2, 3, worker("c1", "failure"), "c1", "success", recorded(worker("c1", "failure", "success", 1), false, false)),
  rec("readiness-second-success", "readiness", 2, 3, worker("c1", "failure", "success", 1), "c1", "success", recorded(worker("c1", "success", "success", 2), true, false)),
  rec("warning-is-success", "readiness", 1, 3, worker("c1", "failure"), "c1", "warning", recorded(worker("c1", "success", "success", 1), true, false)),
  rec("liveness-second-failure", "liveness", 1, 3, worker("c1", "success", "failure", 1), "c1", "failure", recorded(worker("c1", "success", "failure", 2), false, false)),
  rec("liveness-third-failure-kills", "liveness", 1, 3, worker("c1", "success", "failure", 2), "c1", "failure", recorded(worker("c1", "failure", "failure", 0, true), true, true)),
  rec("startup-failure-kills", "startup", 1, 1, worker("c1", "unknown"), "c1", "unknown", recorded(worker("c1", "failure", "failure", 0, true), true, true)),
  rec("readiness-failure-no-kill", "readiness", 1, 1, worker("c1", "success", "success", 3), "c1", "failure", recorded(worker("c1", "failure", "failure", 1), true, false)),
  rec("error-dropped", "liveness", 1, 3, worker("c1", "success", "failure", 2), "c1", "error", recorded(worker("c1", "success", "failure", 2), false, false)),
  rec("other-container-dropped", "liveness", 1, 1, worker("c1", "success"), "c0", "failure", recorded(worker("c1", "success"), false, false)),
  { id: "probe-record/bad-success-threshold-liveness", fn: ["probe", "recordOutcome"], args: ["liveness", 2, 3, NEW, "c1", "success"], err: "success-threshold: Invalid value: 2: must be 1" },
  { id: "probe-record/bad-failure-threshold", fn: ["probe", "recordOutcome"], args: ["readiness", 1, 0, NEW, "c1", "success"], err: "failure-threshold: Invalid value: 0: must be greater than 0" },
  { id: "probe-record/bad-success-threshold", fn: ["probe", "recordOutcome"], args: ["readiness", 0, 3, NEW, "c1", "success"], err: "success-threshold: Invalid value: 0: must be greater than 0" },
  // The first tick: at once, except in the first period after the agent started (a hash's share).
  { id: "probe-first/settled-agent", fn: ["probe", "firstTickAt"], args: ["uid-1", "app", "liveness", 10, 0n, 50_000n], ok: 50_000n },
  // FNV-1a of "uid-1/app/1" is 99 modulo 1000: 99/1000 of the 10 s period.
  { id: "probe-first/fresh-agent", fn: ["probe", "firstTickAt"], args: ["uid-1", "app", "liveness", 10, 45_000n, 50_000n], ok: 50_990n },
  { id: "probe-first/bad-period", fn: ["probe", "firstTickAt"], args: ["uid-1", "app", "liveness", 0, 0n, 0n], err: "period-seconds: Invalid value: 0: must be greater than 0" },
  { id: "probe-next/on-time", fn: ["probe", "nextTickAt"], args: [10_000n, 10, 12_000n], ok: 20_000n },
  { id: "probe-next/missed-ticks", fn: ["probe", "nextTickAt"], args: [10_000n, 10, 45_000n], ok: 50_000n },
  { id: "probe-next/bad-period", fn: ["probe", "nextTickAt"], args: [0n, -5, 0n], err: "period-seconds: Invalid value: -5: must be greater than 0" },
];

// ---- eviction -----------------------------------------------------------------------------
const quantity = (val) => ({ tag: "quantity", val });
const percent = (val) => ({ tag: "percentage", val: Math.fround(val) });
const threshold = (signal, value, gracePeriodMs = 0n, minReclaim = undefined) => ({ signal, value, gracePeriodMs, minReclaim });
const obs = (signal, available, capacity) => ({ signal, available, capacity });
const met = (t, firstObservedMs, gracePeriodMet) => ({ threshold: t, firstObservedMs, gracePeriodMet });
const usage = (uid, memoryWorkingSetBytes, ephemeralStorageBytes = 0n, processCount = 0n) =>
  ({ uid, memoryWorkingSetBytes, ephemeralStorageBytes, processCount, containers: [] });

const memHard = threshold("memory.available", quantity(100n * Mi));
const memSoft = threshold("memory.available", quantity(1n * Gi), 90000n);
const diskHard = threshold("nodefs.available", percent(0.1), 0n, quantity(500n * Mi));
const parse = (id, args, expected) => ({ id: `parse-thresholds/${id}`, fn: ["eviction", "parseThresholds"], args, ok: expected });
const badParse = (id, args, err) => ({ id: `parse-thresholds/${id}`, fn: ["eviction", "parseThresholds"], args, err });
const passAt = (id, args, expected) => ({ id: `thresholds-met/${id}`, fn: ["eviction", "thresholdsMet"], args, ok: expected });
/** Expected order: uids, a critical one marked with a leading `!`. */
const rank = (id, args, expected) => ({
  id: `rank-pods/${id}`, fn: ["eviction", "rankPods"], args,
  ok: expected.map((u) => ({ uid: u.replace(/^!/, ""), critical: u.startsWith("!") })),
});

const eviction = [
  parse("kubelet-defaults", ["memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<15%", "", "", "", []], [
    threshold("memory.available", quantity(100n * Mi)),
    threshold("nodefs.available", percent(0.1)),
    threshold("nodefs.inodesFree", percent(0.05)),
    threshold("imagefs.available", percent(0.15)),
  ]),
  parse("soft-with-grace", ["", "memory.available<1Gi", "memory.available=1m30s", "", []], [memSoft]),
  parse("minimum-reclaim", ["nodefs.available<10%", "", "", "nodefs.available=500Mi", []], [diskHard]),
  parse("none", ["", "", "", "", []], []),
  // --enforce-node-allocatable=pods: the hard memory threshold gets an allocatable twin, last.
  parse("allocatable-twin", ["memory.available<150Mi,nodefs.available<10%", "memory.available<300Mi", "memory.available=30s", "memory.available=50Mi", ["pods"]], [
    threshold("memory.available", quantity(150n * Mi), 0n, quantity(50n * Mi)),
    threshold("nodefs.available", percent(0.1)),
    threshold("memory.available", quantity(300n * Mi), 30000n, quantity(50n * Mi)),
    threshold("allocatableMemory.available", quantity(150n * Mi), 0n, quantity(50n * Mi)),
  ]),
  badParse("unknown-signal", ["foo.available<1Gi", "", "", "", []], "unsupported eviction signal foo.available"),
  badParse("soft-without-grace", ["", "memory.available<1Gi", "", "", []], "grace period must be specified for the soft eviction threshold memory.available"),
  badParse("bad-percentage", ["memory.available<110%", "", "", "", []], "eviction percentage threshold memory.available must be <= 100%: 110%"),
  badParse("bad-operator", ["memory.available>1Gi", "", "", "", []], "malformed pair, expect string<string"),
  badParse("bad-grace-period", ["", "memory.available<1Gi", "memory.available=90", "", []], 'time: missing unit in duration "90"'),
  badParse("bad-quantity", ["memory.available<lots", "", "", "", []], "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
  badParse("bad-minimum-reclaim", ["memory.available<1Gi", "", "", "memory.available=-1Mi", []], "negative eviction minimum reclaim specified for memory.available"),

  // 50Mi of 1Gi available is below 100Mi: met at once (a hard threshold has no grace period).
  passAt("hard-met", [[memHard], [obs("memory.available", 50n * Mi, 1n * Gi)], [], 1000n], [met(memHard, 1000n, true)]),
  passAt("hard-not-met", [[memHard], [obs("memory.available", 200n * Mi, 1n * Gi)], [], 1000n], []),
  passAt("no-observation", [[memHard], [obs("pid.available", 1n, 100n)], [], 1000n], []),
  // A soft threshold waits for its 90 s grace period, counted from the first pass that saw it.
  passAt("soft-first-seen", [[memSoft], [obs("memory.available", 500n * Mi, 4n * Gi)], [], 0n], [met(memSoft, 0n, false)]),
  passAt("soft-within-grace", [[memSoft], [obs("memory.available", 500n * Mi, 4n * Gi)], [met(memSoft, 0n, false)], 89999n], [met(memSoft, 0n, false)]),
  passAt("soft-grace-over", [[memSoft], [obs("memory.available", 500n * Mi, 4n * Gi)], [met(memSoft, 0n, false)], 90000n], [met(memSoft, 0n, true)]),
  // 10% of 10Gi is 1Gi: 1Gi - 1 byte available is below it.
  passAt("percentage", [[diskHard], [obs("nodefs.available", 1n * Gi - 1n, 10n * Gi)], [], 5n], [met(diskHard, 5n, true)]),
  // 1.25Gi is above 1Gi but below 1Gi + 500Mi: met only once acted on.
  passAt("minimum-reclaim-holds", [[diskHard], [obs("nodefs.available", 1280n * Mi, 10n * Gi)], [met(diskHard, 5n, true)], 10005n], [met(diskHard, 5n, true)]),
  passAt("minimum-reclaim-fresh", [[diskHard], [obs("nodefs.available", 1280n * Mi, 10n * Gi)], [], 10005n], []),
  { id: "thresholds-met/bad-signal", fn: ["eviction", "thresholdsMet"], args: [[threshold("memory", quantity(1n))], [], [], 0n],
    err: "thresholds[0].signal: unsupported eviction signal memory" },
  { id: "thresholds-met/bad-percentage", fn: ["eviction", "thresholdsMet"], args: [[threshold("nodefs.available", percent(1.5))], [], [], 0n],
    err: "thresholds[0].value: Invalid value: 1.5: must be above 0 and at most 1" },
  { id: "thresholds-met/bad-capacity", fn: ["eviction", "thresholdsMet"], args: [[memHard], [obs("memory.available", 0n, -1n)], [], 0n],
    err: "observations[0].capacity: Invalid value: -1: must be greater than or equal to 0" },
  { id: "thresholds-met/bad-negative-quantity", fn: ["eviction", "thresholdsMet"], args: [[threshold("memory.available", quantity(-1n))], [], [], 0n],
    err: "thresholds[0].value: Invalid value: -1: must be greater than or equal to 0" },
  { id: "thresholds-met/bad-observation-signal", fn: ["eviction", "thresholdsMet"], args: [[memHard], [obs("memory.free", 1n, 2n)], [], 0n],
    err: "observations[0].signal: unsupported eviction signal memory.free" },

  // a: 200Mi used of 100Mi requested (100Mi over); b: 50Mi with no request (50Mi over); c: well
  // under its 1Gi request; d: no stats. Order: d, then those over their request by the amount
  // over, then c.
  rank("memory", ["memory.available", [
    pod("a", [container("x", { memory: "100Mi" })]), pod("b", [container("x")]), pod("c", [container("x", { memory: "1Gi" })]), pod("d", [container("x")]),
  ], [usage("a", 200n * Mi), usage("b", 50n * Mi), usage("c", 10n * Mi)]], ["d", "a", "b", "c"]),
  // Both over their requests: the lower priority goes first, however small its use.
  rank("memory-priority", ["allocatableMemory.available", [pod("high", [container("x")], 1000), pod("low", [container("x")], -10)],
    [usage("high", 900n * Mi), usage("low", 1n * Mi)]], ["low", "high"]),
  // Equal pods keep uid order.
  rank("memory-tie", ["memory.available", [pod("z", [container("x")]), pod("m", [container("x")])],
    [usage("z", 1n * Mi), usage("m", 1n * Mi)]], ["m", "z"]),
  // Disk: ephemeral storage over its request first.
  rank("disk", ["nodefs.available", [pod("logs", [container("x", { "ephemeral-storage": "1Gi" })]), pod("scratch", [container("x")])],
    [usage("logs", 0n, 512n * Mi), usage("scratch", 0n, 1n * Mi)]], ["scratch", "logs"]),
  // PID: priority first, then the most processes.
  rank("pid", ["pid.available", [pod("p1", [container("x")]), pod("p2", [container("x")]), pod("p3", [container("x")], -1)],
    [usage("p1", 0n, 0n, 50n), usage("p2", 0n, 0n, 10n), usage("p3", 0n, 0n, 1n)]], ["p3", "p1", "p2"]),
  // Critical pods rank like the others, flagged: a static pod and a system-critical one.
  rank("critical-flagged", ["memory.available", [
    pod("static", [container("x")], 0, true), pod("system", [container("x")], 2000000000), pod("plain", [container("x")]),
  ], [usage("static", 300n * Mi), usage("system", 200n * Mi), usage("plain", 100n * Mi)]], ["!static", "plain", "!system"]),
  { id: "rank-pods/bad-signal", fn: ["eviction", "rankPods"], args: ["memory", [], []], err: "unsupported eviction signal memory" },
  { id: "rank-pods/bad-duplicate-uid", fn: ["eviction", "rankPods"], args: ["memory.available", [pod("a", [container("x")]), pod("a", [container("x")])], []],
    err: 'pods[1].metadata.uid: Duplicate value: "a"' },
  { id: "rank-pods/bad-usage-of-unknown-pod", fn: ["eviction", "rankPods"], args: ["memory.available", [pod("a", [container("x")])], [usage("b", 1n)]],
    err: 'usage[0].uid: Not found: "b"' },
  { id: "rank-pods/bad-quantity", fn: ["eviction", "rankPods"], args: ["memory.available", [pod("a", [container("x", { memory: "lots" })])], []],
    err: `pods[0].spec.containers[0].resources.requests[memory]: Invalid value: "lots": ${QUANTITY_RULE}` },
];

// ---- pleg ---------------------------------------------------------------------------------
const sandbox = (id, podUid, state = "ready") => ({
  id, podUid, podName: "p", podNamespace: "default", attempt: 0, state, createdAtNs: 1n, terminationGracePeriodSeconds: undefined,
});
const ctr = (id, podUid, state, exitCode = 0) => ({
  id, sandboxId: "s1", podUid, name: "c", attempt: 0, state, image: "busybox", specHash: "h", exitCode,
  reason: "", message: "", createdAtNs: 1n, startedAtNs: 2n, finishedAtNs: state === "exited" ? 3n : 0n,
});
const snap = (sandboxes, containers, uninspectedPodUids = []) => ({ listedAtMs: 0n, sandboxes, containers, uninspectedPodUids });
const ev = (podUid, containerId, eventType) => ({ podUid, containerId, eventType });
const relist = (id, before, after, expected) => ({ id: `pleg/${id}`, fn: ["pleg", "relistEvents"], args: [before, after], ok: expected });
const pleg = [
  relist("pod-starts", snap([], []), snap([sandbox("s1", "u1")], [ctr("c1", "u1", "running")]),
    [ev("u1", "c1", "container-started"), ev("u1", "s1", "container-started")]),
  relist("container-exits", snap([sandbox("s1", "u1")], [ctr("c1", "u1", "running")]), snap([sandbox("s1", "u1")], [ctr("c1", "u1", "exited", 1)]),
    [ev("u1", "c1", "container-died")]),
  relist("running-container-vanishes", snap([], [ctr("c1", "u1", "running")]), snap([], []),
    [ev("u1", "c1", "container-died"), ev("u1", "c1", "container-removed")]),
  relist("exited-container-removed", snap([], [ctr("c1", "u1", "exited")]), snap([], []), [ev("u1", "c1", "container-removed")]),
  // created and unknown read as "unknown": upstream's ContainerChanged, which it does not send on.
  relist("created-is-not-sent", snap([], []), snap([], [ctr("c1", "u1", "created")]), []),
  relist("created-then-running", snap([], [ctr("c1", "u1", "created")]), snap([], [ctr("c1", "u1", "running")]), [ev("u1", "c1", "container-started")]),
  relist("sandbox-stops", snap([sandbox("s1", "u1")], []), snap([sandbox("s1", "u1", "not-ready")], []), [ev("u1", "s1", "container-died")]),
  relist("nothing-changed", snap([sandbox("s1", "u1")], [ctr("c1", "u1", "running")]), snap([sandbox("s1", "u1")], [ctr("c1", "u1", "running")]), []),
  // u2 could not be inspected: its events wait for a relist that reads it; u1's are given.
  relist("uninspected-pod", snap([], [ctr("c1", "u1", "running"), ctr("c2", "u2", "running")]),
    snap([], [ctr("c1", "u1", "exited"), ctr("c2", "u2", "exited")], ["u2"]), [ev("u1", "c1", "container-died")]),
  relist("two-pods-sorted", snap([], []), snap([], [ctr("c9", "u2", "running"), ctr("c1", "u2", "exited"), ctr("c5", "u1", "running")]),
    [ev("u1", "c5", "container-started"), ev("u2", "c1", "container-died"), ev("u2", "c9", "container-started")]),
  { id: "pleg/bad-duplicate-id", fn: ["pleg", "relistEvents"], args: [snap([], []), snap([sandbox("x", "u1")], [ctr("x", "u1", "running")])],
    err: 'after.containers[0].id: Duplicate value: "x"' },
  { id: "pleg/bad-empty-pod-uid", fn: ["pleg", "relistEvents"], args: [snap([], [ctr("c1", "", "running")]), snap([], [])],
    err: "before.containers[0].pod-uid: Required value" },
  { id: "pleg/bad-empty-sandbox-id", fn: ["pleg", "relistEvents"], args: [snap([], []), snap([sandbox("", "u1")], [])],
    err: "after.sandboxes[0].id: Required value" },
];

// ---- image-gc ---------------------------------------------------------------------------
// Upstream's image_gc_manager_test cases as plans: policy 90/80 as there, a 1000-byte filesystem.
const img = (id, sizeBytes, { inUse = false, pinned = false, first = 0n, last = 0n } = {}) => ({ id, sizeBytes, inUse, pinned, firstDetectedMs: first, lastUsedMs: last });
const gcPolicy = (minimumAgeMs = 0n, maximumAgeMs = 0n) => ({ highThresholdPercent: 90, lowThresholdPercent: 80, minimumAgeMs, maximumAgeMs });
const plan = (removeForAge, removeForSpace, usagePercent, bytesToFree, bytesFreed) => ({ removeForAge, removeForSpace, usagePercent, bytesToFree, bytesFreed });
const gc = (id, args, ok) => ({ id: `image-gc/${id}`, fn: ["imageGc", "plan"], args, ok });
const gcErr = (id, args, err) => ({ id: `image-gc/${id}`, fn: ["imageGc", "plan"], args, err });
const imageGc = [
  gc("below-low-threshold", [[img("a", 450n)], 1000n, 200n, gcPolicy(), 10_000n, 0n, false], plan([], [], 80, 0n, 0n)),
  // 95% used: free 1000 * 20% - 50 = 150 bytes; the one unused image is enough.
  gc("over-high-freed", [[img("a", 450n)], 1000n, 50n, gcPolicy(), 10_000n, 0n, false], plan([], ["a"], 95, 150n, 450n)),
  gc("over-high-not-enough", [[img("a", 50n)], 1000n, 50n, gcPolicy(), 10_000n, 0n, false], plan([], ["a"], 95, 150n, 50n)),
  gc("in-use-and-pinned-stay", [[img("used", 1000n, { inUse: true }), img("pause", 1000n, { pinned: true }), img("c", 100n)], 1000n, 50n, gcPolicy(), 10_000n, 0n, false], plan([], ["c"], 95, 150n, 100n)),
  gc("least-recently-used-first", [[img("a", 100n, { last: 2000n }), img("b", 100n, { last: 1000n }), img("c", 100n, { last: 3000n })], 1000n, 50n, gcPolicy(), 10_000n, 0n, false], plan([], ["b", "a"], 95, 150n, 200n)),
  gc("ties-by-first-detected", [[img("a", 100n, { first: 500n, last: 1000n }), img("b", 100n, { first: 200n, last: 1000n })], 1000n, 50n, gcPolicy(), 10_000n, 0n, false], plan([], ["b", "a"], 95, 150n, 200n)),
  // imageMinimumGCAge: an image seen 4 s ago with a 5 s minimum stays, however large.
  gc("younger-than-minimum-age", [[img("new", 1000n, { first: 6000n, last: 6000n }), img("old", 100n)], 1000n, 50n, gcPolicy(5000n), 10_000n, 0n, false], plan([], ["old"], 95, 150n, 100n)),
  // imageMaximumGCAge: unused for 4 s with a 3 s maximum goes though the disk is nearly empty.
  gc("older-than-maximum-age", [[img("stale", 100n, { last: 6000n }), img("fresh", 100n, { last: 8000n })], 1000n, 900n, gcPolicy(0n, 3000n), 10_000n, 0n, false], plan(["stale"], [], 10, 0n, 0n)),
  gc("maximum-age-waits-for-the-collector", [[img("stale", 100n, { last: 6000n })], 1000n, 900n, gcPolicy(0n, 3000n), 10_000n, 8000n, false], plan([], [], 10, 0n, 0n)),
  gc("maximum-age-off", [[img("stale", 100n)], 1000n, 900n, gcPolicy(), 1_000_000n, 0n, false], plan([], [], 10, 0n, 0n)),
  // The eviction manager's reclaim: every eligible image, whatever the thresholds.
  gc("reclaim-all", [[img("a", 100n), img("b", 200n, { inUse: true }), img("c", 300n, { last: 1n })], 1000n, 900n, gcPolicy(), 10_000n, 0n, true], plan([], ["a", "c"], 10, 18446744073709551615n, 400n)),
  gc("available-above-capacity", [[img("a", 100n)], 1000n, 2000n, gcPolicy(), 10_000n, 0n, false], plan([], [], 0, 0n, 0n)),
  gcErr("zero-capacity", [[img("a", 100n)], 0n, 0n, gcPolicy(), 10_000n, 0n, false], "invalid capacity 0 on image filesystem"),
  gcErr("duplicate-id", [[img("a", 100n), img("a", 100n)], 1000n, 50n, gcPolicy(), 10_000n, 0n, false], 'images[1].id: Duplicate value: "a"'),
  gcErr("thresholds-reversed", [[], 1000n, 50n, { ...gcPolicy(), lowThresholdPercent: 90 }, 10_000n, 0n, false], "policy.low-threshold-percent: must be less than policy.high-threshold-percent"),
];

// ---- hardware -----------------------------------------------------------------------------
// A machine of 2 sockets, 2 NUMA nodes each, 2 cores per node, 2 threads per core (CPU n and n+8
// share a core), as upstream's cpu_assignment_test topologies are built.
const machine = [];
for (let c = 0; c < 8; c++) for (const id of [c, c + 8]) machine.push({ id, core: c, socket: Math.floor(c / 4), numaNode: Math.floor(c / 2) });
machine.sort((a, b) => a.id - b.id);
const take = (id, free, count, ok) => ({ id: `hardware/take-${id}`, fn: ["hardware", "takeCpus"], args: [machine, free, count], ok });
const hint = (mask, preferred) => ({ numaMask: BigInt(mask), preferred });
const hints = (resource, list) => ({ resource, noPreference: false, hints: list });
const anywhere = (resource) => ({ resource, noPreference: true, hints: [] });
const merge = (id, policy, providers, ok) => ({ id: `hardware/merge-${id}`, fn: ["hardware", "mergeHints"], args: [policy, 3n, providers], ok });
const hardware = [
  take("one-core", "0-15", 2, "0,8"),
  take("a-numa-node", "0-15", 4, "0-1,8-9"),
  take("a-socket", "0-15", 8, "0-3,8-11"),
  // The half-used core first (packing): CPU 0 is taken, so its sibling 8 goes.
  take("fills-half-used-core", "1-15", 1, "8"),
  take("none", "0-3", 0, ""),
  { id: "hardware/take-too-many", fn: ["hardware", "takeCpus"], args: [machine, "0-1", 3], err: "not enough cpus available to satisfy request: requested=3, available=2" },
  { id: "hardware/take-bad-cpuset", fn: ["hardware", "takeCpus"], args: [machine, "3-1", 1], err: 'invalid cpuset "3-1"' },
  // Upstream's policy tests: no providers, one preferred everywhere.
  merge("no-providers", "best-effort", [], { hint: hint(3, true), admit: true }),
  merge("no-preference", "restricted", [anywhere("cpu")], { hint: hint(3, true), admit: true }),
  // Two providers preferring NUMA node 0: merged to node 0, preferred.
  merge("both-node-0", "restricted", [hints("cpu", [hint(1, true), hint(3, false)]), hints("dev", [hint(1, true), hint(3, false)])], { hint: hint(1, true), admit: true }),
  // One prefers node 0, the other node 1: no preferred merge; among the non-preferred ones the
  // narrowest of one node (the widest of the providers' narrowest) with the lower mask wins.
  merge("apart-best-effort", "best-effort", [hints("cpu", [hint(1, true), hint(3, false)]), hints("dev", [hint(2, true), hint(3, false)])], { hint: hint(1, false), admit: true }),
  merge("apart-restricted", "restricted", [hints("cpu", [hint(1, true), hint(3, false)]), hints("dev", [hint(2, true), hint(3, false)])], { hint: hint(1, false), admit: false }),
  // single-numa-node keeps only one-node preferred hints: a wide request has nothing left.
  merge("single-node-wide", "single-numa-node", [hints("cpu", [hint(3, true)])], { hint: hint(0, false), admit: false }),
  merge("single-node-fits", "single-numa-node", [hints("cpu", [hint(1, true), hint(2, true), hint(3, false)]), anywhere("memory")], { hint: hint(1, true), admit: true }),
  // A resource that cannot be placed at all: an any-node, non-preferred hint.
  merge("cannot-place", "restricted", [hints("dev", [])], { hint: hint(3, false), admit: false }),
  merge("none-policy", "none", [hints("dev", [])], { hint: hint(0, true), admit: true }),
];

export const CASES = [...qos, ...cgroups, ...status, ...restart, ...probe, ...eviction, ...pleg, ...imageGc, ...hardware];

/** Runs one case against a library ({ qos, cgroups, ... } as jco exports them): {ok} or {err}. */
export function runCase(library, c) {
  const [iface, fn] = c.fn;
  try {
    return { ok: library[iface][fn](...c.args) };
  } catch (e) {
    // jco throws a ComponentError whose payload is the result's error string.
    if (e && typeof e === "object" && "payload" in e) return { err: e.payload };
    throw e;
  }
}

/** A canonical text of a value (BigInt as `123n`, object keys sorted): for comparing hosts. */
export function canonical(value) {
  return JSON.stringify(value, (_, v) => {
    if (typeof v === "bigint") return `${v}n`;
    if (v === undefined) return null;
    if (v && typeof v === "object" && !Array.isArray(v)) return Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]]));
    return v;
  });
}

/** What a case expects, in the shape runCase returns. */
export function expected(c) {
  return "err" in c ? { err: c.err } : { ok: c.ok };
}
