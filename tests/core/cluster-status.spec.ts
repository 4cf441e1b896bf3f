// What the core reports for the apiserver: last states, conditions, start time, and the
// deletion of a pod marked by the apiserver (stop with its grace, terminal phase, `finished`).
import { Agent } from "../../assembly/core/agent";
import { ActionTag, ContainerStatusState, PodConditionType, PodPhase, PodStatus } from "../../assembly/core/model";
import { FakeNode, config, spec, started } from "./fake-node";

const S: u64 = 1000;


function condition(status: PodStatus, type: i32): bool {
  for (let i = 0; i < status.conditions.length; i++) if (status.conditions[i].conditionType == type) return status.conditions[i].status;
  assert(false, "no condition");
  return false;
}

function transitionMs(status: PodStatus, type: i32): u64 {
  for (let i = 0; i < status.conditions.length; i++) if (status.conditions[i].conditionType == type) return status.conditions[i].lastTransitionMs;
  return 0;
}

function stopTimeouts(node: FakeNode, since: i32): i64[] {
  const out: i64[] = [];
  for (let i = since; i < node.log.length; i++) if (node.log[i].kind.tag == ActionTag.StopContainer) out.push(node.log[i].kind.stop!.timeoutSeconds);
  return out;
}

describe("status for the apiserver", () => {
  it("a running pod is Ready with every condition in upstream's order, started, with its start time", () => {
    const acceptedAtMs: u64 = 1_000_000;
    const node = started("u1", "Always");
    const status = node.statuses.get("u1");
    expect(status.phase).toBe(PodPhase.Running);
    expect(status.startTimeMs).toBe(acceptedAtMs);
    expect(status.conditions.length).toBe(5);
    expect(status.conditions[0].conditionType).toBe(PodConditionType.PodReadyToStartContainers);
    expect(status.conditions[1].conditionType).toBe(PodConditionType.Initialized);
    expect(status.conditions[2].conditionType).toBe(PodConditionType.Ready);
    expect(status.conditions[3].conditionType).toBe(PodConditionType.ContainersReady);
    expect(status.conditions[4].conditionType).toBe(PodConditionType.PodScheduled);
    for (let i = 0; i < 5; i++) expect(status.conditions[i].status).toBe(true);
    expect(status.containerStatuses[0].started).toBe(true);
    expect(status.containerStatuses[0].lastState).toBeNull();
    expect(status.finished).toBe(false);
  });

  it("a crash shows the exit as lastState while waiting, and Ready false with the container named", () => {
    const node = started("u1", "Always");
    const firstId = node.newest("app")!.id;
    const readySinceMs = transitionMs(node.statuses.get("u1"), PodConditionType.Ready);
    const scheduledSinceMs = transitionMs(node.statuses.get("u1"), PodConditionType.PodScheduled);
    node.exit("app", 3);
    node.runUntil(node.nowMs + 2 * S); // restarted at once
    node.exit("app", 4);
    node.runUntil(node.nowMs + 2 * S); // now in a 10 s back-off
    const status = node.statuses.get("u1");
    const c = status.containerStatuses[0];
    expect(c.state).toBe(ContainerStatusState.Waiting);
    expect(c.reason).toBe("CrashLoopBackOff");
    expect(c.started).toBe(false);
    expect(c.lastState).not.toBeNull();
    expect(c.lastState!.exitCode).toBe(4);
    expect(c.lastState!.reason).toBe("Error");
    expect(c.lastState!.containerId).not.toBe(firstId);
    expect(condition(status, PodConditionType.Ready)).toBe(false);
    expect(status.conditions[2].reason).toBe("ContainersNotReady");
    expect(status.conditions[2].message).toBe("containers with unready status: [app]");
    expect(transitionMs(status, PodConditionType.Ready)).toBeGreaterThan(readySinceMs);
    expect(transitionMs(status, PodConditionType.PodScheduled)).toBe(scheduledSinceMs); // unchanged: kept
    node.runUntil(node.nowMs + 12 * S); // running again: the previous exit stays as lastState
    const after = node.statuses.get("u1").containerStatuses[0];
    expect(after.state).toBe(ContainerStatusState.Running);
    expect(after.lastState!.exitCode).toBe(4);
  });

  it("a Succeeded pod's Ready condition says PodCompleted", () => {
    const node = started("u1", "Never");
    node.exit("app", 0);
    node.runUntil(node.nowMs + 3 * S);
    const status = node.statuses.get("u1");
    expect(status.phase).toBe(PodPhase.Succeeded);
    expect(status.conditions[2].reason).toBe("PodCompleted");
    expect(condition(status, PodConditionType.PodReadyToStartContainers)).toBe(false); // sandbox stopped
  });

  it("a Failed pod's Ready and ContainersReady conditions say PodFailed, with no message (as the upstream kubelet's)", () => {
    const node = started("u1", "Never");
    node.exit("app", 3);
    node.runUntil(node.nowMs + 3 * S);
    const status = node.statuses.get("u1");
    expect(status.phase).toBe(PodPhase.Failed);
    for (let i = 0; i < status.conditions.length; i++) {
      const c = status.conditions[i];
      if (c.conditionType != PodConditionType.Ready && c.conditionType != PodConditionType.ContainersReady) continue;
      expect(c.status).toBe(false);
      expect(c.reason).toBe("PodFailed");
      expect(c.message).toBe("");
    }
  });
});

