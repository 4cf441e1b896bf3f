// Decodes the two answers every relist reads, ListContainersResponse and ListPodSandboxResponse,
// straight from protobuf's wire format into the host's own records. The generic decoder
// (@grpc/proto-loader over protobufjs) builds each message twice (a decoded message, then a plain
// object with every default filled, 64-bit integers as strings) and took ~95 ms for 10,000
// containers and 5,000 sandboxes here; this one reads each field once. Field numbers are CRI
// runtime.v1's (host/cri/runtime-v1.proto). Unknown fields are skipped, as protobuf requires, so a
// newer runtime's additions do no harm; a truncated or malformed message throws a WireError.
import type { ContainerInfo, ContainerStateName, SandboxInfo } from "./runtime.js";

/** What a malformed answer throws: names the message and where it broke. */
export class WireError extends Error {}

/** CRI ContainerState by its number. */
export const CONTAINER_STATE_NAMES: ContainerStateName[] = ["created", "running", "exited", "unknown"];

/** Node.js's UTF-8 reader without `toString`'s argument handling (it runs for every string). */
type Utf8Buffer = Buffer & { utf8Slice?(start: number, end: number): string };

export function utf8(bytes: Utf8Buffer, start: number, end: number): string {
  return bytes.utf8Slice ? bytes.utf8Slice(start, end) : bytes.toString("utf8", start, end);
}

/** 2^(7i): where the i-th byte of a varint lands. */
const SEVEN_BIT_PLACES = [1, 2 ** 7, 2 ** 14, 2 ** 21, 2 ** 28];
/** Where bytes 5-9 of a varint land in the high 32 bits. */
const HIGH_PLACES = [2 ** 3, 2 ** 10, 2 ** 17, 2 ** 24, 2 ** 31];

/** The high half's BigInt, kept: timestamps made within a few seconds of each other share it. */
let lastHigh = -1;
let lastHighShifted = 0n;

/** A signed 64-bit number from its two 32-bit halves. */
export function int64Of(high: number, low: number): bigint {
  if (high !== lastHigh) {
    lastHigh = high;
    lastHighShifted = BigInt(high) << 32n;
  }
  return BigInt.asIntN(64, lastHighShifted + BigInt(low));
}

/**
 * Map keys of earlier entries: nanolet's pods carry the same few label and annotation keys, and
 * handing back the string made last time spares a new one and V8's lookup of it as a property
 * name. Short and bounded: a runtime listing other keys only costs the compare.
 */
const KEY_CACHE_SIZE = 16;
const keyCache: { bytes: Uint8Array; text: string }[] = [];
let keyCacheNext = 0;

function cachedKey(bytes: Utf8Buffer, start: number, end: number): string {
  const length = end - start;
  for (let k = 0; k < keyCache.length; k++) {
    const known = keyCache[k]!;
    if (known.bytes.length !== length) continue;
    let same = true;
    for (let i = length - 1; i >= 0; i--) {
      if (known.bytes[i] !== bytes[start + i]) {
        same = false;
        break;
      }
    }
    if (same) return known.text;
  }
  const text = utf8(bytes, start, end);
  keyCache[keyCacheNext] = { bytes: Uint8Array.prototype.slice.call(bytes, start, end), text };
  keyCacheNext = (keyCacheNext + 1) % KEY_CACHE_SIZE;
  return text;
}

/** A cursor over one message's bytes. */
export class Reader {
  at: number;
  constructor(
    readonly bytes: Utf8Buffer,
    readonly what: string,
    start: number,
    /** Where reading stops: the message's end (an entry's, while mapEntry reads one). */
    public end: number,
  ) {
    this.at = start;
  }

  fail(why: string): never {
    throw new WireError(`${this.what}: ${why} at byte ${this.at}`);
  }

  /** A varint of up to 32 significant bits (keys, lengths, enums, uint32), as a non-negative number. */
  uint32(): number {
    // Keys and most lengths are one byte.
    if (this.at < this.end && this.bytes[this.at]! < 0x80) return this.bytes[this.at++]!;
    return this.longUint32();
  }

