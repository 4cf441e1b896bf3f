import { Backoff } from "../../assembly/core/backoff";
import { crashLoopKey } from "../../assembly/core/restart";

const S: u64 = 1000;

/// Replays upstream doBackOff for a container that exits `runMs` after each start; returns the
/// wait before each restart.
function restartWaits(runMs: u64, restarts: i32): u64[] {
  const backoff = new Backoff(10 * S, 300 * S);
  const key = crashLoopKey("uid", "c", "hash");
  const waits: u64[] = [];
  let now: u64 = 1_000_000;
  for (let i = 0; i < restarts; i++) {
    const finished = now + runMs; // the container ran runMs, then exited
    let t = finished;
    while (backoff.isInBackOffSince(key, finished, t)) t += 100;
    backoff.next(key, finished, t);
    waits.push(t - finished);
    now = t;
  }
  return waits;
}

describe("crash-loop back-off (client-go flowcontrol.Backoff semantics)", () => {
  it("restarts the first failure at once, then waits 10s doubling to a 300s cap", () => {
    const waits = restartWaits(1 * S, 9);
    expect(waits).toStrictEqual([0, 10 * S, 20 * S, 40 * S, 80 * S, 160 * S, 300 * S, 300 * S, 300 * S]);
  });

  it("starts over when the container ran longer than 2 x max (10 minutes)", () => {
    const backoff = new Backoff(10 * S, 300 * S);
    backoff.next("k", 0, 0);
    backoff.next("k", 5 * S, 5 * S);
    expect(backoff.durationMs("k")).toBe(20 * S);
    // Exit 601 s after the last restart: stable, so no wait and the step resets.
    expect(backoff.isInBackOffSince("k", 606 * S, 606 * S)).toBe(false);
    backoff.next("k", 606 * S, 606 * S);
    expect(backoff.durationMs("k")).toBe(10 * S);
  });

  it("does not reset at exactly 2 x max", () => {
    const backoff = new Backoff(10 * S, 300 * S);
    backoff.next("k", 0, 0);
    backoff.next("k", 0, 0);
    expect(backoff.isInBackOffSince("k", 600 * S, 600 * S + 1)).toBe(true);
  });

  it("keys by container spec hash, so a changed spec starts without a wait", () => {
    const backoff = new Backoff(10 * S, 300 * S);
    backoff.next(crashLoopKey("u", "c", "h1"), 0, 0);
    expect(backoff.isInBackOffSince(crashLoopKey("u", "c", "h1"), 0, 1)).toBe(true);
    expect(backoff.isInBackOffSince(crashLoopKey("u", "c", "h2"), 0, 1)).toBe(false);
  });

  it("image pull back-off counts from the last failure", () => {
    const backoff = new Backoff(10 * S, 300 * S);
    backoff.next("img", 50 * S, 50 * S);
    expect(backoff.isInBackOffSinceUpdate("img", 59 * S)).toBe(true);
    expect(backoff.isInBackOffSinceUpdate("img", 60 * S)).toBe(false);
    expect(backoff.waitEndsAtMs("img")).toBe(60 * S);
  });

  it("collect drops entries idle for more than 2 x max", () => {
    const backoff = new Backoff(10 * S, 300 * S);
    backoff.next("old", 0, 0);
    backoff.next("new", 500 * S, 500 * S);
    backoff.collect(700 * S);
    expect(backoff.size).toBe(1);
    expect(backoff.durationMs("new")).toBe(10 * S);
  });
});

describe("back-off entries kept by the caller (the pure restart interface)", () => {
  it("restore then next doubles from the restored wait, as if the entry had never left", () => {
    const kept = new Backoff(10 * S, 300 * S);
    kept.next("k", 0, 0);
    kept.next("k", 5 * S, 20 * S);
    const fresh = new Backoff(10 * S, 300 * S);
    fresh.restore("k", kept.durationMs("k"), kept.lastUpdateMs("k"));
    kept.next("k", 30 * S, 40 * S);
    fresh.next("k", 30 * S, 40 * S);
    expect(fresh.durationMs("k")).toBe(kept.durationMs("k"));
    expect(fresh.lastUpdateMs("k")).toBe(40 * S);
    expect(fresh.durationMs("k")).toBe(40 * S);
  });

  it("has no last update for an unknown key", () => {
    expect(new Backoff(10 * S, 300 * S).lastUpdateMs("nothing")).toBe(0);
  });
});
