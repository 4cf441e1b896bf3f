import { Pleg, PlegEvent, PlegEventType, PlegState, RelistDiff } from "../../assembly/core/pleg";
import { generateEvents } from "../../assembly/core/pleg-events";
import { packSnapshot } from "../../assembly/core/packed";
import { ContainerObservation, ContainerState, RuntimeSnapshot, SandboxObservation, SandboxState } from "../../assembly/core/model";

function relist(pleg: Pleg, sandboxes: SandboxObservation[], containers: ContainerObservation[]): PlegEvent[] {
  return relistDiff(pleg, sandboxes, containers).events;
}

function relistDiff(pleg: Pleg, sandboxes: SandboxObservation[], containers: ContainerObservation[]): RelistDiff {
  const s = new RuntimeSnapshot();
  s.sandboxes = sandboxes;
  s.containers = containers;
  const packed = packSnapshot(s);
  const diff = pleg.relist(packed);
  packed.free();
  expectChangedListed(diff);
  return diff;
}

/// `changedPods` holds exactly the listed pods marked changed, each once.
function expectChangedListed(diff: RelistDiff): void {
  let marked = 0;
  for (let i = 0; i < diff.pods.length; i++) if (diff.pods[i].changed) marked++;
  expect(diff.changedPods.length).toBe(marked);
  for (let i = 0; i < diff.changedPods.length; i++) {
    const slot = diff.changedPods[i];
    expect(slot.changed).toBe(true);
    expect(diff.pods.includes(slot)).toBe(true);
    for (let j = 0; j < i; j++) expect(diff.changedPods[j] == slot).toBe(false);
  }
}

