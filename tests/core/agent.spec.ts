import { Agent, RELIST_ANSWER_TIMEOUT_MS } from "../../assembly/core/agent";
import { ActionResult, ActionTag, ContainerState, ContainerStatusState, PodPhase, SandboxObservation, SandboxState } from "../../assembly/core/model";
import { FakeNode, config, spec, started } from "./fake-node";

const S: u64 = 1000;


describe("agent: starting pods", () => {
  it("asks for a relist before acting, then runs the sandbox and the container", () => {
    const node = new FakeNode(new Agent(config()));
    node.agent.handlePods(node.nowMs, [spec("u1", "Always", ["app", "side"])]);
    const first = node.agent.pollActions(node.nowMs);
    expect(first.length).toBe(1);
    expect(first[0].kind.tag).toBe(ActionTag.Relist);
    node.agent.handleRelist(node.nowMs, node.snapshot());
    node.runUntil(node.nowMs + 2 * S);
    expect(node.sandboxes.length).toBe(1);
    expect(node.runningCount("app")).toBe(1);
    expect(node.runningCount("side")).toBe(1);
    expect(node.phase("u1")).toBe(PodPhase.Running);
    expect(node.sandboxes[0].podUid).toBe("u1");
  });

  it("refuses an invalid pod and runs the valid ones", () => {
    const node = new FakeNode(new Agent(config()));
    const bad = spec("bad", "Always", ["x", "x"]);
    const rejections = node.agent.handlePods(node.nowMs, [spec("good", "Always", ["app"]), bad]);
    expect(rejections.length).toBe(1);
    expect(rejections[0].index).toBe(1);
    expect(rejections[0].field).toBe("spec.containers[1].name");
    node.runUntil(node.nowMs + 2 * S);
    expect(node.sandboxes.length).toBe(1);
    expect(node.runningCount("app")).toBe(1);
  });

  it("publishes status with increasing versions", () => {
    const node = started("u1", "Always");
    const status = node.statuses.get("u1");
    expect(status.version).toBeGreaterThan(1);
    expect(status.containerStatuses[0].state).toBe(ContainerStatusState.Running);
    expect(status.containerStatuses[0].ready).toBe(true);
  });
});

