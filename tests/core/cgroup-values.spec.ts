// cgroup values and OOM scores as upstream computes them (cm/helpers_linux.go, qos/policy.go).
import {
  containerCgroupValues,
  containerOomScoreAdj,
  cpuQuotaFromMilli,
  cpuSharesFromMilli,
  cpuWeightFromShares,
  podCgroupValues,
} from "../../assembly/core/cgroup-values";
import { ContainerSpec, PodSpec, ResourceQuantity } from "../../assembly/core/model";
import { QosClass, qosClassOf } from "../../assembly/core/qos";
import { podRequestMilli } from "../../assembly/core/resources";

const GI: i64 = 1024 * 1024 * 1024;

function container(name: string, requests: string[], limits: string[]): ContainerSpec {
  const c = new ContainerSpec();
  c.name = name;
  for (let i = 0; i + 1 < requests.length; i += 2) c.requests.push(new ResourceQuantity(requests[i], requests[i + 1]));
  for (let i = 0; i + 1 < limits.length; i += 2) c.limits.push(new ResourceQuantity(limits[i], limits[i + 1]));
  return c;
}

describe("cpu shares, quota and weight", () => {
  it("shares: 2 at least, 1024 per CPU, 262144 at most", () => {
    expect(cpuSharesFromMilli(0)).toBe(2);
    expect(cpuSharesFromMilli(1)).toBe(2);
    expect(cpuSharesFromMilli(100)).toBe(102);
    expect(cpuSharesFromMilli(1000)).toBe(1024);
    expect(cpuSharesFromMilli(500000)).toBe(262144);
  });
  it("quota: per 100 ms period, 1 ms at least, none without a limit", () => {
    expect(cpuQuotaFromMilli(0)).toBe(0);
    expect(cpuQuotaFromMilli(5)).toBe(1000);
    expect(cpuQuotaFromMilli(250)).toBe(25000);
    expect(cpuQuotaFromMilli(2000)).toBe(200000);
  });
  it("cgroup v2 weight from shares", () => {
    expect(cpuWeightFromShares(2)).toBe(1);
    expect(cpuWeightFromShares(1024)).toBe(39);
    expect(cpuWeightFromShares(262144)).toBe(10000);
  });
});

describe("OOM score adjustment", () => {
  it("Guaranteed and critical -997, BestEffort 1000, Burstable by its share of memory, kept within 3..999", () => {
    expect(containerOomScoreAdj(QosClass.Guaranteed, false, GI, 4 * GI)).toBe(-997);
    expect(containerOomScoreAdj(QosClass.Burstable, true, GI, 4 * GI)).toBe(-997);
    expect(containerOomScoreAdj(QosClass.BestEffort, false, 0, 4 * GI)).toBe(1000);
    expect(containerOomScoreAdj(QosClass.Burstable, false, GI, 4 * GI)).toBe(750);
    expect(containerOomScoreAdj(QosClass.Burstable, false, 4 * GI, 4 * GI)).toBe(3);
    expect(containerOomScoreAdj(QosClass.Burstable, false, 0, 4 * GI)).toBe(999);
  });
});

describe("container and pod cgroup values", () => {
  it("a container: shares from the request (the limit standing in), quota and memory from limits", () => {
    const v = containerCgroupValues(container("a", ["cpu", "250m"], ["cpu", "500m", "memory", "64Mi"]));
    expect(v.cpuShares).toBe(256);
    expect(v.cpuQuotaUs).toBe(50000);
    expect(v.memoryLimitBytes).toBe(64 * 1024 * 1024);
    const limitOnly = containerCgroupValues(container("b", [], ["cpu", "1"]));
    expect(limitOnly.cpuShares).toBe(1024);
  });
  it("a pod: summed requests; a quota and a memory limit only when every container has one", () => {
    const pod = new PodSpec();
    pod.containers.push(container("a", ["cpu", "100m"], ["cpu", "200m", "memory", "100Mi"]));
    pod.containers.push(container("b", ["cpu", "300m"], ["memory", "50Mi"]));
    const v = podCgroupValues(pod);
    expect(v.cpuShares).toBe(409);
    expect(v.cpuQuotaUs).toBe(0);
    expect(v.memoryLimitBytes).toBe(150 * 1024 * 1024);
    const bestEffort = new PodSpec();
    bestEffort.containers.push(container("a", [], []));
    expect(podCgroupValues(bestEffort).cpuShares).toBe(2);
    expect(podCgroupValues(bestEffort).memoryLimitBytes).toBe(0);
  });

  it("init containers and sidecars: each init container with the sidecars before it, against the running sum (upstream PodRequests)", () => {
    const pod = new PodSpec();
    pod.containers.push(container("app", ["cpu", "200m"], ["cpu", "200m", "memory", "100Mi"]));
    const side = container("side", ["cpu", "100m"], ["cpu", "100m", "memory", "50Mi"]);
    side.restartPolicy = "Always";
    pod.initContainers.push(container("big-init", ["cpu", "1"], ["cpu", "1", "memory", "500Mi"]));
    pod.initContainers.push(side);
    pod.initContainers.push(container("late-init", ["cpu", "250m"], ["cpu", "250m", "memory", "60Mi"]));
    // Requests: regular 200m + sidecar 100m = 300m; inits: 1000m alone, 250m + 100m sidecar: 1000m wins.
    expect(podRequestMilli(pod, "cpu")).toBe(1000);
    const v = podCgroupValues(pod);
    expect(v.cpuShares).toBe(1024);
    expect(v.cpuQuotaUs).toBe(100000);
    expect(v.memoryLimitBytes).toBe(500 * 1024 * 1024);
    // An init container without a memory limit leaves the pod without one.
    pod.initContainers.push(container("unlimited", ["cpu", "10m"], ["cpu", "10m"]));
    expect(podCgroupValues(pod).memoryLimitBytes).toBe(0);
  });
  it("QoS counts init containers: a request makes a pod Burstable, a missing limit keeps it from Guaranteed", () => {
    const pod = new PodSpec();
    pod.containers.push(container("app", [], []));
    pod.initContainers.push(container("init", ["memory", "10Mi"], []));
    expect(qosClassOf(pod)).toBe(QosClass.Burstable);
    const guaranteed = new PodSpec();
    guaranteed.containers.push(container("app", [], ["cpu", "1", "memory", "1Gi"]));
    guaranteed.initContainers.push(container("init", [], []));
    expect(qosClassOf(guaranteed)).toBe(QosClass.Burstable);
    guaranteed.initContainers[0] = container("init", [], ["cpu", "1", "memory", "1Gi"]);
    expect(qosClassOf(guaranteed)).toBe(QosClass.Guaranteed);
  });
});

