// Scans the relist's two CRI answers (ListPodSandboxResponse, ListContainersResponse) into rows of
// numbers: where each string lies in the answer's bytes, and the few numbers the relist needs. No
// string is made: the relist packs the answer's bytes as they are (relist/wire-packing.ts) and
// makes only the strings it needs itself (container IDs). Field numbers are CRI runtime.v1's;
// unknown fields are skipped; a malformed answer throws a WireError, as list-decoding.ts does.
// One object's whole record is read again on demand (infoAt) for what a row leaves out.
import type { ContainerInfo, SandboxInfo } from "../cri/runtime.js";
import { Reader, readContainer, readSandbox, utf8 } from "../cri/list-decoding.js";
import {
  ABSENT,
  CONTAINER_ROW,
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
  ROW_MESSAGE,
  SANDBOX_ROW,
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
} from "./scan-layout.js";
import { commonMapEntry, fastContainer, fastCount, fastSandbox, GRACE_KEY, isKey, POD_UID_KEY, SPEC_HASH_KEY } from "./list-scanning-fast.js";

// The rows' layout is scan-layout.ts's; its users import it from here.
export * from "./scan-layout.js";

/** An answer's bytes and one row per listed object. */
abstract class Rows {
  constructor(
    readonly bytes: Buffer,
    readonly rows: Uint32Array,
    readonly count: number,
  ) {}

  /** A string of row `i` (its start word given), as the answer carries it. */
  string(i: number, word: number, rowWords: number): string {
    const start = this.rows[i * rowWords + word]!;
    const length = this.rows[i * rowWords + word + 1]!;
    if (start === ABSENT || length === 0) return "";
    return utf8(this.bytes, start, start + length);
  }

  protected reader(i: number, rowWords: number, what: string): Reader {
    return new Reader(this.bytes, what, this.rows[i * rowWords + ROW_MESSAGE]!, this.rows[i * rowWords + ROW_MESSAGE + 1]!);
  }
}

export class SandboxRows extends Rows {
  /** Everything the answer says of sandbox `i`. */
  infoAt(i: number): SandboxInfo {
    return readSandbox(this.reader(i, SANDBOX_ROW, "PodSandbox"));
  }
}

export class ContainerRows extends Rows {
  /** Everything the answer says of container `i` (labels, annotations, image_ref). */
  infoAt(i: number): ContainerInfo {
    return readContainer(this.reader(i, CONTAINER_ROW, "Container"));
  }
}

/** Records a string field's range (its tag already read) at `rows[at]`, `rows[at + 1]`. */
function range(r: Reader, rows: Uint32Array, at: number): void {
  const end = r.delimitedEnd();
  rows[at] = r.at;
  rows[at + 1] = end - r.at;
  r.at = end;
}

/**
 * One map<string, string> entry: if its key is `key`, its value's range goes to `rows[at]` and
 * `rows[at + 1]`. A later entry of the same key wins, as in a decoded map.
 */
function mapEntry(r: Reader, rows: Uint32Array, key: Uint8Array, at: number): void {
  const entryEnd = r.delimitedEnd();
  const bytes = r.bytes;
  if (commonMapEntry(bytes, r.at, entryEnd, key, rows, at)) {
    r.at = entryEnd;
    return;
  }
  const messageEnd = r.end;
  r.end = entryEnd;
  let keyStart = 0;
  let keyLength = -1;
  let valueStart = entryEnd;
  let valueLength = 0;
  while (r.at < entryEnd) {
    const tag = r.uint32();
    if (tag === 0x0a) {
      const end = r.delimitedEnd();
      keyStart = r.at;
      keyLength = end - r.at;
      r.at = end;
    } else if (tag === 0x12) {
      const end = r.delimitedEnd();
      valueStart = r.at;
      valueLength = end - r.at;
      r.at = end;
    } else r.skip(tag & 7);
  }
  r.end = messageEnd;
  // A missing key is "" (protobuf's default), which no wanted key is.
  if (keyLength > 0 && isKey(bytes, keyStart, keyLength, key)) {
    rows[at] = valueStart;
    rows[at + 1] = valueLength;
  }
}

/** A sandbox's row, read field by field: any layout protobuf allows, and errors for what it does not. */
export function generalSandbox(r: Reader, rows: Uint32Array, row: number): void {
  rows[row + SR_MESSAGE] = r.at;
  rows[row + SR_MESSAGE + 1] = r.end;
  rows[row + SR_READY] = 1;
  rows[row + SR_UID_LABEL] = ABSENT;
  rows[row + SR_GRACE] = ABSENT;
  while (r.at < r.end) {
    const tag = r.uint32();
    switch (tag) {
      case 0x0a: // 1 id
        range(r, rows, row + SR_ID);
        break;
      case 0x12: {
        // 2 metadata: PodSandboxMetadata { 1 name, 2 uid, 3 namespace, 4 attempt }
        const end = r.delimitedEnd();
        const messageEnd = r.end;
        r.end = end;
        while (r.at < end) {
          const t = r.uint32();
          if (t === 0x0a) range(r, rows, row + SR_NAME);
          else if (t === 0x12) range(r, rows, row + SR_UID);
          else if (t === 0x1a) range(r, rows, row + SR_NAMESPACE);
          else if (t === 0x20) rows[row + SR_ATTEMPT] = r.uint32();
          else r.skip(t & 7);
        }
        r.end = messageEnd;
        break;
      }
      case 0x18: // 3 state: SANDBOX_READY = 0
        rows[row + SR_READY] = r.uint32() === 0 ? 1 : 0;
        break;
      case 0x20: // 4 created_at
        r.int64Halves(rows, row + SR_CREATED);
        break;
      case 0x2a: // 5 labels
        mapEntry(r, rows, POD_UID_KEY, row + SR_UID_LABEL);
        break;
      case 0x32: // 6 annotations
        mapEntry(r, rows, GRACE_KEY, row + SR_GRACE);
        break;
      default:
        r.skip(tag & 7);
    }
  }
}

