// The agent with node resources: cgroup values handed out with sandboxes and containers, the
// eviction manager driven by stats passes, admission under pressure and in-place resize.
import { Agent } from "../../assembly/core/agent";
import {
  ActionTag,
  ContainerUsage,
  NodeConfig,
  NodeStats,
  PodConditionType,
  PodPhase,
  PodSpec,
  PodStatus,
  PodUsageIn,
  ResourceQuantity,
  SignalObservation,
} from "../../assembly/core/model";
import { FakeNode, config, spec } from "./fake-node";

const S: u64 = 1000;
const MI: i64 = 1024 * 1024;
const GI: i64 = 1024 * MI;

function nodeConfig(hard: string): NodeConfig {
  const c = new NodeConfig();
  c.memoryCapacityBytes = <u64>(4 * GI);
  c.allocatableMemoryBytes = <u64>(4 * GI - 100 * MI);
  c.allocatableCpuMilli = 2000;
  c.evictionHard = hard;
  return c;
}

function withResources(uid: string, container: string, requests: string[], limits: string[]): PodSpec {
  const p = spec(uid, "Always", [container]);
  for (let i = 0; i < requests.length; i += 2) p.containers[0].requests.push(new ResourceQuantity(requests[i], requests[i + 1]));
  for (let i = 0; i < limits.length; i += 2) p.containers[0].limits.push(new ResourceQuantity(limits[i], limits[i + 1]));
  return p;
}

function newNode(hard: string): FakeNode {
  const node = new FakeNode(new Agent(config()));
  expect(node.agent.configureNode(nodeConfig(hard))).toBe("");
  return node;
}

function usage(uid: string, container: string, bytes: i64): PodUsageIn {
  const u = new PodUsageIn();
  u.uid = uid;
  u.memoryWorkingSetBytes = bytes;
  u.containers.push(new ContainerUsage(container, bytes));
  return u;
}

function memoryStats(availableBytes: i64, pods: PodUsageIn[]): NodeStats {
  const s = new NodeStats();
  s.signals.push(new SignalObservation("memory.available", availableBytes, 4 * GI));
  s.pods = pods;
  return s;
}

function condition(status: PodStatus, type: i32): i32 {
  for (let i = 0; i < status.conditions.length; i++) if (status.conditions[i].conditionType == type) return i;
  return -1;
}

/** Three pods: a BestEffort hog, a Burstable pod within its request, a Guaranteed one. */
function threePods(): FakeNode {
  const node = newNode("memory.available<100Mi");
  node.agent.handlePods(node.nowMs, [
    withResources("hog", "hog-c", [], []),
    withResources("mid", "mid-c", ["memory", "256Mi"], []),
    withResources("gua", "gua-c", ["memory", "128Mi", "cpu", "500m"], ["memory", "128Mi", "cpu", "500m"]),
  ]);
  node.runUntil(node.nowMs + 2 * S);
  return node;
}

function threeUsages(): PodUsageIn[] {
  return [usage("hog", "hog-c", 500 * MI), usage("mid", "mid-c", 100 * MI), usage("gua", "gua-c", 100 * MI)];
}

/// A stats pass under nodefs.available: pod a uses 5Gi of ephemeral storage, b 1Gi.
function diskStats(availableBytes: i64): NodeStats {
  const s = new NodeStats();
  s.signals.push(new SignalObservation("nodefs.available", availableBytes, 100 * GI));
  const a = usage("a", "a-c", 10 * MI);
  a.ephemeralStorageBytes = 5 * GI;
  const b = usage("b", "b-c", 10 * MI);
  b.ephemeralStorageBytes = 1 * GI;
  s.pods = [a, b];
  return s;
}

function reclaims(node: FakeNode): i32 {
  let n = 0;
  for (let i = 0; i < node.log.length; i++) if (node.log[i].kind.tag == ActionTag.ReclaimNodeResources) n++;
  return n;
}

