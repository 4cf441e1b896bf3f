// Packs a runtime snapshot into the core's packed-snapshot form (see wit/runtime-state.wit): typed
// arrays, which cross into the component as block copies. Layout constants mirror
// assembly/core/packed.ts. One writer per object kind lays an object into the arrays; the agent
// packs a whole relist in one pass with it, and the simulator packs each object once into its
// own small segment and lays unchanged segments end to end (assembleSnapshot).
import type { ContainerObservation, PackedSnapshot, RuntimeSnapshot, SandboxObservation } from "./types.js";

/** The packed layout (mirrors assembly/core/packed.ts): words and numbers per object. */
export const SANDBOX_WORDS = 10;
export const SANDBOX_NUMBERS = 2;
export const CONTAINER_WORDS = 18;
export const CONTAINER_NUMBERS = 4;
const SANDBOX_STRINGS = 4;
const CONTAINER_STRINGS = 8;
/** Longer strings (IDs) are written by Buffer's native UTF-8 writer; shorter ones by hand. */
const NATIVE_COPY_UNITS = 16;
/** Node.js has Buffer; the simulator report page, in a browser, has TextEncoder. */
const HAS_BUFFER = typeof Buffer !== "undefined";
/**
 * A Buffer with its UTF-8 writer, which skips `write`'s argument parsing (an encoding name
 * looked up on every call: a third of the packing time on a large node). Node.js has had it on
 * every Buffer for years; `write` stands in if a runtime lacks it.
 */
type Utf8Buffer = Buffer & { utf8Write(value: string, offset: number, length?: number): number };
const HAS_UTF8_WRITE = HAS_BUFFER && typeof (Buffer.prototype as Partial<Utf8Buffer>).utf8Write === "function";
const encoder = new TextEncoder();
/** The most UTF-8 bytes one UTF-16 code unit takes (a surrogate pair takes 4 for 2 units). */
const MAX_BYTES_PER_UNIT = 3;

function utf8Buffer(text: Uint8Array): Utf8Buffer | undefined {
  if (!HAS_BUFFER) return undefined;
  const bytes = Buffer.from(text.buffer, text.byteOffset, text.byteLength) as Utf8Buffer;
  if (!HAS_UTF8_WRITE) bytes.utf8Write = (value, offset, length) => bytes.write(value, offset, length ?? bytes.length - offset, "utf8");
  return bytes;
}

function utf8Length(value: string): number {
  return HAS_BUFFER ? Buffer.byteLength(value, "utf8") : encoder.encode(value).length;
}

/** Exit codes as BigInt, made once: `BigInt(code)` on every container of every relist is garbage. */
const EXIT_CODES = Array.from({ length: 256 }, (_, i) => BigInt(i));

function stateCode(state: string): number {
  // Compared, not looked up by key: a relist's strings are new, and a key lookup hashes each.
  return state === "running" ? 1 : state === "exited" ? 2 : state === "created" ? 0 : 3;
}

/**
 * Where the writers put things: the UTF-8 text and the next free byte. Sized for one byte per
 * code unit (a relist's strings are ASCII but for the odd message); grows if they are not.
 */
interface Target {
  text: Uint8Array;
  bytes: Utf8Buffer | undefined;
  at: number;
}

function target(units: number): Target {
  const text = new Uint8Array(units);
  return { text, bytes: utf8Buffer(text), at: 0 };
}

/** Makes room for `needed` more bytes. */
function reserve(t: Target, needed: number): void {
  if (t.at + needed <= t.text.length) return;
  const text = new Uint8Array(Math.max(t.text.length * 2, t.at + needed));
  text.set(t.text.subarray(0, t.at));
  t.text = text;
  t.bytes = utf8Buffer(text);
}

/** Writes `value` as UTF-8 wherever it has non-ASCII text. */
function putUtf8(t: Target, value: string): void {
  // Exact length only when the worst case might not fit: counting costs a pass over the string.
  if (t.at + value.length * MAX_BYTES_PER_UNIT > t.text.length) reserve(t, utf8Length(value));
  t.at += t.bytes ? t.bytes.utf8Write(value, t.at) : encoder.encodeInto(value, t.text.subarray(t.at)).written;
}

function put(t: Target, words: Uint32Array, w: number, value: string): void {
  const start = t.at;
  words[w] = start;
  if (value.length >= NATIVE_COPY_UNITS) putUtf8(t, value);
  else {
    const text = t.text;
    let at = start;
    let ascii = at + value.length <= text.length;
    for (let i = 0; ascii && i < value.length; i++) {
      const unit = value.charCodeAt(i);
      if (unit < 0x80) text[at++] = unit;
      else ascii = false;
    }
    if (ascii) t.at = at;
    else putUtf8(t, value);
  }
  words[w + 1] = t.at - start;
}

function sandboxUnits(x: SandboxObservation): number {
  return x.id.length + x.podUid.length + x.podName.length + x.podNamespace.length;
}

function containerUnits(c: ContainerObservation): number {
  return c.id.length + c.sandboxId.length + c.podUid.length + c.name.length + c.image.length + c.specHash.length + c.reason.length + c.message.length;
}