describe("deletion marked by the apiserver", () => {
  it("stops with the deletion grace period, never restarts, ends Failed and finished, keeps the pod until it leaves", () => {
    const node = started("u1", "Always");
    const since = node.log.length;
    const deleting = spec("u1", "Always", ["app"]);
    deleting.beingDeleted = true;
    deleting.deletionGracePeriodSeconds = 7;
    node.agent.handlePods(node.nowMs, [deleting]);
    node.runUntil(node.nowMs + 5 * S);
    let timeout: i64 = -1;
    for (let i = since; i < node.log.length; i++) if (node.log[i].kind.tag == ActionTag.StopContainer) timeout = node.log[i].kind.stop!.timeoutSeconds;
    expect(timeout).toBe(7);
    expect(node.count(ActionTag.CreateContainer, since)).toBe(0);
    const status = node.statuses.get("u1");
    expect(status.phase).toBe(PodPhase.Failed); // killed: exit 137
    expect(status.finished).toBe(true);
    expect(status.containerStatuses[0].state).toBe(ContainerStatusState.Terminated);
    // Still desired (the apiserver has not deleted it yet): containers are kept for the status.
    expect(node.containers.length).toBe(1);
    node.agent.handlePods(node.nowMs, []);
    node.runUntil(node.nowMs + 5 * S);
    expect(node.containers.length).toBe(0);
    expect(node.sandboxes.length).toBe(0);
    expect(node.agent.podCount).toBe(0);
  });

  it("deleted again with a shorter grace period while stopping: stopped again with it; never under 2 s", () => {
    const node = started("u1", "Always");
    const deleting = spec("u1", "Always", ["app"]);
    deleting.beingDeleted = true;
    deleting.deletionGracePeriodSeconds = 30;
    node.agent.handlePods(node.nowMs, [deleting]);
    // One poll: the stop is asked for, and held in flight (the fake node answers on its step).
    const first = node.agent.pollActions(node.nowMs);
    let stopId: u64 = 0;
    for (let i = 0; i < first.length; i++) if (first[i].kind.tag == ActionTag.StopContainer) stopId = first[i].id;
    expect(stopId).toBeGreaterThan(0);
    const since = node.log.length;
    const sooner = spec("u1", "Always", ["app"]);
    sooner.beingDeleted = true;
    sooner.deletionGracePeriodSeconds = 0; // a grace of 0 still gets the 2 s minimum
    node.agent.handlePods(node.nowMs, [sooner]);
    node.step();
    const again = stopTimeouts(node, since);
    expect(again.length).toBe(1);
    expect(again[0]).toBe(2);
  });

  it("a pod seen first while being deleted is never started", () => {
    const node = new FakeNode(new Agent(config()));
    const deleting = spec("u1", "Always", ["app"]);
    deleting.beingDeleted = true;
    node.agent.handlePods(node.nowMs, [deleting]);
    node.runUntil(node.nowMs + 5 * S);
    expect(node.count(ActionTag.RunSandbox, 0)).toBe(0);
    expect(node.count(ActionTag.CreateContainer, 0)).toBe(0);
  });

  it("a pod the apiserver already shows finished is never started and keeps that phase", () => {
    const node = new FakeNode(new Agent(config()));
    const done = spec("u1", "Always", ["app"]);
    done.hasReportedTerminalPhase = true;
    done.reportedTerminalPhase = PodPhase.Succeeded;
    node.agent.handlePods(node.nowMs, [done]);
    node.runUntil(node.nowMs + 5 * S);
    expect(node.count(ActionTag.RunSandbox, 0)).toBe(0);
    expect(node.count(ActionTag.CreateContainer, 0)).toBe(0);
    expect(node.statuses.get("u1").phase).toBe(PodPhase.Succeeded);
  });

  it("a finished pod's containers stay while it is desired (for its logs), and go with it", () => {
    const node = started("u1", "Never");
    node.exit("app", 1);
    node.runUntil(node.nowMs + 3 * S);
    expect(node.statuses.get("u1").phase).toBe(PodPhase.Failed);
    const failed = spec("u1", "Never", ["app"]);
    failed.hasReportedTerminalPhase = true;
    failed.reportedTerminalPhase = PodPhase.Failed; // the apiserver now shows it Failed
    node.agent.handlePods(node.nowMs, [failed]);
    node.runUntil(node.nowMs + 5 * S);
    expect(node.containers.length).toBe(1);
    expect(node.statuses.get("u1").phase).toBe(PodPhase.Failed);
    node.agent.handlePods(node.nowMs, []);
    node.runUntil(node.nowMs + 5 * S);
    expect(node.containers.length).toBe(0);
  });

  it("a negative deletion grace period is refused with its field", () => {
    const node = new FakeNode(new Agent(config()));
    const deleting = spec("u1", "Always", ["app"]);
    deleting.beingDeleted = true;
    deleting.deletionGracePeriodSeconds = -1;
    const rejections = node.agent.handlePods(node.nowMs, [deleting]);
    expect(rejections.length).toBe(1);
    expect(rejections[0].field).toBe("metadata.deletionGracePeriodSeconds");
  });
});