/** A container's row, read field by field (see generalSandbox). */
export function generalContainer(r: Reader, rows: Uint32Array, row: number): void {
  rows[row + CR_MESSAGE] = r.at;
  rows[row + CR_MESSAGE + 1] = r.end;
  while (r.at < r.end) {
    const tag = r.uint32();
    switch (tag) {
      case 0x0a: // 1 id
        range(r, rows, row + CR_ID);
        break;
      case 0x12: // 2 pod_sandbox_id
        range(r, rows, row + CR_SANDBOX_ID);
        break;
      case 0x1a: // 3 metadata: ContainerMetadata { 1 name, 2 attempt }
      case 0x22: {
        // 4 image: ImageSpec { 1 image }
        const end = r.delimitedEnd();
        const messageEnd = r.end;
        r.end = end;
        while (r.at < end) {
          const t = r.uint32();
          if (t === 0x0a) range(r, rows, row + (tag === 0x1a ? CR_NAME : CR_IMAGE));
          else if (t === 0x10 && tag === 0x1a) rows[row + CR_ATTEMPT] = r.uint32();
          else r.skip(t & 7);
        }
        r.end = messageEnd;
        break;
      }
      case 0x30: {
        // 6 state
        const state = r.uint32();
        rows[row + CR_STATE] = state <= 3 ? state : 3;
        break;
      }
      case 0x38: // 7 created_at
        r.int64Halves(rows, row + CR_CREATED);
        break;
      case 0x42: // 8 labels
        mapEntry(r, rows, POD_UID_KEY, row + CR_UID_LABEL);
        break;
      case 0x4a: // 9 annotations
        mapEntry(r, rows, SPEC_HASH_KEY, row + CR_SPEC_HASH);
        break;
      default:
        r.skip(tag & 7);
    }
  }
}

/** How many elements of repeated message field 1 the answer holds (a pass over their headers). */
function countElements(bytes: Buffer, what: string): number {
  const count = fastCount(bytes);
  if (count >= 0) return count;
  const r = new Reader(bytes, what, 0, bytes.length);
  let general = 0;
  while (r.at < r.end) {
    const tag = r.uint32();
    if (tag === 0x0a) general++;
    r.skip(tag & 7);
  }
  return general;
}

type FastScan = (bytes: Uint8Array, at: number, end: number, rows: Uint32Array, row: number) => boolean;
type GeneralScan = (r: Reader, rows: Uint32Array, row: number) => void;

/**
 * Rows of every element of repeated message field 1, the only field of both answers: each by
 * `fast` (when given), or where it gives up by `general` on a cleared row.
 */
function scanList(bytes: Buffer, what: string, element: string, rowWords: number, fast: FastScan | undefined, general: GeneralScan): { rows: Uint32Array; count: number } {
  // Sized exactly: a guess from the answer's size was several times too large, which the
  // allocator then kept as the agent's resident memory.
  const rows = new Uint32Array(countElements(bytes, what) * rowWords);
  const r = new Reader(bytes, what, 0, bytes.length);
  let count = 0;
  const inner = new Reader(bytes, element, 0, 0);
  while (r.at < r.end) {
    const tag = r.uint32();
    if (tag !== 0x0a) {
      r.skip(tag & 7);
      continue;
    }
    const end = r.delimitedEnd();
    const row = count * rowWords;
    if (!fast || !fast(bytes, r.at, end, rows, row)) {
      rows.fill(0, row, row + rowWords);
      inner.at = r.at;
      inner.end = end;
      general(inner, rows, row);
    }
    count++;
    r.at = end;
  }
  return { rows, count };
}

/**
 * A ListPodSandboxResponse's sandboxes as rows. `fast: false` reads every sandbox the general
 * way (tests and tests/bench/relist-scan.bench.mjs hold the two ways to each other).
 */
export function scanSandboxList(bytes: Buffer, fast = true): SandboxRows {
  const { rows, count } = scanList(bytes, "ListPodSandboxResponse", "PodSandbox", SANDBOX_ROW, fast ? fastSandbox : undefined, generalSandbox);
  return new SandboxRows(bytes, rows, count);
}

/** A ListContainersResponse's containers as rows (`fast`: see scanSandboxList). */
export function scanContainerList(bytes: Buffer, fast = true): ContainerRows {
  const { rows, count } = scanList(bytes, "ListContainersResponse", "Container", CONTAINER_ROW, fast ? fastContainer : undefined, generalContainer);
  return new ContainerRows(bytes, rows, count);
}