function writeSandbox(x: SandboxObservation, t: Target, words: Uint32Array, i: number, numbers: BigInt64Array): void {
  const w = i * SANDBOX_WORDS;
  put(t, words, w, x.id);
  put(t, words, w + 2, x.podUid);
  put(t, words, w + 4, x.podName);
  put(t, words, w + 6, x.podNamespace);
  words[w + 8] = x.attempt;
  words[w + 9] = (x.state === "ready" ? 1 : 0) | (x.terminationGracePeriodSeconds !== undefined ? 2 : 0);
  numbers[i * SANDBOX_NUMBERS] = x.createdAtNs;
  numbers[i * SANDBOX_NUMBERS + 1] = x.terminationGracePeriodSeconds ?? 0n;
}

function writeContainer(c: ContainerObservation, t: Target, words: Uint32Array, i: number, numbers: BigInt64Array): void {
  const w = i * CONTAINER_WORDS;
  put(t, words, w, c.id);
  put(t, words, w + 2, c.sandboxId);
  put(t, words, w + 4, c.podUid);
  put(t, words, w + 6, c.name);
  put(t, words, w + 8, c.image);
  put(t, words, w + 10, c.specHash);
  put(t, words, w + 12, c.reason);
  put(t, words, w + 14, c.message);
  words[w + 16] = c.attempt;
  words[w + 17] = stateCode(c.state);
  const n = i * CONTAINER_NUMBERS;
  numbers[n] = c.exitCode >= 0 && c.exitCode < 256 ? EXIT_CODES[c.exitCode] : BigInt(c.exitCode);
  numbers[n + 1] = c.createdAtNs;
  numbers[n + 2] = c.startedAtNs;
  numbers[n + 3] = c.finishedAtNs;
}

export function packSnapshot(s: RuntimeSnapshot): PackedSnapshot {
  let units = 0;
  for (const x of s.sandboxes) units += sandboxUnits(x);
  for (const c of s.containers) units += containerUnits(c);
  const t = target(units);
  const sandboxes = new Uint32Array(s.sandboxes.length * SANDBOX_WORDS);
  const sandboxNumbers = new BigInt64Array(s.sandboxes.length * SANDBOX_NUMBERS);
  const containers = new Uint32Array(s.containers.length * CONTAINER_WORDS);
  const containerNumbers = new BigInt64Array(s.containers.length * CONTAINER_NUMBERS);
  s.sandboxes.forEach((x, i) => writeSandbox(x, t, sandboxes, i, sandboxNumbers));
  s.containers.forEach((c, i) => writeContainer(c, t, containers, i, containerNumbers));
  return { listedAtMs: s.listedAtMs, text: t.text.subarray(0, t.at), sandboxes, sandboxNumbers, containers, containerNumbers, uninspectedPodUids: s.uninspectedPodUids };
}

/** One object packed on its own: string starts in `words` count from the start of its `text`. */
export interface PackedSegment {
  text: Uint8Array;
  words: Uint32Array;
  numbers: BigInt64Array;
}

export function packSandbox(x: SandboxObservation): PackedSegment {
  const t = target(sandboxUnits(x));
  const words = new Uint32Array(SANDBOX_WORDS);
  const numbers = new BigInt64Array(SANDBOX_NUMBERS);
  writeSandbox(x, t, words, 0, numbers);
  return { text: t.text.subarray(0, t.at), words, numbers };
}

export function packContainer(c: ContainerObservation): PackedSegment {
  const t = target(containerUnits(c));
  const words = new Uint32Array(CONTAINER_WORDS);
  const numbers = new BigInt64Array(CONTAINER_NUMBERS);
  writeContainer(c, t, words, 0, numbers);
  return { text: t.text.subarray(0, t.at), words, numbers };
}

function concat(segments: PackedSegment[], wordsPer: number, numbersPer: number, strings: number, text: Uint8Array, textAt: number) {
  const words = new Uint32Array(segments.length * wordsPer);
  const numbers = new BigInt64Array(segments.length * numbersPer);
  segments.forEach((s, i) => {
    text.set(s.text, textAt);
    words.set(s.words, i * wordsPer);
    for (let k = 0; k < strings; k++) words[i * wordsPer + 2 * k] += textAt;
    numbers.set(s.numbers, i * numbersPer);
    textAt += s.text.length;
  });
  return { words, numbers, textAt };
}

/** Lays packed sandboxes and containers end to end: the same bytes packSnapshot makes. */
export function assembleSnapshot(listedAtMs: bigint, sandboxes: PackedSegment[], containers: PackedSegment[], uninspectedPodUids: string[]): PackedSnapshot {
  let units = 0;
  for (const s of sandboxes) units += s.text.length;
  for (const c of containers) units += c.text.length;
  const text = new Uint8Array(units);
  const s = concat(sandboxes, SANDBOX_WORDS, SANDBOX_NUMBERS, SANDBOX_STRINGS, text, 0);
  const c = concat(containers, CONTAINER_WORDS, CONTAINER_NUMBERS, CONTAINER_STRINGS, text, s.textAt);
  return { listedAtMs, text, sandboxes: s.words, sandboxNumbers: s.numbers, containers: c.words, containerNumbers: c.numbers, uninspectedPodUids };
}
