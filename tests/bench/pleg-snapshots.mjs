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


let criService;

/**
 * A relist as the runtime answers it: ListPodSandbox's and ListContainers' wire bytes (encoded by
 * protobufjs, labelled as nanolet labels), and what the Relister knows beyond them, in listing order.
 */
export async function wireAnswers(snap) {
  if (!criService) {
    const protoLoader = await import("@grpc/proto-loader");
    const proto = new URL("../../host/cri/runtime-v1.proto", import.meta.url).pathname;
    criService = protoLoader.loadSync(proto, { keepCase: false, longs: String, enums: String, defaults: true })["runtime.v1.RuntimeService"];
  }
  const { KnownDetail } = await import("../../dist/relist/wire-packing.js");
  const states = { created: 0, running: 1, exited: 2, unknown: 3 };
  const sandboxBytes = criService.ListPodSandbox.responseSerialize({
    items: snap.sandboxes.map((s) => ({
      id: s.id, metadata: { name: s.podName, uid: s.podUid, namespace: s.podNamespace, attempt: s.attempt }, state: s.state === "ready" ? "SANDBOX_READY" : "SANDBOX_NOTREADY",
      createdAt: String(s.createdAtNs), labels: { "nanolet.io/managed": "true", "io.kubernetes.pod.uid": s.podUid, "io.kubernetes.pod.name": s.podName, "io.kubernetes.pod.namespace": s.podNamespace },
      annotations: { "io.kubernetes.pod.terminationGracePeriod": String(s.terminationGracePeriodSeconds) },
    })),
  });
  const containerBytes = criService.ListContainers.responseSerialize({
    containers: snap.containers.map((c) => ({
      id: c.id, podSandboxId: c.sandboxId, metadata: { name: c.name, attempt: c.attempt }, image: { image: c.image }, imageRef: "sha256:0123456789abcdef",
      state: ["CONTAINER_CREATED", "CONTAINER_RUNNING", "CONTAINER_EXITED", "CONTAINER_UNKNOWN"][states[c.state]], createdAt: String(c.createdAtNs),
      labels: { "nanolet.io/managed": "true", "io.kubernetes.pod.uid": c.podUid, "io.kubernetes.pod.name": "pod", "io.kubernetes.pod.namespace": "default", "io.kubernetes.container.name": c.name },
      annotations: { "io.kubernetes.container.hash": c.specHash, "io.kubernetes.container.restartCount": "0" },
    })),
  });
  const facts = {
    states: new Uint8Array(snap.containers.map((c) => states[c.state])),
    details: snap.containers.map((c) => new KnownDetail(c.exitCode, c.reason, c.message, c.startedAtNs, c.finishedAtNs)),
  };
  return { sandboxBytes, containerBytes, facts };
}
