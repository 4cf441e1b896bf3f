// Packs a stats pass into the core's packed-node-stats (see wit/types.wit): the pods' uids and
// container names into one UTF-16 array, their numbers into 64-bit arrays. Typed arrays cross
// the component boundary as block copies; a list of records costs a call per string.
import type { NodeStats, PackedNodeStats } from "../core-types.js";

const POD_VALUES = 6;
const CONTAINER_VALUES = 3;

export function packNodeStats(stats: NodeStats): PackedNodeStats {
  let units = 0;
  let containerCount = 0;
  for (const p of stats.pods) {
    units += p.uid.length;
    for (const c of p.containers) units += c.name.length;
    containerCount += p.containers.length;
  }
  const text = new Uint16Array(units);
  // Small numbers go in through a 32-bit view as (low, high) halves (wasm is little-endian).
  const pods = new BigInt64Array(stats.pods.length * POD_VALUES);
  const podWords = new Int32Array(pods.buffer);
  const containers = new BigInt64Array(containerCount * CONTAINER_VALUES);
  const containerWords = new Int32Array(containers.buffer);
  let at = 0;
  let next = 0;
  for (let i = 0; i < stats.pods.length; i++) {
    const p = stats.pods[i];
    const o = i * POD_VALUES;
    podWords[o * 2] = at;
    podWords[(o + 1) * 2] = p.uid.length;
    at = putText(text, at, p.uid);
    pods[o + 2] = p.memoryWorkingSetBytes;
    pods[o + 3] = p.ephemeralStorageBytes;
    pods[o + 4] = p.processCount;
    podWords[(o + 5) * 2] = p.containers.length;
    for (const c of p.containers) {
      const k = next++ * CONTAINER_VALUES;
      containerWords[k * 2] = at;
      containerWords[(k + 1) * 2] = c.name.length;
      at = putText(text, at, c.name);
      containers[k + 2] = c.memoryWorkingSetBytes;
    }
  }
  return { signals: stats.signals, text, pods, containers };
}

function putText(text: Uint16Array, at: number, s: string): number {
  for (let i = 0; i < s.length; i++) text[at + i] = s.charCodeAt(i);
  return at + s.length;
}
