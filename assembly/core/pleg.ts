// PLEG relist diff (upstream pkg/kubelet/pleg/generic.go): compares the previous and the new
// runtime state of every container and sandbox and names what happened to each.
import { ContainerState, SandboxState } from "./model";
import {
  C_ATTEMPT,
  C_ID,
  C_MESSAGE,
  C_POD_UID,
  C_REASON,
  C_STATE,
  N_EXIT_CODE,
  N_FINISHED,
  N_STARTED,
  PackedSnapshot,
  S_FLAGS,
  S_FLAG_READY,
  S_ID,
  S_POD_UID,
} from "./packed";

/// The PLEG's own view of a container: created and unknown both read as "unknown".
export const enum PlegState {
  NonExistent = 0,
  Running = 1,
  Exited = 2,
  Unknown = 3,
}

export const enum PlegEventType {
  ContainerStarted = 0,
  ContainerDied = 1,
  ContainerRemoved = 2,
  /// Seen by upstream but not sent on; counted here for the record.
  ContainerChanged = 3,
}

export class PlegEvent {
  constructor(public podUid: string, public containerId: string, public type: i32) {}
}

export function plegStateOfContainer(state: i32): PlegState {
  if (state == ContainerState.Running) return PlegState.Running;
  if (state == ContainerState.Exited) return PlegState.Exited;
  return PlegState.Unknown;
}

export function plegStateOfSandbox(state: i32): PlegState {
  return state == SandboxState.Ready ? PlegState.Running : PlegState.Exited;
}

/// Events for one container moving from `oldState` to `newState`; appended to `out`.
export function generateEvents(podUid: string, id: string, oldState: PlegState, newState: PlegState, out: PlegEvent[]): void {
  if (oldState == newState) return;
  switch (newState) {
    case PlegState.Running:
      out.push(new PlegEvent(podUid, id, PlegEventType.ContainerStarted));
      return;
    case PlegState.Exited:
      out.push(new PlegEvent(podUid, id, PlegEventType.ContainerDied));
      return;
    case PlegState.Unknown:
      out.push(new PlegEvent(podUid, id, PlegEventType.ContainerChanged));
      return;
    case PlegState.NonExistent:
      // A container that vanished without being seen exited also died.
      if (oldState != PlegState.Exited) out.push(new PlegEvent(podUid, id, PlegEventType.ContainerDied));
      out.push(new PlegEvent(podUid, id, PlegEventType.ContainerRemoved));
      return;
  }
}

/// What the PLEG remembers of one container or sandbox between relists.
class Entry {
  constructor(
    public id: string,
    public hash: u64,
    public pod: PodSlot,
    public state: PlegState,
    public fingerprint: u64,
    public seen: u32,
  ) {}
}

/// One pod as the PLEG saw it in the last relist: where its objects are in the snapshot, and
/// whether anything about them changed.
export class PodSlot {
  /// Relist whose indices the lists hold.
  generation: u32 = 0;
  sandboxIndices: i32[] = [];
  containerIndices: i32[] = [];
  /// Something of this pod appeared, vanished or changed in the last relist.
  changed: bool = false;
  /// Entries that point at this slot; the slot is dropped when none is left.
  entryCount: i32 = 0;
  constructor(public uid: string) {}
}

export class RelistDiff {
  events: PlegEvent[] = [];
  /// Every pod with at least one object in the relist or one that vanished in it.
  pods: PodSlot[] = [];
}

const FNV_OFFSET: u64 = 0xcbf29ce484222325;
const FNV_PRIME: u64 = 0x100000001b3;

@inline function mix(hash: u64, value: u64): u64 {
  return (hash ^ value) * FNV_PRIME;
}

/// Remembers the last relist and diffs each new one against it, reading the packed snapshot in
/// place: an unchanged container costs a hash and a compare, no allocation.
export class Pleg {
  private table: Array<Entry | null> = new Array<Entry | null>(16);
  /// The table of the relist before last, cleared and reused: a new table every relist would be
  /// the largest allocation of the whole relist.
  private spare: Array<Entry | null> = new Array<Entry | null>(16);
  private slots: Map<string, PodSlot> = new Map();
  /// Reused between relists (its lists are cleared, not reallocated).
  private diff: RelistDiff = new RelistDiff();
  private generation: u32 = 0;