describe("node resources: cgroup values", () => {
  it("gives a Guaranteed container shares, quota, memory limit and -997, and its pod the totals", () => {
    const node = newNode("");
    node.agent.handlePods(node.nowMs, [withResources("g", "app", ["cpu", "500m", "memory", "64Mi"], ["cpu", "500m", "memory", "64Mi"])]);
    node.runUntil(node.nowMs + 2 * S);
    const c = node.containerResources.get(node.newest("app")!.id);
    expect(c.cpuShares).toBe(512);
    expect(c.cpuQuotaUs).toBe(50000);
    expect(c.cpuPeriodUs).toBe(100000);
    expect(c.memoryLimitBytes).toBe(64 * MI);
    expect(c.oomScoreAdj).toBe(-997);
    const pod = node.podCgroups.get("/kubepods/podg");
    expect(pod.cpuShares).toBe(512);
    expect(pod.memoryLimitBytes).toBe(64 * MI);
  });

  it("scores a Burstable container by its share of the node's memory, a BestEffort one 1000", () => {
    const node = newNode("");
    node.agent.handlePods(node.nowMs, [withResources("b", "bur", ["memory", "1Gi"], []), withResources("e", "eff", [], [])]);
    node.runUntil(node.nowMs + 2 * S);
    expect(node.containerResources.get(node.newest("bur")!.id).oomScoreAdj).toBe(750); // 1000 - 1000 * 1Gi / 4Gi
    expect(node.containerResources.get(node.newest("eff")!.id).oomScoreAdj).toBe(1000);
    expect(node.containerResources.get(node.newest("eff")!.id).cpuShares).toBe(2);
    expect(node.podCgroups.has("/kubepods/besteffort/pode")).toBe(true);
    expect(node.podCgroups.has("/kubepods/burstable/podb")).toBe(true);
  });

  it("refuses a bad eviction setting with upstream's words and keeps the old one", () => {
    const node = newNode("memory.available<100Mi");
    expect(node.agent.configureNode(nodeConfig("memory.available<-1Mi"))).toBe("eviction threshold memory.available must be positive: -1Mi");
    expect(node.agent.configureNode(nodeConfig("memory.free<1Mi"))).toBe("unsupported eviction signal memory.free");
  });
});

