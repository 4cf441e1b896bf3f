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
  N_CREATED,
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

/// How many events `generateEvents` would append for the same move, without making them.
export function countEvents(oldState: PlegState, newState: PlegState): i32 {
  if (oldState == newState) return 0;
  if (newState != PlegState.NonExistent) return 1;
  return oldState == PlegState.Exited ? 1 : 2;
}

/// What the PLEG remembers of one container or sandbox between relists. Unmanaged (allocated
/// and freed here, followed by the ID's UTF-8 bytes): the garbage collector never traces or
/// write-barriers the table, which holds one of these per container of the node.
@unmanaged class Entry {
  hash: u64;
  fingerprint: u64;
  /// The PodSlot, kept alive by Pleg.slots while any entry points at it.
  pod: usize;
  /// The hash of the pod's UID (see observe: an ID listed for another pod is another object).
  podHash: u64;
  seen: u32;
  state: i32;
  idBytes: u32;
  /// Index in the last relist's list of its kind (sandboxes or containers).
  position: u32;
  /// Unique among every entry this PLEG ever made (addresses are reused, serials never): an
  /// observation made from this entry keeps it to be found again without comparing IDs.
  serial: u64;

  @inline get idPtr(): usize {
    return changetype<usize>(this) + offsetof<Entry>();
  }

  @inline get slot(): PodSlot {
    return changetype<PodSlot>(this.pod);
  }

  idString(): string {
    return String.UTF8.decodeUnsafe(this.idPtr, <usize>this.idBytes);
  }
}

/// One pod as the PLEG saw it in the last relist: where its objects are in the snapshot, and
/// whether anything about them changed.
export class PodSlot {
  /// Relist whose indices the lists hold.
  generation: u32 = 0;
  /// The pod's sandboxes and containers in the last relist, as index chains in listing order:
  /// first and last index (-1: none), each index followed by `Pleg.nextSandbox` /
  /// `Pleg.nextContainer` (a chain costs no array per pod, and no cache miss per object).
  firstSandbox: i32 = -1;
  lastSandbox: i32 = -1;
  firstContainer: i32 = -1;
  lastContainer: i32 = -1;
  /// Something of this pod appeared, vanished or changed in the last relist.
  changed: bool = false;
  /// Entries that point at this slot; the slot is dropped when none is left.
  entryCount: i32 = 0;
  /// Whatever the PLEG's user keeps for this pod (the agent: its PodRecord), so that a changed
  /// pod is found without a lookup by UID. The PLEG never reads it.
  owner: SlotOwner | null = null;
  constructor(public uid: string) {}
}

/// What a PLEG user may hang on a PodSlot (see PodSlot.owner).
export class SlotOwner {}

export class RelistDiff {
  /// The events of the last relist; empty when the PLEG does not collect them (`eventCount` is
  /// still right).
  events: PlegEvent[] = [];
  eventCount: i32 = 0;
  /// Every pod with at least one object in the relist or one that vanished in it.
  pods: PodSlot[] = [];
  /// The pods of `pods` whose `changed` is set, in the order they changed: a user acting only on
  /// changes reads these, not every pod's slot (a cache miss each on a large node).
  changedPods: PodSlot[] = [];
}

const FNV_OFFSET: u64 = 0xcbf29ce484222325;
const FNV_PRIME: u64 = 0x100000001b3;

@inline function mix(hash: u64, value: u64): u64 {
  return (hash ^ value) * FNV_PRIME;
}

/// Entry pointers of one relist in listing order (0 for an object listed twice), each beside its
/// ID's hash tag (see `cell`): where the next relist first looks for each object, without
/// touching the entry unless the tags agree.
class Listing {
  ptr: usize = 0;
  capacity: i32 = 0;
  length: i32 = 0;

  reserve(count: i32): void {
    if (count <= this.capacity) return;
    if (this.ptr != 0) heap.free(this.ptr);
    this.ptr = heap.alloc(<usize>count << 3);
    this.capacity = count;
  }

  @inline at(i: i32): u64 {
    return load<u64>(this.ptr + (<usize>i << 3));
  }

