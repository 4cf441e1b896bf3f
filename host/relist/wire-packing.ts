// Packs a relist straight from the runtime's two answers (relist/list-scanning.ts) into the core's
// packed-snapshot (wit/runtime-state.wit): the text is the answers' bytes as they came, copied into one
// buffer, followed by the few strings the answers do not carry (exit reasons and messages); the
// words point into it. No string of the answers is made. The same relist as core/snapshot-packing.ts
// would pack from the Relister's observations, string for string (tests/host/relist-wire.test.mjs).
import type { PackedSnapshot } from "../core/types.js";
import type { ContainerDetail } from "../cri/runtime.js";
import {
  ABSENT,
  CONTAINER_ROW,
  CR_ATTEMPT,
  CR_CREATED,
  CR_ID,
  CR_IMAGE,
  CR_NAME,
  CR_SANDBOX_ID,
  CR_SPEC_HASH,
  CR_UID_LABEL,
  ContainerRows,
  SANDBOX_ROW,
  SR_ATTEMPT,
  SR_CREATED,
  SR_GRACE,
  SR_ID,
  SR_NAME,
  SR_NAMESPACE,
  SR_READY,
  SR_UID,
  SR_UID_LABEL,
  SandboxRows,
} from "./list-scanning.js";

import { CONTAINER_NUMBERS, CONTAINER_WORDS, SANDBOX_NUMBERS, SANDBOX_WORDS } from "../core/snapshot-packing.js";

type Utf8Buffer = Buffer & { utf8Write(value: string, offset: number): number; latin1Slice(start: number, end: number): string };

/** Where a 64-bit number's low and high 32 bits lie in a Uint32Array over its BigInt64Array. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const LOW = LITTLE_ENDIAN ? 0 : 1;
const HIGH = 1 - LOW;

/** An empty string in the packed text. */
const NO_STRING = { at: 0, length: 0 };

/** The longest run of digits read as a plain number (2^53 is 16 digits). */
const SAFE_DIGITS = 15;

/**
 * The grace period annotation's value as the relist reads it: decimal digits only, else absent.
 * Written as a 64-bit number into `halves` (32-bit words over a BigInt64Array) at `at`; false
 * when absent.
 */
export function readGracePeriod(bytes: Buffer, start: number, length: number, halves: Uint32Array, at: number): boolean {
  if (start === ABSENT || length === 0) return false;
  let value = 0;
  for (let i = start; i < start + length; i++) {
    const digit = bytes[i]! - 0x30;
    if (digit < 0 || digit > 9) return false;
    value = value * 10 + digit;
  }
  if (length <= SAFE_DIGITS) {
    halves[at + LOW] = value % 2 ** 32;
    halves[at + HIGH] = Math.floor(value / 2 ** 32);
  } else {
    // Beyond 2^53: exactly, wrapped to 64 bits as a BigInt64Array would.
    const exact = BigInt.asUintN(64, BigInt((bytes as Utf8Buffer).latin1Slice(start, start + length)));
    halves[at + LOW] = Number(exact & 0xffffffffn);
    halves[at + HIGH] = Number(exact >> 32n);
  }
  return true;
}

/**
 * What a relist knows of a container beyond the list (its ContainerStatus, or an announced exit),
 * made once when learnt. One class, so that reading it for every container of every relist stays
 * cheap: details come from several places (status answers, spread copies) in several shapes.
 */
export class KnownDetail {
  constructor(
    readonly exitCode: number,
    readonly reason: string,
    readonly message: string,
    readonly startedAtNs: bigint,
    readonly finishedAtNs: bigint,
  ) {}

  static of(detail: ContainerDetail): KnownDetail {
    return new KnownDetail(detail.exitCode, detail.reason, detail.message, detail.startedAtNs, detail.finishedAtNs);
  }
}

