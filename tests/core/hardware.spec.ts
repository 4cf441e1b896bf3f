// The hardware managers: cpusets, the CPU manager's packed take on a 2-socket, 4-NUMA-node machine,
// the topology manager's merge under each policy (cases from upstream's policy tests), device
// choices, and the agent admitting pods with exclusive CPUs and devices.
import { Agent } from "../../assembly/core/agent";
import { ActionTag, PlannedAction, PodPhase, PodSpec, ResourceQuantity } from "../../assembly/core/model";
import { formatCpuSet, parseCpuSet } from "../../assembly/core/hardware/cpuset";
import { CpuInfo, CpuTopology } from "../../assembly/core/hardware/cpu-topology";
import { takeByTopology } from "../../assembly/core/hardware/cpu-take";
import { ResourceHints, TopologyHint, mergeHints } from "../../assembly/core/hardware/topology-hints";
import { DeviceInfo } from "../../assembly/core/hardware/device-manager";
import { HardwareConfig } from "../../assembly/core/hardware/hardware-manager";
import { NumaMemory } from "../../assembly/core/hardware/memory-manager";
import { FakeNode, config, spec } from "./fake-node";

/// 2 sockets x 2 NUMA nodes x 2 cores x 2 threads: CPU n and n+8 are the threads of one core.
function bigMachine(): CpuTopology {
  const cpus = new Array<CpuInfo>();
  for (let core = 0; core < 8; core++) {
    const socket = core / 4;
    const numa = core / 2;
    cpus.push(new CpuInfo(core, core, socket, numa));
    cpus.push(new CpuInfo(core + 8, core, socket, numa));
  }
  return new CpuTopology(cpus);
}

function take(free: string, count: i32): string {
  const out = takeByTopology(bigMachine(), parseCpuSet(free)!, count);
  return out === null ? "error" : formatCpuSet(out);
}

function hints(resource: string, list: TopologyHint[]): ResourceHints {
  const r = new ResourceHints(resource, false);
  r.hints = list;
  return r;
}

function h(mask: u64, preferred: bool): TopologyHint {
  return new TopologyHint(mask, preferred);
}

describe("cpusets", () => {
  it("parses and prints the kernel's text", () => {
    expect(formatCpuSet(parseCpuSet("3,0-1,2,8")!)).toBe("0-3,8");
    expect(formatCpuSet(parseCpuSet("")!)).toBe("");
    expect(parseCpuSet("1-0")).toBeNull();
    expect(parseCpuSet("0-99999")).toBeNull();
    expect(parseCpuSet("a")).toBeNull();
  });
});

describe("the CPU manager's take", () => {
  it("takes a whole core's threads for two CPUs, from the fullest NUMA node", () => {
    expect(take("0-15", 2)).toBe("0,8");
    // NUMA node 0 has three free CPUs, the others four: packing starts there.
    expect(take("1-7,8-15", 2)).toBe("1,9");
  });
  it("takes whole NUMA nodes and sockets when the request is that large", () => {
    expect(take("0-15", 4)).toBe("0-1,8-9");
    expect(take("0-15", 8)).toBe("0-3,8-11");
    expect(take("0-15", 12)).toBe("0-5,8-13");
  });
  it("fills a half-used core before breaking a new one", () => {
    expect(take("1-7,9-15", 1)).toBe("1");
    expect(take("0-15", 3)).toBe("0-1,8");
  });
  it("says how many were free when too few are", () => {
    expect(take("0-1", 3)).toBe("error");
  });
});

