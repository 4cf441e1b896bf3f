// The probe manager through the agent, on the fake node: schedules, thresholds, what results do
// to `started`, `ready` and the conditions, liveness kills, startup gating and readiness gates.
import { Agent } from "../../assembly/core/agent";
import { ActionTag, ContainerStatus, HandlerTag, PodConditionType, PodSpec, PodStatus, Probe, ProbeHandler, ProbeOutcome, ReadinessGate } from "../../assembly/core/model";
import { FakeNode, config, spec } from "./fake-node";

const STARTUP = "app/0";
const LIVENESS = "app/1";
const READINESS = "app/2";

function execProbe(periodSeconds: i32, failureThreshold: i32 = 3, initialDelaySeconds: i32 = 0): Probe {
  const p = new Probe();
  const h = new ProbeHandler();
  h.tag = HandlerTag.Exec;
  h.command = ["true"];
  p.handler = h;
  p.periodSeconds = periodSeconds;
  p.failureThreshold = failureThreshold;
  p.initialDelaySeconds = initialDelaySeconds;
  return p;
}

/// A pod of one container "app" with one probe (type -1: none), started and run for 2 s.
function started(policy: string, type: i32, probe: Probe | null, gate: ReadinessGate | null = null): FakeNode {
  const node = new FakeNode(new Agent(config()));
  const p = spec("u1", policy, ["app"]);
  if (type == 0) p.containers[0].startupProbe = probe;
  if (type == 1) p.containers[0].livenessProbe = probe;
  if (type == 2) p.containers[0].readinessProbe = probe;
  if (gate !== null) p.readinessGates.push(gate);
  node.agent.handlePods(node.nowMs, [p]);
  node.runUntil(node.nowMs + 2_000);
  return node;
}

function appStatus(node: FakeNode): ContainerStatus {
  return node.statuses.get("u1").containerStatuses[0];
}

function condition(status: PodStatus, type: i32): bool {
  for (let i = 0; i < status.conditions.length; i++) if (status.conditions[i].conditionType == type) return status.conditions[i].status;
  return false;
}

function eventsWith(node: FakeNode, reason: string, message: string): i32 {
  let n = 0;
  for (let i = 0; i < node.log.length; i++) {
    const a = node.log[i];
    if (a.kind.tag == ActionTag.PodEvent && a.kind.event!.reason == reason && a.kind.event!.message == message) n++;
  }
  return n;
}

function runs(node: FakeNode, key: string): i32 {
  let n = 0;
  for (let i = 0; i < node.probesRun.length; i++) if (node.probesRun[i].startsWith(key + "@")) n++;
  return n;
}

describe("readiness probe", () => {
  it("keeps a running container unready until its probe succeeds, then Ready", () => {
    const node = new FakeNode(new Agent(config()));
    const p = spec("u1", "Always", ["app"]);
    p.containers[0].readinessProbe = execProbe(10);
    node.probeOutcomes.set(READINESS, ProbeOutcome.Failure);
    node.agent.handlePods(node.nowMs, [p]);
    node.runUntil(node.nowMs + 30_000);
    const failing = appStatus(node);
    expect(failing.started).toBe(true);
    expect(failing.ready).toBe(false);
    expect(condition(node.statuses.get("u1"), PodConditionType.Ready)).toBe(false);
    expect(eventsWith(node, "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 500")).toBeGreaterThan(0);
    node.probeOutcomes.set(READINESS, ProbeOutcome.Success);
    node.runUntil(node.nowMs + 11_000);
    expect(appStatus(node).ready).toBe(true);
    expect(condition(node.statuses.get("u1"), PodConditionType.ContainersReady)).toBe(true);
    expect(condition(node.statuses.get("u1"), PodConditionType.Ready)).toBe(true);
  });

  it("probes once per period, not more", () => {
    const node = started("Always", 2, execProbe(5));
    const before = runs(node, READINESS);
    node.runUntil(node.nowMs + 50_000);
    const more = runs(node, READINESS) - before;
    expect(more).toBeGreaterThanOrEqual(9);
    expect(more).toBeLessThanOrEqual(11);
  });

  it("waits out initialDelaySeconds", () => {
    const node = new FakeNode(new Agent(config()));
    const p = spec("u1", "Always", ["app"]);
    p.containers[0].readinessProbe = execProbe(1, 3, 20);
    node.agent.handlePods(node.nowMs, [p]);
    node.runUntil(node.nowMs + 15_000);
    expect(runs(node, READINESS)).toBe(0);
    expect(appStatus(node).ready).toBe(false);
    node.runUntil(node.nowMs + 10_000);
    expect(runs(node, READINESS)).toBeGreaterThan(0);
    expect(appStatus(node).ready).toBe(true);
  });

  it("goes unready after failureThreshold failures in a row, not before", () => {
    const node = started("Always", 2, execProbe(10, 3));
    node.runUntil(node.nowMs + 15_000);
    expect(appStatus(node).ready).toBe(true);
    node.probeOutcomes.set(READINESS, ProbeOutcome.Failure);
    node.runUntil(node.nowMs + 21_000); // two failures
    expect(appStatus(node).ready).toBe(true);
    node.runUntil(node.nowMs + 10_000); // the third
    expect(appStatus(node).ready).toBe(false);
  });
});