describe("agent: restart policies and crash-loop back-off", () => {
  it("Always: restarts at once, then after 10s, then 20s", () => {
    const node = started("u1", "Always");
    node.exit("app", 1);
    node.runUntil(node.nowMs + 1 * S);
    expect(node.newest("app")!.attempt).toBe(1);
    expect(node.runningCount("app")).toBe(1);

    node.exit("app", 1);
    const exitAt = node.nowMs;
    node.runUntil(exitAt + 9 * S);
    expect(node.newest("app")!.attempt).toBe(1); // still backing off
    const status = node.statuses.get("u1");
    expect(status.containerStatuses[0].reason).toBe("CrashLoopBackOff");
    expect(node.count(ActionTag.PodEvent)).toBeGreaterThan(0);
    node.runUntil(exitAt + 10 * S + 100);
    expect(node.newest("app")!.attempt).toBe(2);

    node.exit("app", 1);
    const exit2 = node.nowMs;
    node.runUntil(exit2 + 19 * S);
    expect(node.newest("app")!.attempt).toBe(2);
    node.runUntil(exit2 + 20 * S + 100);
    expect(node.newest("app")!.attempt).toBe(3);
    expect(node.statuses.get("u1").containerStatuses[0].restartCount).toBe(3);
  });

  it("Never: an exited container stays exited and the pod fails; its sandbox stops", () => {
    const node = started("u1", "Never");
    node.exit("app", 1);
    node.runUntil(node.nowMs + 60 * S);
    expect(node.newest("app")!.attempt).toBe(0);
    expect(node.phase("u1")).toBe(PodPhase.Failed);
    expect(node.sandboxes[0].state).toBe(SandboxState.NotReady);
    expect(node.statuses.get("u1").containerStatuses[0].reason).toBe("Error");
  });

  it("OnFailure: exit 0 succeeds without restart", () => {
    const node = started("u1", "OnFailure");
    node.exit("app", 0);
    node.runUntil(node.nowMs + 60 * S);
    expect(node.newest("app")!.attempt).toBe(0);
    expect(node.phase("u1")).toBe(PodPhase.Succeeded);
  });

  it("stays Running while the replacement of an exited container is created but not started", () => {
    const node = started("u1", "OnFailure");
    node.exit("app", 3);
    // Carry out everything except StartContainer: the replacement stays "created".
    let createdId = "";
    for (let i = 0; i < 30; i++) {
      node.nowMs += 100;
      const actions = node.agent.pollActions(node.nowMs);
      const results: ActionResult[] = [];
      let relist = false;
      for (let j = 0; j < actions.length; j++) {
        const a = actions[j];
        if (a.kind.tag == ActionTag.PodStatusChanged) node.statuses.set(a.podUid, a.kind.status!);
        else if (a.kind.tag == ActionTag.Relist) relist = true;
        else if (a.kind.tag == ActionTag.CreateContainer) {
          const r = node.apply(a);
          createdId = r.createdId;
          results.push(r);
        }
      }
      if (results.length > 0) node.agent.handleActionResults(node.nowMs, results);
      if (relist) node.agent.handleRelist(node.nowMs, node.snapshot());
    }
    expect(createdId.length).toBeGreaterThan(0);
    expect(node.container(createdId).state).toBe(ContainerState.Created);
    const status = node.statuses.get("u1");
    // As the kubelet shows it: still CrashLoopBackOff with the old count until the new one runs.
    expect(status.containerStatuses[0].reason).toBe("CrashLoopBackOff");
    expect(status.containerStatuses[0].restartCount).toBe(0);
    expect(status.containerStatuses[0].lastState!.exitCode).toBe(3);
    expect(node.phase("u1")).toBe(PodPhase.Running); // upstream: waiting with a last termination counts as stopped
  });

  it("OnFailure: a non-zero exit restarts", () => {
    const node = started("u1", "OnFailure");
    node.exit("app", 3);
    node.runUntil(node.nowMs + 2 * S);
    expect(node.newest("app")!.attempt).toBe(1);
    expect(node.phase("u1")).toBe(PodPhase.Running);
  });

  it("a terminal phase never changes again", () => {
    const node = started("u1", "Never");
    node.exit("app", 0);
    node.runUntil(node.nowMs + 5 * S);
    expect(node.phase("u1")).toBe(PodPhase.Succeeded);
    // Someone removes the exited container behind the agent's back.
    node.containers = [];
    node.runUntil(node.nowMs + 5 * S);
    expect(node.phase("u1")).toBe(PodPhase.Succeeded);
    expect(node.containers.length).toBe(0);
  });

  it("keeps at most one dead instance per container besides the newest", () => {
    const node = started("u1", "Always");
    for (let i = 0; i < 4; i++) {
      node.exit("app", 1);
      node.runUntil(node.nowMs + 301 * S);
    }
    expect(node.containers.length).toBeLessThanOrEqual(2);
  });
});

