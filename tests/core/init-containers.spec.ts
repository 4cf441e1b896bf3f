// Init containers and sidecars through the agent on the fake node: order, success before the
// next, failures by policy, statuses and the Initialized condition, sidecars kept running and
// stopped last.
import { Agent } from "../../assembly/core/agent";
import { ActionTag, ContainerSpec, ContainerState, PodConditionType, PodPhase, PodSpec, PodStatus } from "../../assembly/core/model";
import { HandlerTag, ProbeHandler } from "../../assembly/core/probe-types";
import { FakeNode, config, spec } from "./fake-node";

function initContainer(name: string, sidecar: bool = false): ContainerSpec {
  const c = new ContainerSpec();
  c.name = name;
  c.image = "busybox";
  if (sidecar) c.restartPolicy = "Always";
  return c;
}

function withInit(policy: string, inits: ContainerSpec[]): PodSpec {
  const p = spec("u1", policy, ["app"]);
  p.initContainers = inits;
  return p;
}

/// Names of the containers created, in order.
function created(node: FakeNode): string[] {
  const out: string[] = [];
  for (let i = 0; i < node.log.length; i++) {
    const a = node.log[i];
    if (a.kind.tag == ActionTag.CreateContainer) out.push(a.kind.create!.container.name);
  }
  return out;
}

function stopped(node: FakeNode): string[] {
  const out: string[] = [];
  for (let i = 0; i < node.log.length; i++) {
    const a = node.log[i];
    if (a.kind.tag == ActionTag.StopContainer) out.push(a.kind.stop!.containerName);
  }
  return out;
}

function conditionOf(status: PodStatus, type: i32): bool {
  for (let i = 0; i < status.conditions.length; i++) if (status.conditions[i].conditionType == type) return status.conditions[i].status;
  return false;
}

function start(p: PodSpec): FakeNode {
  const node = new FakeNode(new Agent(config()));
  node.agent.handlePods(node.nowMs, [p]);
  node.runUntil(node.nowMs + 2_000);
  return node;
}

describe("init containers", () => {
  it("run one at a time, each to success, before the regular containers", () => {
    const node = start(withInit("Always", [initContainer("first"), initContainer("second")]));
    expect(created(node).join(",")).toBe("first");
    let status = node.statuses.get("u1");
    expect(status.phase).toBe(PodPhase.Pending);
    expect(status.initContainerStatuses.length).toBe(2);
    expect(status.initContainerStatuses[1].reason).toBe("PodInitializing");
    expect(status.containerStatuses[0].reason).toBe("PodInitializing");
    expect(conditionOf(status, PodConditionType.Initialized)).toBe(false);
    expect(status.conditions[1].message).toBe("containers with incomplete status: [first second]");
    node.exit("first", 0);
    node.runUntil(node.nowMs + 2_000);
    expect(created(node).join(",")).toBe("first,second");
    node.exit("second", 0);
    node.runUntil(node.nowMs + 2_000);
    expect(created(node).join(",")).toBe("first,second,app");
    status = node.statuses.get("u1");
    expect(status.phase).toBe(PodPhase.Running);
    expect(conditionOf(status, PodConditionType.Initialized)).toBe(true);
    expect(status.initContainerStatuses[0].reason).toBe("Completed");
    // Done with exit 0: ready, as the upstream kubelet reports it.
    expect(status.initContainerStatuses[0].ready).toBe(true);
  });

  it("a failed init container under Never fails the pod and no regular container starts", () => {
    const node = start(withInit("Never", [initContainer("setup")]));
    node.exit("setup", 3);
    node.runUntil(node.nowMs + 30_000);
    expect(created(node).join(",")).toBe("setup");
    const status = node.statuses.get("u1");
    expect(status.phase).toBe(PodPhase.Failed);
    expect(status.initContainerStatuses[0].exitCode).toBe(3);
    expect(status.initContainerStatuses[0].ready).toBe(false);
  });

  it("a failed init container under Always is restarted with back-off, and not counted done", () => {
    const node = start(withInit("Always", [initContainer("setup")]));
    node.exit("setup", 1);
    node.runUntil(node.nowMs + 2_000);
    expect(created(node).join(",")).toBe("setup,setup"); // the first restart needs no wait
    node.exit("setup", 1);
    node.runUntil(node.nowMs + 2_000);
    const status = node.statuses.get("u1");
    expect(status.initContainerStatuses[0].reason).toBe("CrashLoopBackOff");
    expect(status.phase).toBe(PodPhase.Pending);
    expect(created(node).length).toBe(2);
  });
});

