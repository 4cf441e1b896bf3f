// Graceful node shutdown: the groups upstream's manager builds from its settings, the order and
// grace in which pods stop, what their statuses say, admission while the node shuts down, and
// when the host may let logind's lock go.
import { Agent } from "../../assembly/core/agent";
import { ShutdownGracePeriod } from "../../assembly/core/node-shutdown";
import { ActionTag, PodConditionType, PodPhase, PodSpec } from "../../assembly/core/model";
import { FakeNode, config, spec } from "./fake-node";

const S: u64 = 1000;
const CRITICAL: i32 = 2000000000;

function pod(uid: string, priority: i32, graceSeconds: i64): PodSpec {
  const p = spec(uid, "Always", ["app"]);
  p.priority = priority;
  p.hasGracePeriod = true;
  p.terminationGracePeriodSeconds = graceSeconds;
  return p;
}

/** The StopContainer actions of the log since `from`, as "uid:timeout@ms" in order. */
function stops(node: FakeNode, from: i32): string[] {
  const out: string[] = [];
  for (let i = from; i < node.log.length; i++) {
    const a = node.log[i];
    if (a.kind.tag == ActionTag.StopContainer) out.push(a.podUid + ":" + a.kind.stop!.timeoutSeconds.toString());
  }
  return out;
}

function lockActions(node: FakeNode, from: i32): string[] {
  const out: string[] = [];
  for (let i = from; i < node.log.length; i++) {
    const a = node.log[i];
    if (a.kind.tag == ActionTag.ShutdownInhibitLock) out.push(a.kind.flag ? "hold" : "release");
  }
  return out;
}

function byPriority(values: i64[]): ShutdownGracePeriod[] {
  const out: ShutdownGracePeriod[] = [];
  for (let i = 0; i < values.length; i += 2) out.push(new ShutdownGracePeriod(<i32>values[i], values[i + 1]));
  return out;
}

function running(pods: PodSpec[]): FakeNode {
  const node = new FakeNode(new Agent(config()));
  node.agent.handlePods(node.nowMs, pods);
  node.runUntil(node.nowMs + 2 * S);
  return node;
}

describe("node shutdown: configuration", () => {
  it("migrates shutdownGracePeriod and shutdownGracePeriodCriticalPods to two groups", () => {
    const agent = new Agent(config());
    expect(agent.configureNodeShutdown(30, 10, [])).toBe(30 * S);
  });

  it("is off without a grace period, or when the critical part is larger", () => {
    const agent = new Agent(config());
    expect(agent.configureNodeShutdown(0, 0, [])).toBe(0);
    expect(agent.configureNodeShutdown(10, 20, [])).toBe(0);
    agent.handleNodeShutdown(1000, true);
    expect(agent.nodeShuttingDown).toBe(false);
  });

  it("takes shutdownGracePeriodByPodPriority over the plain settings; the delay is every group's sum", () => {
    const agent = new Agent(config());
    expect(agent.configureNodeShutdown(30, 10, byPriority([100000, 10, 0, 20, 10000, 5]))).toBe(35 * S);
  });
});