describe("the topology manager's merge", () => {
  const all: u64 = 0b1111;
  it("none admits everything with no placement", () => {
    const r = mergeHints("none", all, [hints("cpu", [])]);
    expect(r.admit).toBe(true);
    expect(r.hint.mask).toBe(0);
  });
  it("picks the preferred placement all providers share", () => {
    const r = mergeHints("restricted", 0b11, [hints("cpu", [h(0b01, true), h(0b10, true), h(0b11, false)]), hints("dev", [h(0b10, true), h(0b11, false)])]);
    expect(r.hint.mask).toBe(0b10);
    expect(r.hint.preferred).toBe(true);
    expect(r.admit).toBe(true);
  });
  it("restricted refuses a placement that is not preferred; best-effort admits it", () => {
    const providers = [hints("cpu", [h(0b01, true)]), hints("dev", [h(0b10, true)])];
    const restricted = mergeHints("restricted", 0b11, providers);
    expect(restricted.admit).toBe(false);
    const bestEffort = mergeHints("best-effort", 0b11, providers);
    expect(bestEffort.admit).toBe(true);
    expect(bestEffort.hint.preferred).toBe(false);
    expect(bestEffort.hint.mask).toBe(0b11);
  });
  it("a provider without preference leaves the others' choice", () => {
    const r = mergeHints("single-numa-node", 0b11, [new ResourceHints("memory", true), hints("cpu", [h(0b10, true), h(0b11, false)])]);
    expect(r.hint.mask).toBe(0b10);
    expect(r.admit).toBe(true);
  });
  it("single-numa-node refuses a placement across two nodes", () => {
    const r = mergeHints("single-numa-node", 0b11, [hints("cpu", [h(0b11, true)])]);
    expect(r.admit).toBe(false);
  });
  it("a resource that cannot be placed anywhere is refused under restricted", () => {
    const r = mergeHints("restricted", 0b11, [hints("dev", [])]);
    expect(r.admit).toBe(false);
  });
});

function hardwareConfig(policy: string, topology: string): HardwareConfig {
  const c = new HardwareConfig();
  c.cpus = bigMachine().cpus;
  for (let n = 0; n < 4; n++) c.numaMemory.push(new NumaMemory(n, 4 << 30));
  c.cpuPolicy = policy;
  c.reservedCpus = "0";
  c.topologyPolicy = topology;
  return c;
}

function guaranteed(uid: string, cpu: string, extra: string[]): PodSpec {
  const p = spec(uid, "Always", ["app"]);
  const c = p.containers[0];
  c.requests.push(new ResourceQuantity("cpu", cpu));
  c.limits.push(new ResourceQuantity("cpu", cpu));
  c.requests.push(new ResourceQuantity("memory", "64Mi"));
  c.limits.push(new ResourceQuantity("memory", "64Mi"));
  for (let i = 0; i < extra.length; i += 2) {
    c.requests.push(new ResourceQuantity(extra[i], extra[i + 1]));
    c.limits.push(new ResourceQuantity(extra[i], extra[i + 1]));
  }
  return p;
}

function creates(node: FakeNode, uid: string): PlannedAction[] {
  const out = new Array<PlannedAction>();
  for (let i = 0; i < node.log.length; i++) if (node.log[i].kind.tag == ActionTag.CreateContainer && node.log[i].podUid == uid) out.push(node.log[i]);
  return out;
}

