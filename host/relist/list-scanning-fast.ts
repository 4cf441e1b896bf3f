// The relist's scanners for the answers every runtime writes: each object's fields in one loop
// over local variables (the general scanners in list-scanning.ts go through a Reader's methods
// and properties, and take 1.3-1.6 times as long: tests/bench/relist-scan.bench.mjs). Anything
// these do not expect (a tag or varint longer than its usual size, a map entry laid out
// differently, a wire type other than varint and length-delimited, a negative timestamp) makes
// them give up on the object and say so; the caller then scans it with the general scanner, which
// also knows what is malformed. So they read only what they can read exactly as the general
// scanner would.
import {
  CR_ATTEMPT,
  CR_CREATED,
  CR_ID,
  CR_IMAGE,
  CR_MESSAGE,
  CR_NAME,
  CR_SANDBOX_ID,
  CR_SPEC_HASH,
  CR_STATE,
  CR_UID_LABEL,
  SR_ATTEMPT,
  SR_CREATED,
  SR_GRACE,
  SR_ID,
  SR_MESSAGE,
  SR_NAME,
  SR_NAMESPACE,
  SR_READY,
  SR_UID,
  SR_UID_LABEL,
  ABSENT,
} from "./scan-layout.js";
import { ANNOTATION_GRACE_PERIOD, ANNOTATION_SPEC_HASH, LABEL_POD_UID } from "../cri/runtime.js";

const keyBytes = (key: string): Uint8Array => new TextEncoder().encode(key);
/** The keys whose values the relist reads, as the answers' bytes spell them. */
export const POD_UID_KEY = keyBytes(LABEL_POD_UID);
export const SPEC_HASH_KEY = keyBytes(ANNOTATION_SPEC_HASH);
export const GRACE_KEY = keyBytes(ANNOTATION_GRACE_PERIOD);

/** True when the `length` bytes at `start` are `key` (compared from the end, where keys differ). */
export function isKey(bytes: Uint8Array, start: number, length: number, key: Uint8Array): boolean {
  if (length !== key.length) return false;
  for (let i = length - 1; i >= 0; i--) if (bytes[start + i] !== key[i]) return false;
  return true;
}

/**
 * A map entry (its bytes `start` to `end`) as runtimes write it: key then value, each shorter
 * than 128 bytes and nothing else. If its key is `key`, the value's range goes to `rows[at]`,
 * `rows[at + 1]`. False when the entry is laid out otherwise.
 */
export function commonMapEntry(bytes: Uint8Array, start: number, end: number, key: Uint8Array, rows: Uint32Array, at: number): boolean {
  if (start + 2 > end || bytes[start] !== 0x0a) return false;
  const keyLength = bytes[start + 1]!;
  const keyEnd = start + 2 + keyLength;
  if (keyLength >= 0x80 || keyEnd + 2 > end || bytes[keyEnd] !== 0x12) return false;
  const valueLength = bytes[keyEnd + 1]!;
  if (valueLength >= 0x80 || keyEnd + 2 + valueLength !== end) return false;
  if (isKey(bytes, start + 2, keyLength, key)) {
    rows[at] = keyEnd + 2;
    rows[at + 1] = valueLength;
  }
  return true;
}

/**
 * The end of a length-delimited field whose length, in one or two bytes, is at `at` and whose
 * bytes follow it (see `bodyAt`); -1 to give up (a longer length, or past `end`).
 */
function fieldEndAt(bytes: Uint8Array, at: number, end: number): number {
  if (at >= end) return -1;
  const first = bytes[at]!;
  if (first < 0x80) return at + 1 + first <= end ? at + 1 + first : -1;
  if (at + 1 >= end) return -1;
  const second = bytes[at + 1]!;
  if (second >= 0x80) return -1;
  const fieldEnd = at + 2 + (first & 0x7f) + second * 128;
  return fieldEnd <= end ? fieldEnd : -1;
}

