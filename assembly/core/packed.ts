// The packed form of a relist (WIT packed-snapshot): flat word and number arrays plus one UTF-8
// text buffer, read in place. The typed runtime-snapshot is packed into the same form, so that
// both entry points share one PLEG.
import { ContainerObservation, RuntimeSnapshot, SandboxObservation } from "./model";
import { bytesEqual, utf8Equals } from "./units";

export const SANDBOX_WORDS: i32 = 10;
export const SANDBOX_NUMBERS: i32 = 2;
export const CONTAINER_WORDS: i32 = 18;
export const CONTAINER_NUMBERS: i32 = 4;

// Word offsets (each string is two words: start, length).
export const S_ID: i32 = 0;
export const S_POD_UID: i32 = 2;
export const S_POD_NAME: i32 = 4;
export const S_POD_NAMESPACE: i32 = 6;
export const S_ATTEMPT: i32 = 8;
export const S_FLAGS: i32 = 9;
export const S_FLAG_READY: u32 = 1;
export const S_FLAG_HAS_GRACE: u32 = 2;

export const C_ID: i32 = 0;
export const C_SANDBOX_ID: i32 = 2;
export const C_POD_UID: i32 = 4;
export const C_NAME: i32 = 6;
export const C_IMAGE: i32 = 8;
export const C_SPEC_HASH: i32 = 10;
export const C_REASON: i32 = 12;
export const C_MESSAGE: i32 = 14;
export const C_ATTEMPT: i32 = 16;
export const C_STATE: i32 = 17;

export const N_EXIT_CODE: i32 = 0;
export const N_CREATED: i32 = 1;
export const N_STARTED: i32 = 2;
export const N_FINISHED: i32 = 3;

/// A packed snapshot in linear memory. Valid while the memory it points at is (one call).
export class PackedSnapshot {
  listedAtMs: u64 = 0;
  textPtr: usize = 0;
  textBytes: u32 = 0;
  sandboxesPtr: usize = 0;
  sandboxCount: i32 = 0;
  sandboxNumbersPtr: usize = 0;
  containersPtr: usize = 0;
  containerCount: i32 = 0;
  containerNumbersPtr: usize = 0;
  uninspectedPodUids: string[] = [];

  /// Checks counts and that every string range lies inside the text: a host bug otherwise.
  validate(sandboxWords: u32, sandboxNumbers: u32, containerWords: u32, containerNumbers: u32): void {
    assert(sandboxWords % <u32>SANDBOX_WORDS == 0 && sandboxNumbers == (sandboxWords / <u32>SANDBOX_WORDS) * <u32>SANDBOX_NUMBERS,
      "packed-snapshot: sandbox lists do not match");
    assert(containerWords % <u32>CONTAINER_WORDS == 0 && containerNumbers == (containerWords / <u32>CONTAINER_WORDS) * <u32>CONTAINER_NUMBERS,
      "packed-snapshot: container lists do not match");
    this.sandboxCount = <i32>(sandboxWords / <u32>SANDBOX_WORDS);
    this.containerCount = <i32>(containerWords / <u32>CONTAINER_WORDS);
    // The furthest end of any string, in one tight pass (this runs on every relist).
    let furthest: u64 = 0;
    furthest = furthestEnd(this.sandboxesPtr, this.sandboxCount, SANDBOX_WORDS, S_ATTEMPT, furthest);
    furthest = furthestEnd(this.containersPtr, this.containerCount, CONTAINER_WORDS, C_ATTEMPT, furthest);
    assert(furthest <= <u64>this.textBytes, "packed-snapshot: a string lies outside the text");
  }

  @inline sandboxWord(index: i32, word: i32): u32 {
    return load<u32>(this.sandboxesPtr + ((<usize>index * <usize>SANDBOX_WORDS + <usize>word) << 2));
  }

  @inline containerWord(index: i32, word: i32): u32 {
    return load<u32>(this.containersPtr + ((<usize>index * <usize>CONTAINER_WORDS + <usize>word) << 2));
  }

  @inline sandboxNumber(index: i32, n: i32): i64 {
    return load<i64>(this.sandboxNumbersPtr + ((<usize>index * <usize>SANDBOX_NUMBERS + <usize>n) << 3));
  }

