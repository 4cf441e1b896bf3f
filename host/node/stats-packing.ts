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
  const pods = new BigInt64Array(stats.pods.length * POD_VALUES);
  const containers = new BigInt64Array(containerCount * CONTAINER_VALUES);
  let at = 0;
  let next = 0;
  const put = (s: string): void => {
    for (let i = 0; i < s.length; i++) text[at + i] = s.charCodeAt(i);
    at += s.length;
  };
  stats.pods.forEach((p, i) => {
    const o = i * POD_VALUES;
    pods[o] = BigInt(at);
    pods[o + 1] = BigInt(p.uid.length);
    put(p.uid);
    pods[o + 2] = p.memoryWorkingSetBytes;
    pods[o + 3] = p.ephemeralStorageBytes;
    pods[o + 4] = p.processCount;
    pods[o + 5] = BigInt(p.containers.length);
    for (const c of p.containers) {
      const k = next++ * CONTAINER_VALUES;
      containers[k] = BigInt(at);
      containers[k + 1] = BigInt(c.name.length);
      put(c.name);
      containers[k + 2] = c.memoryWorkingSetBytes;
    }
  });
  return { signals: stats.signals, text, pods, containers };
}