/** Where a field's bytes start, its length (as fieldEndAt took it) at `at`. */
function bodyAt(bytes: Uint8Array, at: number): number {
  return bytes[at]! < 0x80 ? at + 1 : at + 2;
}

/** 2^(7i): where the i-th of a varint's first four bytes lands. */
const LOW_PLACES = [1, 2 ** 7, 2 ** 14, 2 ** 21];
/** Where bytes 5-8 of a varint land in its high 32 bits. */
const HIGH_PLACES = [2 ** 3, 2 ** 10, 2 ** 17, 2 ** 24];

/**
 * A created_at varint of at most nine bytes (every time after 1970 in nanoseconds) at `at`,
 * its low and high 32 bits into `rows[into]`, `rows[into + 1]`. Returns where it ended, or -1
 * (a longer varint: a time before 1970, which the general scanners read).
 */
function timestamp(bytes: Uint8Array, at: number, end: number, rows: Uint32Array, into: number): number {
  let low = 0;
  let high = 0;
  for (let i = 0; i < 9; i++) {
    if (at >= end) break;
    const byte = bytes[at++]!;
    const bits = byte & 0x7f;
    if (i < 4) low += bits * LOW_PLACES[i]!;
    else if (i === 4) {
      low += (bits & 0x0f) * 2 ** 28;
      high = bits >> 4;
    } else high += bits * HIGH_PLACES[i - 5]!;
    // Nine bytes carry at most 63 bits: both halves stay below 2^32.
    if (byte < 0x80) {
      rows[into] = low;
      rows[into + 1] = high;
      return at;
    }
  }
  return -1;
}

/**
 * How many elements of repeated message field 1 (the only field of both answers) `bytes` holds,
 * or -1 when it holds another field (count it the general way).
 */
export function fastCount(bytes: Uint8Array): number {
  let count = 0;
  let at = 0;
  const end = bytes.length;
  while (at < end) {
    if (bytes[at++] !== 0x0a) return -1;
    let length = 0;
    let place = 1;
    for (;;) {
      if (at >= end) return -1;
      const byte = bytes[at++]!;
      length += (byte & 0x7f) * place;
      place *= 128;
      if (byte < 0x80) break;
    }
    at += length;
    if (at > end) return -1;
    count++;
  }
  return count;
}

/** Skips a varint of an unknown field; the position after it, or -1. */
function skipVarint(bytes: Uint8Array, at: number, end: number): number {
  for (let i = 0; i < 10 && at < end; i++) if (bytes[at++]! < 0x80) return at;
  return -1;
}

/** A sandbox's row from its message (bytes `at` to `end`); false: scan it the general way. */
export function fastSandbox(bytes: Uint8Array, at: number, end: number, rows: Uint32Array, row: number): boolean {
  rows[row + SR_MESSAGE] = at;
  rows[row + SR_MESSAGE + 1] = end;
  rows[row + SR_READY] = 1;
  rows[row + SR_UID_LABEL] = ABSENT;
  rows[row + SR_GRACE] = ABSENT;
  while (at < end) {
    const tag = bytes[at++]!;
    if ((tag & 0x87) === 2) {
      const fieldEnd = fieldEndAt(bytes, at, end);
      if (fieldEnd < 0) return false;
      at = bodyAt(bytes, at);
      if (tag === 0x0a) {
        rows[row + SR_ID] = at;
        rows[row + SR_ID + 1] = fieldEnd - at;
      } else if (tag === 0x12) {
        // PodSandboxMetadata { 1 name, 2 uid, 3 namespace, 4 attempt }
        let m = at;
        while (m < fieldEnd) {
          const t = bytes[m++]!;
          if (t === 0x20) {
            if (m >= fieldEnd || bytes[m]! >= 0x80) return false;
            rows[row + SR_ATTEMPT] = bytes[m++]!;
            continue;
          }
          if ((t & 0x87) !== 2 || m >= fieldEnd) return false;
          const l = bytes[m++]!;
          if (l >= 0x80 || m + l > fieldEnd) return false;
          const word = t === 0x0a ? SR_NAME : t === 0x12 ? SR_UID : t === 0x1a ? SR_NAMESPACE : -1;
          if (word >= 0) {
            rows[row + word] = m;
            rows[row + word + 1] = l;
          }
          m += l;
        }
      } else if (tag === 0x2a) {
        if (!commonMapEntry(bytes, at, fieldEnd, POD_UID_KEY, rows, row + SR_UID_LABEL)) return false;
      } else if (tag === 0x32) {
        if (!commonMapEntry(bytes, at, fieldEnd, GRACE_KEY, rows, row + SR_GRACE)) return false;
      }
      at = fieldEnd;
    } else if (tag === 0x18) {
      // 3 state: SANDBOX_READY = 0
      if (at >= end || bytes[at]! >= 0x80) return false;
      rows[row + SR_READY] = bytes[at++] === 0 ? 1 : 0;
    } else if (tag === 0x20) {
      at = timestamp(bytes, at, end, rows, row + SR_CREATED);
      if (at < 0) return false;
    } else if ((tag & 0x87) === 0) {
      at = skipVarint(bytes, at, end);
      if (at < 0) return false;
    } else return false;
  }
  return true;
}

