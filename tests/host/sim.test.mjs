// The simulator itself: scenario files run and their expectations hold; the same seed gives the
// same trace byte for byte; a trace replays without divergence and a changed one is caught; the
// invariants catch a broken core; scenario mistakes are named by file and field.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { parse } from "yaml";
import { CoreAgent } from "../../dist/core/core.js";
import { Simulator } from "../../dist/sim/simulator.js";
import { ScenarioError, loadScenarioFile, readScenario } from "../../dist/sim/scenario.js";
import { swarmScenario } from "../../dist/sim/swarm.js";
import { Prng } from "../../dist/sim/prng.js";
import { SimRuntime } from "../../dist/sim/sim-runtime.js";
import { replayLines } from "../../dist/trace/replay.js";

const corpus = path.join(import.meta.dirname, "../sim");

async function traced(scenario, seed) {
  const lines = [];
  const report = await Simulator.run({ scenario, seed, trace: (line) => lines.push(line) });
  return { report, lines };
}

for (const file of fs.readdirSync(corpus).filter((f) => f.endsWith(".yaml")).sort()) {
  test(`scenario ${file} holds for seeds 1..3`, async () => {
    const scenario = loadScenarioFile(path.join(corpus, file));
    for (const seed of [1, 2, 3]) {
      const report = await Simulator.run({ scenario, seed });
      assert.deepEqual(report.violations, [], `seed ${seed}`);
      assert.deepEqual(report.failedExpectations, [], `seed ${seed}`);
      assert.ok(report.stats.containerStarts > 0);
    }
  });
}

test("the same seed gives a byte-identical trace; another seed a different one", async () => {
  const scenario = loadScenarioFile(path.join(corpus, "flapping.yaml"));
  const a = await traced(scenario, 7);
  const b = await traced(scenario, 7);
  const c = await traced(scenario, 8);
  assert.ok(a.lines.length > 1000);
  assert.equal(a.lines.join("\n"), b.lines.join("\n"));
  assert.notEqual(a.lines.join("\n"), c.lines.join("\n"));
  const swarmA = await traced(swarmScenario(11), 11);
  const swarmB = await traced(swarmScenario(11), 11);
  assert.equal(swarmA.lines.join("\n"), swarmB.lines.join("\n"));
});

test("a simulator trace replays without divergence; a changed recording is caught at its line", async () => {
  const { lines } = await traced(loadScenarioFile(path.join(corpus, "agent-restart.yaml")), 3);
  const clean = await replayLines(lines);
  assert.equal(clean.divergence, undefined);
  assert.ok(clean.calls > 100);
  // Pretend the recorded core had asked to stop a container it in fact started.
  const at = lines.findIndex((l) => l.includes('"op":"poll"') && l.includes('"tag":"start-container"'));
  const tampered = [...lines];
  tampered[at] = tampered[at].replace('"tag":"start-container"', '"tag":"stop-container"');
  const report = await replayLines(tampered);
  assert.equal(report.divergence?.line, at + 1);
  assert.equal(report.divergence?.op, "poll");
  assert.match(report.divergence.expected, /stop-container/);
  assert.match(report.divergence.actual, /start-container/);
});

test("the invariants catch a core that never stops containers", async () => {
  const createCore = async (config) => {
    const core = await CoreAgent.create(config);
    const poll = core.pollActions.bind(core);
    core.pollActions = (now) => poll(now).filter((a) => a.kind.tag !== "stop-container");
    return core;
  };
  const scenario = loadScenarioFile(path.join(corpus, "graceful-deletion.yaml"));
  const report = await Simulator.run({ scenario, seed: 1, createCore });
  assert.equal(report.ok, false);
  assert.ok(report.violations.some((v) => v.invariant === "deleted-pod-cleaned-up"), JSON.stringify(report.violations));
});

test("the deletion invariant catches the executor of dcdf406, where a stop held a slot for its grace period", async () => {
  const scenario = loadScenarioFile(path.join(corpus, "stop-storm.yaml"));
  const now = await Simulator.run({ scenario, seed: 1 });
  assert.equal(now.ok, true, JSON.stringify(now.violations));
  const old = await Simulator.run({ scenario: { ...scenario, stopsHoldSlots: true }, seed: 1 });
  assert.equal(old.ok, false);
  assert.ok(old.violations.some((v) => v.invariant === "deleted-pod-cleaned-up"), JSON.stringify(old.violations));
});