describe("agent: changes and removal", () => {
  it("restarts a container whose spec changed", () => {
    const node = started("u1", "Always");
    const before = node.newest("app")!.id;
    const changed = spec("u1", "Always", ["app"]);
    changed.containers[0].image = "busybox:2";
    node.agent.handlePods(node.nowMs, [changed]);
    node.runUntil(node.nowMs + 3 * S);
    const after = node.newest("app")!;
    expect(after.id).not.toBe(before);
    expect(after.image).toBe("busybox:2");
    expect(after.state).toBe(ContainerState.Running);
    expect(node.runningCount("app")).toBe(1);
  });

  it("restarts a running container whose spec changed even under Never, but not one that had exited", () => {
    const node = started("u1", "Never");
    const changed = spec("u1", "Never", ["app"]);
    changed.containers[0].image = "busybox:2";
    node.agent.handlePods(node.nowMs, [changed]);
    node.runUntil(node.nowMs + 3 * S);
    expect(node.newest("app")!.image).toBe("busybox:2");
    expect(node.runningCount("app")).toBe(1);
    expect(node.phase("u1")).toBe(PodPhase.Running);

    node.exit("app", 0); // finished on its own: Never keeps it finished
    node.runUntil(node.nowMs + 2 * S);
    const again = spec("u1", "Never", ["app"]);
    again.containers[0].image = "busybox:3";
    const since = node.log.length;
    node.agent.handlePods(node.nowMs, [again]);
    node.runUntil(node.nowMs + 3 * S);
    expect(node.count(ActionTag.CreateContainer, since)).toBe(0);
    expect(node.runningCount("app")).toBe(0);
  });

  it("a restart for a spec change is not a crash: the next crash restarts at once", () => {
    const node = started("u1", "Always");
    const changed = spec("u1", "Always", ["app"]);
    changed.containers[0].image = "busybox:2";
    node.agent.handlePods(node.nowMs, [changed]);
    node.runUntil(node.nowMs + 3 * S);
    const replaced = node.newest("app")!;
    expect(replaced.image).toBe("busybox:2");
    node.exit("app", 1);
    node.runUntil(node.nowMs + 1 * S);
    expect(node.newest("app")!.attempt).toBe(replaced.attempt + 1);
    expect(node.runningCount("app")).toBe(1);
  });

  it("stops a removed pod with its grace period, then removes everything and its cgroup", () => {
    const node = started("u1", "Always");
    const since = node.log.length;
    node.agent.handlePods(node.nowMs, []);
    node.runUntil(node.nowMs + 5 * S);
    expect(node.containers.length).toBe(0);
    expect(node.sandboxes.length).toBe(0);
    let timeout: i64 = -1;
    for (let i = since; i < node.log.length; i++) if (node.log[i].kind.tag == ActionTag.StopContainer) timeout = node.log[i].kind.stop!.timeoutSeconds;
    expect(timeout).toBe(30);
    expect(node.count(ActionTag.RemovePodCgroup, since)).toBe(1);
    expect(node.agent.podCount).toBe(0);
  });

  it("uses the pod's own grace period", () => {
    const node = new FakeNode(new Agent(config()));
    const p = spec("u1", "Always", ["app"]);
    p.hasGracePeriod = true;
    p.terminationGracePeriodSeconds = 5;
    node.agent.handlePods(node.nowMs, [p]);
    node.runUntil(node.nowMs + 2 * S);
    const since = node.log.length;
    node.agent.handlePods(node.nowMs, []);
    node.runUntil(node.nowMs + 2 * S);
    let timeout: i64 = -1;
    for (let i = since; i < node.log.length; i++) if (node.log[i].kind.tag == ActionTag.StopContainer) timeout = node.log[i].kind.stop!.timeoutSeconds;
    expect(timeout).toBe(5);
  });

  it("stops and removes an orphan sandbox it finds in the runtime", () => {
    const node = new FakeNode(new Agent(config()));
    const orphan = new SandboxObservation();
    orphan.id = "old";
    orphan.podUid = "gone";
    orphan.podName = "gone";
    orphan.podNamespace = "default";
    orphan.state = SandboxState.Ready;
    node.sandboxes.push(orphan);
    node.agent.handlePods(node.nowMs, []);
    node.runUntil(node.nowMs + 3 * S);
    expect(node.sandboxes.length).toBe(0);
  });
});

