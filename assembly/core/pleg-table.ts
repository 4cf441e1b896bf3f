// What the PLEG remembers between relists, outside the garbage collector's reach: an entry per
// container and sandbox (unmanaged, its ID's bytes after it), the hash table and listings of
// entry cells, a pod's slot, and the fingerprints and byte compares that tell a changed object
// from an unchanged one without allocating.
import { C_ATTEMPT, C_MESSAGE, C_REASON, C_STATE, N_CREATED, N_EXIT_CODE, N_FINISHED, N_STARTED, CONTAINER_NUMBERS, CONTAINER_WORDS, PackedSnapshot, SANDBOX_NUMBERS, SANDBOX_WORDS } from "./packed";
import { PlegEvent } from "./pleg-events";

/// What the PLEG remembers of one container or sandbox between relists. Unmanaged (allocated
/// and freed here, followed by the ID's UTF-8 bytes): the garbage collector never traces or
/// write-barriers the table, which holds one of these per container of the node.
@unmanaged export class Entry {
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

export const FNV_OFFSET: u64 = 0xcbf29ce484222325;
export const FNV_PRIME: u64 = 0x100000001b3;

@inline export function mix(hash: u64, value: u64): u64 {
  return (hash ^ value) * FNV_PRIME;
}

/// Entry pointers of one relist in listing order (0 for an object listed twice), each beside its
/// ID's hash tag (see `cell`): where the next relist first looks for each object, without
/// touching the entry unless the tags agree.
export class Listing {
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

/// Objects hashed and read ahead at a time (see lookAhead): enough to overlap many cache misses,
/// few enough that what was read is still cached when observe reaches it.
export const AHEAD: i32 = 32;

/// `seen` of an entry taken out of the table before its sweep (its ID came back for another pod).
export const DETACHED: u32 = U32.MAX_VALUE;
/// `position` of an entry no relist listed yet: the hint for the object after it stays put.
export const NEW_POSITION: u32 = U32.MAX_VALUE;

/// What of a container can change while its ID stays: state, exit, times, reason, message.
/// (Name, image, spec hash, sandbox and pod are fixed when the runtime creates a container.)
/// Never 0, which marks an observation not read from a relist.
export function containerFingerprint(p: PackedSnapshot, i: i32): u64 {
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
@inline export function cell(hash: u64, ptr: usize): u64 {
  return (hash & 0xffffffff00000000) | <u64>ptr;
}

@inline export function cellTag(c: u64): u32 {
  return <u32>(c >> 32);
}

@inline export function cellEntry(c: u64): usize {
  return <usize>(c & 0xffffffff);
}

@inline export function serialOf(c: u64): u64 {
  const ptr = cellEntry(c);
  return ptr == 0 ? 0 : changetype<Entry>(ptr).serial;
}

export function find(table: usize, capacity: i32, p: PackedSnapshot, hash: u64, start: u32, length: u32): usize {
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

export function insert(table: usize, capacity: i32, ptr: usize): void {
  const mask = capacity - 1;
  const hash = changetype<Entry>(ptr).hash;
  let i = <i32>(hash & <u64>mask);
  while (load<u64>(table + (<usize>i << 3)) != 0) i = (i + 1) & mask;
  store<u64>(table + (<usize>i << 3), cell(hash, ptr));
}

/// The five arrays of a packed snapshot, as (pointer, byte size) pairs. Reused: no allocation.
export class Regions {
  pointers: StaticArray<usize> = new StaticArray<usize>(5);
  sizes: StaticArray<usize> = new StaticArray<usize>(5);
  /** Where each region starts in the kept copy (the regions back to back, in order). */
  offsets: StaticArray<usize> = new StaticArray<usize>(5);
}
export const REGIONS = new Regions();
/// Container numbers, sandbox numbers, container words, sandbox words, text.
export const COMPARE_ORDER: StaticArray<i32> = [4, 2, 3, 1, 0];

export function regionsOf(p: PackedSnapshot): Regions {
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
export function sameBytes(a: usize, b: usize, size: usize): bool {
  const end = a + size;
  for (; a + 8 <= end; a += 8, b += 8) if (load<u64>(a) != load<u64>(b)) return false;
  for (; a < end; a++, b++) if (load<u8>(a) != load<u8>(b)) return false;
  return true;
}

/// Open-addressing table (linear probing) of cells (see `cell`) by ID hash, kept between relists.
export class EntryTable {
  table: usize = 0;
  capacity: i32 = 0;
  count: i32 = 0;

  /// Room for `entries` at most half full: grown (or shrunk, when far emptier) by rehashing.
  /// (Growing mid-relist is safe: listings hold entries, not table positions.)
  reserve(entries: i32): void {
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

  link(ptr: usize): void {
    if ((this.count + 1) * 2 > this.capacity) this.reserve(this.count + 1);
    insert(this.table, this.capacity, ptr);
    this.count++;
  }

  /// Takes an entry out of the table, shifting later members of its probe run back so that
  /// every remaining entry stays reachable from its home slot (linear probing's deletion).
  unlink(ptr: usize): void {
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

  /// Frees every entry and the table.
  dispose(): void {
    for (let i = 0; i < this.capacity; i++) {
      const ptr = cellEntry(load<u64>(this.table + (<usize>i << 3)));
      if (ptr != 0) heap.free(ptr);
    }
    if (this.table != 0) heap.free(this.table);
    this.table = 0;
    this.capacity = 0;
    this.count = 0;
  }
}

/// A copy of the last relist's arrays (text, sandbox words and numbers, container words and
/// numbers, back to back), kept only while the runtime lists in a stable order: then a relist in
/// which nothing changed is the same bytes, and one compare replaces the diff. (containerd lists
/// in a new order every time; the copy is not made for it.)
export class PreviousRelist {
  private copy: usize = 0;
  private bytes: usize = 0;
  kept: bool = false;
  private textBytes: u32 = 0;
  private sandboxes: i32 = -1;
  private containers: i32 = -1;

  same(p: PackedSnapshot): bool {
    if (p.textBytes != this.textBytes || p.sandboxCount != this.sandboxes || p.containerCount != this.containers) return false;
    const regions = regionsOf(p);
    // Numbers and words first: a change of state or time shows there, and the text is the bulk.
    for (let k = 0; k < 5; k++) {
      const r = unchecked(COMPARE_ORDER[k]);
      const size = unchecked(regions.sizes[r]);
      if (size > 0 && !sameBytes(this.copy + unchecked(regions.offsets[r]), unchecked(regions.pointers[r]), size)) return false;
    }
    return true;
  }

  keep(p: PackedSnapshot): void {
    const regions = regionsOf(p);
    let total: usize = 0;
    for (let r = 0; r < 5; r++) total += unchecked(regions.sizes[r]);
    if (total > this.bytes) {
      if (this.copy != 0) heap.free(this.copy);
      this.copy = heap.alloc(total);
      this.bytes = total;
    }
    let at = this.copy;
    for (let r = 0; r < 5; r++) {
      const size = unchecked(regions.sizes[r]);
      if (size > 0) memory.copy(at, unchecked(regions.pointers[r]), size);
      at += size;
    }
    this.kept = true;
    this.textBytes = p.textBytes;
    this.sandboxes = p.sandboxCount;
    this.containers = p.containerCount;
  }

  dispose(): void {
    if (this.copy != 0) heap.free(this.copy);
    this.copy = 0;
    this.bytes = 0;
    this.kept = false;
  }
}
