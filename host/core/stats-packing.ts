// Packs a stats pass into the core's packed-node-stats (see wit/node.wit): the pods' uids and
// container names into one UTF-8 array, their numbers into 64-bit arrays. Typed arrays cross
// the component boundary as block copies; a list of records costs a call per string.
import type { NodeStats, PackedNodeStats } from "./types.js";

const POD_VALUES = 6;
const CONTAINER_VALUES = 3;

/**
 * One buffer kept between passes: allocating typed arrays costs more than filling them at 110
 * pods. The views returned are valid until the next call (the core copies them in at once).
 */
let scratch = new ArrayBuffer(0);

/** The most UTF-8 bytes one UTF-16 code unit takes (a surrogate pair takes 4 for 2 units). */
const MAX_BYTES_PER_UNIT = 3;

function views(podCount: number, containerCount: number, units: number) {
  const podBytes = podCount * POD_VALUES * 8;
  const containerBytes = containerCount * CONTAINER_VALUES * 8;
  const need = podBytes + containerBytes + units * MAX_BYTES_PER_UNIT;
  if (scratch.byteLength < need) scratch = new ArrayBuffer(Math.max(need, scratch.byteLength * 2));
  return {
    pods: new BigInt64Array(scratch, 0, podCount * POD_VALUES),
    podWords: new Int32Array(scratch, 0, podCount * POD_VALUES * 2),
    containers: new BigInt64Array(scratch, podBytes, containerCount * CONTAINER_VALUES),
    containerWords: new Int32Array(scratch, podBytes, containerCount * CONTAINER_VALUES * 2),
    text: new Uint8Array(scratch, podBytes + containerBytes, units * MAX_BYTES_PER_UNIT),
  };
}

export function packNodeStats(stats: NodeStats): PackedNodeStats {
  let units = 0;
  let containerCount = 0;
  for (const p of stats.pods) {
    units += p.uid.length;
    for (const c of p.containers) units += c.name.length;
    containerCount += p.containers.length;
  }
  // Small numbers go in through a 32-bit view as (low, high) halves (wasm is little-endian);
  // every word is written, so nothing of a previous pass shows through.
  const { pods, podWords, containers, containerWords, text } = views(stats.pods.length, containerCount, units);
  let at = 0;
  let next = 0;
  for (let i = 0; i < stats.pods.length; i++) {
    const p = stats.pods[i];
    const o = i * POD_VALUES;
    putSmall(podWords, o, at);
    const uidEnd = putText(text, at, p.uid);
    putSmall(podWords, o + 1, uidEnd - at);
    at = uidEnd;
    pods[o + 2] = p.memoryWorkingSetBytes;
    pods[o + 3] = p.ephemeralStorageBytes;
    pods[o + 4] = p.processCount;
    putSmall(podWords, o + 5, p.containers.length);
    for (const c of p.containers) {
      const k = next++ * CONTAINER_VALUES;
      putSmall(containerWords, k, at);
      const nameEnd = putText(text, at, c.name);
      putSmall(containerWords, k + 1, nameEnd - at);
      at = nameEnd;
      containers[k + 2] = c.memoryWorkingSetBytes;
    }
  }
  return { signals: stats.signals, text: text.subarray(0, at), pods, containers, volumes: stats.volumes };
}

/** Writes a non-negative number below 2^31 as 64-bit entry `index` of a 32-bit view. */
function putSmall(words: Int32Array, index: number, value: number): void {
  words[index * 2] = value;
  words[index * 2 + 1] = 0;
}

const encoder = new TextEncoder();

/** Writes `s` as UTF-8 at `at` (uids and names are ASCII once validated); returns the end. */
function putText(text: Uint8Array, at: number, s: string): number {
  for (let i = 0; i < s.length; i++) {
    const unit = s.charCodeAt(i);
    // Anything else is the encoder's (the buffer has room for three bytes per code unit).
    if (unit >= 0x80) return at - i + encoder.encodeInto(s, text.subarray(at - i)).written;
    text[at++] = unit;
  }
  return at;
}