/** What the relist lists of each container beyond the list itself. */
export interface ContainerFacts {
  /** The state each container is listed in (0 created, 1 running, 2 exited, 3 unknown). */
  states: Uint8Array;
  /** Each container's details, if read. */
  details: (KnownDetail | undefined)[];
}

/** A buffer that is kept and grown, never shrunk: one per packed list. */
class Scratch<T extends Uint32Array | BigInt64Array> {
  private buffer: T;
  constructor(private make: (length: number) => T) {
    this.buffer = make(0);
  }
  /** The first `length` elements (contents left from before: every one is written). */
  take(length: number): T {
    if (this.buffer.length < length) this.buffer = this.make(Math.max(length, this.buffer.length * 2));
    return this.buffer.subarray(0, length) as T;
  }
}

/**
 * One packer per relister. Its buffers are reused (a relist on a steady node would otherwise
 * leave six arrays a second to the allocator), so a packed relist lasts until the next is packed.
 */
export class WirePacker {
  private text: Utf8Buffer = Buffer.alloc(0) as Utf8Buffer;
  private sandboxWords = new Scratch((n) => new Uint32Array(n));
  private sandboxNumbers = new Scratch((n) => new BigInt64Array(n));
  private containerWords = new Scratch((n) => new Uint32Array(n));
  private containerNumbers = new Scratch((n) => new BigInt64Array(n));