  /// Diffs a new relist. The result is valid until the next call.
  relist(p: PackedSnapshot): RelistDiff {
    const diff = this.diff;
    diff.events.length = 0;
    diff.pods.length = 0;
    const generation = ++this.generation;
    const old = this.table;
    let capacity = 16;
    while (capacity < (p.sandboxCount + p.containerCount) * 2) capacity <<= 1;
    let next = this.spare;
    if (next.length != capacity) next = new Array<Entry | null>(capacity);
    else next.fill(null);

    for (let i = 0; i < p.sandboxCount; i++) {
      const state = (p.sandboxWord(i, S_FLAGS) & S_FLAG_READY) != 0 ? PlegState.Running : PlegState.Exited;
      const fingerprint = <u64>p.sandboxWord(i, S_FLAGS);
      const e = this.observe(p, old, next, p.sandboxWord(i, S_ID), p.sandboxWord(i, S_ID + 1),
        p.sandboxWord(i, S_POD_UID), p.sandboxWord(i, S_POD_UID + 1), state, fingerprint, generation, diff);
      if (e !== null) e.pod.sandboxIndices.push(i);
    }
    for (let i = 0; i < p.containerCount; i++) {
      const state = plegStateOfContainer(<i32>p.containerWord(i, C_STATE));
      const e = this.observe(p, old, next, p.containerWord(i, C_ID), p.containerWord(i, C_ID + 1),
        p.containerWord(i, C_POD_UID), p.containerWord(i, C_POD_UID + 1), state, containerFingerprint(p, i), generation, diff);
      if (e !== null) e.pod.containerIndices.push(i);
    }
    // Whatever was not seen this time has vanished.
    for (let i = 0, n = old.length; i < n; i++) {
      const e = unchecked(old[i]);
      if (e === null || e.seen == generation) continue;
      generateEvents(e.pod.uid, e.id, e.state, PlegState.NonExistent, diff.events);
      this.touch(e.pod, generation, diff);
      e.pod.changed = true;
      if (--e.pod.entryCount == 0) this.slots.delete(e.pod.uid);
    }
    this.spare = old;
    this.table = next;
    return diff;
  }

  /// Finds or creates the entry of one object; null for a duplicate within this relist.
  private observe(
    p: PackedSnapshot, old: Array<Entry | null>, next: Array<Entry | null>, idStart: u32, idLength: u32,
    podStart: u32, podLength: u32, state: PlegState, fingerprint: u64, generation: u32, diff: RelistDiff,
  ): Entry | null {
    const hash = p.rangeHash(idStart, idLength);
    let e = find(old, p, hash, idStart, idLength);
    if (e === null) {
      if (find(next, p, hash, idStart, idLength) !== null) return null; // listed twice: once counts
      const uid = p.string(podStart, podLength);
      let slot: PodSlot;
      if (this.slots.has(uid)) slot = this.slots.get(uid);
      else {
        slot = new PodSlot(uid);
        this.slots.set(uid, slot);
      }
      slot.entryCount++;
      e = new Entry(p.string(idStart, idLength), hash, slot, PlegState.NonExistent, 0, 0);
      this.touch(slot, generation, diff);
      slot.changed = true;
    } else {
      if (e.seen == generation) return null;
      this.touch(e.pod, generation, diff);
      if (e.fingerprint != fingerprint) e.pod.changed = true;
    }
    generateEvents(e.pod.uid, e.id, e.state, state, diff.events);
    if (e.state != state) e.pod.changed = true;
    e.state = state;
    e.fingerprint = fingerprint;
    e.seen = generation;
    insert(next, e);
    return e;
  }

  /// Starts the slot's lists afresh the first time a relist touches it.
  private touch(slot: PodSlot, generation: u32, diff: RelistDiff): void {
    if (slot.generation == generation) return;
    slot.generation = generation;
    slot.sandboxIndices.length = 0;
    slot.containerIndices.length = 0;
    slot.changed = false;
    diff.pods.push(slot);
  }

  /// The pod's slot if the last relist touched it.
  slotOf(uid: string): PodSlot | null {
    if (!this.slots.has(uid)) return null;
    const slot = this.slots.get(uid);
    return slot.generation == this.generation ? slot : null;
  }

  /// Forgets everything, as after an agent restart.
  clear(): void {
    this.table = new Array<Entry | null>(16);
    this.spare = new Array<Entry | null>(16);
    this.slots.clear();
  }

  get size(): i32 {
    let n = 0;
    for (let i = 0; i < this.table.length; i++) if (this.table[i] !== null) n++;
    return n;
  }
}

/// What of a container can change while its ID stays: state, exit, times, reason, message.
function containerFingerprint(p: PackedSnapshot, i: i32): u64 {
  let h = mix(FNV_OFFSET, <u64>p.containerWord(i, C_STATE));
  h = mix(h, <u64>p.containerWord(i, C_ATTEMPT));
  h = mix(h, <u64>p.containerNumber(i, N_EXIT_CODE));
  h = mix(h, <u64>p.containerNumber(i, N_STARTED));
  h = mix(h, <u64>p.containerNumber(i, N_FINISHED));
  const reasonLength = p.containerWord(i, C_REASON + 1);
  if (reasonLength > 0) h = mix(h, p.rangeHash(p.containerWord(i, C_REASON), reasonLength));
  const messageLength = p.containerWord(i, C_MESSAGE + 1);
  if (messageLength > 0) h = mix(h, p.rangeHash(p.containerWord(i, C_MESSAGE), messageLength));
  return h;
}

function find(table: Array<Entry | null>, p: PackedSnapshot, hash: u64, start: u32, length: u32): Entry | null {
  const mask = table.length - 1;
  let i = <i32>(hash & <u64>mask);
  let e = unchecked(table[i]);
  while (e !== null) {
    if (e.hash == hash && p.rangeEquals(e.id, start, length)) return e;
    i = (i + 1) & mask;
    e = unchecked(table[i]);
  }
  return null;
}

function insert(table: Array<Entry | null>, e: Entry): void {
  const mask = table.length - 1;
  let i = <i32>(e.hash & <u64>mask);
  while (unchecked(table[i]) !== null) i = (i + 1) & mask;
  unchecked((table[i] = e));
}
