// Runtime events (a container's exit pushed by the runtime) hasten the relist: the exit is seen
// and the container restarted in the same round, not at the next relist period.
import { ActionTag } from "../../assembly/core/model";
import { started } from "./fake-node";

describe("runtime events", () => {
  it("an event makes the next poll relist, before the period is up", () => {
    const node = started("u1", "Always");
    node.step(); // whatever was due
    const deadline = node.agent.pollDeadline();
    expect(deadline).toBeGreaterThan(node.nowMs); // the next periodic relist is ahead
    node.nowMs += 10;
    node.agent.handleRuntimeEvent(node.nowMs);
    expect(node.agent.pollDeadline()).toBe(node.nowMs);
    const since = node.log.length;
    node.step();
    expect(node.count(ActionTag.Relist, since)).toBe(1);
  });

  it("a killed container is replaced within the same millisecond round, not a period later", () => {
    const node = started("u1", "Always");
    const before = node.newest("app")!;
    node.exit("app", 137);
    node.agent.handleRuntimeEvent(node.nowMs);
    // A few rounds at the same time (relist, then the create and start it leads to), no clock jump.
    for (let i = 0; i < 5; i++) node.step();
    const after = node.newest("app")!;
    expect(after.id).not.toBe(before.id);
    expect(node.runningCount("app")).toBe(1);
  });

  it("a burst of events costs one relist", () => {
    const node = started("u1", "Always");
    node.step();
    node.nowMs += 10;
    for (let i = 0; i < 50; i++) node.agent.handleRuntimeEvent(node.nowMs);
    const since = node.log.length;
    node.step();
    node.step();
    expect(node.count(ActionTag.Relist, since)).toBe(1);
  });

  it("without events, the exit waits for the periodic relist", () => {
    const node = started("u1", "Always");
    const before = node.newest("app")!;
    node.step();
    node.exit("app", 137);
    for (let i = 0; i < 5; i++) node.step();
    expect(node.newest("app")!.id).toBe(before.id);
  });

  it("while the runtime streams every change the periodic relist slows to five minutes; given up, the configured period returns", () => {
    const node = started("u1", "Always");
    node.step();
    node.nowMs += 10;
    node.agent.handleEventStream(node.nowMs, true);
    expect(node.agent.pollDeadline()).toBe(node.nowMs); // a relist at once: changes before the stream came as no event
    node.step();
    const relistedAtMs = node.nowMs;
    expect(node.agent.pollDeadline()).toBe(relistedAtMs + 300_000);
    // A container that dies unseen by the stream waits for the safety-net relist, not a second.
    const before = node.newest("app")!;
    node.exit("app", 137);
    node.nowMs += 60_000;
    node.step();
    expect(node.newest("app")!.id).toBe(before.id);
    // Its event relists at once.
    node.agent.handleRuntimeEvent(node.nowMs);
    for (let i = 0; i < 5; i++) node.step();
    expect(node.newest("app")!.id).not.toBe(before.id);
    // The stream broke: a relist at once, then every configured period (1 s) again.
    node.nowMs += 10;
    node.agent.handleEventStream(node.nowMs, false);
    expect(node.agent.pollDeadline()).toBe(node.nowMs);
    node.step();
    expect(node.agent.pollDeadline()).toBeLessThanOrEqual(node.nowMs + 1000);
  });

  it("a relist that fails while events drive the relists is tried again a configured period on, not five minutes", () => {
    const node = started("u1", "Always");
    node.agent.handleEventStream(node.nowMs, true);
    node.step();
    node.nowMs += 10;
    node.failRelists = true;
    node.agent.handleRuntimeEvent(node.nowMs);
    node.step(); // the relist the event asked for fails
    expect(node.agent.pollDeadline()).toBeLessThanOrEqual(node.nowMs + 1000);
    node.failRelists = false;
    const before = node.log.length;
    node.nowMs += 1000;
    node.step();
    expect(node.count(ActionTag.Relist, before)).toBe(1);
  });

  it("a pod that could not be inspected is relisted a configured period on while events drive the relists (no event will come for it)", () => {
    const node = started("u1", "Always");
    node.agent.handleEventStream(node.nowMs, true);
    node.uninspectedUids = ["u1"];
    node.step(); // the stream's relist: u1 could not be read
    expect(node.agent.pollDeadline()).toBeLessThanOrEqual(node.nowMs + 1000);
    node.uninspectedUids = [];
    node.nowMs += 1000;
    node.step(); // read now: back to the five-minute safety net
    expect(node.agent.pollDeadline()).toBe(node.nowMs + 300_000);
  });

  it("a failed runtime call is followed by a relist within the configured period while events drive the relists (its effect, if any, may come as no event)", () => {
    const node = started("u1", "Always");
    node.agent.handleEventStream(node.nowMs, true);
    node.step();
    node.failCreates = true;
    node.exit("app", 1);
    node.agent.handleRuntimeEvent(node.nowMs);
    node.step(); // the relist sees the exit
    const since = node.log.length;
    node.step(); // the replacement's create fails
    node.runUntil(node.nowMs + 1500);
    expect(node.count(ActionTag.Relist, since)).toBeGreaterThanOrEqual(1);
  });
});