describe("agent: restarts and stale information", () => {
  it("a new agent adopts running pods instead of recreating them", () => {
    const node = started("u1", "Always");
    const id = node.newest("app")!.id;
    node.agent = new Agent(config()); // the agent restarted; the runtime kept everything
    const since = node.log.length;
    node.agent.handlePods(node.nowMs, [spec("u1", "Always", ["app"])]);
    node.runUntil(node.nowMs + 5 * S);
    expect(node.count(ActionTag.RunSandbox, since)).toBe(0);
    expect(node.count(ActionTag.CreateContainer, since)).toBe(0);
    expect(node.newest("app")!.id).toBe(id);
    expect(node.phase("u1")).toBe(PodPhase.Running);
  });

  it("a new agent waits for a pod it cannot inspect: no duplicate, no made-up status", () => {
    const node = started("u1", "Always");
    const id = node.newest("app")!.id;
    node.agent = new Agent(config()); // restarted, and ContainerStatus fails for this pod
    node.uninspectedUids = ["u1"];
    const since = node.log.length;
    node.agent.handlePods(node.nowMs, [spec("u1", "Always", ["app"])]);
    node.runUntil(node.nowMs + 5 * S);
    expect(node.count(ActionTag.RunSandbox, since)).toBe(0);
    expect(node.count(ActionTag.CreateContainer, since)).toBe(0);
    expect(node.count(ActionTag.PodStatusChanged, since)).toBe(0);
    node.uninspectedUids = [];
    node.runUntil(node.nowMs + 2 * S);
    expect(node.count(ActionTag.RunSandbox, since)).toBe(0);
    expect(node.count(ActionTag.CreateContainer, since)).toBe(0);
    expect(node.newest("app")!.id).toBe(id);
    expect(node.phase("u1")).toBe(PodPhase.Running);
  });

  it("ignores a relist older than its own last action (no duplicate container)", () => {
    const node = new FakeNode(new Agent(config()));
    node.relistLagMs = 500; // every relist was taken half a second before it arrives
    node.agent.handlePods(node.nowMs, [spec("u1", "Always", ["app"])]);
    for (let i = 0; i < 50; i++) {
      node.step();
      node.nowMs += 100;
    }
    expect(node.containers.length).toBe(1);
    expect(node.sandboxes.length).toBe(1);
    expect(node.runningCount("app")).toBe(1);
  });

  it("asks again when a relist answer is lost, after 30s", () => {
    const node = started("u1", "Always");
    // Poll until the next relist is asked for, then drop it.
    let asked = false;
    for (let i = 0; i < 20 && !asked; i++) {
      node.nowMs += 100;
      const actions = node.agent.pollActions(node.nowMs);
      for (let j = 0; j < actions.length; j++) if (actions[j].kind.tag == ActionTag.Relist) asked = true;
    }
    expect(asked).toBe(true);
    const lostAt = node.nowMs;
    expect(node.agent.pollDeadline()).toBe(lostAt + RELIST_ANSWER_TIMEOUT_MS);
    expect(node.agent.pollActions(lostAt + RELIST_ANSWER_TIMEOUT_MS - 1).length).toBe(0);
    const again = node.agent.pollActions(lostAt + RELIST_ANSWER_TIMEOUT_MS);
    expect(again.length).toBe(1);
    expect(again[0].kind.tag).toBe(ActionTag.Relist);
    expect(node.agent.abandonedRelistCount).toBe(1);
  });

  it("ignores a relist answer older than one already taken in", () => {
    const node = started("u1", "Always");
    const old = node.snapshot(); // the container is running in this one
    node.exit("app", 0);
    node.runUntil(node.nowMs + 1 * S);
    const restartedId = node.newest("app")!.id;
    const events = node.agent.plegEventCount;
    node.agent.handleRelist(node.nowMs, old); // a duplicate of an old answer, arriving late
    expect(node.agent.staleRelistCount).toBe(1);
    expect(node.agent.plegEventCount).toBe(events);
    node.runUntil(node.nowMs + 5 * S);
    expect(node.newest("app")!.id).toBe(restartedId);
    expect(node.runningCount("app")).toBe(1);
  });

  it("image pull failures: ErrImagePull, then ImagePullBackOff, retried after 10s", () => {
    const node = new FakeNode(new Agent(config()));
    node.missingImage = "busybox";
    node.agent.handlePods(node.nowMs, [spec("u1", "Always", ["app"])]);
    node.runUntil(node.nowMs + 500);
    expect(node.count(ActionTag.CreateContainer)).toBe(1);
    expect(node.statuses.get("u1").containerStatuses[0].reason).toBe("ErrImagePull");
    node.runUntil(node.nowMs + 5 * S);
    expect(node.count(ActionTag.CreateContainer)).toBe(1);
    expect(node.statuses.get("u1").containerStatuses[0].reason).toBe("ImagePullBackOff");
    node.missingImage = "";
    node.runUntil(node.nowMs + 6 * S);
    expect(node.count(ActionTag.CreateContainer)).toBe(2);
    expect(node.runningCount("app")).toBe(1);
    expect(node.phase("u1")).toBe(PodPhase.Running);
  });
});

