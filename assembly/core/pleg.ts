// PLEG relist diff (upstream pkg/kubelet/pleg/generic.go): compares the previous and the new
// runtime state of every container and sandbox and names what happened to each.
import { ContainerState } from "./model";
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
  CONTAINER_NUMBERS,
  CONTAINER_WORDS,
  PackedSnapshot,
  SANDBOX_NUMBERS,
  SANDBOX_WORDS,
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

/// What the PLEG remembers of one container or sandbox between relists. Unmanaged (allocated
/// and freed here, followed by the ID's code units): the garbage collector never traces or
/// write-barriers the table, which holds one of these per container of the node.
@unmanaged class Entry {
  hash: u64;
  fingerprint: u64;
  /// The PodSlot, kept alive by Pleg.slots while any entry points at it.
  pod: usize;
  seen: u32;
  state: i32;
  idUnits: u32;

  @inline get idPtr(): usize {
    return changetype<usize>(this) + offsetof<Entry>();
  }

  @inline get slot(): PodSlot {
    return changetype<PodSlot>(this.pod);
  }

  idString(): string {
    return String.UTF16.decodeUnsafe(this.idPtr, <usize>this.idUnits << 1);
  }
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
  /// Open-addressing tables of Entry pointers; `spare` is the table of the relist before last,
  /// cleared and reused.
  private table: usize = 0;
  private capacity: i32 = 0;
  private spare: usize = 0;
  private spareCapacity: i32 = 0;
  private slots: Map<string, PodSlot> = new Map();
  private generation: u32 = 0;
  /// Reused between relists (its lists are cleared, not reallocated).
  private diff: RelistDiff = new RelistDiff();
  /// A copy of the last relist's arrays (text, sandbox words and numbers, container words and
  /// numbers, back to back), to recognise a relist in which nothing changed at all.
  private previous: usize = 0;
  private previousBytes: usize = 0;
  private previousTextUnits: u32 = 0;
  private previousSandboxes: i32 = -1;
  private previousContainers: i32 = -1;
  /// Relists recognised as unchanged (counted for tests and benchmarks).
  unchangedCount: u64 = 0;

  /// Diffs a new relist. The result is valid until the next call.
  relist(p: PackedSnapshot): RelistDiff {
    const diff = this.diff;
    diff.events.length = 0;
    // A steady node lists the same bytes every time: then nothing happened, the same pods are
    // listed with the same indices, and none changed. A byte compare is far cheaper than the diff.
    if (this.sameAsPrevious(p)) {
      this.unchangedCount++;
      let kept = 0;
      for (let i = 0, n = diff.pods.length; i < n; i++) {
        const slot = unchecked(diff.pods[i]);
        if (slot.entryCount == 0) continue; // vanished last time: not in this relist
        slot.changed = false;
        unchecked((diff.pods[kept++] = slot));
      }
      diff.pods.length = kept;
      return diff;
    }
    diff.pods.length = 0;
    this.keep(p);
    const generation = ++this.generation;
    let capacity = 16;
    while (capacity < (p.sandboxCount + p.containerCount) * 2) capacity <<= 1;
    if (this.spareCapacity != capacity) {
      if (this.spare != 0) heap.free(this.spare);
      this.spare = heap.alloc(<usize>capacity << 2);
      this.spareCapacity = capacity;
    }
    const next = this.spare;
    memory.fill(next, 0, <usize>capacity << 2);

    for (let i = 0; i < p.sandboxCount; i++) {
      const state = (p.sandboxWord(i, S_FLAGS) & S_FLAG_READY) != 0 ? PlegState.Running : PlegState.Exited;
      const e = this.observe(p, next, capacity, p.sandboxWord(i, S_ID), p.sandboxWord(i, S_ID + 1),
        p.sandboxWord(i, S_POD_UID), p.sandboxWord(i, S_POD_UID + 1), state, <u64>p.sandboxWord(i, S_FLAGS), generation, diff);
      if (e != 0) changetype<Entry>(e).slot.sandboxIndices.push(i);
    }
    for (let i = 0; i < p.containerCount; i++) {
      const state = plegStateOfContainer(<i32>p.containerWord(i, C_STATE));
      const e = this.observe(p, next, capacity, p.containerWord(i, C_ID), p.containerWord(i, C_ID + 1),
        p.containerWord(i, C_POD_UID), p.containerWord(i, C_POD_UID + 1), state, containerFingerprint(p, i), generation, diff);
      if (e != 0) changetype<Entry>(e).slot.containerIndices.push(i);
    }
    // Whatever was not seen this time has vanished.
    for (let i = 0; i < this.capacity; i++) {
      const ptr = load<usize>(this.table + (<usize>i << 2));
      if (ptr == 0) continue;
      const e = changetype<Entry>(ptr);
      if (e.seen == generation) continue;
      const slot = e.slot;
      generateEvents(slot.uid, e.idString(), e.state, PlegState.NonExistent, diff.events);
      this.touch(slot, generation, diff);
      slot.changed = true;
      if (--slot.entryCount == 0) this.slots.delete(slot.uid);
      heap.free(ptr);
    }
    this.spare = this.table;
    this.spareCapacity = this.capacity;
    this.table = next;
    this.capacity = capacity;
    return diff;
  }