  private longUint32(): number {
    const bytes = this.bytes;
    let value = 0;
    for (let i = 0; i < 5; i++) {
      if (this.at >= this.end) this.fail("truncated varint");
      const byte = bytes[this.at++]!;
      value += (byte & 0x7f) * SEVEN_BIT_PLACES[i]!;
      if (byte < 0x80) return value > 0xffffffff ? value % 2 ** 32 : value;
    }
    // Longer varints carry an int32 sign-extended to 64 bits: the low 32 bits are the value.
    for (let i = 0; i < 5; i++) {
      if (this.at >= this.end) this.fail("truncated varint");
      if (bytes[this.at++]! < 0x80) return value % 2 ** 32;
    }
    return this.fail("varint longer than 10 bytes");
  }

  /** The halves the last varint64 read: low and high 32 bits (two's complement). */
  low = 0;
  high = 0;

  /** Reads a 64-bit varint into `low` and `high`, seven bits at a time: no BigInt made. */
  private varint64(): void {
    const bytes = this.bytes;
    let low = 0;
    let high = 0;
    for (let i = 0; i < 10; i++) {
      if (this.at >= this.end) this.fail("truncated varint");
      const byte = bytes[this.at++]!;
      const bits = byte & 0x7f;
      if (i < 4) low += bits * SEVEN_BIT_PLACES[i]!;
      else if (i === 4) {
        low += (bits & 0x0f) * 2 ** 28;
        high += bits >> 4;
      } else high += bits * HIGH_PLACES[i - 5]!;
      if (byte < 0x80) {
        this.low = low;
        this.high = high % 2 ** 32;
        return;
      }
    }
    this.fail("varint longer than 10 bytes");
  }

  /** A 64-bit varint's two halves into `into[at]` (low) and `into[at + 1]` (high). */
  int64Halves(into: Uint32Array, at: number): void {
    this.varint64();
    into[at] = this.low;
    into[at + 1] = this.high;
  }

  /** A 64-bit varint read as a signed integer (int64): a nanosecond timestamp is past 2^53. */
  int64(): bigint {
    this.varint64();
    return this.high === 0 ? BigInt(this.low) : int64Of(this.high, this.low);
  }

  /** The end of a length-delimited field whose length comes next. */
  delimitedEnd(): number {
    const length = this.uint32();
    const end = this.at + length;
    if (end > this.end) this.fail("length past the end of the message");
    return end;
  }

  string(): string {
    const end = this.delimitedEnd();
    const start = this.at;
    this.at = end;
    return start === end ? "" : utf8(this.bytes, start, end);
  }

  /** A map key: a string, handed back from the key cache when an earlier answer had it. */
  key(): string {
    const end = this.delimitedEnd();
    const start = this.at;
    this.at = end;
    return start === end ? "" : cachedKey(this.bytes, start, end);
  }

  /** Skips a field of the given wire type (its key already read). */
  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        this.uint32();
        return;
      case 1:
        this.at += 8;
        break;
      case 2:
        this.at = this.delimitedEnd();
        return;
      case 5:
        this.at += 4;
        break;
      default:
        this.fail(`unsupported wire type ${wireType}`);
    }
    if (this.at > this.end) this.fail("fixed-size field past the end of the message");
  }

  /** Reads a nested message of the given length-delimited field with `read`, then steps past it. */
  nested<T>(what: string, read: (r: Reader) => T): T {
    const end = this.delimitedEnd();
    const value = read(new Reader(this.bytes, what, this.at, end));
    this.at = end;
    return value;
  }

  /** One map<string, string> entry, added to `into`. */
  mapEntry(into: Record<string, string>): void {
    // Read in place, with the end narrowed to the entry's: no reader made per entry (a
    // container has a dozen), and every read checks its bounds as anywhere else.
    const entryEnd = this.delimitedEnd();
    const messageEnd = this.end;
    this.end = entryEnd;
    let key = "";
    let value = "";
    while (this.at < entryEnd) {
      const tag = this.uint32();
      if (tag === 0x0a) key = this.key();
      else if (tag === 0x12) value = this.string();
      else this.skip(tag & 7);
    }
    this.end = messageEnd;
    into[key] = value;
  }
}