describe("node resources: eviction", () => {
  it("evicts the pod using most above its request, one per interval, Failed with reason Evicted", () => {
    const node = threePods();
    const before = node.log.length;
    node.agent.handleNodeStats(node.nowMs, memoryStats(50 * MI, threeUsages()));
    node.runUntil(node.nowMs + 1 * S);
    expect(node.pressure!.memory).toBe(true);
    const hog = node.statuses.get("hog");
    expect(hog.phase).toBe(PodPhase.Failed);
    expect(hog.reason).toBe("Evicted");
    expect(hog.message).toBe("The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container hog-c was using 500Mi, request is 0, has larger consumption of memory. ");
    const at = condition(hog, PodConditionType.DisruptionTarget);
    expect(at).toBeGreaterThanOrEqual(0);
    expect(hog.conditions[at].reason).toBe("TerminationByKubelet");
    expect(node.runningCount("hog-c")).toBe(0);
    expect(node.runningCount("mid-c")).toBe(1);
    // The hard threshold's grace is 1 s; every container still gets the 2 s minimum.
    let stopTimeout: i64 = -1;
    for (let i = before; i < node.log.length; i++) if (node.log[i].kind.tag == ActionTag.StopContainer) stopTimeout = node.log[i].kind.stop!.timeoutSeconds;
    expect(stopTimeout).toBe(2);

    // Still under pressure 5 s later: not yet another eviction (one per 10 s interval).
    node.nowMs += 5 * S;
    node.agent.handleNodeStats(node.nowMs, memoryStats(50 * MI, threeUsages()));
    node.runUntil(node.nowMs + 1 * S);
    expect(node.runningCount("mid-c")).toBe(1);
    expect(node.runningCount("gua-c")).toBe(1);

    // After the interval: the next in ranking order. Both remaining pods use less than they
    // request and have the same priority, so the one closest to its request goes first:
    // gua (100Mi of 128Mi, -28Mi) before mid (100Mi of 256Mi, -156Mi).
    node.nowMs += 5 * S;
    node.agent.handleNodeStats(node.nowMs, memoryStats(50 * MI, threeUsages()));
    node.runUntil(node.nowMs + 1 * S);
    expect(node.statuses.get("gua").reason).toBe("Evicted");
    expect(node.runningCount("mid-c")).toBe(1);
  });

  it("disk pressure: node-level resources are reclaimed first; a pod is evicted at the next pass only if still met", () => {
    const node = newNode("nodefs.available<10%");
    node.agent.handlePods(node.nowMs, [withResources("a", "a-c", [], []), withResources("b", "b-c", [], [])]);
    node.runUntil(node.nowMs + 2 * S);
    // First pass under pressure: reclaim, evict nobody.
    node.agent.handleNodeStats(node.nowMs, diskStats(5 * GI));
    node.runUntil(node.nowMs + 1 * S);
    expect(reclaims(node)).toBe(1);
    let reclaim = -1;
    for (let i = 0; i < node.log.length; i++) if (node.log[i].kind.tag == ActionTag.ReclaimNodeResources) reclaim = i;
    expect(node.log[reclaim].kind.text).toBe("nodefs.available");
    expect(node.log[reclaim].podUid).toBe("");
    expect(node.pressure!.disk).toBe(true);
    expect(node.runningCount("a-c")).toBe(1);
    // The reclaim freed enough: the next pass evicts nobody, and asks for nothing more.
    node.nowMs += 10 * S;
    node.agent.handleNodeStats(node.nowMs, diskStats(50 * GI));
    node.runUntil(node.nowMs + 1 * S);
    expect(reclaims(node)).toBe(1);
    expect(node.runningCount("a-c")).toBe(1);
    // Pressure again: reclaim first; still met at the next pass: the largest user is evicted.
    node.nowMs += 10 * S;
    node.agent.handleNodeStats(node.nowMs, diskStats(5 * GI));
    node.runUntil(node.nowMs + 1 * S);
    expect(reclaims(node)).toBe(2);
    expect(node.runningCount("a-c")).toBe(1);
    node.nowMs += 10 * S;
    node.agent.handleNodeStats(node.nowMs, diskStats(5 * GI));
    node.runUntil(node.nowMs + 1 * S);
    expect(node.statuses.get("a").reason).toBe("Evicted");
    // 10% as upstream's float32 0.1 of 100Gi: not a whole number of Ki, so written in bytes.
    expect(node.statuses.get("a").message).toBe("The node was low on resource: ephemeral-storage. Threshold quantity: 10737418400, available: 5Gi. ");
    expect(node.runningCount("b-c")).toBe(1);
  });

  it("reads each pod's stats by uid whatever their order, after pods leave and new ones take their slots", () => {
    const node = newNode("memory.available<100Mi");
    node.agent.handlePods(node.nowMs, [withResources("a", "a-c", [], []), withResources("b", "b-c", [], []), withResources("c", "c-c", [], [])]);
    node.runUntil(node.nowMs + 2 * S);
    node.agent.handleNodeStats(node.nowMs, memoryStats(50 * MI, [usage("a", "a-c", 100 * MI), usage("b", "b-c", 300 * MI), usage("c", "c-c", 200 * MI)]));
    node.runUntil(node.nowMs + 1 * S);
    expect(node.statuses.get("b").reason).toBe("Evicted");
    // `a` leaves (its slot is freed) and `d` comes (and may take it; Burstable, as BestEffort
    // pods are refused under memory pressure); stats now list c before d.
    node.agent.handlePods(node.nowMs, [withResources("b", "b-c", [], []), withResources("c", "c-c", [], [])]);
    node.runUntil(node.nowMs + 40 * S);
    node.agent.handlePods(node.nowMs, [withResources("b", "b-c", [], []), withResources("c", "c-c", [], []), withResources("d", "d-c", ["memory", "64Mi"], [])]);
    node.runUntil(node.nowMs + 5 * S);
    expect(node.runningCount("a-c")).toBe(0);
    expect(node.runningCount("d-c")).toBe(1);
    node.agent.handleNodeStats(node.nowMs, memoryStats(50 * MI, [usage("c", "c-c", 200 * MI), usage("d", "d-c", 900 * MI)]));
    node.runUntil(node.nowMs + 1 * S);
    expect(node.statuses.get("d").reason).toBe("Evicted");
    expect(node.runningCount("c-c")).toBe(1);
    // Next interval, d's stats gone and the order reversed again: c is all that is left.
    node.nowMs += 31 * S;
    node.agent.handleNodeStats(node.nowMs, memoryStats(50 * MI, [usage("c", "c-c", 200 * MI)]));
    node.runUntil(node.nowMs + 1 * S);
    expect(node.statuses.get("c").reason).toBe("Evicted");
  });

  it("never evicts a static (critical) pod, and never restarts an evicted one", () => {
    const node = newNode("memory.available<100Mi");
    const crit = withResources("crit", "crit-c", [], []);
    crit.staticPod = true;
    node.agent.handlePods(node.nowMs, [crit, withResources("plain", "plain-c", ["memory", "1Gi"], [])]);
    node.runUntil(node.nowMs + 2 * S);
    node.agent.handleNodeStats(node.nowMs, memoryStats(10 * MI, [usage("crit", "crit-c", 900 * MI), usage("plain", "plain-c", 10 * MI)]));
    node.runUntil(node.nowMs + 30 * S);
    expect(node.runningCount("crit-c")).toBe(1);
    expect(node.statuses.get("plain").reason).toBe("Evicted");
    expect(node.runningCount("plain-c")).toBe(0);
  });

  it("holds MemoryPressure for the transition period, and refuses BestEffort pods meanwhile", () => {
    const node = threePods();
    node.agent.handleNodeStats(node.nowMs, memoryStats(50 * MI, threeUsages()));
    node.runUntil(node.nowMs + 1 * S);
    node.agent.handleNodeStats(node.nowMs, memoryStats(2 * GI, threeUsages()));
    node.agent.handlePods(node.nowMs, [
      withResources("hog", "hog-c", [], []),
      withResources("mid", "mid-c", ["memory", "256Mi"], []),
      withResources("gua", "gua-c", ["memory", "128Mi", "cpu", "500m"], ["memory", "128Mi", "cpu", "500m"]),
      withResources("late-be", "late-be-c", [], []),
      withResources("late-bu", "late-bu-c", ["memory", "10Mi"], []),
    ]);
    node.runUntil(node.nowMs + 2 * S);
    expect(node.pressure!.memory).toBe(true);
    const refused = node.statuses.get("late-be");
    expect(refused.phase).toBe(PodPhase.Failed);
    expect(refused.reason).toBe("Evicted");
    expect(refused.message).toBe("Pod was rejected: The node had condition: [MemoryPressure]. ");
    expect(node.runningCount("late-be-c")).toBe(0);
    expect(node.runningCount("late-bu-c")).toBe(1);
    // Five minutes after pressure was last seen, the condition goes.
    node.nowMs += 301 * S;
    node.agent.handleNodeStats(node.nowMs, memoryStats(2 * GI, threeUsages()));
    node.runUntil(node.nowMs + 1 * S);
    expect(node.pressure!.memory).toBe(false);
  });
});