describe("sidecars", () => {
  it("start in order, the next init container after the sidecar runs, and keep running beside the app", () => {
    const node = start(withInit("Always", [initContainer("proxy", true), initContainer("setup")]));
    expect(created(node).join(",")).toBe("proxy,setup");
    node.exit("setup", 0);
    node.runUntil(node.nowMs + 2_000);
    expect(created(node).join(",")).toBe("proxy,setup,app");
    expect(node.runningCount("proxy")).toBe(1);
    const status = node.statuses.get("u1");
    expect(status.phase).toBe(PodPhase.Running);
    expect(conditionOf(status, PodConditionType.ContainersReady)).toBe(true);
  });

  it("is restarted while the pod runs, without restarting the app", () => {
    const node = start(withInit("Always", [initContainer("proxy", true)]));
    node.exit("proxy", 2);
    node.runUntil(node.nowMs + 2_000);
    expect(node.runningCount("proxy")).toBe(1);
    expect(node.runningCount("app")).toBe(1);
    expect(node.newest("proxy")!.attempt).toBe(1);
    expect(node.newest("app")!.attempt).toBe(0);
  });

  it("does not keep a Job-style pod from completing: stopped once the app ended, then Succeeded", () => {
    const node = start(withInit("Never", [initContainer("proxy", true), initContainer("log", true)]));
    node.exit("app", 0);
    node.runUntil(node.nowMs + 10_000);
    expect(stopped(node).join(",")).toBe("log,proxy");
    expect(node.statuses.get("u1").phase).toBe(PodPhase.Succeeded);
  });

  it("stop after the regular containers, last first, when the pod is removed", () => {
    const node = start(withInit("Always", [initContainer("proxy", true), initContainer("log", true)]));
    node.agent.handlePods(node.nowMs, []);
    node.runUntil(node.nowMs + 10_000);
    expect(stopped(node).join(",")).toBe("app,log,proxy");
    expect(node.runningCount("proxy")).toBe(0);
  });

  it("get what is left of the pod's grace period once the app stopped, never less than the minimal window", () => {
    const p = withInit("Always", [initContainer("proxy", true)]);
    p.hasGracePeriod = true;
    p.terminationGracePeriodSeconds = 10;
    const node = start(p);
    node.slowStopOf = "app";
    node.slowStopMs = 4_000; // the app takes 4 s to exit
    node.agent.handlePods(node.nowMs, []);
    node.runUntil(node.nowMs + 10_000);
    expect(stopped(node).join(",")).toBe("app,proxy");
    expect(stopTimeoutOf(node, "app")).toBe(10);
    expect(stopTimeoutOf(node, "proxy")).toBeLessThanOrEqual(6);
    expect(stopTimeoutOf(node, "proxy")).toBeGreaterThanOrEqual(5);

    const late = withInit("Always", [initContainer("proxy", true)]);
    late.uid = "u2";
    late.hasGracePeriod = true;
    late.terminationGracePeriodSeconds = 5;
    const other = start(late);
    other.slowStopOf = "app";
    other.slowStopMs = 6_000; // past the whole budget
    other.agent.handlePods(other.nowMs, []);
    other.runUntil(other.nowMs + 10_000);
    expect(stopTimeoutOf(other, "proxy")).toBe(2);
  });
});

describe("sidecar termination ordering", () => {
  it("a sidecar's Killing event and preStop hook come at the start, with the app's stop; its own stop waits for the app", () => {
    const p = withInit("Always", [initContainer("proxy", true)]);
    p.hasGracePeriod = true;
    p.terminationGracePeriodSeconds = 10;
    const hook = new ProbeHandler();
    hook.tag = HandlerTag.Exec;
    hook.command = ["true"];
    p.initContainers[0].preStop = hook;
    const node = start(p);
    node.slowStopOf = "app";
    node.slowStopMs = 3_000;
    const startedAt = node.nowMs;
    const mark = node.log.length;
    node.agent.handlePods(node.nowMs, []);
    node.runUntil(node.nowMs + 10_000);
    expect(node.hooksRun.length).toBe(1);
    expect(node.hooksRun[0]).toBe("proxy/1@" + startedAt.toString(), "the sidecar's preStop runs at once");
    let killing = 0;
    let hookAt = -1;
    let proxyStopAt = -1;
    let appStopAt = -1;
    for (let i = mark; i < node.log.length; i++) {
      const a = node.log[i];
      if (a.kind.tag == ActionTag.PodEvent && a.kind.event!.reason == "Killing" && a.kind.event!.containerName == "proxy") killing++;
      if (a.kind.tag == ActionTag.RunHook) hookAt = i;
      if (a.kind.tag == ActionTag.StopContainer && a.kind.stop!.containerName == "app") appStopAt = i;
      if (a.kind.tag == ActionTag.StopContainer && a.kind.stop!.containerName == "proxy") proxyStopAt = i;
    }
    expect(killing).toBe(1, "one Killing event for the sidecar");
    expect(hookAt).toBeLessThan(proxyStopAt);
    expect(appStopAt).toBeLessThan(proxyStopAt);
    expect(stopTimeoutOf(node, "proxy")).toBe(7, "10 s less the 3 the app took");
  });
});

