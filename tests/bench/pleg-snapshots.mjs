// The relists the PLEG benchmarks diff: two containers per pod, every tenth container exited in
// the "flipped" variant, and copies with new strings in listing order (see fresh).
import { Prng } from "../../dist/sim/prng.js";

const CONTAINERS_PER_POD = 2;

export function snapshot(containerCount, flip) {
  const pods = Math.ceil(containerCount / CONTAINERS_PER_POD);
  const sandboxes = [];
  const containers = [];
  for (let p = 0; p < pods; p++) {
    const podUid = `0b5c3f8e-pod-${String(p).padStart(6, "0")}`;
    sandboxes.push({ id: `sandbox-${p}-${"f".repeat(48)}`, podUid, podName: `pod-${p}`, podNamespace: "default", attempt: 0, state: "ready", createdAtNs: 1_764_000_000_000_000_000n, terminationGracePeriodSeconds: 30n });
    for (let c = 0; c < CONTAINERS_PER_POD && containers.length < containerCount; c++) {
      const i = containers.length;
      const exited = flip && i % 10 === 0;
      containers.push({
        id: `container-${i}-${"e".repeat(46)}`, sandboxId: sandboxes[p].id, podUid, name: `c${c}`, attempt: 0,
        state: exited ? "exited" : "running", image: "docker.io/library/busybox:latest", specHash: "00112233aabbccdd",
        exitCode: exited ? 1 : 0, reason: exited ? "Error" : "", message: "", createdAtNs: 1_764_000_000_000_000_000n,
        startedAtNs: 1_764_000_000_100_000_000n, finishedAtNs: exited ? 1_764_000_001_000_000_000n : 0n,
      });
    }
  }
  return { sandboxes, containers };
}

/** The simulator's seeded generator: the same shuffles on every run. */
const order = new Prng(19, "pleg-bench");

/** A copy with new string objects (V8 caches a string's hash in the string itself), shuffled
 * when `shuffled`. The copies are made in listing order, as a decoder makes them: shuffling
 * after copying would scatter the objects in the heap, which no real relist does. */
export function fresh(snap, shuffled) {
  const s = (text) => Buffer.from(text, "utf8").toString("utf8"); // a new flat string, as decoding makes
  const sandboxes = shuffled ? order.shuffled(snap.sandboxes) : snap.sandboxes;
  const containers = shuffled ? order.shuffled(snap.containers) : snap.containers;
  return {
    sandboxes: sandboxes.map((x) => ({ ...x, id: s(x.id), podUid: s(x.podUid), podName: s(x.podName), podNamespace: s(x.podNamespace) })),
    containers: containers.map((c) => ({ ...c, id: s(c.id), sandboxId: s(c.sandboxId), podUid: s(c.podUid), name: s(c.name), image: s(c.image), specHash: s(c.specHash), reason: s(c.reason) })),
  };
}

