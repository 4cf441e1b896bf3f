import { Pleg, PlegEvent, PlegEventType, PlegState, generateEvents } from "../../assembly/core/pleg";
import { ContainerObservation, ContainerState, SandboxObservation, SandboxState } from "../../assembly/core/model";

// The upstream generateEvents table: (old, new) -> events.
const N = PlegState.NonExistent;
const R = PlegState.Running;
const E = PlegState.Exited;
const U = PlegState.Unknown;
const STARTED = PlegEventType.ContainerStarted;
const DIED = PlegEventType.ContainerDied;
const REMOVED = PlegEventType.ContainerRemoved;
const CHANGED = PlegEventType.ContainerChanged;

function eventsFor(oldState: PlegState, newState: PlegState): i32[] {
  const out: PlegEvent[] = [];
  generateEvents("pod", "id", oldState, newState, out);
  const types: i32[] = [];
  for (let i = 0; i < out.length; i++) types.push(out[i].type);
  return types;
}

function container(id: string, pod: string, state: i32): ContainerObservation {
  const c = new ContainerObservation();
  c.id = id;
  c.podUid = pod;
  c.name = "c";
  c.state = state;
  return c;
}

function sandbox(id: string, pod: string, state: i32): SandboxObservation {
  const s = new SandboxObservation();
  s.id = id;
  s.podUid = pod;
  s.state = state;
  return s;
}

describe("generateEvents (upstream table)", () => {
  it("emits nothing when the state did not change", () => {
    expect(eventsFor(R, R).length).toBe(0);
    expect(eventsFor(E, E).length).toBe(0);
    expect(eventsFor(U, U).length).toBe(0);
    expect(eventsFor(N, N).length).toBe(0);
  });
  it("new or restarted running -> ContainerStarted", () => {
    expect(eventsFor(N, R)).toStrictEqual([STARTED]);
    expect(eventsFor(E, R)).toStrictEqual([STARTED]);
    expect(eventsFor(U, R)).toStrictEqual([STARTED]);
  });
  it("exited -> ContainerDied", () => {
    expect(eventsFor(N, E)).toStrictEqual([DIED]);
    expect(eventsFor(R, E)).toStrictEqual([DIED]);
    expect(eventsFor(U, E)).toStrictEqual([DIED]);
  });
  it("created/unknown -> ContainerChanged", () => {
    expect(eventsFor(N, U)).toStrictEqual([CHANGED]);
    expect(eventsFor(R, U)).toStrictEqual([CHANGED]);
  });
  it("vanished -> ContainerRemoved, preceded by ContainerDied unless already exited", () => {
    expect(eventsFor(E, N)).toStrictEqual([REMOVED]);
    expect(eventsFor(R, N)).toStrictEqual([DIED, REMOVED]);
    expect(eventsFor(U, N)).toStrictEqual([DIED, REMOVED]);
  });
});

describe("Pleg.relist", () => {
  it("diffs consecutive relists of containers and sandboxes", () => {
    const pleg = new Pleg();
    let events = pleg.relist([sandbox("s1", "p1", SandboxState.Ready)], [container("c1", "p1", ContainerState.Running)]);
    expect(events.length).toBe(2);
    expect(events[0].type).toBe(STARTED);
    expect(events[1].containerId).toBe("c1");

    // Same state: quiet.
    events = pleg.relist([sandbox("s1", "p1", SandboxState.Ready)], [container("c1", "p1", ContainerState.Running)]);
    expect(events.length).toBe(0);

    // c1 exits, c2 appears created.
    events = pleg.relist(
      [sandbox("s1", "p1", SandboxState.Ready)],
      [container("c1", "p1", ContainerState.Exited), container("c2", "p1", ContainerState.Created)],
    );
    expect(events.length).toBe(2);
    expect(events[0].type).toBe(DIED);
    expect(events[1].type).toBe(CHANGED);

    // Everything vanishes: the sandbox was running (died + removed), c1 was exited (removed),
    // c2 was created (died + removed).
    events = pleg.relist([], []);
    expect(events.length).toBe(5);
    expect(pleg.size).toBe(0);
  });

  it("ignores a duplicate of the same container within one relist", () => {
    const pleg = new Pleg();
    const events = pleg.relist([], [container("c1", "p1", ContainerState.Running), container("c1", "p1", ContainerState.Running)]);
    expect(events.length).toBe(1);
    expect(pleg.size).toBe(1);
  });
});