describe("the agent with the static CPU policy and device plugins", () => {
  it("gives a Guaranteed container whole CPUs and everyone else the rest", () => {
    const node = new FakeNode(new Agent(config()));
    expect(node.agent.configureHardware(hardwareConfig("static", "none"))).toBe("");
    node.agent.handlePods(node.nowMs, [guaranteed("g", "2", []), spec("b", "Always", ["app"])]);
    node.runUntil(node.nowMs + 3000);
    expect(creates(node, "g")[0].kind.create!.cpusetCpus).toBe("1,9");
    expect(creates(node, "b")[0].kind.create!.cpusetCpus).toBe("0,2-8,10-15");
    // The state the host writes: one entry, the pool without it.
    expect(node.agent.hardware.cpu.assignments.length).toBe(1);
    expect(node.agent.hardware.version).toBeGreaterThan(0);
  });
  it("refuses the static policy without a reserved CPU, with upstream's words", () => {
    const agent = new Agent(config());
    const c = hardwareConfig("static", "none");
    c.reservedCpus = "";
    expect(agent.configureHardware(c)).toBe("[cpumanager] the static policy requires systemreserved.cpu + kubereserved.cpu to be greater than zero");
  });
  it("sets no CPUs aside under the none policy, whatever is reserved, even with the topology unread", () => {
    // Reserved cpu is cgroup accounting under none: a 1-CPU reservation on an unread machine starts.
    const agent = new Agent(config());
    const c = hardwareConfig("none", "none");
    c.cpus = [];
    c.reservedCpus = "";
    c.reservedCpuCount = 1;
    expect(agent.configureHardware(c)).toBe("");
    c.reservedCpus = "0-3";
    expect(agent.configureHardware(c)).toBe("");
    c.reservedCpus = "0-";
    expect(agent.configureHardware(c)).not.toBe("");
    // The static policy still needs CPUs it can set aside.
    c.cpuPolicy = "static";
    c.reservedCpus = "";
    c.cpus = bigMachine().cpus;
    c.reservedCpuCount = 17;
    const refused = agent.configureHardware(c);
    expect(refused).toBe("[cpumanager] unable to reserve the required amount of CPUs (17): not enough cpus available to satisfy request: requested=17, available=16");
  });
  it("hands out devices and refuses a pod asking for more than are free", () => {
    const node = new FakeNode(new Agent(config()));
    node.agent.handleDevices(node.nowMs, "example.com/dev", [new DeviceInfo("d1"), new DeviceInfo("d2"), new DeviceInfo("d3", false)]);
    const two = spec("two", "Always", ["app"]);
    two.containers[0].limits.push(new ResourceQuantity("example.com/dev", "2"));
    const more = spec("z-more", "Always", ["app"]);
    more.containers[0].limits.push(new ResourceQuantity("example.com/dev", "1"));
    node.agent.handlePods(node.nowMs, [two, more]);
    node.runUntil(node.nowMs + 3000);
    const create = creates(node, "two")[0].kind.create!;
    expect(create.devices.length).toBe(1);
    expect(create.devices[0].ids.join(",")).toBe("d1,d2");
    expect(node.phase("z-more")).toBe(PodPhase.Failed);
    expect(node.statuses.get("z-more").reason).toBe("UnexpectedAdmissionError");
    expect(node.statuses.get("z-more").message).toBe("Pod was rejected: Allocate failed due to requested number of devices unavailable for example.com/dev. Requested: 1, Available: 0, which is unexpected");
  });
  it("refuses a pod whose CPUs and devices cannot share a NUMA node under single-numa-node", () => {
    const node = new FakeNode(new Agent(config()));
    expect(node.agent.configureHardware(hardwareConfig("static", "single-numa-node"))).toBe("");
    node.agent.handleDevices(node.nowMs, "example.com/nic", [new DeviceInfo("n0", true, [0]), new DeviceInfo("n3", true, [3])]);
    // 6 CPUs do not fit one NUMA node (4 CPUs each): refused.
    node.agent.handlePods(node.nowMs, [guaranteed("wide", "6", ["example.com/nic", "1"]), guaranteed("fits", "2", ["example.com/nic", "1"])]);
    node.runUntil(node.nowMs + 3000);
    expect(node.statuses.get("wide").reason).toBe("TopologyAffinityError");
    expect(node.statuses.get("wide").message).toBe("Pod was rejected: Resources cannot be allocated with Topology locality");
    const create = creates(node, "fits")[0].kind.create!;
    // NUMA node 0 holds CPU 0 (reserved): its other free CPUs are 1, 8 and 9; the NIC there too.
    expect(create.cpusetCpus).toBe("1,9");
    expect(create.devices[0].ids[0]).toBe("n0");
  });
  it("frees a pod's CPUs when it ends and writes the shared pool back to running containers", () => {
    const node = new FakeNode(new Agent(config()));
    expect(node.agent.configureHardware(hardwareConfig("static", "none"))).toBe("");
    node.agent.handlePods(node.nowMs, [guaranteed("g", "2", []), spec("b", "Always", ["app"])]);
    node.runUntil(node.nowMs + 3000);
    node.agent.handlePods(node.nowMs, [spec("b", "Always", ["app"])]);
    node.runUntil(node.nowMs + 40000);
    expect(node.agent.hardware.cpu.assignments.length).toBe(0);
    let last = "";
    for (let i = 0; i < node.log.length; i++) if (node.log[i].kind.tag == ActionTag.UpdateContainerCpuset) last = node.log[i].kind.cpuset!.cpusetCpus;
    expect(last).toBe("0-15");
  });
});