/// A small deterministic generator for the reordering tests.
class Lcg {
  constructor(private seed: u32) {}
  below(n: i32): i32 {
    this.seed = this.seed * 1103515245 + 12345;
    return <i32>((this.seed >> 8) % <u32>n);
  }
}

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
    let events = relist(pleg, [sandbox("s1", "p1", SandboxState.Ready)], [container("c1", "p1", ContainerState.Running)]);
    expect(events.length).toBe(2);
    expect(events[0].type).toBe(STARTED);
    expect(events[1].containerId).toBe("c1");

    // Same state: quiet.
    events = relist(pleg, [sandbox("s1", "p1", SandboxState.Ready)], [container("c1", "p1", ContainerState.Running)]);
    expect(events.length).toBe(0);

    // c1 exits, c2 appears created.
    events = relist(
      pleg,
      [sandbox("s1", "p1", SandboxState.Ready)],
      [container("c1", "p1", ContainerState.Exited), container("c2", "p1", ContainerState.Created)],
    );
    expect(events.length).toBe(2);
    expect(events[0].type).toBe(DIED);
    expect(events[1].type).toBe(CHANGED);

    // Everything vanishes: the sandbox was running (died + removed), c1 was exited (removed),
    // c2 was created (died + removed).
    events = relist(pleg, [], []);
    expect(events.length).toBe(5);
    expect(pleg.size).toBe(0);
  });

  it("ignores a duplicate of the same container within one relist", () => {
    const pleg = new Pleg();
    const events = relist(pleg, [], [container("c1", "p1", ContainerState.Running), container("c1", "p1", ContainerState.Running)]);
    expect(events.length).toBe(1);
    expect(pleg.size).toBe(1);
  });

  it("marks only the pods whose objects changed, and lists where each pod's objects are", () => {
    const pleg = new Pleg();
    const sandboxes = [sandbox("s1", "p1", SandboxState.Ready), sandbox("s2", "p2", SandboxState.Ready)];
    let diff = relistDiff(pleg, sandboxes, [container("c1", "p1", ContainerState.Running), container("c2", "p2", ContainerState.Running)]);
    expect(diff.pods.length).toBe(2);
    expect(diff.pods[0].changed).toBe(true);

    // Nothing changed: both pods are listed, neither is marked.
    diff = relistDiff(pleg, sandboxes, [container("c1", "p1", ContainerState.Running), container("c2", "p2", ContainerState.Running)]);
    expect(diff.events.length).toBe(0);
    expect(diff.pods[0].changed || diff.pods[1].changed).toBe(false);
    expect(diff.pods[1].uid).toBe("p2");
    expect(pleg.containerIndicesOf(diff.pods[1])).toStrictEqual([1]);

    // Same state, new reason (the runtime filled in OOMKilled later): the pod is marked, no event.
    const exited1 = container("c1", "p1", ContainerState.Exited);
    relistDiff(pleg, sandboxes, [exited1, container("c2", "p2", ContainerState.Running)]);
    const oom = container("c1", "p1", ContainerState.Exited);
    oom.reason = "OOMKilled";
    diff = relistDiff(pleg, sandboxes, [oom, container("c2", "p2", ContainerState.Running)]);
    expect(diff.events.length).toBe(0);
    expect(diff.pods[0].uid).toBe("p1");
    expect(diff.pods[0].changed).toBe(true);
    expect(diff.pods[1].changed).toBe(false);
  });

  it("sees no change in a relist identical to the last, and a change in a single number", () => {
    const pleg = new Pleg();
    const sandboxes = [sandbox("s1", "p1", SandboxState.Ready), sandbox("s2", "p2", SandboxState.Ready)];
    const running = (): ContainerObservation[] => [container("c1", "p1", ContainerState.Running), container("c2", "p2", ContainerState.Running)];
    relistDiff(pleg, sandboxes, running());
    let diff = relistDiff(pleg, sandboxes, running());
    expect(diff.pods.length).toBe(2);
    expect(diff.pods[0].changed || diff.pods[1].changed).toBe(false);
    expect(pleg.containerIndicesOf(diff.pods[1])).toStrictEqual([1]);
    const later = running();
    later[1].startedAtNs += 1;
    diff = relistDiff(pleg, sandboxes, later);
    expect(diff.pods[0].changed).toBe(false);
    expect(diff.pods[1].changed).toBe(true);
    // A vanished pod is listed once, when it vanishes, and not in the relists after.
    diff = relistDiff(pleg, [sandboxes[0]], [running()[0]]);
    expect(diff.pods.length).toBe(2);
    expect(diff.events.length).toBe(4); // s2 and c2: died and removed each
    diff = relistDiff(pleg, [sandboxes[0]], [running()[0]]);
    expect(diff.pods.length).toBe(1);
    expect(diff.pods[0].uid).toBe("p1");
    expect(diff.pods[0].changed).toBe(false);
  });

  it("takes a relist byte-identical to the last, from a runtime that lists in a stable order, with one compare", () => {
    const pleg = new Pleg();
    const sandboxes = [sandbox("s1", "p1", SandboxState.Ready), sandbox("s2", "p2", SandboxState.Ready)];
    const running = (): ContainerObservation[] => [container("c1", "p1", ContainerState.Running), container("c2", "p2", ContainerState.Running)];
    relistDiff(pleg, sandboxes, running()); // all new
    relistDiff(pleg, sandboxes, running()); // diffed: every object where it was
    let diff = relistDiff(pleg, sandboxes, running());
    expect(pleg.unchangedCount).toBe(1);
    expect(diff.pods.length).toBe(2);
    expect(diff.pods[0].changed || diff.pods[1].changed).toBe(false);
    expect(pleg.containerIndicesOf(diff.pods[1])).toStrictEqual([1]);
    expect(pleg.sandboxIndicesOf(pleg.slotOf("p2")!)).toStrictEqual([1]);
    // One number differs: diffed, and the pod marked.
    const later = running();
    later[1].startedAtNs += 1;
    diff = relistDiff(pleg, sandboxes, later);
    expect(pleg.unchangedCount).toBe(1);
    expect(diff.pods[1].changed).toBe(true);
    // Listed in another order: diffed (no copy is compared against the next one either).
    const swapped = [later[1], later[0]];
    diff = relistDiff(pleg, sandboxes, swapped);
    expect(diff.events.length).toBe(0);
    relistDiff(pleg, sandboxes, swapped);
    expect(pleg.unchangedCount).toBe(1);
    // Stable again: the relist after a stable one is compared.
    diff = relistDiff(pleg, sandboxes, swapped);
    expect(pleg.unchangedCount).toBe(2);
    expect(pleg.containerIndicesOf(pleg.slotOf("p2")!)).toStrictEqual([0]);
    // A vanished pod is listed once, when it vanishes, and not in the identical relists after.
    diff = relistDiff(pleg, [sandboxes[0]], [swapped[1]]);
    expect(diff.pods.length).toBe(2);
    relistDiff(pleg, [sandboxes[0]], [swapped[1]]);
    diff = relistDiff(pleg, [sandboxes[0]], [swapped[1]]);
    expect(pleg.unchangedCount).toBe(3);
    expect(diff.pods.length).toBe(1);
    expect(diff.pods[0].uid).toBe("p1");
  });

  it("matches objects by ID whatever order the runtime lists them in (containerd walks a map)", () => {
    const pleg = new Pleg();
    const containers: ContainerObservation[] = [];
    for (let i = 0; i < 40; i++) containers.push(container("id-" + i.toString(), "p" + (i % 7).toString(), ContainerState.Running));
    expect(relist(pleg, [], containers).length).toBe(40);
    // Reversed, then rotated with one removed from the middle and one new at the front: only
    // those two are events, and each pod lists the indices of this relist.
    const reversed = containers.slice(0).reverse();
    let diff = relistDiff(pleg, [], reversed);
    expect(diff.events.length).toBe(0);
    for (let i = 0; i < diff.pods.length; i++) expect(diff.pods[i].changed).toBe(false);
    const rotated = reversed.slice(13).concat(reversed.slice(0, 13));
    rotated.splice(20, 1); // id-6 (reversed[33]) is gone
    rotated.unshift(container("id-new", "p3", ContainerState.Running));
    diff = relistDiff(pleg, [], rotated);
    expect(diff.events.length).toBe(3);
    expect(diff.events[0].containerId).toBe("id-new");
    expect(diff.events[0].type).toBe(STARTED);
    expect(diff.events[1].containerId).toBe("id-6");
    expect(diff.events[1].type).toBe(DIED);
    expect(diff.events[2].type).toBe(REMOVED);
    expect(pleg.size).toBe(40);
    const p6 = pleg.slotOf("p6")!;
    const p6Indices = pleg.containerIndicesOf(p6);
    expect(p6Indices.length).toBe(4); // id-13, 20, 27, 34
    for (let i = 0; i < p6Indices.length; i++) expect(rotated[p6Indices[i]].podUid).toBe("p6");
    expect(p6.changed).toBe(true); // id-6 was p6's
    expect(pleg.slotOf("p1")!.changed).toBe(false);
    // The same relist again: nothing.
    expect(relist(pleg, [], rotated).length).toBe(0);
  });

  it("takes an ID listed for another pod than last time as a new object, the old one gone", () => {
    const pleg = new Pleg();
    relist(pleg, [], [container("a", "p1", ContainerState.Running), container("b", "p1", ContainerState.Running)]);
    const events = relist(pleg, [], [container("a", "p1", ContainerState.Running), container("b", "p2", ContainerState.Running)]);
    expect(events.length).toBe(3);
    expect(events[0].podUid).toBe("p2");
    expect(events[0].type).toBe(STARTED);
    expect(events[1].podUid).toBe("p1");
    expect(events[1].type).toBe(DIED);
    expect(events[2].type).toBe(REMOVED);
    expect(pleg.size).toBe(2);
    expect(pleg.containerIndicesOf(pleg.slotOf("p1")!)).toStrictEqual([0]);
    expect(relist(pleg, [], [container("b", "p2", ContainerState.Running), container("a", "p1", ContainerState.Running)]).length).toBe(0);
  });

  it("gives each ID's entry a serial that stays while the entry lives and is never given again", () => {
    const pleg = new Pleg();
    relist(pleg, [sandbox("s1", "p1", SandboxState.Ready)], [container("a", "p1", ContainerState.Running), container("b", "p1", ContainerState.Running)]);
    const a = pleg.containerSerialAt(0);
    const b = pleg.containerSerialAt(1);
    const s1 = pleg.sandboxSerialAt(0);
    expect(a).not.toBe(0);
    expect(b).not.toBe(a);
    expect(s1).not.toBe(a);
    expect(s1).not.toBe(b);
    // Listed in another order, one exited: the same entries, the same serials at their new places.
    relist(pleg, [sandbox("s1", "p1", SandboxState.Ready)], [container("b", "p1", ContainerState.Running), container("a", "p1", ContainerState.Exited)]);
    expect(pleg.containerSerialAt(0)).toBe(b);
    expect(pleg.containerSerialAt(1)).toBe(a);
    expect(pleg.sandboxSerialAt(0)).toBe(s1);
    // "b" listed for another pod is another object; "a" gone and back is another object: new
    // serials, though the entries may take the freed entries' addresses.
    relist(pleg, [sandbox("s1", "p1", SandboxState.Ready)], [container("b", "p2", ContainerState.Running)]);
    const b2 = pleg.containerSerialAt(0);
    expect(b2).not.toBe(b);
    expect(b2).not.toBe(a);
    relist(pleg, [sandbox("s1", "p1", SandboxState.Ready)], [container("b", "p2", ContainerState.Running), container("a", "p1", ContainerState.Exited)]);
    expect(pleg.containerSerialAt(0)).toBe(b2);
    const a2 = pleg.containerSerialAt(1);
    expect(a2).not.toBe(a);
    expect(a2).not.toBe(b);
    expect(a2).not.toBe(b2);
    // A duplicate within one relist has no entry of its own: serial 0.
    relist(pleg, [], [container("a", "p1", ContainerState.Exited), container("a", "p1", ContainerState.Exited)]);
    expect(pleg.containerSerialAt(0)).toBe(a2);
    expect(pleg.containerSerialAt(1)).toBe(0);
  });

  it("keeps many objects apart (hash table growth and probing)", () => {
    const pleg = new Pleg();
    const containers: ContainerObservation[] = [];
    for (let i = 0; i < 3000; i++) containers.push(container("id-" + i.toString(), "p" + (i % 100).toString(), ContainerState.Running));
    expect(relist(pleg, [], containers).length).toBe(3000);
    expect(relist(pleg, [], containers).length).toBe(0);
    containers[1234] = container("id-1234", "p34", ContainerState.Exited);
    const events = relist(pleg, [], containers);
    expect(events.length).toBe(1);
    expect(events[0].containerId).toBe("id-1234");
    expect(pleg.size).toBe(3000);
  });

  it("stays right through many relists that add, remove and reorder (table deletion, shrink, growth)", () => {
    const pleg = new Pleg();
    const random = new Lcg(12345);
    let live: string[] = [];
    let made = 0;
    for (let round = 0; round < 40; round++) {
      // Grow to about 1,500 objects, then shrink to a handful, then grow again.
      const target = round < 15 ? 1500 : round < 25 ? 8 : 900;
      const kept: string[] = [];
      let removed = 0;
      for (let i = 0; i < live.length; i++) {
        if (random.below(4) == 0 || kept.length >= target) removed++;
        else kept.push(live[i]);
      }
      let added = 0;
      while (kept.length < target && added < 400) {
        kept.push("obj-" + (made++).toString());
        added++;
      }
      for (let i = kept.length - 1; i > 0; i--) {
        const j = random.below(i + 1);
        const t = kept[i];
        kept[i] = kept[j];
        kept[j] = t;
      }
      const containers: ContainerObservation[] = [];
      // Each object keeps its pod (by its name's length) wherever it is listed.
      for (let i = 0; i < kept.length; i++) containers.push(container(kept[i], "p" + (kept[i].length % 13).toString(), ContainerState.Running));
      const diff = relistDiff(pleg, [], containers);
      expect(diff.events.length).toBe(added + 2 * removed);
      expect(pleg.size).toBe(kept.length);
      live = kept;
    }
  });
});

