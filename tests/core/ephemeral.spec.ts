// Ephemeral containers (`kubectl debug`) through the agent on the fake node: started once in a
// running pod, in the target's process namespace, never restarted, never part of the pod's phase
// or readiness; and the rule behind them: an update the node cannot honour never stops a pod.
import { Agent } from "../../assembly/core/agent";
import { ActionTag, ContainerSpec, ContainerStatusState, PodConditionType, PodPhase, PodSpec } from "../../assembly/core/model";
import { FakeNode, config, spec } from "./fake-node";

function debugger_(name: string, target: string): ContainerSpec {
  const c = new ContainerSpec();
  c.name = name;
  c.image = "busybox";
  c.targetContainerName = target;
  return c;
}

function running(policy: string = "Always"): FakeNode {
  const node = new FakeNode(new Agent(config()));
  node.agent.handlePods(node.nowMs, [spec("u1", policy, ["app"])]);
  node.runUntil(node.nowMs + 2_000);
  return node;
}

function withDebugger(target: string, policy: string = "Always"): PodSpec {
  const p = spec("u1", policy, ["app"]);
  p.ephemeralContainers = [debugger_("dbg", target)];
  return p;
}

function ready(node: FakeNode): bool {
  const conditions = node.statuses.get("u1").conditions;
  for (let i = 0; i < conditions.length; i++) if (conditions[i].conditionType == PodConditionType.Ready) return conditions[i].status;
  return false;
}

describe("ephemeral containers", () => {
  it("start once in the running pod, joined to the target's process namespace, and report a status of their own", () => {
    const node = running();
    const app = node.newest("app")!;
    const mark = node.log.length;
    expect(node.agent.handlePods(node.nowMs, [withDebugger("app")]).length).toBe(0);
    node.runUntil(node.nowMs + 2_000);
    let target = "";
    for (let i = mark; i < node.log.length; i++) {
      const a = node.log[i];
      if (a.kind.tag == ActionTag.CreateContainer && a.kind.create!.container.name == "dbg") target = a.kind.create!.targetContainerId;
      expect(a.kind.tag == ActionTag.StopContainer).toBe(false, "nothing of the pod is stopped");
    }
    expect(target).toBe(app.id);
    expect(node.runningCount("dbg")).toBe(1);
    expect(node.runningCount("app")).toBe(1);
    const status = node.statuses.get("u1");
    expect(status.ephemeralContainerStatuses.length).toBe(1);
    expect(status.ephemeralContainerStatuses[0].name).toBe("dbg");
    expect(status.ephemeralContainerStatuses[0].state).toBe(ContainerStatusState.Running);
    expect(status.ephemeralContainerStatuses[0].ready).toBe(false);
    expect(status.containerStatuses.length).toBe(1);
    expect(ready(node)).toBe(true, "the debugger never makes the pod unready");
  });

  it("are never restarted, whatever the pod's policy, and their exit leaves the pod Running", () => {
    const node = running("Always");
    node.agent.handlePods(node.nowMs, [withDebugger("")]);
    node.runUntil(node.nowMs + 2_000);
    node.exit("dbg", 1);
    node.runUntil(node.nowMs + 60_000);
    expect(node.count(ActionTag.CreateContainer)).toBe(2, "app once, dbg once");
    const status = node.statuses.get("u1");
    expect(status.ephemeralContainerStatuses[0].state).toBe(ContainerStatusState.Terminated);
    expect(status.ephemeralContainerStatuses[0].exitCode).toBe(1);
    expect(status.ephemeralContainerStatuses[0].restartCount).toBe(0);
    expect(status.phase).toBe(PodPhase.Running);
  });

  it("stop with the pod", () => {
    const node = running();
    node.agent.handlePods(node.nowMs, [withDebugger("app")]);
    node.runUntil(node.nowMs + 2_000);
    node.agent.handlePods(node.nowMs, []);
    node.runUntil(node.nowMs + 10_000);
    expect(node.runningCount("dbg")).toBe(0);
    expect(node.runningCount("app")).toBe(0);
  });
});

describe("an update the node cannot honour", () => {
  it("is refused with the field named, and the running pod goes on untouched", () => {
    const node = running();
    const app = node.newest("app")!;
    const mark = node.log.length;
    const rejections = node.agent.handlePods(node.nowMs, [withDebugger("nope")]);
    expect(rejections.length).toBe(1);
    expect(rejections[0].field).toBe("spec.ephemeralContainers[0].targetContainerName");
    node.runUntil(node.nowMs + 30_000);
    expect(node.count(ActionTag.StopContainer, mark)).toBe(0);
    expect(node.count(ActionTag.StopSandbox, mark)).toBe(0);
    expect(node.count(ActionTag.CreateContainer, mark)).toBe(0);
    expect(node.newest("app")!.id).toBe(app.id);
    expect(node.phase("u1")).toBe(PodPhase.Running);
  });

  it("still lets the pod go when it is removed afterwards", () => {
    const node = running();
    node.agent.handlePods(node.nowMs, [withDebugger("nope")]);
    node.runUntil(node.nowMs + 2_000);
    node.agent.handlePods(node.nowMs, []);
    node.runUntil(node.nowMs + 10_000);
    expect(node.runningCount("app")).toBe(0);
  });
});