  @inline containerNumber(index: i32, n: i32): i64 {
    return load<i64>(this.containerNumbersPtr + ((<usize>index * <usize>CONTAINER_NUMBERS + <usize>n) << 3));
  }

  /// Address of the string whose (start, length) words are given (both in bytes).
  @inline textAt(start: u32): usize {
    return this.textPtr + <usize>start;
  }

  string(start: u32, length: u32): string {
    if (length == 0) return "";
    return String.UTF8.decodeUnsafe(this.textAt(start), <usize>length);
  }

  sandboxString(index: i32, word: i32): string {
    return this.string(this.sandboxWord(index, word), this.sandboxWord(index, word + 1));
  }

  /// FNV-1a over a string's bytes, eight at a time, then mixed.
  rangeHash(start: u32, length: u32): u64 {
    let hash: u64 = 0xcbf29ce484222325;
    let ptr = this.textAt(start);
    const end = ptr + <usize>length;
    // Eight bytes at a time: ids are long and this runs once per container per relist.
    for (; ptr + 8 <= end; ptr += 8) {
      hash ^= load<u64>(ptr);
      hash *= 0x100000001b3;
    }
    for (; ptr < end; ptr++) {
      hash ^= <u64>load<u8>(ptr);
      hash *= 0x100000001b3;
    }
    // Multiplication only carries differences upwards; the table indexes by the low bits, so
    // fold the high bits down (murmur3's finaliser).
    hash ^= <u64>length;
    hash ^= hash >> 33;
    hash *= 0xff51afd7ed558ccd;
    hash ^= hash >> 33;
    hash *= 0xc4ceb9fe1a85ec53;
    return hash ^ (hash >> 33);
  }

  /// True when the text's range says `text`, as `string` would read it.
  rangeEquals(text: string, start: u32, length: u32): bool {
    return utf8Equals(text, this.textAt(start), length);
  }

  /// Compares `length` bytes at `a` with a range of the text.
  rawRangeEquals(a: usize, start: u32, length: u32): bool {
    return bytesEqual(a, this.textAt(start), length);
  }

  /// Reads again into `c`, the container at `index` as an earlier relist listed it, what can
  /// change while a container's ID stays (see the PLEG's containerFingerprint); the rest was
  /// fixed when the runtime created it.
  refreshContainer(index: i32, c: ContainerObservation, fingerprint: u64): void {
    c.attempt = this.containerWord(index, C_ATTEMPT);
    c.state = <i32>this.containerWord(index, C_STATE);
    c.exitCode = <i32>this.containerNumber(index, N_EXIT_CODE);
    c.createdAtNs = this.containerNumber(index, N_CREATED);
    c.startedAtNs = this.containerNumber(index, N_STARTED);
    c.finishedAtNs = this.containerNumber(index, N_FINISHED);
    c.reason = this.containerField(index, C_REASON, c.reason);
    c.message = this.containerField(index, C_MESSAGE, c.message);
    c.relistFingerprint = fingerprint;
  }

  /// A container field as a string, reusing `known` when it has the same text: a changed
  /// container mostly keeps its strings, and a decode is an allocation.
  private containerField(index: i32, word: i32, known: string | null): string {
    const start = this.containerWord(index, word);
    const length = this.containerWord(index, word + 1);
    if (known !== null && this.rangeEquals(known, start, length)) return known;
    return this.string(start, length);
  }

  /// True when sandbox `index` says exactly what `previous` says (`sameId`: its ID is known to
  /// be `previous`'s).
  sandboxUnchanged(index: i32, previous: SandboxObservation, sameId: bool = false): bool {
    const flags = this.sandboxWord(index, S_FLAGS);
    return (sameId || this.rangeEquals(previous.id, this.sandboxWord(index, S_ID), this.sandboxWord(index, S_ID + 1))) &&
      previous.attempt == this.sandboxWord(index, S_ATTEMPT) &&
      (previous.state == 0) == ((flags & S_FLAG_READY) != 0) &&
      previous.createdAtNs == this.sandboxNumber(index, 0) &&
      previous.hasGracePeriod == ((flags & S_FLAG_HAS_GRACE) != 0) &&
      (!previous.hasGracePeriod || previous.terminationGracePeriodSeconds == this.sandboxNumber(index, 1)) &&
      this.rangeEquals(previous.podUid, this.sandboxWord(index, S_POD_UID), this.sandboxWord(index, S_POD_UID + 1)) &&
      this.rangeEquals(previous.podName, this.sandboxWord(index, S_POD_NAME), this.sandboxWord(index, S_POD_NAME + 1)) &&
      this.rangeEquals(previous.podNamespace, this.sandboxWord(index, S_POD_NAMESPACE), this.sandboxWord(index, S_POD_NAMESPACE + 1));
  }

