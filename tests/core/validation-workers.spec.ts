import { ContainerSpec, EnvVar, PodSpec, ResourceQuantity } from "../../assembly/core/model";
import { MAX_CONTAINERS_PER_POD, validatePod } from "../../assembly/core/validation";
import { WorkerEvent, WorkerState, canTransition, transition, transitionsDot } from "../../assembly/core/pod-workers";
import { parseQuantity } from "../../assembly/core/quantity";
import { QosClass, podCgroupParent, qosClassOf } from "../../assembly/core/qos";

function container(name: string): ContainerSpec {
  const c = new ContainerSpec();
  c.name = name;
  c.image = "busybox";
  return c;
}

function pod(): PodSpec {
  const p = new PodSpec();
  p.uid = "uid-1";
  p.namespace = "default";
  p.name = "web-node1";
  p.containers = [container("app")];
  return p;
}

function fieldOf(p: PodSpec): string {
  const r = validatePod(p, 0);
  return r === null ? "" : r.field;
}

describe("validatePod", () => {
  it("accepts a valid pod", () => {
    expect(validatePod(pod(), 0)).toBeNull();
  });
  it("names the field of each problem", () => {
    let p = pod();
    p.name = "";
    expect(fieldOf(p)).toBe("metadata.name");
    p = pod();
    p.name = "Web";
    expect(fieldOf(p)).toBe("metadata.name");
    p = pod();
    p.restartPolicy = "Sometimes";
    expect(fieldOf(p)).toBe("spec.restartPolicy");
    expect(validatePod(p, 3)!.message).toBe('Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"');
    expect(validatePod(p, 3)!.index).toBe(3);
    p = pod();
    p.hasGracePeriod = true;
    p.terminationGracePeriodSeconds = -1;
    expect(fieldOf(p)).toBe("spec.terminationGracePeriodSeconds");
    p = pod();
    p.containers = [];
    expect(fieldOf(p)).toBe("spec.containers");
    p = pod();
    p.containers = [container("a"), container("a")];
    expect(fieldOf(p)).toBe("spec.containers[1].name");
    expect(validatePod(p, 0)!.message).toBe('Duplicate value: "a"');
    p = pod();
    p.containers[0].image = " ";
    expect(fieldOf(p)).toBe("spec.containers[0].image");
    p = pod();
    p.containers[0].env = [new EnvVar("A=B", "x")];
    expect(fieldOf(p)).toBe("spec.containers[0].env[0].name");
    p = pod();
    p.containers[0].limits = [new ResourceQuantity("memory", "lots")];
    expect(fieldOf(p)).toBe("spec.containers[0].resources.limits[memory]");
    // A request above its limit, as the apiserver (and the kubelet, for static pods) refuses it.
    p = pod();
    p.containers[0].requests = [new ResourceQuantity("memory", "2Gi")];
    p.containers[0].limits = [new ResourceQuantity("memory", "1Gi")];
    expect(fieldOf(p)).toBe("spec.containers[0].resources.requests");
    expect(validatePod(p, 0)!.message).toBe('Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi');
    p.containers[0].requests = [new ResourceQuantity("memory", "1024Mi")];
    expect(validatePod(p, 0)).toBeNull();
  });
  it("bounds the number of containers", () => {
    const p = pod();
    const many: ContainerSpec[] = [];
    for (let i = 0; i <= MAX_CONTAINERS_PER_POD; i++) many.push(container("c" + i.toString()));
    p.containers = many;
    expect(fieldOf(p)).toBe("spec.containers");
  });
});

describe("quantities and QoS", () => {
  it("parses Kubernetes quantities to milli-units", () => {
    expect(parseQuantity("250m").milliValue).toBe(250);
    expect(parseQuantity("1").milliValue).toBe(1000);
    expect(parseQuantity("1.5").milliValue).toBe(1500);
    expect(parseQuantity("64Mi").milliValue).toBe(64 * 1024 * 1024 * 1000);
    expect(parseQuantity("1e3").milliValue).toBe(1000000);
    expect(parseQuantity("lots").ok).toBe(false);
    expect(parseQuantity("").ok).toBe(false);
    expect(parseQuantity("1Qi").ok).toBe(false);
  });
  it("classes pods as upstream", () => {
    const p = pod();
    expect(qosClassOf(p)).toBe(QosClass.BestEffort);
    expect(podCgroupParent(p)).toBe("/kubepods/besteffort/poduid-1");
    p.containers[0].requests = [new ResourceQuantity("cpu", "100m")];
    expect(qosClassOf(p)).toBe(QosClass.Burstable);
    p.containers[0].requests = [];
    // Limits only: requests default to limits, so Guaranteed.
    p.containers[0].limits = [new ResourceQuantity("cpu", "1"), new ResourceQuantity("memory", "64Mi")];
    expect(qosClassOf(p)).toBe(QosClass.Guaranteed);
    expect(podCgroupParent(p)).toBe("/kubepods/poduid-1");
    p.containers[0].requests = [new ResourceQuantity("cpu", "1000m")];
    expect(qosClassOf(p)).toBe(QosClass.Guaranteed);
  });
});

describe("pod worker transition table", () => {
  it("moves SyncPod -> TerminatingPod -> TerminatedPod -> Forgotten", () => {
    let s = transition(WorkerState.SyncPod, WorkerEvent.Removed);
    expect(s).toBe(WorkerState.TerminatingPod);
    s = transition(s, WorkerEvent.AllStopped);
    expect(s).toBe(WorkerState.TerminatedPod);
    s = transition(s, WorkerEvent.AllRemoved);
    expect(s).toBe(WorkerState.Forgotten);
  });
  it("a terminal pod terminates; a re-added one syncs again once terminated", () => {
    expect(transition(WorkerState.SyncPod, WorkerEvent.BecameTerminal)).toBe(WorkerState.TerminatingPod);
    expect(transition(WorkerState.TerminatedPod, WorkerEvent.Readded)).toBe(WorkerState.SyncPod);
    expect(transition(WorkerState.TerminatingPod, WorkerEvent.Readded)).toBe(WorkerState.TerminatingPod);
  });
  it("refuses moves that are not in the table", () => {
    expect(canTransition(WorkerState.SyncPod, WorkerEvent.AllRemoved)).toBe(false);
    expect(canTransition(WorkerState.TerminatingPod, WorkerEvent.BecameTerminal)).toBe(false);
    expect(canTransition(WorkerState.Forgotten, WorkerEvent.Readded)).toBe(false);
  });
  it("renders the table as a state diagram", () => {
    expect(transitionsDot().includes("SyncPod -> TerminatingPod [label=\"Removed\"];")).toBe(true);
  });
});