describe("liveness probe", () => {
  it("kills and restarts a container after failureThreshold failures, without back-off", () => {
    const node = started("Always", 1, execProbe(10, 3));
    node.probeOutcomes.set(LIVENESS, ProbeOutcome.Failure);
    node.runUntil(node.nowMs + 45_000);
    expect(eventsWith(node, "Killing", "Container app failed liveness probe, will be restarted")).toBe(1);
    expect(eventsWith(node, "Unhealthy", "Liveness probe failed: HTTP probe failed with statuscode: 500")).toBeGreaterThanOrEqual(3);
    const status = appStatus(node);
    expect(status.restartCount).toBe(1);
    expect(status.reason).toBe(""); // running again, not waiting in a back-off
    expect(status.lastState!.exitCode).toBe(137);
  });

  it("kills once and never restarts under restartPolicy Never", () => {
    const node = started("Never", 1, execProbe(10, 1));
    node.probeOutcomes.set(LIVENESS, ProbeOutcome.Failure);
    node.runUntil(node.nowMs + 60_000);
    expect(eventsWith(node, "Killing", "Container app failed liveness probe")).toBe(1);
    expect(node.phase("u1")).toBe(3); // Failed
    expect(node.runningCount("app")).toBe(0);
  });

  it("drops a probe that errored: nothing is killed", () => {
    const node = started("Always", 1, execProbe(10, 1));
    node.probeOutcomes.set(LIVENESS, ProbeOutcome.Error);
    node.runUntil(node.nowMs + 60_000);
    expect(node.count(ActionTag.StopContainer)).toBe(0);
  });
});

describe("startup probe", () => {
  it("holds liveness and readiness back, and started false, until it succeeds", () => {
    const node = new FakeNode(new Agent(config()));
    const p = spec("u1", "Always", ["app"]);
    p.containers[0].startupProbe = execProbe(10, 30);
    p.containers[0].livenessProbe = execProbe(10, 1);
    p.containers[0].readinessProbe = execProbe(10, 1);
    node.probeOutcomes.set(STARTUP, ProbeOutcome.Failure);
    node.probeOutcomes.set(LIVENESS, ProbeOutcome.Failure);
    node.agent.handlePods(node.nowMs, [p]);
    node.runUntil(node.nowMs + 60_000);
    expect(appStatus(node).started).toBe(false);
    expect(appStatus(node).ready).toBe(false);
    expect(runs(node, LIVENESS)).toBe(0);
    expect(runs(node, READINESS)).toBe(0);
    expect(node.count(ActionTag.StopContainer)).toBe(0);
    node.probeOutcomes.set(STARTUP, ProbeOutcome.Success);
    node.probeOutcomes.set(LIVENESS, ProbeOutcome.Success);
    node.runUntil(node.nowMs + 25_000);
    expect(appStatus(node).started).toBe(true);
    expect(appStatus(node).ready).toBe(true);
    expect(runs(node, LIVENESS)).toBeGreaterThan(0);
  });

  it("kills a container whose startup probe fails failureThreshold times", () => {
    const node = started("Always", 0, execProbe(10, 2));
    node.probeOutcomes.set(STARTUP, ProbeOutcome.Failure);
    node.runUntil(node.nowMs + 25_000);
    expect(eventsWith(node, "Killing", "Container app failed startup probe, will be restarted")).toBe(1);
  });
});