function resized(uid: string, container: string, memory: string, restart: bool): PodSpec {
  const p = withResources(uid, container, ["memory", memory, "cpu", "250m"], ["memory", memory, "cpu", "250m"]);
  if (restart) p.containers[0].restartOnResize.push("memory");
  return p;
}

describe("node resources: admission after an agent restart", () => {
  it("keeps a BestEffort pod the runtime already runs, even when pressure is known first", () => {
    const node = newNode("memory.available<100Mi");
    node.agent.handlePods(node.nowMs, [withResources("be", "be-c", [], [])]);
    node.runUntil(node.nowMs + 2 * S);
    const id = node.newest("be-c")!.id;
    node.agent = new Agent(config()); // the agent restarts: its state is gone
    expect(node.agent.configureNode(nodeConfig("memory.available<100Mi"))).toBe("");
    node.agent.handleNodeStats(node.nowMs, memoryStats(50 * MI, [usage("be", "be-c", 1 * MI)]));
    node.agent.handlePods(node.nowMs, [withResources("be", "be-c", [], []), withResources("new-be", "new-be-c", [], [])]);
    node.runUntil(node.nowMs + 3 * S);
    expect(node.newest("be-c")!.id).toBe(id);
    expect(node.runningCount("be-c")).toBe(1);
    expect(node.statuses.get("be").phase).toBe(PodPhase.Running);
    expect(node.statuses.get("new-be").reason).toBe("Evicted"); // a new one is refused
    expect(node.runningCount("new-be-c")).toBe(0);
  });
});