  materializeSandbox(index: i32): SandboxObservation {
    const s = new SandboxObservation();
    s.id = this.sandboxString(index, S_ID);
    s.podUid = this.sandboxString(index, S_POD_UID);
    s.podName = this.sandboxString(index, S_POD_NAME);
    s.podNamespace = this.sandboxString(index, S_POD_NAMESPACE);
    s.attempt = this.sandboxWord(index, S_ATTEMPT);
    const flags = this.sandboxWord(index, S_FLAGS);
    s.state = (flags & S_FLAG_READY) != 0 ? 0 : 1;
    s.createdAtNs = this.sandboxNumber(index, 0);
    s.hasGracePeriod = (flags & S_FLAG_HAS_GRACE) != 0;
    s.terminationGracePeriodSeconds = s.hasGracePeriod ? this.sandboxNumber(index, 1) : 0;
    return s;
  }

  /// The container at `index`; `previous` (the same container as last seen) lends its strings.
  /// `fingerprint` is the PLEG's for it (0: not known).
  materializeContainer(index: i32, previous: ContainerObservation | null = null, fingerprint: u64 = 0): ContainerObservation {
    const known = previous !== null;
    const c = new ContainerObservation();
    c.id = this.containerField(index, C_ID, known ? previous!.id : null);
    c.sandboxId = this.containerField(index, C_SANDBOX_ID, known ? previous!.sandboxId : null);
    c.podUid = this.containerField(index, C_POD_UID, known ? previous!.podUid : null);
    c.name = this.containerField(index, C_NAME, known ? previous!.name : null);
    c.image = this.containerField(index, C_IMAGE, known ? previous!.image : null);
    c.specHash = this.containerField(index, C_SPEC_HASH, known ? previous!.specHash : null);
    // The rest is what can change while the ID stays; the previous strings are lent the same way.
    if (known) {
      c.reason = previous!.reason;
      c.message = previous!.message;
    }
    this.refreshContainer(index, c, fingerprint);
    return c;
  }
}

/// Packs a typed snapshot into buffers it owns; `free` releases them.
export class OwnedPackedSnapshot extends PackedSnapshot {
  private buffers: usize[] = [];

  alloc(bytes: usize): usize {
    const ptr = heap.alloc(bytes > 0 ? bytes : 8);
    this.buffers.push(ptr);
    return ptr;
  }

  free(): void {
    for (let i = 0; i < this.buffers.length; i++) heap.free(this.buffers[i]);
    this.buffers.length = 0;
  }
}

class TextWriter {
  bytes: u32 = 0;
  constructor(public ptr: usize) {}
  /// Writes `text` as UTF-8 and its (start, length) words at `words`.
  put(words: usize, text: string): void {
    const n = <u32>String.UTF8.encodeUnsafe(changetype<usize>(text), text.length, this.ptr + <usize>this.bytes);
    store<u32>(words, this.bytes);
    store<u32>(words, n, 4);
    this.bytes += n;
  }
}

function utf8Length(text: string): usize {
  return <usize>String.UTF8.byteLength(text);
}

function textBytes(s: RuntimeSnapshot): usize {
  let n: usize = 0;
  for (let i = 0; i < s.sandboxes.length; i++) {
    const x = s.sandboxes[i];
    n += utf8Length(x.id) + utf8Length(x.podUid) + utf8Length(x.podName) + utf8Length(x.podNamespace);
  }
  for (let i = 0; i < s.containers.length; i++) {
    const c = s.containers[i];
    n += utf8Length(c.id) + utf8Length(c.sandboxId) + utf8Length(c.podUid) + utf8Length(c.name) + utf8Length(c.image) +
      utf8Length(c.specHash) + utf8Length(c.reason) + utf8Length(c.message);
  }
  return n;
}