test("the invariants catch a core that restarts without back-off", async () => {
  // A core told that every exit happened long ago restarts crash-looping containers at once.
  const liar = async (config) => {
    const inner = await CoreAgent.create(config);
    const lie = (s) => ({ ...s, containers: s.containers.map((c) => (c.state === "exited" ? { ...c, finishedAtNs: 1n } : c)) });
    return {
      handlePods: (t, pods) => inner.handlePods(t, pods),
      handleSnapshot: (t, s) => inner.handleSnapshot(t, lie(s)),
      handleActionResults: (t, r) => inner.handleActionResults(t, r),
      pollActions: (t) => inner.pollActions(t),
      pollDeadline: () => inner.pollDeadline(),
    };
  };
  const scenario = loadScenarioFile(path.join(corpus, "crash-loop-backoff.yaml"));
  const report = await Simulator.run({ scenario, seed: 1, createCore: liar });
  assert.ok(report.violations.some((v) => v.invariant === "crash-loop-back-off"), JSON.stringify(report.violations));
});

test("the invariants catch a core deaf to the apiserver's deletion marks and finished phases", async () => {
  // A core that is never told a pod is being deleted, or that it finished, keeps it going.
  const deaf = async (config) => {
    const core = await CoreAgent.create(config);
    const handlePods = core.handlePods.bind(core);
    core.handlePods = (now, pods) => handlePods(now, pods.map((p) => ({ ...p, deletionGracePeriodSeconds: undefined, reportedTerminalPhase: undefined })));
    return core;
  };
  const scenario = loadScenarioFile(path.join(corpus, "api-deletion.yaml"));
  const report = await Simulator.run({ scenario, seed: 1, createCore: deaf, stopOnViolation: false });
  assert.equal(report.ok, false);
  const broken = new Set(report.violations.map((v) => v.invariant));
  assert.ok(broken.has("deleted-pod-finishes"), JSON.stringify(report.violations));
  assert.ok(broken.has("deleted-pod-not-started"), JSON.stringify(report.violations));
});

test("probes and init containers: the invariants hold on every seed tried, and catch a core that lies", async () => {
  const scenario = loadScenarioFile(path.join(corpus, "probes-and-init.yaml"));
  for (const seed of [1, 2, 3]) {
    const report = await Simulator.run({ scenario, seed });
    assert.ok(report.ok, JSON.stringify([seed, report.violations, report.failedExpectations]));
  }
  // A core whose statuses call every running container ready, whatever its readiness probe says,
  // and that never waits for init containers (told their names away).
  const liar = async (config) => {
    const core = await CoreAgent.create(config);
    const pollActions = core.pollActions.bind(core);
    core.pollActions = (now) => pollActions(now).map((a) => a.kind.tag !== "pod-status-changed" ? a : {
      ...a, kind: { ...a.kind, val: { ...a.kind.val, containerStatuses: a.kind.val.containerStatuses.map((c) => ({ ...c, ready: c.state === "running" })) } },
    });
    const handlePods = core.handlePods.bind(core);
    core.handlePods = (now, pods) => handlePods(now, pods.map((p) => ({ ...p, initContainers: [] })));
    return core;
  };
  const report = await Simulator.run({ scenario, seed: 1, createCore: liar, stopOnViolation: false });
  const broken = new Set(report.violations.map((v) => v.invariant));
  assert.ok(broken.has("ready-while-failing"), JSON.stringify(report.violations));
  assert.ok(broken.has("init-order"), JSON.stringify(report.violations));
});