describe("node shutdown: stopping pods", () => {
  it("stops groups lowest priority first, each with its grace or the pod's shorter one", () => {
    const node = running([pod("low-a", 0, 30), pod("low-b", 5, 3), pod("mid", 1000, 60), pod("crit", CRITICAL, 60)]);
    node.agent.configureNodeShutdown(0, 0, byPriority([0, 10, 1000, 20, CRITICAL, 15]));
    const from = node.log.length;
    node.agent.handleNodeShutdown(node.nowMs, true);
    expect(node.agent.nodeShuttingDown).toBe(true);
    node.step();
    // Only the lowest group stops first, each with min(group grace, its own).
    expect(stops(node, from).join(",")).toBe("low-a:10,low-b:3");
    expect(lockActions(node, from).length).toBe(0);
    node.runUntil(node.nowMs + 60 * S);
    expect(stops(node, from).join(",")).toBe("low-a:10,low-b:3,mid:20,crit:15");
    expect(lockActions(node, from).join(",")).toBe("release");
    // Released after the last stop.
    let lastStop = 0;
    let release = 0;
    for (let i = from; i < node.log.length; i++) {
      if (node.log[i].kind.tag == ActionTag.StopContainer) lastStop = i;
      if (node.log[i].kind.tag == ActionTag.ShutdownInhibitLock) release = i;
    }
    expect(release).toBeGreaterThan(lastStop);
  });

  it("says what upstream says in each stopped pod's status", () => {
    const node = running([pod("a", 0, 30)]);
    node.agent.configureNodeShutdown(20, 5, []);
    node.agent.handleNodeShutdown(node.nowMs, true);
    node.runUntil(node.nowMs + 30 * S);
    const status = node.statuses.get("a");
    expect(status.phase).toBe(PodPhase.Failed);
    expect(status.reason).toBe("Terminated");
    expect(status.message).toBe("Pod was terminated in response to imminent node shutdown.");
    let disruption = false;
    for (let i = 0; i < status.conditions.length; i++) {
      const c = status.conditions[i];
      if (c.conditionType == PodConditionType.DisruptionTarget) {
        disruption = c.status && c.reason == "TerminationByKubelet" && c.message == "Pod was terminated in response to imminent node shutdown.";
      }
    }
    expect(disruption).toBe(true);
    // Not restarted, though its policy is Always.
    expect(node.runningCount("app")).toBe(0);
  });

  it("ends a pod whose containers exit 0 on SIGTERM Succeeded, without the reason, as upstream's final status", () => {
    const node = running([pod("a", 0, 30)]);
    node.stopExitCode = 0;
    node.agent.configureNodeShutdown(20, 5, []);
    node.agent.handleNodeShutdown(node.nowMs, true);
    node.runUntil(node.nowMs + 30 * S);
    const status = node.statuses.get("a");
    expect(status.phase).toBe(PodPhase.Succeeded);
    expect(status.reason).toBe("");
    let disruption = false;
    for (let i = 0; i < status.conditions.length; i++) if (status.conditions[i].conditionType == PodConditionType.DisruptionTarget) disruption = status.conditions[i].status;
    expect(disruption).toBe(true);
    expect(node.runningCount("app")).toBe(0);
  });

  it("waits no longer than a group's grace for its pods before the next group", () => {
    const node = running([pod("low", 0, 30), pod("crit", CRITICAL, 30)]);
    node.agent.configureNodeShutdown(0, 0, byPriority([0, 10, CRITICAL, 5]));
    const from = node.log.length;
    node.agent.handleNodeShutdown(node.nowMs, true);
    // The low pod's stop never answers: its group holds the next for 10 s, no more.
    const started = node.nowMs;
    const actions = node.agent.pollActions(node.nowMs);
    for (let i = 0; i < actions.length; i++) node.log.push(actions[i]);
    expect(stops(node, from).join(",")).toBe("low:10");
    expect(node.agent.pollDeadline()).toBeLessThanOrEqual(started + 10 * S);
    node.nowMs = started + 10 * S - 1;
    const early = node.agent.pollActions(node.nowMs);
    for (let i = 0; i < early.length; i++) node.log.push(early[i]);
    expect(stops(node, from).join(",")).toBe("low:10");
    node.nowMs = started + 10 * S;
    const next = node.agent.pollActions(node.nowMs);
    for (let i = 0; i < next.length; i++) node.log.push(next[i]);
    expect(stops(node, from).join(",")).toBe("low:10,crit:5");
  });

  it("releases the lock at once when no pod runs", () => {
    const node = running([]);
    node.agent.configureNodeShutdown(20, 5, []);
    const from = node.log.length;
    node.agent.handleNodeShutdown(node.nowMs, true);
    node.step();
    expect(lockActions(node, from).join(",")).toBe("release");
  });
});

describe("node shutdown: admission and cancellation", () => {
  it("refuses a new pod while shutting down, critical or not, and admits again after a cancellation", () => {
    const node = running([pod("a", 0, 30)]);
    node.agent.configureNodeShutdown(20, 5, []);
    node.agent.handleNodeShutdown(node.nowMs, true);
    node.runUntil(node.nowMs + 30 * S);
    node.agent.handlePods(node.nowMs, [pod("a", 0, 30), pod("late", CRITICAL, 30)]);
    node.runUntil(node.nowMs + 2 * S);
    const late = node.statuses.get("late");
    expect(late.phase).toBe(PodPhase.Failed);
    expect(late.reason).toBe("NodeShutdown");
    expect(late.message).toBe("Pod was rejected: Pod was rejected as the node is shutting down.");

    const from = node.log.length;
    node.agent.handleNodeShutdown(node.nowMs, false);
    expect(node.agent.nodeShuttingDown).toBe(false);
    node.agent.handlePods(node.nowMs, [pod("a", 0, 30), pod("late", CRITICAL, 30), pod("after", 0, 30)]);
    node.runUntil(node.nowMs + 2 * S);
    expect(lockActions(node, from).join(",")).toBe("hold");
    expect(node.phase("after")).toBe(PodPhase.Running);
  });

  it("applies a cancellation that comes while pods stop only once they have", () => {
    const node = running([pod("a", 0, 30)]);
    node.agent.configureNodeShutdown(0, 0, byPriority([0, 10]));
    const from = node.log.length;
    node.agent.handleNodeShutdown(node.nowMs, true);
    const actions = node.agent.pollActions(node.nowMs);
    for (let i = 0; i < actions.length; i++) node.log.push(actions[i]);
    node.agent.handleNodeShutdown(node.nowMs, false);
    expect(node.agent.nodeShuttingDown).toBe(true);
    node.nowMs += 10 * S;
    const next = node.agent.pollActions(node.nowMs);
    for (let i = 0; i < next.length; i++) node.log.push(next[i]);
    expect(lockActions(node, from).join(",")).toBe("release,hold");
    expect(node.agent.nodeShuttingDown).toBe(false);
  });
});
