// A tiny in-memory node for the core's unit tests: carries out the agent's actions at once on
// in-memory sandboxes and containers, with a virtual clock. (The full simulator is the host's.)
import { Agent } from "../../assembly/core/agent";
import {
  ActionError,
  ActionResult,
  ActionTag,
  AgentConfig,
  ContainerObservation,
  ContainerSpec,
  ContainerState,
  LinuxResources,
  NodePressure,
  PlannedAction,
  PodSpec,
  PodStatus,
  ProbeOutcome,
  ProbeResult,
  RuntimeSnapshot,
  SandboxObservation,
  SandboxState,
} from "../../assembly/core/model";

export const NS_PER_MS: i64 = 1_000_000;

export function config(): AgentConfig {
  const c = new AgentConfig();
  c.nodeName = "node1";
  return c;
}

export function spec(uid: string, policy: string, names: string[]): PodSpec {
  const p = new PodSpec();
  p.uid = uid;
  p.namespace = "default";
  p.name = "pod-" + uid;
  p.restartPolicy = policy;
  for (let i = 0; i < names.length; i++) {
    const c = new ContainerSpec();
    c.name = names[i];
    c.image = "busybox";
    p.containers.push(c);
  }
  return p;
}

export class FakeNode {
  nowMs: u64 = 1_000_000;
  sandboxes: SandboxObservation[] = [];
  containers: ContainerObservation[] = [];
  log: PlannedAction[] = [];
  statuses: Map<string, PodStatus> = new Map();
  nextId: i32 = 1;
  /** Images that "exist"; creating a container with another image fails with image-pull. */
  missingImage: string = "";
  /** Fail every CreateContainer with a runtime error (not an image problem). */
  failCreates: bool = false;
  /** Fail every CreateContainer of the container with this name (the pod's others are created). */
  failCreatesOf: string = "";
  /** Answer every relist with a runtime error instead of a snapshot. */
  failRelists: bool = false;
  /** StopContainer of the container with this name takes `slowStopMs` (the clock moves on before
   *  it answers), as a container that ignores SIGTERM keeps CRI's StopContainer waiting. */
  slowStopOf: string = "";
  slowStopMs: u64 = 0;
  /** The exit code of a container a StopContainer stops (137: killed; 0: it exits on SIGTERM). */
  stopExitCode: i32 = 137;
  /** StartContainer answers success and leaves the container created. */
  ignoreStarts: bool = false;
  /** Deliver relists taken this many ms before now (a slow runtime). */
  relistLagMs: u64 = 0;
  /** Pods whose containers the host could not inspect (ContainerStatus failed). */
  uninspectedUids: string[] = [];
  /** Cgroup values by container ID (create and update) and by pod cgroup parent. */
  containerResources: Map<string, LinuxResources> = new Map();
  podCgroups: Map<string, LinuxResources> = new Map();
  /** The last node-pressure-changed, if any. */
  pressure: NodePressure | null = null;
  /** What each container's probes answer, by "<container>/<probe type>" (default: success). */
  probeOutcomes: Map<string, i32> = new Map();
  /** Hooks that fail, as "<container>/<hook type>"; hooks run, as "<container>/<hook type>@<ms>". */
  hookFailures: Set<string> = new Set();
  hooksRun: string[] = [];
  /** Probes run, as "<container>/<probe type>@<ms>". */
  probesRun: string[] = [];
  /** Volume set-ups fail while this is set, with this message. */
  volumeFailure: string = "";
  /** Pods whose volumes are set up; set-ups and tear-downs asked, as "<uid>@<ms>". */
  mounted: Set<string> = new Set();
  volumeSetUps: string[] = [];
  volumeTearDowns: string[] = [];

  constructor(public agent: Agent) {}

  snapshot(): RuntimeSnapshot {
    const s = new RuntimeSnapshot();
    s.listedAtMs = this.nowMs - this.relistLagMs;
    for (let i = 0; i < this.sandboxes.length; i++) s.sandboxes.push(this.sandboxes[i]);
    for (let i = 0; i < this.containers.length; i++) s.containers.push(this.containers[i]);
    for (let i = 0; i < this.uninspectedUids.length; i++) s.uninspectedPodUids.push(this.uninspectedUids[i]);
    return s;
  }

  /** Rounds run so far: a core that wants to be called again at once, over and over, shows here. */
  steps: i32 = 0;