test("volumes: the invariants catch a core that starts pods before their volumes and never tears them down", async () => {
  const scenario = loadScenarioFile(path.join(corpus, "volumes.yaml"));
  // A core that is told nothing of the pods' volumes starts them at once and leaves them mounted.
  const blind = async (config) => {
    const core = await CoreAgent.create(config);
    const handlePods = core.handlePods.bind(core);
    core.handlePods = (now, pods) => handlePods(now, pods.map((p) => ({ ...p, volumes: [] })));
    return core;
  };
  const report = await Simulator.run({ scenario, seed: 1, createCore: blind, stopOnViolation: false });
  assert.ok(report.violations.some((v) => v.invariant === "volumes-before-start"), JSON.stringify(report.violations));
  // A core that sets volumes up but drops every tear-down leaves them behind a deleted pod.
  const forgetful = async (config) => {
    const core = await CoreAgent.create(config);
    const pollActions = core.pollActions.bind(core);
    const handleActionResults = core.handleActionResults.bind(core);
    const dropped = [];
    core.pollActions = (now) => pollActions(now).filter((a) => (a.kind.tag === "tear-down-volumes" ? (dropped.push(a.id), false) : true));
    // The dropped tear-downs are answered as done, so that the core moves on.
    core.handleActionResults = (now, results) => handleActionResults(now, [...results, ...dropped.splice(0).map((id) => ({ actionId: id, outcome: { tag: "ok", val: "" } }))]);
    return core;
  };
  const kept = await Simulator.run({ scenario, seed: 1, createCore: forgetful, stopOnViolation: false });
  assert.ok(kept.violations.some((v) => v.invariant === "deleted-pod-unmounted"), JSON.stringify(kept.violations));
});

test("memory pressure across 110 pods: evictions in upstream's order, critical pods spared", async () => {
  const scenario = loadScenarioFile(path.join(corpus, "memory-pressure.yaml"));
  const report = await Simulator.run({ scenario, seed: 11 });
  assert.ok(report.ok, JSON.stringify([report.violations, report.failedExpectations]));
  assert.equal(report.stats.evictions, 3, "the leak, then two of the three growing pods");
  assert.ok(report.stats.statsPasses >= 239);
});

test("the eviction invariants catch a core that is lied to about priorities and usage", async () => {
  // Told every pod has priority 0 and that a critical pod uses 10Gi, the core evicts it: the
  // simulator knows better, from the scenario itself.
  const liar = async (config) => {
    const core = await CoreAgent.create(config);
    const handlePods = core.handlePods.bind(core);
    const handleNodeStats = core.handleNodeStats.bind(core);
    let agentUid;
    core.handlePods = (now, pods) => {
      agentUid = pods.find((p) => p.name.startsWith("agent-0"))?.uid;
      return handlePods(now, pods.map((p) => ({ ...p, priority: 0 })));
    };
    core.handleNodeStats = (now, stats) =>
      handleNodeStats(now, { ...stats, pods: stats.pods.map((p) => (p.uid === agentUid ? { ...p, memoryWorkingSetBytes: 10n * 2n ** 30n } : p)) });
    return core;
  };
  const scenario = loadScenarioFile(path.join(corpus, "memory-pressure.yaml"));
  const report = await Simulator.run({ scenario, seed: 1, createCore: liar, stopOnViolation: false });
  const broken = new Set(report.violations.map((v) => v.invariant));
  assert.ok(broken.has("critical-pod-not-evicted"), JSON.stringify(report.violations));
  assert.ok(broken.has("eviction-ranking"), JSON.stringify(report.violations));
});

test("an expectation that does not hold fails the run with what was seen", async () => {
  const doc = parse(fs.readFileSync(path.join(corpus, "restart-policies.yaml"), "utf8"));
  doc.expect = [{ at: "1m50s", pod: "never-succeeds", phase: "Running", restarts: { ok: 1 } }];
  const report = await Simulator.run({ scenario: readScenario(doc, "edited.yaml"), seed: 1 });
  assert.equal(report.ok, false);
  assert.equal(report.failedExpectations.length, 1);
  assert.match(report.failedExpectations[0].detail, /phase is succeeded, want Running; restarts of ok are 0, want 1/);
});