export function packSnapshot(s: RuntimeSnapshot): OwnedPackedSnapshot {
  const p = new OwnedPackedSnapshot();
  p.listedAtMs = s.listedAtMs;
  p.uninspectedPodUids = s.uninspectedPodUids;
  const bytes = textBytes(s);
  p.textPtr = p.alloc(bytes);
  p.textBytes = <u32>bytes;
  p.sandboxCount = s.sandboxes.length;
  p.containerCount = s.containers.length;
  p.sandboxesPtr = p.alloc(<usize>p.sandboxCount * <usize>SANDBOX_WORDS * 4);
  p.sandboxNumbersPtr = p.alloc(<usize>p.sandboxCount * <usize>SANDBOX_NUMBERS * 8);
  p.containersPtr = p.alloc(<usize>p.containerCount * <usize>CONTAINER_WORDS * 4);
  p.containerNumbersPtr = p.alloc(<usize>p.containerCount * <usize>CONTAINER_NUMBERS * 8);
  const text = new TextWriter(p.textPtr);
  for (let i = 0; i < p.sandboxCount; i++) {
    const x = s.sandboxes[i];
    const w = p.sandboxesPtr + ((<usize>i * <usize>SANDBOX_WORDS) << 2);
    text.put(w + (<usize>S_ID << 2), x.id);
    text.put(w + (<usize>S_POD_UID << 2), x.podUid);
    text.put(w + (<usize>S_POD_NAME << 2), x.podName);
    text.put(w + (<usize>S_POD_NAMESPACE << 2), x.podNamespace);
    store<u32>(w + (<usize>S_ATTEMPT << 2), x.attempt);
    store<u32>(w + (<usize>S_FLAGS << 2), (x.state == 0 ? S_FLAG_READY : 0) | (x.hasGracePeriod ? S_FLAG_HAS_GRACE : 0));
    const n = p.sandboxNumbersPtr + ((<usize>i * <usize>SANDBOX_NUMBERS) << 3);
    store<i64>(n, x.createdAtNs);
    store<i64>(n + 8, x.terminationGracePeriodSeconds);
  }
  for (let i = 0; i < p.containerCount; i++) {
    const c = s.containers[i];
    const w = p.containersPtr + ((<usize>i * <usize>CONTAINER_WORDS) << 2);
    text.put(w + (<usize>C_ID << 2), c.id);
    text.put(w + (<usize>C_SANDBOX_ID << 2), c.sandboxId);
    text.put(w + (<usize>C_POD_UID << 2), c.podUid);
    text.put(w + (<usize>C_NAME << 2), c.name);
    text.put(w + (<usize>C_IMAGE << 2), c.image);
    text.put(w + (<usize>C_SPEC_HASH << 2), c.specHash);
    text.put(w + (<usize>C_REASON << 2), c.reason);
    text.put(w + (<usize>C_MESSAGE << 2), c.message);
    store<u32>(w + (<usize>C_ATTEMPT << 2), c.attempt);
    store<u32>(w + (<usize>C_STATE << 2), <u32>c.state);
    const n = p.containerNumbersPtr + ((<usize>i * <usize>CONTAINER_NUMBERS) << 3);
    store<i64>(n, <i64>c.exitCode);
    store<i64>(n + 8, c.createdAtNs);
    store<i64>(n + 16, c.startedAtNs);
    store<i64>(n + 24, c.finishedAtNs);
  }
  return p;
}

/// The largest start + length of the (start, length) word pairs among the first `stringWords`
/// words of each of `count` records of `recordWords` words.
function furthestEnd(ptr: usize, count: i32, recordWords: i32, stringWords: i32, furthest: u64): u64 {
  const recordBytes = <usize>recordWords << 2;
  const end = ptr + <usize>count * recordBytes;
  for (let record = ptr; record < end; record += recordBytes) {
    for (let w: usize = 0; w < <usize>stringWords; w += 2) {
      const reach = <u64>load<u32>(record + (w << 2)) + <u64>load<u32>(record + ((w + 1) << 2));
      if (reach > furthest) furthest = reach;
    }
  }
  return furthest;
}