  private sameAsPrevious(p: PackedSnapshot): bool {
    if (p.textUnits != this.previousTextUnits || p.sandboxCount != this.previousSandboxes || p.containerCount != this.previousContainers) return false;
    const regions = regionsOf(p);
    // Numbers and words first: a change of state or time shows there, and the text is the bulk.
    for (let k = 0; k < 5; k++) {
      const r = unchecked(COMPARE_ORDER[k]);
      const size = unchecked(regions.sizes[r]);
      if (size > 0 && !sameBytes(this.previous + unchecked(regions.offsets[r]), unchecked(regions.pointers[r]), size)) return false;
    }
    return true;
  }

  private keep(p: PackedSnapshot): void {
    const regions = regionsOf(p);
    let total: usize = 0;
    for (let r = 0; r < 5; r++) total += unchecked(regions.sizes[r]);
    if (total != this.previousBytes) {
      if (this.previous != 0) heap.free(this.previous);
      this.previous = total > 0 ? heap.alloc(total) : 0;
      this.previousBytes = total;
    }
    let at = this.previous;
    for (let r = 0; r < 5; r++) {
      const size = unchecked(regions.sizes[r]);
      if (size > 0) memory.copy(at, unchecked(regions.pointers[r]), size);
      at += size;
    }
    this.previousTextUnits = p.textUnits;
    this.previousSandboxes = p.sandboxCount;
    this.previousContainers = p.containerCount;
  }

