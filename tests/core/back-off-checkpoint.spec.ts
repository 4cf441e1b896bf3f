// The crash-loop back-off across an agent restart: a host checkpoints `backOffs` and gives them
// to the next agent with `restoreBackOffs`, so a restarted agent does not restart every
// crash-looping container at once (the kubelet forgets its back-off when it restarts).
import { Agent } from "../../assembly/core/agent";
import { BackOffCheckpoint } from "../../assembly/core/backoff";
import { FakeNode, config, spec, started } from "./fake-node";

const S: u64 = 1000;

/** A node whose container has crashed three times: the next wait is 40 s. */
function crashLooping(): FakeNode {
  const node = started("u1", "Always");
  for (let i = 0; i < 3; i++) {
    node.exit("app", 1);
    node.runUntil(node.nowMs + 61 * S);
  }
  node.exit("app", 1);
  node.runUntil(node.nowMs + 1 * S);
  return node;
}

/** The agent replaced by a new one, as after an agent restart; `entries` given back to it. */
function restart(node: FakeNode, entries: BackOffCheckpoint[]): void {
  node.agent = new Agent(config());
  node.agent.restoreBackOffs(node.nowMs, entries);
  node.agent.handlePods(node.nowMs, [spec("u1", "Always", ["app"])]);
}

describe("crash-loop back-off checkpoints", () => {
  it("lists the entries in force, with the wait and when it was set", () => {
    const node = crashLooping();
    const entries = node.agent.backOffs(node.nowMs);
    expect(entries.length).toBe(1);
    expect(entries[0].durationMs).toBe(40 * S);
    expect(entries[0].key.includes("u1")).toBe(true);
    // Expired (idle for more than 2 x the 300 s maximum): left out.
    expect(node.agent.backOffs(node.nowMs + 601 * S).length).toBe(0);
  });

  it("a restored agent waits out the back-off instead of restarting at once", () => {
    const node = crashLooping();
    const attempt = node.newest("app")!.attempt;
    const exitedAt = node.nowMs - 1 * S;
    restart(node, node.agent.backOffs(node.nowMs));
    node.runUntil(exitedAt + 39 * S);
    expect(node.newest("app")!.attempt).toBe(attempt); // still backing off
    expect(node.statuses.get("u1").containerStatuses[0].reason).toBe("CrashLoopBackOff");
    node.runUntil(exitedAt + 40 * S + 100);
    expect(node.newest("app")!.attempt).toBe(attempt + 1);
  });

  it("without the checkpoint, as the kubelet, the restarted agent restarts it at once", () => {
    const node = crashLooping();
    const attempt = node.newest("app")!.attempt;
    restart(node, []);
    node.runUntil(node.nowMs + 2 * S);
    expect(node.newest("app")!.attempt).toBe(attempt + 1);
  });

  it("ignores entries with no wait or dated in the future, cuts waits to the maximum, keeps what it holds", () => {
    const agent = new Agent(config());
    const now: u64 = 10_000_000;
    agent.restoreBackOffs(now, [
      new BackOffCheckpoint("zero", 0, now - S),
      new BackOffCheckpoint("future", 10 * S, now + S),
      new BackOffCheckpoint("huge", 10_000 * S, now - S),
      new BackOffCheckpoint("old", 10 * S, now - 601 * S),
      new BackOffCheckpoint("ok", 20 * S, now - S),
    ]);
    agent.restoreBackOffs(now, [new BackOffCheckpoint("ok", 80 * S, now)]);
    const entries = agent.backOffs(now);
    expect(entries.length).toBe(2);
    expect(entries[0].key).toBe("huge");
    expect(entries[0].durationMs).toBe(300 * S);
    expect(entries[1].key).toBe("ok");
    expect(entries[1].durationMs).toBe(20 * S);
  });
});