/** A container's row from its message (bytes `at` to `end`); false: scan it the general way. */
export function fastContainer(bytes: Uint8Array, at: number, end: number, rows: Uint32Array, row: number): boolean {
  rows[row + CR_MESSAGE] = at;
  rows[row + CR_MESSAGE + 1] = end;
  while (at < end) {
    const tag = bytes[at++]!;
    if ((tag & 0x87) === 2) {
      const fieldEnd = fieldEndAt(bytes, at, end);
      if (fieldEnd < 0) return false;
      at = bodyAt(bytes, at);
      switch (tag) {
        case 0x0a: // 1 id
          rows[row + CR_ID] = at;
          rows[row + CR_ID + 1] = fieldEnd - at;
          break;
        case 0x12: // 2 pod_sandbox_id
          rows[row + CR_SANDBOX_ID] = at;
          rows[row + CR_SANDBOX_ID + 1] = fieldEnd - at;
          break;
        case 0x1a: // 3 metadata: ContainerMetadata { 1 name, 2 attempt }
        case 0x22: {
          // 4 image: ImageSpec { 1 image }
          const word = tag === 0x1a ? CR_NAME : CR_IMAGE;
          let m = at;
          while (m < fieldEnd) {
            const t = bytes[m++]!;
            if (t === 0x10 && tag === 0x1a) {
              if (m >= fieldEnd || bytes[m]! >= 0x80) return false;
              rows[row + CR_ATTEMPT] = bytes[m++]!;
              continue;
            }
            if ((t & 0x87) !== 2 || m >= fieldEnd) return false;
            const l = bytes[m++]!;
            if (l >= 0x80 || m + l > fieldEnd) return false;
            if (t === 0x0a) {
              rows[row + word] = m;
              rows[row + word + 1] = l;
            }
            m += l;
          }
          break;
        }
        case 0x42: // 8 labels
          if (!commonMapEntry(bytes, at, fieldEnd, POD_UID_KEY, rows, row + CR_UID_LABEL)) return false;
          break;
        case 0x4a: // 9 annotations
          if (!commonMapEntry(bytes, at, fieldEnd, SPEC_HASH_KEY, rows, row + CR_SPEC_HASH)) return false;
          break;
      }
      at = fieldEnd;
    } else if (tag === 0x30) {
      // 6 state
      if (at >= end || bytes[at]! >= 0x80) return false;
      const state = bytes[at++]!;
      rows[row + CR_STATE] = state <= 3 ? state : 3;
    } else if (tag === 0x38) {
      at = timestamp(bytes, at, end, rows, row + CR_CREATED);
      if (at < 0) return false;
    } else if ((tag & 0x87) === 0) {
      at = skipVarint(bytes, at, end);
      if (at < 0) return false;
    } else return false;
  }
  return true;
}