  /// Finds or creates the entry of one object; 0 for a duplicate within this relist.
  private observe(
    p: PackedSnapshot, next: usize, nextCapacity: i32, idStart: u32, idLength: u32,
    podStart: u32, podLength: u32, state: PlegState, fingerprint: u64, generation: u32, diff: RelistDiff,
  ): usize {
    const hash = p.rangeHash(idStart, idLength);
    let ptr = find(this.table, this.capacity, p, hash, idStart, idLength);
    // The same ID listed for another pod than last time (a runtime that reuses IDs, or lies in
    // its labels) is another object: the old one vanishes in the sweep below, this one is new.
    if (ptr != 0 && !p.rangeEquals(changetype<Entry>(ptr).slot.uid, podStart, podLength)) ptr = 0;
    let id = "";
    if (ptr == 0) {
      if (find(next, nextCapacity, p, hash, idStart, idLength) != 0) return 0; // listed twice: once counts
      const uid = p.string(podStart, podLength);
      let slot: PodSlot;
      if (this.slots.has(uid)) slot = this.slots.get(uid);
      else {
        slot = new PodSlot(uid);
        this.slots.set(uid, slot);
      }
      slot.entryCount++;
      ptr = heap.alloc(offsetof<Entry>() + (<usize>idLength << 1));
      const e = changetype<Entry>(ptr);
      e.hash = hash;
      e.fingerprint = 0;
      e.pod = changetype<usize>(slot);
      e.seen = 0;
      e.state = PlegState.NonExistent;
      e.idUnits = idLength;
      memory.copy(e.idPtr, p.textAt(idStart), <usize>idLength << 1);
      this.touch(slot, generation, diff);
      slot.changed = true;
    } else {
      const e = changetype<Entry>(ptr);
      if (e.seen == generation) return 0;
      this.touch(e.slot, generation, diff);
      if (e.fingerprint != fingerprint) e.slot.changed = true;
    }
    const e = changetype<Entry>(ptr);
    if (e.state != state) {
      generateEvents(e.slot.uid, e.idString(), e.state, state, diff.events);
      e.slot.changed = true;
    }
    e.state = state;
    e.fingerprint = fingerprint;
    e.seen = generation;
    insert(next, nextCapacity, ptr);
    return ptr;
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

  /// Frees the unmanaged tables and entries; the PLEG is empty afterwards. For short-lived
  /// instances (the pure `pleg` interface); the agent's lives as long as the agent.
  dispose(): void {
    for (let i = 0; i < this.capacity; i++) {
      const ptr = load<usize>(this.table + (<usize>i << 2));
      if (ptr != 0) heap.free(ptr);
    }
    if (this.table != 0) heap.free(this.table);
    if (this.spare != 0) heap.free(this.spare);
    if (this.previous != 0) heap.free(this.previous);
    this.table = 0;
    this.capacity = 0;
    this.spare = 0;
    this.spareCapacity = 0;
    this.previous = 0;
    this.previousBytes = 0;
    this.previousTextUnits = 0;
    this.previousSandboxes = -1;
    this.previousContainers = -1;
    this.slots.clear();
  }

  /// Objects remembered from the last relist.
  get size(): i32 {
    let n = 0;
    for (let i = 0; i < this.capacity; i++) if (load<usize>(this.table + (<usize>i << 2)) != 0) n++;
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

function find(table: usize, capacity: i32, p: PackedSnapshot, hash: u64, start: u32, length: u32): usize {
  if (capacity == 0) return 0;
  const mask = capacity - 1;
  let i = <i32>(hash & <u64>mask);
  let ptr = load<usize>(table + (<usize>i << 2));
  while (ptr != 0) {
    const e = changetype<Entry>(ptr);
    if (e.hash == hash && e.idUnits == length && p.rawRangeEquals(e.idPtr, start, length)) return ptr;
    i = (i + 1) & mask;
    ptr = load<usize>(table + (<usize>i << 2));
  }
  return 0;
}

function insert(table: usize, capacity: i32, ptr: usize): void {
  const mask = capacity - 1;
  let i = <i32>(changetype<Entry>(ptr).hash & <u64>mask);
  while (load<usize>(table + (<usize>i << 2)) != 0) i = (i + 1) & mask;
  store<usize>(table + (<usize>i << 2), ptr);
}

/// The five arrays of a packed snapshot, as (pointer, byte size) pairs. Reused: no allocation.
class Regions {
  pointers: StaticArray<usize> = new StaticArray<usize>(5);
  sizes: StaticArray<usize> = new StaticArray<usize>(5);
  /** Where each region starts in the kept copy (the regions back to back, in order). */
  offsets: StaticArray<usize> = new StaticArray<usize>(5);
}
const REGIONS = new Regions();
/// Container numbers, sandbox numbers, container words, sandbox words, text.
const COMPARE_ORDER: StaticArray<i32> = [4, 2, 3, 1, 0];

function regionsOf(p: PackedSnapshot): Regions {
  const r = REGIONS;
  unchecked((r.pointers[0] = p.textPtr));
  unchecked((r.sizes[0] = <usize>p.textUnits << 1));
  unchecked((r.pointers[1] = p.sandboxesPtr));
  unchecked((r.sizes[1] = (<usize>p.sandboxCount * <usize>SANDBOX_WORDS) << 2));
  unchecked((r.pointers[2] = p.sandboxNumbersPtr));
  unchecked((r.sizes[2] = (<usize>p.sandboxCount * <usize>SANDBOX_NUMBERS) << 3));
  unchecked((r.pointers[3] = p.containersPtr));
  unchecked((r.sizes[3] = (<usize>p.containerCount * <usize>CONTAINER_WORDS) << 2));
  unchecked((r.pointers[4] = p.containerNumbersPtr));
  unchecked((r.sizes[4] = (<usize>p.containerCount * <usize>CONTAINER_NUMBERS) << 3));
  let offset: usize = 0;
  for (let i = 0; i < 5; i++) {
    unchecked((r.offsets[i] = offset));
    offset += unchecked(r.sizes[i]);
  }
  return r;
}

/// Whether two byte ranges are equal, eight bytes at a time (wasm loads need no alignment;
/// memory.compare goes byte by byte when the ranges are not both aligned).
function sameBytes(a: usize, b: usize, size: usize): bool {
  const end = a + size;
  for (; a + 8 <= end; a += 8, b += 8) if (load<u64>(a) != load<u64>(b)) return false;
  for (; a < end; a++, b++) if (load<u8>(a) != load<u8>(b)) return false;
  return true;
}