  /** One round: poll, carry out everything, report. Returns how many actions there were. */
  step(): i32 {
    this.steps++;
    const actions = this.agent.pollActions(this.nowMs);
    const results: ActionResult[] = [];
    const probes: ProbeResult[] = [];
    let relist = false;
    for (let i = 0; i < actions.length; i++) {
      const a = actions[i];
      this.log.push(a);
      if (a.kind.tag == ActionTag.Relist && this.failRelists) {
        const r = new ActionResult();
        r.actionId = a.id;
        r.error = new ActionError(0, 14, "runtime unavailable");
        results.push(r);
      } else if (a.kind.tag == ActionTag.Relist) relist = true;
      else if (a.kind.tag == ActionTag.PodStatusChanged) this.statuses.set(a.podUid, a.kind.status!);
      else if (a.kind.tag == ActionTag.NodePressureChanged) this.pressure = a.kind.pressure;
      else if (a.kind.tag == ActionTag.RunProbe) probes.push(this.probe(a));
      else if (a.kind.needsResult()) results.push(this.apply(a));
    }
    if (results.length > 0) this.agent.handleActionResults(this.nowMs, results);
    if (probes.length > 0) this.agent.handleProbeResults(this.nowMs, probes);
    if (relist) this.agent.handleRelist(this.nowMs, this.snapshot());
    return actions.length;
  }

  /** Runs until `untilMs`, jumping the clock to each deadline. */
  runUntil(untilMs: u64): void {
    for (let guard = 0; guard < 100000; guard++) {
      this.step();
      const deadline = this.agent.pollDeadline();
      if (deadline <= this.nowMs) {
        this.nowMs += 1; // a round of calls takes time: a relist asked now is taken after it
        continue;
      }
      if (deadline > untilMs) break;
      this.nowMs = deadline;
    }
    this.nowMs = untilMs;
    this.step();
  }

  /** Answers a probe as `probeOutcomes` says; a container that is not running makes it error. */
  probe(a: PlannedAction): ProbeResult {
    const request = a.kind.probe!;
    const key = request.containerName + "/" + request.probeType.toString();
    this.probesRun.push(key + "@" + this.nowMs.toString());
    let running = false;
    for (let i = 0; i < this.containers.length; i++) {
      if (this.containers[i].id == request.containerId) running = this.containers[i].state == ContainerState.Running;
    }
    if (!running) return new ProbeResult(a.id, ProbeOutcome.Error, "container is not running");
    const outcome = this.probeOutcomes.has(key) ? this.probeOutcomes.get(key) : ProbeOutcome.Success;
    return new ProbeResult(a.id, outcome, outcome == ProbeOutcome.Success ? "" : "HTTP probe failed with statuscode: 500");
  }

  apply(a: PlannedAction): ActionResult {
    const r = new ActionResult();
    r.actionId = a.id;
    const k = a.kind;
    const nowNs = <i64>this.nowMs * NS_PER_MS;
    switch (k.tag) {
      case ActionTag.RunSandbox: {
        const s = new SandboxObservation();
        s.id = "sb" + (this.nextId++).toString();
        s.podUid = k.sandbox!.podUid;
        s.podName = k.sandbox!.podName;
        s.podNamespace = k.sandbox!.podNamespace;
        s.attempt = k.sandbox!.attempt;
        s.state = SandboxState.Ready;
        s.createdAtNs = nowNs;
        this.sandboxes.push(s);
        r.createdId = s.id;
        this.podCgroups.set(k.sandbox!.cgroupParent, k.sandbox!.podResources);
        break;
      }
      case ActionTag.CreateContainer: {
        if (this.failCreates || k.create!.container.name == this.failCreatesOf) {
          r.error = new ActionError(0, 2, "runtime says no");
          break;
        }
        if (k.create!.container.image == this.missingImage) {
          r.error = new ActionError(1, 0, "not found");
          break;
        }
        const c = new ContainerObservation();
        c.id = "c" + (this.nextId++).toString();
        c.sandboxId = k.create!.sandboxId;
        c.podUid = k.create!.sandbox.podUid;
        c.name = k.create!.container.name;
        c.attempt = k.create!.attempt;
        c.state = ContainerState.Created;
        c.image = k.create!.container.image;
        c.specHash = k.create!.specHash;
        c.createdAtNs = nowNs;
        this.containers.push(c);
        r.createdId = c.id;
        this.containerResources.set(c.id, k.create!.resources);
        break;
      }
      case ActionTag.StartContainer: {
        if (this.ignoreStarts) break; // said yes, did nothing
        const c = this.container(k.ref!.containerId);
        c.state = ContainerState.Running;
        c.startedAtNs = nowNs;
        break;
      }
      case ActionTag.StopContainer: {
        const c = this.container(k.stop!.containerId);
        if (c.state == ContainerState.Running && c.name == this.slowStopOf) this.nowMs += this.slowStopMs;
        if (c.state == ContainerState.Running) this.exitContainer(c, this.stopExitCode, this.stopExitCode == 0 ? "Completed" : "Error");
        break;
      }
      case ActionTag.RemoveContainer: {
        const kept: ContainerObservation[] = [];
        for (let i = 0; i < this.containers.length; i++) if (this.containers[i].id != k.ref!.containerId) kept.push(this.containers[i]);
        this.containers = kept;
        break;
      }
      case ActionTag.StopSandbox: {
        for (let i = 0; i < this.sandboxes.length; i++) if (this.sandboxes[i].id == k.text) this.sandboxes[i].state = SandboxState.NotReady;
        for (let i = 0; i < this.containers.length; i++) {
          const c = this.containers[i];
          if (c.sandboxId == k.text && c.state == ContainerState.Running) this.exitContainer(c, 137, "Error");
        }
        break;
      }
      case ActionTag.RunHook: {
        const key = k.hook!.containerName + "/" + k.hook!.hookType.toString();
        this.hooksRun.push(key + "@" + this.nowMs.toString());
        if (this.hookFailures.has(key)) r.error = new ActionError(3, 0, "hook failed: exit 1");
        break;
      }
      case ActionTag.SetUpVolumes:
        this.volumeSetUps.push(a.podUid + "@" + this.nowMs.toString());
        if (this.volumeFailure.length > 0) r.error = new ActionError(3, 0, this.volumeFailure);
        else this.mounted.add(a.podUid);
        break;
      case ActionTag.TearDownVolumes:
        this.volumeTearDowns.push(a.podUid + "@" + this.nowMs.toString());
        this.mounted.delete(a.podUid);
        break;
      case ActionTag.UpdateContainerResources:
        this.containerResources.set(k.update!.containerId, k.update!.resources);
        break;
      case ActionTag.UpdatePodCgroup:
        this.podCgroups.set(k.podCgroup!.cgroupParent, k.podCgroup!.resources);
        break;
      case ActionTag.RemoveSandbox: {
        const kept: SandboxObservation[] = [];
        for (let i = 0; i < this.sandboxes.length; i++) if (this.sandboxes[i].id != k.text) kept.push(this.sandboxes[i]);
        this.sandboxes = kept;
        break;
      }
    }
    return r;
  }