  @inline set(i: i32, entry: usize): void {
    store<u64>(this.ptr + (<usize>i << 3), entry == 0 ? 0 : cell(changetype<Entry>(entry).hash, entry));
  }

  dispose(): void {
    if (this.ptr != 0) heap.free(this.ptr);
    this.ptr = 0;
    this.capacity = 0;
    this.length = 0;
  }
}

/// Remembers the last relist and diffs each new one against it, reading the packed snapshot in
/// place: an unchanged container costs a compare of its ID and a fingerprint, no allocation.
/// Objects are first looked for where the last relist listed them (a runtime that lists in a
/// stable order costs no hashing); a runtime that lists in any order (containerd walks a Go map)
/// is looked up by ID hash.
export class Pleg {
  /// Open-addressing table (linear probing) of cells (see `cell`) by ID hash, kept between
  /// relists.
  private table: usize = 0;
  private capacity: i32 = 0;
  private count: i32 = 0;
  private slots: Map<string, PodSlot> = new Map();
  private generation: u32 = 0;
  /// Reused between relists (its lists are cleared, not reallocated).
  private diff: RelistDiff = new RelistDiff();
  /// The last relist's sandboxes and containers in listing order, and the two spare listings
  /// the next relist fills.
  private sandboxes: Listing = new Listing();
  private containers: Listing = new Listing();
  private nextSandboxes: Listing = new Listing();
  private nextContainers: Listing = new Listing();
  /// The index chains of the last relist (see PodSlot): the next index of the same pod, by index.
  private sandboxChain: Listing = new Listing();
  private containerChain: Listing = new Listing();
  /// Each container's fingerprint in the last relist, by index (u64 each).
  private fingerprints: usize = 0;
  private fingerprintCapacity: i32 = 0;
  /// False: events are counted, not made (the agent only counts them).
  collectEvents: bool = true;
  /// A copy of the last relist's arrays (text, sandbox words and numbers, container words and
  /// numbers, back to back), kept only while the runtime lists in a stable order: then a relist
  /// in which nothing changed is the same bytes, and one compare replaces the diff. (containerd
  /// lists in a new order every time; the copy is not made for it.)
  private previous: usize = 0;
  private previousBytes: usize = 0;
  private previousKept: bool = false;
  private previousTextBytes: u32 = 0;
  private previousSandboxes: i32 = -1;
  private previousContainers: i32 = -1;
  /// Objects of the relist in progress not found where the last relist listed them.
  private hintMisses: i32 = 0;
  /// Whether the last relist found most objects away from where the one before listed them
  /// (containerd's order): then objects are hashed and their table cells read ahead (lookAhead).
  private reordered: bool = false;
  /// The ID hash and pod UID hash of each object of the list being diffed (two u64 each).
  private hashes: usize = 0;
  private hashCapacity: i32 = 0;
  /// Where lookAhead drops what it read, so that the reads are not optimised away.
  private aheadSink: u64 = 0;
  /// Relists recognised as byte-identical to the last one.
  unchangedCount: u64 = 0;
  /// The serial of the newest entry (see Entry.serial).
  private lastSerial: u64 = 0;

  /// The index after `index` in its pod's chain of sandboxes (-1: the last).
  @inline nextSandbox(index: i32): i32 {
    return load<i32>(this.sandboxChain.ptr + (<usize>index << 2));
  }

  /// The index after `index` in its pod's chain of containers (-1: the last).
  @inline nextContainer(index: i32): i32 {
    return load<i32>(this.containerChain.ptr + (<usize>index << 2));
  }

  /// The slot's sandbox indices as a list (for tests; the agent follows the chain).
  sandboxIndicesOf(slot: PodSlot): i32[] {
    const out: i32[] = [];
    for (let i = slot.firstSandbox; i >= 0; i = this.nextSandbox(i)) out.push(i);
    return out;
  }

  /// The slot's container indices as a list (for tests; the agent follows the chain).
  containerIndicesOf(slot: PodSlot): i32[] {
    const out: i32[] = [];
    for (let i = slot.firstContainer; i >= 0; i = this.nextContainer(i)) out.push(i);
    return out;
  }