export function readContainer(r: Reader): ContainerInfo {
  const c: ContainerInfo = { id: "", sandboxId: "", name: "", attempt: 0, image: "", imageRef: undefined, state: "created", createdAtNs: 0n, labels: {}, annotations: {} };
  while (r.at < r.end) {
    const tag = r.uint32();
    switch (tag) {
      case 0x0a: // 1 id
        c.id = r.string();
        break;
      case 0x12: // 2 pod_sandbox_id
        c.sandboxId = r.string();
        break;
      case 0x1a: // 3 metadata: ContainerMetadata { 1 name, 2 attempt }
        r.nested("ContainerMetadata", (m) => {
          while (m.at < m.end) {
            const t = m.uint32();
            if (t === 0x0a) c.name = m.string();
            else if (t === 0x10) c.attempt = m.uint32();
            else m.skip(t & 7);
          }
        });
        break;
      case 0x22: // 4 image: ImageSpec { 1 image }
        r.nested("ImageSpec", (m) => {
          while (m.at < m.end) {
            const t = m.uint32();
            if (t === 0x0a) c.image = m.string();
            else m.skip(t & 7);
          }
        });
        break;
      case 0x2a: {
        // 5 image_ref: absent when empty, as proto-loader's caller treated ""
        const ref = r.string();
        c.imageRef = ref === "" ? undefined : ref;
        break;
      }
      case 0x30: // 6 state
        c.state = CONTAINER_STATE_NAMES[r.uint32()] ?? "unknown";
        break;
      case 0x38: // 7 created_at
        c.createdAtNs = r.int64();
        break;
      case 0x42: // 8 labels
        r.mapEntry(c.labels);
        break;
      case 0x4a: // 9 annotations
        r.mapEntry(c.annotations);
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return c;
}

export function readSandbox(r: Reader): SandboxInfo {
  const s: SandboxInfo = { id: "", podUid: "", podName: "", podNamespace: "", attempt: 0, state: "ready", createdAtNs: 0n, labels: {}, annotations: {} };
  while (r.at < r.end) {
    const tag = r.uint32();
    switch (tag) {
      case 0x0a: // 1 id
        s.id = r.string();
        break;
      case 0x12: // 2 metadata: PodSandboxMetadata { 1 name, 2 uid, 3 namespace, 4 attempt }
        r.nested("PodSandboxMetadata", (m) => {
          while (m.at < m.end) {
            const t = m.uint32();
            if (t === 0x0a) s.podName = m.string();
            else if (t === 0x12) s.podUid = m.string();
            else if (t === 0x1a) s.podNamespace = m.string();
            else if (t === 0x20) s.attempt = m.uint32();
            else m.skip(t & 7);
          }
        });
        break;
      case 0x18: // 3 state: SANDBOX_READY = 0, SANDBOX_NOTREADY = 1
        s.state = r.uint32() === 0 ? "ready" : "not-ready";
        break;
      case 0x20: // 4 created_at
        s.createdAtNs = r.int64();
        break;
      case 0x2a: // 5 labels
        r.mapEntry(s.labels);
        break;
      case 0x32: // 6 annotations
        r.mapEntry(s.annotations);
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return s;
}

/** Every element of repeated message field 1, the only field of both list answers. */
function readList<T>(bytes: Buffer, what: string, element: string, read: (r: Reader) => T): T[] {
  const r = new Reader(bytes as Utf8Buffer, what, 0, bytes.length);
  const list: T[] = [];
  while (r.at < r.end) {
    const tag = r.uint32();
    if (tag === 0x0a) list.push(r.nested(element, read));
    else r.skip(tag & 7);
  }
  return list;
}

/** A ListContainersResponse's containers. */
export function decodeContainerList(bytes: Buffer): ContainerInfo[] {
  return readList(bytes, "ListContainersResponse", "Container", readContainer);
}

/** A ListPodSandboxResponse's sandboxes. */
export function decodeSandboxList(bytes: Buffer): SandboxInfo[] {
  return readList(bytes, "ListPodSandboxResponse", "PodSandbox", readSandbox);
}