describe("node resources: in-place resize", () => {
  it("grows the pod cgroup, then the container, keeping the container and its restart count", () => {
    const node = newNode("");
    node.agent.handlePods(node.nowMs, [resized("r", "r-c", "64Mi", false)]);
    node.runUntil(node.nowMs + 2 * S);
    const id = node.newest("r-c")!.id;
    const before = node.log.length;
    node.agent.handlePods(node.nowMs, [resized("r", "r-c", "128Mi", false)]);
    node.runUntil(node.nowMs + 2 * S);
    expect(node.newest("r-c")!.id).toBe(id);
    expect(node.newest("r-c")!.attempt).toBe(0);
    expect(node.containerResources.get(id).memoryLimitBytes).toBe(128 * MI);
    expect(node.podCgroups.get("/kubepods/podr").memoryLimitBytes).toBe(128 * MI);
    let order = "";
    for (let i = before; i < node.log.length; i++) {
      const tag = node.log[i].kind.tag;
      if (tag == ActionTag.UpdatePodCgroup) order += "pod,";
      if (tag == ActionTag.UpdateContainerResources) order += "container,";
      expect(tag).not.toBe(ActionTag.StopContainer);
    }
    expect(order).toBe("pod,container,");
    const status = node.statuses.get("r");
    expect(status.containerStatuses[0].resourceLimits[0].quantity).toBe("128Mi");
    expect(status.containerStatuses[0].allocatedResources[0].quantity).toBe("128Mi");
    expect(condition(status, PodConditionType.PodResizeInProgress)).toBe(-1);
    expect(condition(status, PodConditionType.PodResizePending)).toBe(-1);
  });

  it("shrinks the container first, then the pod cgroup", () => {
    const node = newNode("");
    node.agent.handlePods(node.nowMs, [resized("s", "s-c", "128Mi", false)]);
    node.runUntil(node.nowMs + 2 * S);
    const before = node.log.length;
    node.agent.handlePods(node.nowMs, [resized("s", "s-c", "64Mi", false)]);
    node.runUntil(node.nowMs + 2 * S);
    let order = "";
    for (let i = before; i < node.log.length; i++) {
      const tag = node.log[i].kind.tag;
      if (tag == ActionTag.UpdatePodCgroup) order += "pod,";
      if (tag == ActionTag.UpdateContainerResources) order += "container,";
    }
    expect(order).toBe("container,pod,");
    expect(node.podCgroups.get("/kubepods/pods").memoryLimitBytes).toBe(64 * MI);
  });

  it("restarts the container when its resizePolicy says RestartContainer", () => {
    const node = newNode("");
    node.agent.handlePods(node.nowMs, [resized("x", "x-c", "64Mi", true)]);
    node.runUntil(node.nowMs + 2 * S);
    const id = node.newest("x-c")!.id;
    node.agent.handlePods(node.nowMs, [resized("x", "x-c", "128Mi", true)]);
    node.runUntil(node.nowMs + 3 * S);
    expect(node.newest("x-c")!.id).not.toBe(id);
    expect(node.runningCount("x-c")).toBe(1);
    expect(node.containerResources.get(node.newest("x-c")!.id).memoryLimitBytes).toBe(128 * MI);
  });

  it("marks a resize beyond the node Infeasible, and one below current usage Deferred until it fits", () => {
    const node = newNode("");
    node.agent.handlePods(node.nowMs, [resized("i", "i-c", "128Mi", false)]);
    node.runUntil(node.nowMs + 2 * S);
    node.agent.handlePods(node.nowMs, [resized("i", "i-c", "64Gi", false)]);
    node.runUntil(node.nowMs + 2 * S);
    let status = node.statuses.get("i");
    let at = condition(status, PodConditionType.PodResizePending);
    expect(at).toBeGreaterThanOrEqual(0);
    expect(status.conditions[at].reason).toBe("Infeasible");
    expect(node.count(ActionTag.UpdateContainerResources)).toBe(0);
    expect(status.containerStatuses[0].allocatedResources[0].quantity).toBe("128Mi"); // not admitted

    node.agent.handleNodeStats(node.nowMs, memoryStats(2 * GI, [usage("i", "i-c", 100 * MI)]));
    node.agent.handlePods(node.nowMs, [resized("i", "i-c", "64Mi", false)]);
    node.runUntil(node.nowMs + 2 * S);
    status = node.statuses.get("i");
    at = condition(status, PodConditionType.PodResizePending);
    expect(status.conditions[at].reason).toBe("Deferred");
    expect(node.count(ActionTag.UpdateContainerResources)).toBe(0);

    node.agent.handleNodeStats(node.nowMs, memoryStats(2 * GI, [usage("i", "i-c", 30 * MI)]));
    node.runUntil(node.nowMs + 2 * S);
    status = node.statuses.get("i");
    expect(condition(status, PodConditionType.PodResizePending)).toBe(-1);
    expect(node.containerResources.get(node.newest("i-c")!.id).memoryLimitBytes).toBe(64 * MI);
  });
});