describe("the managers' limits and options", () => {
  it("refuses a machine of more NUMA nodes than upstream places over", () => {
    const agent = new Agent(config());
    const c = hardwareConfig("static", "restricted");
    c.cpus = [];
    for (let i = 0; i < 10; i++) c.cpus.push(new CpuInfo(i, i, 0, i));
    expect(agent.configureHardware(c)).toBe("unsupported on machines with more than 8 NUMA Nodes");
    c.topologyPolicy = "none";
    expect(agent.configureHardware(c)).toBe("");
  });
  it("full-pcpus-only refuses a request that is not whole cores (SMTAlignmentError)", () => {
    const node = new FakeNode(new Agent(config()));
    const c = hardwareConfig("static", "none");
    c.fullPcpusOnly = true;
    expect(node.agent.configureHardware(c)).toBe("");
    node.agent.handlePods(node.nowMs, [guaranteed("odd", "3", []), guaranteed("whole", "2", [])]);
    node.runUntil(node.nowMs + 3000);
    expect(node.statuses.get("odd").reason).toBe("SMTAlignmentError");
    expect(node.statuses.get("odd").message).toBe("Pod was rejected: SMT Alignment Error: requested 3 cpus not multiple cpus per core = 2");
    expect(creates(node, "whole")[0].kind.create!.cpusetCpus).toBe("1,9");
  });
  it("the pod scope aligns every container of a pod on one NUMA node", () => {
    const node = new FakeNode(new Agent(config()));
    const c = hardwareConfig("static", "single-numa-node");
    c.topologyScope = "pod";
    expect(node.agent.configureHardware(c)).toBe("");
    const p = guaranteed("pair", "1", []);
    const second = p.containers[0];
    const other = spec("x", "Always", ["side"]).containers[0];
    other.requests = second.requests;
    other.limits = second.limits;
    p.containers.push(other);
    node.agent.handlePods(node.nowMs, [p]);
    node.runUntil(node.nowMs + 3000);
    const made = creates(node, "pair");
    expect(made.length).toBe(2);
    // CPU 0 is reserved: NUMA node 0 has 1, 8 and 9 free; both containers land there.
    const cpus = made[0].kind.create!.cpusetCpus + "," + made[1].kind.create!.cpusetCpus;
    expect(cpus == "1,9" || cpus == "9,1" || cpus == "1,8" || cpus == "8,1" || cpus == "8,9" || cpus == "9,8").toBe(true);
  });
  it("the pod scope places the pod's whole need: two containers of 2 CPUs go where 4 are free", () => {
    const node = new FakeNode(new Agent(config()));
    const c = hardwareConfig("static", "single-numa-node");
    c.topologyScope = "pod";
    expect(node.agent.configureHardware(c)).toBe("");
    const p = guaranteed("four", "2", []);
    const other = spec("x", "Always", ["side"]).containers[0];
    other.requests = p.containers[0].requests;
    other.limits = p.containers[0].limits;
    p.containers.push(other);
    node.agent.handlePods(node.nowMs, [p]);
    node.runUntil(node.nowMs + 3000);
    const made = creates(node, "four");
    expect(made.length).toBe(2);
    // NUMA node 0 has only 3 free CPUs (0 is reserved): each container would fit there alone, the
    // pod does not; node 1 (2-3, 10-11) holds both.
    const cpus = parseCpuSet(made[0].kind.create!.cpusetCpus + "," + made[1].kind.create!.cpusetCpus)!;
    expect(formatCpuSet(cpus)).toBe("2-3,10-11");
  });
});