test("a `by` expectation met only after its time fails", async () => {
  const doc = parse(fs.readFileSync(path.join(corpus, "crash-loop-backoff.yaml"), "utf8"));
  // The second restart comes about 10 s after the second exit, near 15 s: not by 8 s.
  doc.expect = [{ by: "8s", pod: "flaky", restarts: { app: 2 } }, { by: "20s", pod: "flaky", restarts: { app: 2 } }];
  const report = await Simulator.run({ scenario: readScenario(doc, "late.yaml"), seed: 1 });
  assert.equal(report.failedExpectations.length, 1);
  assert.match(report.failedExpectations[0].text, /expect\[0\] \(by 8s/);
  assert.equal(report.failedExpectations[0].atMs, 8000);
  assert.match(report.failedExpectations[0].detail, /restarts of app are 1, want 2/);
});

test("scenario mistakes name the file and the field", () => {
  const base = () => parse(fs.readFileSync(path.join(corpus, "graceful-deletion.yaml"), "utf8"));
  const cases = [
    [(d) => (d.timeline[0].at = "soon"), /x\.yaml: timeline\[0\]\.at: invalid duration "soon"/],
    [(d) => (d.timeline[0] = { at: "1s", delete: "nobody" }), /timeline\[0\]\.delete: no pod named "nobody"/],
    [(d) => (d.timeline[0] = { at: "1s", fault: { call: "Frobnicate" } }), /timeline\[0\]\.fault\.call: unknown CRI call "Frobnicate"/],
    [(d) => (d.timeline[0] = { at: "1s", fault: { call: "*", error: 2 } }), /timeline\[0\]\.fault\.error: expected a probability/],
    [(d) => (d.expect[0].phase = "Runing"), /expect\[0\]\.phase: expected one of/],
    [(d) => (d.expect[0].restart = { app: 1 }), /expect\[0\]\.restart: unknown field/],
    [(d) => (d.pods[0].containers.app.exitAfter = "3s-1s"), /ends before it starts/],
    [(d) => (d.duration = "10s"), /x\.yaml: timeline\[0\]\.at: is later than the scenario.s duration/],
    [(d) => (d.listOrder = "random"), /x\.yaml: listOrder: expected stable or shuffled, got "random"/],
  ];
  for (const [edit, message] of cases) {
    const doc = base();
    edit(doc);
    assert.throws(() => readScenario(doc, "x.yaml"), (e) => e instanceof ScenarioError && message.test(e.message), String(message));
  }
});

test("a runtime that lists in a new order every relist is listed so, the same on every run of a seed", async () => {
  const scenario = loadScenarioFile(path.join(corpus, "list-order.yaml"));
  assert.equal(scenario.listOrder, "shuffled");
  const runtime = new SimRuntime(new Prng(1, "ids"), new Prng(1, "order"));
  for (let i = 0; i < 12; i++) runtime.runPodSandbox({ podUid: `u${i}`, podName: `p${i}`, podNamespace: "default", attempt: 0, terminationGracePeriodSeconds: 2n }, 0);
  const orders = [0, 1, 2].map((t) => runtime.snapshot(t).snapshot.sandboxes.map((s) => s.podUid).join());
  assert.notEqual(orders[0], orders[1]);
  assert.equal(new Set(orders[0].split(",")).size, 12);
  const again = new SimRuntime(new Prng(1, "ids"), new Prng(1, "order"));
  for (let i = 0; i < 12; i++) again.runPodSandbox({ podUid: `u${i}`, podName: `p${i}`, podNamespace: "default", attempt: 0, terminationGracePeriodSeconds: 2n }, 0);
  assert.equal(again.snapshot(0).snapshot.sandboxes.map((s) => s.podUid).join(), orders[0]);
  const report = await Simulator.run({ scenario, seed: 1 });
  assert.ok(report.ok, JSON.stringify([report.violations, report.failedExpectations]));
});

test("a broken manifest in a scenario is refused and reported, and the other pods run", async () => {
  const doc = parse(fs.readFileSync(path.join(corpus, "graceful-deletion.yaml"), "utf8"));
  doc.pods[0].manifest.spec.containers[0].name = "Bad_Name";
  doc.timeline = [];
  doc.expect = [{ at: "10s", pod: "stubborn", running: ["app"] }];
  const report = await Simulator.run({ scenario: readScenario(doc, "x.yaml"), seed: 1 });
  assert.equal(report.ok, true, JSON.stringify(report));
  assert.equal(report.refused.length, 1);
  assert.match(report.refused[0], /^polite: spec\.containers\[0\]\.name/);
});

test("a trace file written by the CLI replays from the CLI", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-sim-"));
  const { simCommand } = await import("../../dist/cli/sim.js");
  let out = "";
  const write = (t) => (out += t);
  assert.equal(await simCommand(["--seed", "5", "--trace", path.join(dir, "t.jsonl"), path.join(corpus, "crash-loop-backoff.yaml")], write), 0);
  assert.match(out, /^seed=5 scenario=crash-loop-backoff duration=4m/m);
  assert.match(out, /^ok {3}seed=5/m);
  out = "";
  assert.equal(await simCommand(["--replay", path.join(dir, "t.jsonl")], write), 0);
  assert.match(out, /no divergence/);
  fs.rmSync(dir, { recursive: true });
});