describe("Pleg.dispose", () => {
  it("forgets everything: the next relist sees every object as new", () => {
    const pleg = new Pleg();
    relist(pleg, [sandbox("s1", "p1", SandboxState.Ready)], [container("c1", "p1", ContainerState.Running)]);
    expect(pleg.size).toBe(2);
    pleg.dispose();
    expect(pleg.size).toBe(0);
    expect(pleg.slotOf("p1")).toBeNull();
    // The same relist again, even byte-identical to the last, reads as new starts.
    const events = relist(pleg, [sandbox("s1", "p1", SandboxState.Ready)], [container("c1", "p1", ContainerState.Running)]);
    expect(events.length).toBe(2);
    expect(events[0].type).toBe(STARTED);
    expect(events[1].type).toBe(STARTED);
    pleg.dispose();
  });
});

function packedWith(id: string, podUid: string): RuntimeSnapshot {
  const s = new RuntimeSnapshot();
  const c = new ContainerObservation();
  c.id = id;
  c.sandboxId = "s";
  c.podUid = podUid;
  c.name = "app";
  c.state = ContainerState.Running;
  s.containers = [c];
  return s;
}

describe("packed text (UTF-8)", () => {
  it("reads back every string as written, ASCII or not", () => {
    const ids = ["plain-ascii-id-longer-than-eight", "ü", "naïve-ünïcode-🚀-id", ""];
    for (let i = 0; i < ids.length; i++) {
      const packed = packSnapshot(packedWith(ids[i], "pod-é"));
      expect(packed.string(packed.containerWord(0, 0), packed.containerWord(0, 1))).toBe(ids[i]);
      expect(packed.rangeEquals(ids[i], packed.containerWord(0, 0), packed.containerWord(0, 1))).toBe(true);
      expect(packed.rangeEquals("pod-é", packed.containerWord(0, 4), packed.containerWord(0, 5))).toBe(true);
      packed.free();
    }
  });

  it("tells apart strings that differ in one byte, in length, or only beyond ASCII", () => {
    const packed = packSnapshot(packedWith("abcdefghij-ü", "pod"));
    const start = packed.containerWord(0, 0);
    const length = packed.containerWord(0, 1);
    expect(length).toBe(13);
    expect(packed.rangeEquals("abcdefghij-u", start, length)).toBe(false);
    expect(packed.rangeEquals("abcdefghij-ü!", start, length)).toBe(false);
    expect(packed.rangeEquals("abcdefghij-", start, length)).toBe(false);
    // 13 code units of ASCII against 13 bytes with two beyond ASCII: same length, other text.
    expect(packed.rangeEquals("abcdefghij-uu", start, length)).toBe(false);
    expect(packed.rangeEquals("abcdefghij-ü", start, length)).toBe(true);
    packed.free();
    // ASCII on both sides, compared four at a time: a difference in any place of a group.
    const ascii = packSnapshot(packedWith("0123456789abcdef", "pod"));
    const at = ascii.containerWord(0, 0);
    for (let i = 0; i < 16; i++) {
      const other = "0123456789abcdef".slice(0, i) + "_" + "0123456789abcdef".slice(i + 1);
      expect(ascii.rangeEquals(other, at, 16)).toBe(false);
    }
    expect(ascii.rangeEquals("0123456789abcdef", at, 16)).toBe(true);
    // A code unit past one byte never equals a byte, even where its low byte does.
    expect(ascii.rangeEquals("0123456789abcde\u0166", at, 16)).toBe(false);
    ascii.free();
  });

  it("keeps a container found by its UTF-8 ID across relists (no spurious events)", () => {
    const pleg = new Pleg();
    const c = new ContainerObservation();
    c.id = "naïve-ünïcode-🚀-id";
    c.sandboxId = "s";
    c.podUid = "pod-é";
    c.name = "app";
    c.state = ContainerState.Running;
    expect(relist(pleg, [], [c]).length).toBe(1);
    expect(relist(pleg, [], [c]).length).toBe(0);
    pleg.dispose();
  });
});