describe("agent: pod sources", () => {
  it("a change to one pod does not wake another that waits after a failure", () => {
    const node = new FakeNode(new Agent(config()));
    node.failCreates = true;
    const a = spec("a", "Always", ["app"]);
    node.agent.handlePods(node.nowMs, [a]);
    node.runUntil(node.nowMs + 500);
    expect(node.count(ActionTag.CreateContainer)).toBe(1);
    expect(node.statuses.get("a").containerStatuses[0].reason).toBe("CreateContainerError");
    // Pod b arrives; pod a's spec is unchanged and its worker back-off (10 s) still runs.
    node.agent.handlePods(node.nowMs, [spec("a", "Always", ["app"]), spec("b", "Always", ["app"])]);
    node.runUntil(node.nowMs + 3 * S);
    let createsForA = 0;
    for (let i = 0; i < node.log.length; i++) {
      if (node.log[i].kind.tag == ActionTag.CreateContainer && node.log[i].podUid == "a") createsForA++;
    }
    expect(createsForA).toBe(1);
    node.runUntil(node.nowMs + 8 * S);
    createsForA = 0;
    for (let i = 0; i < node.log.length; i++) {
      if (node.log[i].kind.tag == ActionTag.CreateContainer && node.log[i].podUid == "a") createsForA++;
    }
    expect(createsForA).toBe(2); // retried once the 10 s are over
  });
});


describe("the pod's view of the runtime", () => {
  it("follows a relist that contradicts a local change, though the container is otherwise as last listed", () => {
    // A start the runtime acknowledges but does not carry out: the core marks the container
    // running, and the next relist (listed after that) still shows it created, exactly as the
    // relist before did. The view must take the runtime's word, so the core starts it again.
    const node = new FakeNode(new Agent(config()));
    node.ignoreStarts = true;
    node.agent.handlePods(node.nowMs, [spec("u1", "Always", ["app"])]);
    node.runUntil(node.nowMs + 5000);
    expect(node.count(ActionTag.CreateContainer)).toBe(1);
    expect(node.count(ActionTag.StartContainer)).toBeGreaterThan(2);
  });
});

describe("agent: one container's failure, a pod re-added", () => {
  it("a container that cannot be created holds none of the pod's other containers back", () => {
    const node = new FakeNode(new Agent(config()));
    node.failCreatesOf = "bad";
    node.agent.handlePods(node.nowMs, [spec("u1", "Always", ["bad", "a", "b"])]);
    node.runUntil(node.nowMs + 2 * S);
    expect(node.runningCount("a")).toBe(1);
    expect(node.runningCount("b")).toBe(1);
    expect(node.statuses.get("u1").containerStatuses[0].reason).toBe("CreateContainerError");
    let creates = 0;
    for (let i = 0; i < node.log.length; i++) if (node.log[i].kind.tag == ActionTag.CreateContainer && node.log[i].kind.create!.container.name == "bad") creates++;
    expect(creates).toBe(1);
    node.runUntil(node.nowMs + 10 * S);
    creates = 0;
    for (let i = 0; i < node.log.length; i++) if (node.log[i].kind.tag == ActionTag.CreateContainer && node.log[i].kind.create!.container.name == "bad") creates++;
    expect(creates).toBe(2); // tried again after the worker's 10 s, not before
  });

  it("a pod removed from its source and desired again with the same uid runs again", () => {
    const node = started("u1", "Always");
    node.agent.handlePods(node.nowMs, []);
    node.runUntil(node.nowMs + 40 * S);
    expect(node.runningCount("app")).toBe(0);
    node.agent.handlePods(node.nowMs, [spec("u1", "Always", ["app"])]);
    node.runUntil(node.nowMs + 5 * S);
    expect(node.runningCount("app")).toBe(1);
    expect(node.phase("u1")).toBe(PodPhase.Running);
  });

  it("a pod desired again while it still stops runs again once stopped", () => {
    const node = started("u1", "Always");
    node.agent.handlePods(node.nowMs, []);
    node.agent.pollActions(node.nowMs); // the stop is on its way
    node.agent.handlePods(node.nowMs, [spec("u1", "Always", ["app"])]);
    node.runUntil(node.nowMs + 40 * S);
    expect(node.runningCount("app")).toBe(1);
  });
});