describe("admission: resources against allocatable", () => {
  it("refuses a pod whose requests do not fit what the admitted pods leave, cpu first, with upstream's words", () => {
    // Allocatable: 2000m and 4Gi-100Mi (nodeConfig).
    const node = newNode("");
    node.agent.handlePods(node.nowMs, [withResources("a", "app", ["cpu", "1500m", "memory", "1Gi"], [])]);
    node.runUntil(node.nowMs + 2 * S);
    expect(node.phase("a")).toBe(PodPhase.Running);
    node.agent.handlePods(node.nowMs, [
      withResources("a", "app", ["cpu", "1500m", "memory", "1Gi"], []),
      withResources("b", "app", ["cpu", "600m"], []),
      withResources("c", "app", ["memory", "3Gi"], []),
      withResources("d", "app", ["cpu", "500m", "memory", "2Gi"], []),
    ]);
    node.runUntil(node.nowMs + 2 * S);
    const b = node.statuses.get("b");
    expect(b.phase).toBe(PodPhase.Failed);
    expect(b.reason).toBe("OutOfcpu");
    expect(b.message).toBe("Pod was rejected: Node didn't have enough resource: cpu, requested: 600, used: 1500, capacity: 2000");
    const c = node.statuses.get("c");
    expect(c.reason).toBe("OutOfmemory");
    expect(c.message).toBe("Pod was rejected: Node didn't have enough resource: memory, requested: " + (3 * GI).toString() + ", used: " + GI.toString() + ", capacity: " + (4 * GI - 100 * MI).toString());
    // What fits exactly is admitted.
    expect(node.phase("d")).toBe(PodPhase.Running);
  });

  it("does not hold a critical pod to it", () => {
    const node = newNode("");
    const big = withResources("s", "app", ["cpu", "5"], []);
    big.staticPod = true;
    node.agent.handlePods(node.nowMs, [big]);
    node.runUntil(node.nowMs + 2 * S);
    expect(node.phase("s")).toBe(PodPhase.Running);
  });
});

describe("pod overhead (a RuntimeClass's cost)", () => {
  it("counts in admission and is added to the pod cgroup's declared limits", () => {
    const node = newNode("");
    node.agent.handlePods(node.nowMs, [withResources("a", "app", ["cpu", "1500m"], [])]);
    node.runUntil(node.nowMs + 2 * S);
    const b = withResources("b", "app", ["cpu", "400m"], []);
    b.overhead.push(new ResourceQuantity("cpu", "200m"));
    const g = withResources("g", "app", ["cpu", "100m", "memory", "64Mi"], ["cpu", "100m", "memory", "64Mi"]);
    g.overhead.push(new ResourceQuantity("memory", "120Mi"));
    node.agent.handlePods(node.nowMs, [withResources("a", "app", ["cpu", "1500m"], []), b, g]);
    node.runUntil(node.nowMs + 2 * S);
    expect(node.statuses.get("b").message).toBe("Pod was rejected: Node didn't have enough resource: cpu, requested: 600, used: 1500, capacity: 2000");
    // Guaranteed stays Guaranteed; its cgroup's memory limit carries the overhead.
    const pod = node.podCgroups.get("/kubepods/podg");
    expect(pod.memoryLimitBytes).toBe(184 * MI);
  });
});