  container(id: string): ContainerObservation {
    for (let i = 0; i < this.containers.length; i++) if (this.containers[i].id == id) return this.containers[i];
    assert(false, "fake node: no container " + id);
    return new ContainerObservation();
  }

  exitContainer(c: ContainerObservation, code: i32, reason: string): void {
    // Replace rather than mutate: the agent may hold the old object from the last relist.
    const next = new ContainerObservation();
    next.id = c.id;
    next.sandboxId = c.sandboxId;
    next.podUid = c.podUid;
    next.name = c.name;
    next.attempt = c.attempt;
    next.image = c.image;
    next.specHash = c.specHash;
    next.createdAtNs = c.createdAtNs;
    next.startedAtNs = c.startedAtNs;
    next.state = ContainerState.Exited;
    next.exitCode = code;
    next.reason = reason;
    next.finishedAtNs = <i64>this.nowMs * NS_PER_MS;
    for (let i = 0; i < this.containers.length; i++) if (this.containers[i].id == c.id) this.containers[i] = next;
  }

  /** The running (or newest) container of a name. */
  newest(name: string): ContainerObservation | null {
    let best: ContainerObservation | null = null;
    for (let i = 0; i < this.containers.length; i++) {
      const c = this.containers[i];
      if (c.name == name && (best === null || c.attempt > best.attempt)) best = c;
    }
    return best;
  }

  exit(name: string, code: i32): void {
    const c = this.newest(name);
    assert(c !== null && c.state == ContainerState.Running, "fake node: " + name + " is not running");
    this.exitContainer(c!, code, code == 0 ? "Completed" : "Error");
  }

  count(tag: i32, since: i32 = 0): i32 {
    let n = 0;
    for (let i = since; i < this.log.length; i++) if (this.log[i].kind.tag == tag) n++;
    return n;
  }

  runningCount(name: string): i32 {
    let n = 0;
    for (let i = 0; i < this.containers.length; i++) if (this.containers[i].name == name && this.containers[i].state == ContainerState.Running) n++;
    return n;
  }

  phase(uid: string): i32 {
    return this.statuses.has(uid) ? this.statuses.get(uid).phase : -1;
  }
}

/** A node running one pod `uid` with a container "app" under `policy`, two seconds in. */
export function started(uid: string, policy: string): FakeNode {
  const node = new FakeNode(new Agent(config()));
  node.agent.handlePods(node.nowMs, [spec(uid, policy, ["app"])]);
  node.runUntil(node.nowMs + 2000);
  return node;
}