function stopTimeoutOf(node: FakeNode, name: string): i64 {
  for (let i = 0; i < node.log.length; i++) {
    const a = node.log[i];
    if (a.kind.tag == ActionTag.StopContainer && a.kind.stop!.containerName == name) return a.kind.stop!.timeoutSeconds;
  }
  return -1;
}

describe("validation of init containers", () => {
  it("refuses a name used by a regular container and a restartPolicy other than Always", () => {
    const node = new FakeNode(new Agent(config()));
    const p = withInit("Always", [initContainer("app")]);
    const bad = initContainer("x");
    bad.restartPolicy = "OnFailure";
    p.initContainers.push(bad);
    const rejections = node.agent.handlePods(node.nowMs, [p]);
    expect(rejections.length).toBe(2);
    expect(rejections[0].field).toBe("spec.initContainers[0].name");
    expect(rejections[0].message).toBe('Duplicate value: "app"');
    expect(rejections[1].field).toBe("spec.initContainers[1].restartPolicy");
    expect(rejections[1].message).toBe('Unsupported value: "OnFailure": supported values: "Always"');
  });
});

describe("activeDeadlineSeconds", () => {
  it("stops the pod once it has been active that long: Failed, DeadlineExceeded", () => {
    const node = new FakeNode(new Agent(config()));
    const p = spec("u1", "Always", ["app"]);
    p.hasActiveDeadline = true;
    p.activeDeadlineSeconds = 30;
    node.agent.handlePods(node.nowMs, [p]);
    node.runUntil(node.nowMs + 29_000);
    expect(node.runningCount("app")).toBe(1);
    expect(node.statuses.get("u1").phase).toBe(PodPhase.Running);
    node.runUntil(node.nowMs + 5_000);
    const status = node.statuses.get("u1");
    expect(status.phase).toBe(PodPhase.Failed);
    expect(status.reason).toBe("DeadlineExceeded");
    expect(status.message).toBe("Pod was active on the node longer than the specified deadline");
    expect(node.runningCount("app")).toBe(0);
  });

  it("counts from the apiserver's start time when the pod has one (an agent restart keeps the deadline)", () => {
    const node = new FakeNode(new Agent(config()));
    const p = spec("u1", "Always", ["app"]);
    p.hasActiveDeadline = true;
    p.activeDeadlineSeconds = 30;
    // The pod started 25 s before this agent first saw it.
    p.hasStartTime = true;
    p.startTimeMs = node.nowMs - 25_000;
    node.agent.handlePods(node.nowMs, [p]);
    node.runUntil(node.nowMs + 3_000);
    expect(node.statuses.get("u1").phase).toBe(PodPhase.Running);
    expect(node.statuses.get("u1").startTimeMs).toBe(p.startTimeMs);
    node.runUntil(node.nowMs + 5_000);
    expect(node.statuses.get("u1").reason).toBe("DeadlineExceeded");
  });

  it("is refused when not positive, with the apiserver's words", () => {
    const node = new FakeNode(new Agent(config()));
    const p = spec("u1", "Always", ["app"]);
    p.hasActiveDeadline = true;
    p.activeDeadlineSeconds = 0;
    const rejections = node.agent.handlePods(node.nowMs, [p]);
    expect(rejections.length).toBe(1);
    expect(rejections[0].field).toBe("spec.activeDeadlineSeconds");
    expect(rejections[0].message).toBe("Invalid value: 0: must be between 1 and 2147483647, inclusive");
  });
});
