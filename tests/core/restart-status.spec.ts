import { ContainerObservation, ContainerState, ContainerStatus, ContainerStatusState, PodPhase } from "../../assembly/core/model";
import { RestartPolicy, shouldContainerBeRestarted } from "../../assembly/core/restart";
import { podPhase } from "../../assembly/core/status";

function exited(code: i32): ContainerObservation {
  const c = new ContainerObservation();
  c.state = ContainerState.Exited;
  c.exitCode = code;
  return c;
}

function withState(state: i32): ContainerObservation {
  const c = new ContainerObservation();
  c.state = state;
  return c;
}

describe("shouldContainerBeRestarted", () => {
  it("creates a container that never ran, whatever the policy", () => {
    expect(shouldContainerBeRestarted(null, RestartPolicy.Never)).toBe(true);
    expect(shouldContainerBeRestarted(null, RestartPolicy.OnFailure)).toBe(true);
  });
  it("leaves a running container alone", () => {
    expect(shouldContainerBeRestarted(withState(ContainerState.Running), RestartPolicy.Always)).toBe(false);
  });
  it("recreates a created or unknown container, whatever the policy (upstream)", () => {
    expect(shouldContainerBeRestarted(withState(ContainerState.Created), RestartPolicy.Never)).toBe(true);
    expect(shouldContainerBeRestarted(withState(ContainerState.Unknown), RestartPolicy.Never)).toBe(true);
  });
  it("restarts nothing of a pod marked for deletion", () => {
    expect(shouldContainerBeRestarted(null, RestartPolicy.Always, true)).toBe(false);
    expect(shouldContainerBeRestarted(exited(1), RestartPolicy.Always, true)).toBe(false);
  });
  it("Always restarts every exit; Never none; OnFailure only non-zero", () => {
    expect(shouldContainerBeRestarted(exited(0), RestartPolicy.Always)).toBe(true);
    expect(shouldContainerBeRestarted(exited(1), RestartPolicy.Always)).toBe(true);
    expect(shouldContainerBeRestarted(exited(0), RestartPolicy.Never)).toBe(false);
    expect(shouldContainerBeRestarted(exited(137), RestartPolicy.Never)).toBe(false);
    expect(shouldContainerBeRestarted(exited(0), RestartPolicy.OnFailure)).toBe(false);
    expect(shouldContainerBeRestarted(exited(2), RestartPolicy.OnFailure)).toBe(true);
    expect(shouldContainerBeRestarted(exited(-1), RestartPolicy.OnFailure)).toBe(true);
  });
});

// A row of the getPhase table: container states as letters.
// r = running, t0 = terminated exit 0, t1 = terminated exit 1, w = waiting (never ran),
// b = waiting after a termination (back-off), n = no status yet.
function phaseOf(states: string[], policy: RestartPolicy): PodPhase {
  const statuses: ContainerStatus[] = [];
  const hasStatus: bool[] = [];
  const stoppedBefore: bool[] = [];
  for (let i = 0; i < states.length; i++) {
    const s = new ContainerStatus();
    const code = states[i];
    hasStatus.push(code != "n");
    stoppedBefore.push(code == "b");
    if (code == "r") s.state = ContainerStatusState.Running;
    else if (code == "t0" || code == "t1") {
      s.state = ContainerStatusState.Terminated;
      s.exitCode = code == "t0" ? 0 : 1;
    } else s.state = ContainerStatusState.Waiting;
    statuses.push(s);
  }
  return podPhase(statuses, hasStatus, stoppedBefore, policy);
}

describe("podPhase (upstream getPhase)", () => {
  it("is Pending while any container waits to start for the first time", () => {
    expect(phaseOf(["w"], RestartPolicy.Always)).toBe(PodPhase.Pending);
    expect(phaseOf(["r", "w"], RestartPolicy.Always)).toBe(PodPhase.Pending);
  });
  it("is Pending while a container has no status yet", () => {
    expect(phaseOf(["r", "n"], RestartPolicy.Always)).toBe(PodPhase.Pending);
  });
  it("is Running when something runs and every container has started", () => {
    expect(phaseOf(["r"], RestartPolicy.Never)).toBe(PodPhase.Running);
    expect(phaseOf(["r", "t1"], RestartPolicy.Never)).toBe(PodPhase.Running);
    expect(phaseOf(["r", "b"], RestartPolicy.Always)).toBe(PodPhase.Running);
  });
  it("all stopped: Always keeps Running (restarting)", () => {
    expect(phaseOf(["t1"], RestartPolicy.Always)).toBe(PodPhase.Running);
    expect(phaseOf(["b"], RestartPolicy.Always)).toBe(PodPhase.Running);
    expect(phaseOf(["t0", "t0"], RestartPolicy.Always)).toBe(PodPhase.Running);
  });
  it("all stopped with exit 0: Succeeded unless Always", () => {
    expect(phaseOf(["t0", "t0"], RestartPolicy.Never)).toBe(PodPhase.Succeeded);
    expect(phaseOf(["t0"], RestartPolicy.OnFailure)).toBe(PodPhase.Succeeded);
  });
  it("all stopped with a failure: Never -> Failed, OnFailure -> Running", () => {
    expect(phaseOf(["t0", "t1"], RestartPolicy.Never)).toBe(PodPhase.Failed);
    expect(phaseOf(["t0", "t1"], RestartPolicy.OnFailure)).toBe(PodPhase.Running);
    expect(phaseOf(["t0", "b"], RestartPolicy.OnFailure)).toBe(PodPhase.Running);
  });
});
