// PLEG relist diff (upstream pkg/kubelet/pleg/generic.go): compares the previous and the new
// runtime state of every container and sandbox and names what happened to each.
// Its parts: pleg-events.ts (what a move is called), pleg-table.ts (what it remembers).
import { C_ID, C_POD_UID, C_STATE, CONTAINER_WORDS, PackedSnapshot, SANDBOX_WORDS, S_FLAGS, S_FLAG_READY, S_ID, S_POD_UID } from "./packed";
import { PlegState, countEvents, generateEvents, plegStateOfContainer } from "./pleg-events";
import { AHEAD, DETACHED, Entry, EntryTable, Listing, NEW_POSITION, PodSlot, PreviousRelist, RelistDiff, cell, cellEntry, cellTag, containerFingerprint, find, serialOf } from "./pleg-table";
export { PlegEvent, PlegEventType, PlegState } from "./pleg-events";
export { PodSlot, RelistDiff, SlotOwner } from "./pleg-table";

/// Remembers the last relist and diffs each new one against it, reading the packed snapshot in
/// place: an unchanged container costs a compare of its ID and a fingerprint, no allocation.
/// Objects are first looked for where the last relist listed them (a runtime that lists in a
/// stable order costs no hashing); a runtime that lists in any order (containerd walks a Go map)
/// is looked up by ID hash.
export class Pleg {
  /// Every entry by ID hash, kept between relists.
  private entries: EntryTable = new EntryTable();
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
  /// The last relist's bytes, while the runtime lists in a stable order (see PreviousRelist).
  private previous: PreviousRelist = new PreviousRelist();
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
    if (this.previous.kept && this.previous.same(p)) {
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
    this.entries.reserve(max(this.entries.count, p.sandboxCount + p.containerCount));
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
    if (this.hintMisses == 0) this.previous.keep(p);
    else this.previous.kept = false;
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
    const table = this.entries.table;
    const capacity = this.entries.capacity;
    if (!this.reordered || capacity == 0) return;
    const mask = <u64>(capacity - 1);
    let sink: u64 = 0;
    for (let i = from; i < to; i++) {
      const hash = load<u64>(this.hashes + (<usize>i << 4));
      const c = load<u64>(table + (<usize>(hash & mask) << 3));
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
      if (e.seen != DETACHED) this.entries.unlink(ptr);
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
      ptr = find(this.entries.table, this.entries.capacity, p, hash, idStart, idLength);
    }
    if (ptr != 0) {
      const e = changetype<Entry>(ptr);
      if (e.seen == generation) return 0; // listed twice: once counts
      // The same ID listed for another pod than last time (a runtime that reuses IDs, or lies in
      // its labels) is another object: the old one leaves the table now and vanishes in the
      // sweep; this one is new.
      if (e.podHash != podHash) {
        this.entries.unlink(ptr);
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
      this.entries.link(ptr);
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

  /// Frees the unmanaged tables and entries; the PLEG is empty afterwards. For short-lived
  /// instances (the pure `pleg` interface); the agent's lives as long as the agent.
  dispose(): void {
    this.entries.dispose();
    if (this.fingerprints != 0) heap.free(this.fingerprints);
    if (this.hashes != 0) heap.free(this.hashes);
    this.hashes = 0;
    this.hashCapacity = 0;
    this.previous.dispose();
    this.fingerprints = 0;
    this.fingerprintCapacity = 0;
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
    return this.entries.count;
  }
}

/// Sets the slot's `changed` (it was touched in this relist) and lists it the first time.
@inline function markChanged(slot: PodSlot, diff: RelistDiff): void {
  if (slot.changed) return;
  slot.changed = true;
  diff.changedPods.push(slot);
}