describe("readiness gates", () => {
  it("keep Ready false while a gate's condition is missing or not True", () => {
    const node = started("Always", -1, null, new ReadinessGate("example.com/feature-1", ""));
    let status = node.statuses.get("u1");
    expect(condition(status, PodConditionType.ContainersReady)).toBe(true);
    expect(condition(status, PodConditionType.Ready)).toBe(false);
    let ready = status.conditions[2];
    expect(ready.reason).toBe("ReadinessGatesNotReady");
    expect(ready.message).toBe('corresponding condition of pod readiness gate "example.com/feature-1" does not exist.');
    const p = spec("u1", "Always", ["app"]);
    p.readinessGates.push(new ReadinessGate("example.com/feature-1", "False"));
    node.agent.handlePods(node.nowMs, [p]);
    node.runUntil(node.nowMs + 2_000);
    ready = node.statuses.get("u1").conditions[2];
    expect(ready.message).toBe('the status of pod readiness gate "example.com/feature-1" is not "True", but False');
    const q = spec("u1", "Always", ["app"]);
    q.readinessGates.push(new ReadinessGate("example.com/feature-1", "True"));
    node.agent.handlePods(node.nowMs, [q]);
    node.runUntil(node.nowMs + 2_000);
    expect(condition(node.statuses.get("u1"), PodConditionType.Ready)).toBe(true);
  });
});

function execHandler(): ProbeHandler {
  const h = new ProbeHandler();
  h.tag = HandlerTag.Exec;
  h.command = ["true"];
  return h;
}

function withHooks(postStart: bool, preStop: bool, grace: i64 = 30): FakeNode {
  const node = new FakeNode(new Agent(config()));
  const p = spec("u1", "Always", ["app"]);
  p.hasGracePeriod = true;
  p.terminationGracePeriodSeconds = grace;
  if (postStart) p.containers[0].postStart = execHandler();
  if (preStop) p.containers[0].preStop = execHandler();
  node.agent.handlePods(node.nowMs, [p]);
  return node;
}

describe("lifecycle hooks", () => {
  it("runs postStart after the start; the container counts as running after it", () => {
    const node = withHooks(true, false);
    node.runUntil(node.nowMs + 2_000);
    expect(node.hooksRun.length).toBe(1);
    expect(node.hooksRun[0].startsWith("app/0@")).toBe(true);
    expect(appStatus(node).state).toBe(1); // running
  });

  it("a failed postStart kills the container with FailedPostStartHook", () => {
    const node = new FakeNode(new Agent(config()));
    node.hookFailures.add("app/0");
    const p = spec("u1", "Always", ["app"]);
    p.containers[0].postStart = execHandler();
    node.agent.handlePods(node.nowMs, [p]);
    node.runUntil(node.nowMs + 2_000);
    expect(eventsWith(node, "FailedPostStartHook", "PostStartHook failed")).toBeGreaterThanOrEqual(1);
    expect(eventsWith(node, "Killing", "FailedPostStartHook")).toBeGreaterThanOrEqual(1);
    expect(node.newest("app")!.attempt).toBeGreaterThanOrEqual(1); // restarted by the policy
  });

  it("runs preStop before the stop, and stops with the grace that is left", () => {
    const node = withHooks(false, true, 20);
    node.runUntil(node.nowMs + 2_000);
    node.agent.handlePods(node.nowMs, []);
    node.runUntil(node.nowMs + 5_000);
    expect(node.hooksRun.length).toBe(1);
    expect(node.hooksRun[0].startsWith("app/1@")).toBe(true);
    let stops = 0;
    for (let i = 0; i < node.log.length; i++) {
      const a = node.log[i];
      if (a.kind.tag == ActionTag.StopContainer) {
        stops++;
        expect(a.kind.stop!.timeoutSeconds).toBe(20);
      }
    }
    expect(stops).toBe(1);
  });

  it("a failed preStop is an event, and the container is stopped anyway", () => {
    const node = withHooks(false, true);
    node.hookFailures.add("app/1");
    node.runUntil(node.nowMs + 2_000);
    node.agent.handlePods(node.nowMs, []);
    node.runUntil(node.nowMs + 5_000);
    expect(eventsWith(node, "FailedPreStopHook", "hook failed: exit 1")).toBe(1);
    expect(node.runningCount("app")).toBe(0);
  });
});