  /// The serial of the entry of the last relist's sandbox `index` (see Entry.serial); 0 for an
  /// object that relist listed twice. Equal serials are the same ID of the same pod.
  sandboxSerialAt(index: i32): u64 {
    return serialOf(this.sandboxes.at(index));
  }

  /// The serial of the entry of the last relist's container `index` (see sandboxSerialAt).
  containerSerialAt(index: i32): u64 {
    return serialOf(this.containers.at(index));
  }

  /// The fingerprint of the last relist's container `index` (see containerFingerprint).
  @inline fingerprintAt(index: i32): u64 {
    return load<u64>(this.fingerprints + (<usize>index << 3));
  }

  /// Diffs a new relist. The result is valid until the next call.
  relist(p: PackedSnapshot): RelistDiff {
    const diff = this.diff;
    diff.events.length = 0;
    diff.eventCount = 0;
    diff.changedPods.length = 0;
    if (this.previousKept && this.sameAsPrevious(p)) {
      // Nothing happened: the same pods, with the same indices, none changed.
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
    this.hintMisses = 0;
    const generation = ++this.generation;
    // Sized for what this relist lists; newcomers grow it as they come (see link).
    this.reserveTable(max(this.count, p.sandboxCount + p.containerCount));
    const nextSandboxes = this.nextSandboxes;
    const nextContainers = this.nextContainers;
    nextSandboxes.reserve(p.sandboxCount);
    nextContainers.reserve(p.containerCount);
    this.sandboxChain.reserve(p.sandboxCount);
    this.containerChain.reserve(p.containerCount);
    if (this.fingerprintCapacity < p.containerCount) {
      if (this.fingerprints != 0) heap.free(this.fingerprints);
      this.fingerprints = heap.alloc(<usize>p.containerCount << 3);
      this.fingerprintCapacity = p.containerCount;
    }

    this.reserveHashes(max(p.sandboxCount, p.containerCount));
    let cursor = 0;
    for (let i = 0; i < p.sandboxCount; i++) {
      if (i % AHEAD == 0) this.lookAhead(p.sandboxesPtr, SANDBOX_WORDS, S_ID, S_POD_UID, i, min(i + AHEAD, p.sandboxCount), p);
      const state = (p.sandboxWord(i, S_FLAGS) & S_FLAG_READY) != 0 ? PlegState.Running : PlegState.Exited;
      const hint: u64 = cursor < this.sandboxes.length ? this.sandboxes.at(cursor) : 0;
      const e = this.observe(p, hint, i, p.sandboxWord(i, S_ID), p.sandboxWord(i, S_ID + 1),
        p.sandboxWord(i, S_POD_UID), p.sandboxWord(i, S_POD_UID + 1), state, <u64>p.sandboxWord(i, S_FLAGS), generation, diff);
      nextSandboxes.set(i, e);
      if (e == 0) continue;
      const entry = changetype<Entry>(e);
      if (entry.position != NEW_POSITION) cursor = <i32>entry.position + 1;
      entry.position = <u32>i;
      const slot = entry.slot;
      if (slot.lastSandbox < 0) slot.firstSandbox = i;
      else store<i32>(this.sandboxChain.ptr + (<usize>slot.lastSandbox << 2), i);
      slot.lastSandbox = i;
      store<i32>(this.sandboxChain.ptr + (<usize>i << 2), -1);
    }
    cursor = 0;
    for (let i = 0; i < p.containerCount; i++) {
      if (i % AHEAD == 0) this.lookAhead(p.containersPtr, CONTAINER_WORDS, C_ID, C_POD_UID, i, min(i + AHEAD, p.containerCount), p);
      const state = plegStateOfContainer(<i32>p.containerWord(i, C_STATE));
      const hint: u64 = cursor < this.containers.length ? this.containers.at(cursor) : 0;
      const fingerprint = containerFingerprint(p, i);
      store<u64>(this.fingerprints + (<usize>i << 3), fingerprint);
      const e = this.observe(p, hint, i, p.containerWord(i, C_ID), p.containerWord(i, C_ID + 1),
        p.containerWord(i, C_POD_UID), p.containerWord(i, C_POD_UID + 1), state, fingerprint, generation, diff);
      nextContainers.set(i, e);
      if (e == 0) continue;
      const entry = changetype<Entry>(e);
      if (entry.position != NEW_POSITION) cursor = <i32>entry.position + 1;
      entry.position = <u32>i;
      const slot = entry.slot;
      if (slot.lastContainer < 0) slot.firstContainer = i;
      else store<i32>(this.containerChain.ptr + (<usize>slot.lastContainer << 2), i);
      slot.lastContainer = i;
      store<i32>(this.containerChain.ptr + (<usize>i << 2), -1);
    }
    nextSandboxes.length = p.sandboxCount;
    nextContainers.length = p.containerCount;
    // Whatever was not seen this time has vanished.
    this.sweep(this.sandboxes, generation, diff);
    this.sweep(this.containers, generation, diff);
    this.nextSandboxes = this.sandboxes;
    this.nextContainers = this.containers;
    this.sandboxes = nextSandboxes;
    this.containers = nextContainers;
    if (this.hintMisses == 0) this.keep(p);
    else this.previousKept = false;
    this.reordered = this.hintMisses * 2 > p.sandboxCount + p.containerCount;
    return diff;
  }

  private reserveHashes(count: i32): void {
    if (count <= this.hashCapacity) return;
    if (this.hashes != 0) heap.free(this.hashes);
    this.hashes = heap.alloc(<usize>count << 4);
    this.hashCapacity = count;
  }

  /// Hashes the IDs and pod UIDs of objects `from` to `to` (exclusive) of one list into `hashes`
  /// (observe takes them from there). After a relist in a new order it also reads, for each of
  /// them, the table cell its ID hashes to and the entry and pod slot that cell points at: these
  /// reads are independent of each other, so the processor overlaps their cache misses, where
  /// observe, one object at a time, would wait for each in turn (on a large node nearly every
  /// one misses). What is read is dropped; observe reads it again from the cache.
  private lookAhead(list: usize, wordsPer: i32, idWord: i32, podWord: i32, from: i32, to: i32, p: PackedSnapshot): void {
    for (let i = from; i < to; i++) {
      const words = list + ((<usize>i * <usize>wordsPer) << 2);
      const at = this.hashes + (<usize>i << 4);
      store<u64>(at, p.rangeHash(load<u32>(words + (<usize>idWord << 2)), load<u32>(words + (<usize>(idWord + 1) << 2))));
      store<u64>(at + 8, p.rangeHash(load<u32>(words + (<usize>podWord << 2)), load<u32>(words + (<usize>(podWord + 1) << 2))));
    }
    if (!this.reordered || this.capacity == 0) return;
    const mask = <u64>(this.capacity - 1);
    let sink: u64 = 0;
    for (let i = from; i < to; i++) {
      const hash = load<u64>(this.hashes + (<usize>i << 4));
      const c = load<u64>(this.table + (<usize>(hash & mask) << 3));
      if (cellTag(c) != <u32>(hash >> 32)) continue;
      const e = changetype<Entry>(cellEntry(c));
      // The entry's header, every cache line of its ID (IDs are long: 64 bytes are one or
      // two lines) and its pod slot.
      sink ^= e.hash ^ <u64>load<u32>(e.pod);
      const end = e.idPtr + <usize>e.idBytes;
      for (let at = e.idPtr; at < end; at += 64) sink ^= <u64>load<u8>(at);
      sink ^= <u64>load<u8>(end - 1);
    }
    this.aheadSink ^= sink;
  }

  private sameAsPrevious(p: PackedSnapshot): bool {
    if (p.textBytes != this.previousTextBytes || p.sandboxCount != this.previousSandboxes || p.containerCount != this.previousContainers) return false;
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
    if (total > this.previousBytes) {
      if (this.previous != 0) heap.free(this.previous);
      this.previous = heap.alloc(total);
      this.previousBytes = total;
    }
    let at = this.previous;
    for (let r = 0; r < 5; r++) {
      const size = unchecked(regions.sizes[r]);
      if (size > 0) memory.copy(at, unchecked(regions.pointers[r]), size);
      at += size;
    }
    this.previousKept = true;
    this.previousTextBytes = p.textBytes;
    this.previousSandboxes = p.sandboxCount;
    this.previousContainers = p.containerCount;
  }

  /// Frees the entries of `listing` the relist `generation` did not see, with their events.
  private sweep(listing: Listing, generation: u32, diff: RelistDiff): void {
    for (let i = 0, n = listing.length; i < n; i++) {
      const ptr = cellEntry(listing.at(i));
      if (ptr == 0) continue;
      const e = changetype<Entry>(ptr);
      if (e.seen == generation) continue;
      const slot = e.slot;
      this.emit(slot, e, PlegState.NonExistent, diff);
      this.touch(slot, generation, diff);
      markChanged(slot, diff);
      if (--slot.entryCount == 0) this.slots.delete(slot.uid);
      if (e.seen != DETACHED) this.unlink(ptr);
      heap.free(ptr);
    }
  }

  private emit(slot: PodSlot, e: Entry, newState: PlegState, diff: RelistDiff): void {
    if (this.collectEvents) {
      const before = diff.events.length;
      generateEvents(slot.uid, e.idString(), e.state, newState, diff.events);
      diff.eventCount += diff.events.length - before;
    } else {
      diff.eventCount += countEvents(e.state, newState);
    }
  }

  /// Finds or creates the entry of one object; 0 for a duplicate within this relist. `hint` is
  /// the cell listed where this object would be if nothing moved.
  private observe(
    p: PackedSnapshot, hint: u64, index: i32, idStart: u32, idLength: u32,
    podStart: u32, podLength: u32, state: PlegState, fingerprint: u64, generation: u32, diff: RelistDiff,
  ): usize {
    // Hashed by lookAhead.
    const hash = load<u64>(this.hashes + (<usize>index << 4));
    // Compared by hash, not text: the UID string is one more cache miss per object.
    const podHash = load<u64>(this.hashes + (<usize>index << 4) + 8);
    let ptr: usize = 0;
    if (cellTag(hint) == <u32>(hash >> 32)) {
      const h = changetype<Entry>(cellEntry(hint));
      if (h.hash == hash && h.seen != generation && h.seen != DETACHED && h.idBytes == idLength && p.rawRangeEquals(h.idPtr, idStart, idLength)) {
        ptr = changetype<usize>(h);
      }
    }
    if (ptr == 0) {
      this.hintMisses++;
      ptr = find(this.table, this.capacity, p, hash, idStart, idLength);
    }
    if (ptr != 0) {
      const e = changetype<Entry>(ptr);
      if (e.seen == generation) return 0; // listed twice: once counts
      // The same ID listed for another pod than last time (a runtime that reuses IDs, or lies in
      // its labels) is another object: the old one leaves the table now and vanishes in the
      // sweep; this one is new.
      if (e.podHash != podHash) {
        this.unlink(ptr);
        e.seen = DETACHED;
        ptr = 0;
      }
    }
    if (ptr == 0) {
      const uid = p.string(podStart, podLength);
      let slot: PodSlot;
      if (this.slots.has(uid)) slot = this.slots.get(uid);
      else {
        slot = new PodSlot(uid);
        this.slots.set(uid, slot);
      }
      slot.entryCount++;
      ptr = heap.alloc(offsetof<Entry>() + <usize>idLength);
      const e = changetype<Entry>(ptr);
      e.hash = hash;
      e.podHash = podHash;
      e.fingerprint = 0;
      e.pod = changetype<usize>(slot);
      e.seen = 0;
      e.state = PlegState.NonExistent;
      e.idBytes = idLength;
      e.position = NEW_POSITION;
      e.serial = ++this.lastSerial;
      memory.copy(e.idPtr, p.textAt(idStart), <usize>idLength);
      this.link(ptr);
      this.touch(slot, generation, diff);
      markChanged(slot, diff);
    } else {
      const e = changetype<Entry>(ptr);
      this.touch(e.slot, generation, diff);
      if (e.fingerprint != fingerprint) markChanged(e.slot, diff);
    }
    const e = changetype<Entry>(ptr);
    if (e.state != state) {
      this.emit(e.slot, e, state, diff);
      markChanged(e.slot, diff);
    }
    e.state = state;
    e.fingerprint = fingerprint;
    e.seen = generation;
    return ptr;
  }

  /// Starts the slot's lists afresh the first time a relist touches it.
  private touch(slot: PodSlot, generation: u32, diff: RelistDiff): void {
    if (slot.generation == generation) return;
    slot.generation = generation;
    slot.firstSandbox = -1;
    slot.lastSandbox = -1;
    slot.firstContainer = -1;
    slot.lastContainer = -1;
    slot.changed = false;
    diff.pods.push(slot);
  }

  /// Whether the last relist touched `slot` (a slot kept from an earlier relist may be stale).
  isCurrent(slot: PodSlot): bool {
    return slot.generation == this.generation;
  }

  /// The pod's slot if the last relist touched it.
  slotOf(uid: string): PodSlot | null {
    if (!this.slots.has(uid)) return null;
    const slot = this.slots.get(uid);
    return slot.generation == this.generation ? slot : null;
  }

  /// Room for `entries` at most half full: grown (or shrunk, when far emptier) by rehashing.
  /// (Growing mid-relist is safe: listings hold entries, not table positions.)
  private reserveTable(entries: i32): void {
    let capacity = 16;
    while (capacity < entries * 2) capacity <<= 1;
    if (capacity <= this.capacity && capacity * 8 > this.capacity) return;
    const old = this.table;
    const oldCapacity = this.capacity;
    this.table = heap.alloc(<usize>capacity << 3);
    memory.fill(this.table, 0, <usize>capacity << 3);
    this.capacity = capacity;
    for (let i = 0; i < oldCapacity; i++) {
      const ptr = cellEntry(load<u64>(old + (<usize>i << 3)));
      if (ptr != 0) insert(this.table, capacity, ptr);
    }
    if (old != 0) heap.free(old);
  }

  private link(ptr: usize): void {
    if ((this.count + 1) * 2 > this.capacity) this.reserveTable(this.count + 1);
    insert(this.table, this.capacity, ptr);
    this.count++;
  }

  /// Takes an entry out of the table, shifting later members of its probe run back so that
  /// every remaining entry stays reachable from its home slot (linear probing's deletion).
  private unlink(ptr: usize): void {
    const table = this.table;
    const mask = this.capacity - 1;
    let hole = <i32>(changetype<Entry>(ptr).hash & <u64>mask);
    while (cellEntry(load<u64>(table + (<usize>hole << 3))) != ptr) hole = (hole + 1) & mask;
    let j = hole;
    while (true) {
      j = (j + 1) & mask;
      const next = load<u64>(table + (<usize>j << 3));
      if (next == 0) break;
      const home = <i32>(changetype<Entry>(cellEntry(next)).hash & <u64>mask);
      // `next` may fill the hole only if its home is not cyclically within (hole, j].
      const homeInRun = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
      if (homeInRun) continue;
      store<u64>(table + (<usize>hole << 3), next);
      hole = j;
    }
    store<u64>(table + (<usize>hole << 3), 0);
    this.count--;
  }

  /// Frees the unmanaged tables and entries; the PLEG is empty afterwards. For short-lived
  /// instances (the pure `pleg` interface); the agent's lives as long as the agent.
  dispose(): void {
    for (let i = 0; i < this.capacity; i++) {
      const ptr = cellEntry(load<u64>(this.table + (<usize>i << 3)));
      if (ptr != 0) heap.free(ptr);
    }
    if (this.table != 0) heap.free(this.table);
    if (this.fingerprints != 0) heap.free(this.fingerprints);
    if (this.hashes != 0) heap.free(this.hashes);
    this.hashes = 0;
    this.hashCapacity = 0;
    if (this.previous != 0) heap.free(this.previous);
    this.previous = 0;
    this.previousBytes = 0;
    this.previousKept = false;
    this.fingerprints = 0;
    this.fingerprintCapacity = 0;
    this.table = 0;
    this.capacity = 0;
    this.count = 0;
    this.sandboxes.dispose();
    this.containers.dispose();
    this.sandboxChain.dispose();
    this.containerChain.dispose();
    this.nextSandboxes.dispose();
    this.nextContainers.dispose();
    this.slots.clear();
  }

  /// Objects remembered from the last relist.
  get size(): i32 {
    return this.count;
  }
}

/// Sets the slot's `changed` (it was touched in this relist) and lists it the first time.
@inline function markChanged(slot: PodSlot, diff: RelistDiff): void {
  if (slot.changed) return;
  slot.changed = true;
  diff.changedPods.push(slot);
}

/// Objects hashed and read ahead at a time (see lookAhead): enough to overlap many cache misses,
/// few enough that what was read is still cached when observe reaches it.
const AHEAD: i32 = 32;

/// `seen` of an entry taken out of the table before its sweep (its ID came back for another pod).
const DETACHED: u32 = U32.MAX_VALUE;
/// `position` of an entry no relist listed yet: the hint for the object after it stays put.
const NEW_POSITION: u32 = U32.MAX_VALUE;

/// What of a container can change while its ID stays: state, exit, times, reason, message.
/// (Name, image, spec hash, sandbox and pod are fixed when the runtime creates a container.)
/// Never 0, which marks an observation not read from a relist.
function containerFingerprint(p: PackedSnapshot, i: i32): u64 {
  let h = mix(FNV_OFFSET, <u64>p.containerWord(i, C_STATE));
  h = mix(h, <u64>p.containerNumber(i, N_CREATED));
  h = mix(h, <u64>p.containerWord(i, C_ATTEMPT));
  h = mix(h, <u64>p.containerNumber(i, N_EXIT_CODE));
  h = mix(h, <u64>p.containerNumber(i, N_STARTED));
  h = mix(h, <u64>p.containerNumber(i, N_FINISHED));
  const reasonLength = p.containerWord(i, C_REASON + 1);
  if (reasonLength > 0) h = mix(h, p.rangeHash(p.containerWord(i, C_REASON), reasonLength));
  const messageLength = p.containerWord(i, C_MESSAGE + 1);
  if (messageLength > 0) h = mix(h, p.rangeHash(p.containerWord(i, C_MESSAGE), messageLength));
  return h | 1;
}

/// A table or listing cell: the high 32 bits of an entry's ID hash beside its pointer, so that a
/// probe or a hint rules most entries out without reading them (each read is a cache miss on a
/// large node).
@inline function cell(hash: u64, ptr: usize): u64 {
  return (hash & 0xffffffff00000000) | <u64>ptr;
}

@inline function cellTag(c: u64): u32 {
  return <u32>(c >> 32);
}

@inline function cellEntry(c: u64): usize {
  return <usize>(c & 0xffffffff);
}

@inline function serialOf(c: u64): u64 {
  const ptr = cellEntry(c);
  return ptr == 0 ? 0 : changetype<Entry>(ptr).serial;
}

function find(table: usize, capacity: i32, p: PackedSnapshot, hash: u64, start: u32, length: u32): usize {
  if (capacity == 0) return 0;
  const mask = capacity - 1;
  const tag = <u32>(hash >> 32);
  let i = <i32>(hash & <u64>mask);
  let c = load<u64>(table + (<usize>i << 3));
  while (c != 0) {
    if (cellTag(c) == tag) {
      const e = changetype<Entry>(cellEntry(c));
      if (e.hash == hash && e.idBytes == length && p.rawRangeEquals(e.idPtr, start, length)) return changetype<usize>(e);
    }
    i = (i + 1) & mask;
    c = load<u64>(table + (<usize>i << 3));
  }
  return 0;
}

function insert(table: usize, capacity: i32, ptr: usize): void {
  const mask = capacity - 1;
  const hash = changetype<Entry>(ptr).hash;
  let i = <i32>(hash & <u64>mask);
  while (load<u64>(table + (<usize>i << 3)) != 0) i = (i + 1) & mask;
  store<u64>(table + (<usize>i << 3), cell(hash, ptr));
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
  unchecked((r.sizes[0] = <usize>p.textBytes));
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