  pack(listedAtMs: bigint, sandboxes: SandboxRows, containers: ContainerRows, facts: ContainerFacts, uninspectedPodUids: string[]): PackedSnapshot {
    const sandboxBytes = sandboxes.bytes.length;
    const containerBase = sandboxBytes;
    // The strings the answers do not carry, each written once however many containers share it.
    const extra = new Map<string, { at: number; length: number }>();
    let extraBytes = 0;
    const note = (value: string): void => {
      if (value === "" || extra.has(value)) return;
      const length = Buffer.byteLength(value, "utf8");
      extra.set(value, { at: extraBytes, length });
      extraBytes += length;
    };
    for (const detail of facts.details) {
      if (!detail) continue;
      note(detail.reason);
      note(detail.message);
    }
    const extraBase = containerBase + containers.bytes.length;
    const textBytes = extraBase + extraBytes;
    if (this.text.length < textBytes) this.text = Buffer.allocUnsafe(Math.max(textBytes, this.text.length * 2)) as Utf8Buffer;
    const text = this.text;
    text.set(sandboxes.bytes, 0);
    text.set(containers.bytes, containerBase);
    for (const [value, { at }] of extra) text.utf8Write(value, extraBase + at);

    const sandboxWords = this.sandboxWords.take(sandboxes.count * SANDBOX_WORDS);
    const sandboxNumbers = this.sandboxNumbers.take(sandboxes.count * SANDBOX_NUMBERS);
    const sandboxHalves = new Uint32Array(sandboxNumbers.buffer, sandboxNumbers.byteOffset, sandboxNumbers.length * 2);
    const s = sandboxes.rows;
    for (let i = 0; i < sandboxes.count; i++) {
      const r = i * SANDBOX_ROW;
      const w = i * SANDBOX_WORDS;
      sandboxWords[w] = s[r + SR_ID]!;
      sandboxWords[w + 1] = s[r + SR_ID + 1]!;
      const uid = s[r + SR_UID_LABEL] !== ABSENT ? r + SR_UID_LABEL : r + SR_UID;
      sandboxWords[w + 2] = s[uid]!;
      sandboxWords[w + 3] = s[uid + 1]!;
      sandboxWords[w + 4] = s[r + SR_NAME]!;
      sandboxWords[w + 5] = s[r + SR_NAME + 1]!;
      sandboxWords[w + 6] = s[r + SR_NAMESPACE]!;
      sandboxWords[w + 7] = s[r + SR_NAMESPACE + 1]!;
      sandboxWords[w + 8] = s[r + SR_ATTEMPT]!;
      const n = i * SANDBOX_NUMBERS * 2;
      sandboxHalves[n + LOW] = s[r + SR_CREATED]!;
      sandboxHalves[n + HIGH] = s[r + SR_CREATED + 1]!;
      const hasGrace = readGracePeriod(sandboxes.bytes, s[r + SR_GRACE]!, s[r + SR_GRACE + 1]!, sandboxHalves, n + 2);
      if (!hasGrace) sandboxNumbers[i * SANDBOX_NUMBERS + 1] = 0n;
      sandboxWords[w + 9] = (s[r + SR_READY] ? 1 : 0) | (hasGrace ? 2 : 0);
    }

    const containerWords = this.containerWords.take(containers.count * CONTAINER_WORDS);
    const containerNumbers = this.containerNumbers.take(containers.count * CONTAINER_NUMBERS);
    const containerHalves = new Uint32Array(containerNumbers.buffer, containerNumbers.byteOffset, containerNumbers.length * 2);
    const c = containers.rows;
    const { states, details } = facts;
    for (let i = 0; i < containers.count; i++) {
      const r = i * CONTAINER_ROW;
      const w = i * CONTAINER_WORDS;
      // id, sandbox-id, pod-uid, name, image, spec-hash: ranges of the containers' answer.
      containerWords[w] = containerBase + c[r + CR_ID]!;
      containerWords[w + 1] = c[r + CR_ID + 1]!;
      containerWords[w + 2] = containerBase + c[r + CR_SANDBOX_ID]!;
      containerWords[w + 3] = c[r + CR_SANDBOX_ID + 1]!;
      containerWords[w + 4] = containerBase + c[r + CR_UID_LABEL]!;
      containerWords[w + 5] = c[r + CR_UID_LABEL + 1]!;
      containerWords[w + 6] = containerBase + c[r + CR_NAME]!;
      containerWords[w + 7] = c[r + CR_NAME + 1]!;
      containerWords[w + 8] = containerBase + c[r + CR_IMAGE]!;
      containerWords[w + 9] = c[r + CR_IMAGE + 1]!;
      containerWords[w + 10] = containerBase + c[r + CR_SPEC_HASH]!;
      containerWords[w + 11] = c[r + CR_SPEC_HASH + 1]!;
      containerWords[w + 16] = c[r + CR_ATTEMPT]!;
      containerWords[w + 17] = states[i]!;
      const n = i * CONTAINER_NUMBERS;
      containerHalves[2 * n + 2 + LOW] = c[r + CR_CREATED]!;
      containerHalves[2 * n + 2 + HIGH] = c[r + CR_CREATED + 1]!;
      const detail = details[i];
      // reason, message: written by ContainerStatus, not in the answer.
      const reason = detail && detail.reason !== "" ? extra.get(detail.reason)! : NO_STRING;
      containerWords[w + 12] = extraBase + reason.at;
      containerWords[w + 13] = reason.length;
      const message = detail && detail.message !== "" ? extra.get(detail.message)! : NO_STRING;
      containerWords[w + 14] = extraBase + message.at;
      containerWords[w + 15] = message.length;
      if (!detail) {
        containerNumbers[n] = 0n;
        containerNumbers[n + 2] = 0n;
        containerNumbers[n + 3] = 0n;
        continue;
      }
      // An int32 exit code, sign-extended to 64 bits.
      containerHalves[2 * n + LOW] = detail.exitCode >>> 0;
      containerHalves[2 * n + HIGH] = detail.exitCode < 0 ? 0xffffffff : 0;
      containerNumbers[n + 2] = detail.startedAtNs;
      containerNumbers[n + 3] = detail.finishedAtNs;
    }
    return {
      listedAtMs,
      text: text.subarray(0, textBytes),
      sandboxes: sandboxWords,
      sandboxNumbers,
      containers: containerWords,
      containerNumbers,
      uninspectedPodUids,
    };
  }
}
