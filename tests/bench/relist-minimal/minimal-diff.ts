// A minimal relist diff of the runtime's answers in WebAssembly memory, what any diff must do at
// least, for relist-minimal.bench.mjs: find every sandbox and container of the last relist by its
// ID (a hash table of 64-bit ID hashes, read ahead in batches as the agent's PLEG does) and call
// it changed when its message's bytes hash differently. Nothing else: no pods, no views, no
// events, no state names, no handling of answers laid out otherwise (the bench's answers are
// written field 1 first, as every runtime writes them). Compiled by the bench with asc; not part of the component.

const FNV_PRIME: u64 = 0x100000001b3;
/// Objects hashed, and their table cells read, before any is looked up (overlapping the misses).
const AHEAD: i32 = 32;

/// Open-addressing table (linear probing) of cells: the ID hash's high 32 bits beside an entry
/// pointer. Entry layout: ID hash u64 @0, message hash u64 @8, relist u32 @16, ID length u32 @20,
/// ID bytes @24.
let table: usize = 0;
let capacity: i32 = 0;
/// Per object of a batch: its ID hash, then its message's start (high 32 bits) and length.
let batch: usize = 0;
/// What the read-ahead loads, kept so that the loads are not optimised away.
let sink: u64 = 0;

/// Memory for the host to copy an answer into.
export function reserveBytes(size: usize): usize {
  return heap.alloc(size);
}

/// A table for up to `objects` entries, at most half full.
export function reserveObjects(objects: i32): void {
  capacity = 16;
  while (capacity < objects * 2) capacity <<= 1;
  table = heap.alloc(<usize>capacity << 3);
  memory.fill(table, 0, <usize>capacity << 3);
  batch = heap.alloc(<usize>AHEAD << 4);
}

@inline function finish(hash: u64): u64 {
  hash ^= hash >> 33;
  hash *= 0xff51afd7ed558ccd;
  hash ^= hash >> 33;
  hash *= 0xc4ceb9fe1a85ec53;
  return hash ^ (hash >> 33);
}

/// FNV-1a eight bytes at a time, folded (as the PLEG hashes IDs).
@inline function idHash(at: usize, length: usize): u64 {
  let hash: u64 = 0xcbf29ce484222325;
  const end = at + length;
  for (; at + 8 <= end; at += 8) hash = (hash ^ load<u64>(at)) * FNV_PRIME;
  for (; at < end; at++) hash = (hash ^ <u64>load<u8>(at)) * FNV_PRIME;
  return finish(hash ^ <u64>length);
}

/// A message's bytes in four independent lanes of 32 bytes (the multiplications overlap).
@inline function messageHash(at: usize, length: usize): u64 {
  let a: u64 = 1;
  let b: u64 = 2;
  let c: u64 = 3;
  let d: u64 = 4;
  const end = at + length;
  for (; at + 32 <= end; at += 32) {
    a = (a ^ load<u64>(at)) * FNV_PRIME;
    b = (b ^ load<u64>(at, 8)) * FNV_PRIME;
    c = (c ^ load<u64>(at, 16)) * FNV_PRIME;
    d = (d ^ load<u64>(at, 24)) * FNV_PRIME;
  }
  for (; at < end; at++) a = (a ^ <u64>load<u8>(at)) * FNV_PRIME;
  return finish(a ^ rotl(b, 17) ^ rotl(c, 31) ^ rotl(d, 47) ^ <u64>length);
}

function find(hash: u64, id: usize, length: u32): usize {
  const mask = capacity - 1;
  let i = <i32>(hash & <u64>mask);
  while (true) {
    const cell = load<u64>(table + (<usize>i << 3));
    if (cell == 0) return 0;
    if (<u32>(cell >> 32) == <u32>(hash >> 32)) {
      const entry = <usize>(cell & 0xffffffff);
      if (load<u64>(entry) == hash && load<u32>(entry, 20) == length && memory.compare(entry + 24, id, length) == 0) return entry;
    }
    i = (i + 1) & mask;
  }
}

function insert(hash: u64, entry: usize): void {
  const mask = capacity - 1;
  let i = <i32>(hash & <u64>mask);
  while (load<u64>(table + (<usize>i << 3)) != 0) i = (i + 1) & mask;
  store<u64>(table + (<usize>i << 3), (hash & 0xffffffff00000000) | <u64>entry);
}

/// Diffs one answer (`length` bytes at `at`: repeated field 1, each element's field 1 its ID in
/// under 128 bytes) against the last relist; returns how many objects are new or changed, or -1
/// for an answer laid out otherwise. (Objects that vanished are not looked for: the agent's
/// sweep of them is not part of this minimum.)
export function diff(at: usize, length: usize, relist: u32): i32 {
  const end = at + length;
  let changed = 0;
  const mask = <u64>(capacity - 1);
  while (at < end) {
    // Hash a batch of objects and read their cells and entries ahead.
    let count = 0;
    let next = at;
    for (; count < AHEAD && next < end; count++) {
      if (load<u8>(next++) != 0x0a) return -1;
      let messageLength: u32 = 0;
      let shift: u32 = 0;
      while (true) {
        if (next >= end || shift > 28) return -1;
        const byte = load<u8>(next++);
        messageLength |= <u32>(byte & 0x7f) << shift;
        shift += 7;
        if (byte < 0x80) break;
      }
      if (next + <usize>messageLength > end || messageLength < 2 || load<u8>(next) != 0x0a) return -1;
      const idLength = <u32>load<u8>(next + 1);
      if (idLength >= 0x80 || idLength + 2 > messageLength) return -1;
      const hash = idHash(next + 2, idLength);
      store<u64>(batch + (<usize>count << 4), hash);
      store<u64>(batch + (<usize>count << 4) + 8, (<u64>next << 32) | <u64>messageLength);
      const cell = load<u64>(table + (<usize>(hash & mask) << 3));
      if (cell != 0) sink ^= load<u64>(<usize>(cell & 0xffffffff) + 8);
      next += messageLength;
    }
    for (let k = 0; k < count; k++) {
      const hash = load<u64>(batch + (<usize>k << 4));
      const where = load<u64>(batch + (<usize>k << 4) + 8);
      const message = <usize>(where >> 32);
      const messageLength = <usize>(<u32>where);
      const idLength = <u32>load<u8>(message + 1);
      const contentHash = messageHash(message, messageLength);
      let entry = find(hash, message + 2, idLength);
      if (entry == 0) {
        entry = heap.alloc(24 + <usize>idLength);
        store<u64>(entry, hash);
        store<u32>(entry, idLength, 20);
        memory.copy(entry + 24, message + 2, idLength);
        insert(hash, entry);
        changed++;
      } else if (load<u64>(entry, 8) != contentHash) {
        changed++;
      }
      store<u64>(entry, contentHash, 8);
      store<u32>(entry, relist, 16);
    }
    at = next;
  }
  return changed;
}

/// What the read-ahead loaded (see `sink`).
export function readAhead(): u64 {
  return sink;
}
