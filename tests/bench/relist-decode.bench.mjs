// Benchmark: decoding the relist's two CRI answers (ListContainersResponse and
// ListPodSandboxResponse, two containers per sandbox, labelled and annotated as nanolet creates
// them) from their wire bytes into the host's records, at 110, 1,000 and 10,000 containers:
//   generic: @grpc/proto-loader's decoder (protobufjs, the options the CRI client loads the proto
//            with) and the mapping to records the client did before (the baseline);
//   lists:   host/cri/list-decoding.ts, which the client now uses for these two calls.
// Interleaved in one process; prints the median per relist and the ratio lists / generic.
//   npm run build && node tests/bench/relist-decode.bench.mjs
import { performance } from "node:perf_hooks";
import * as protoLoader from "@grpc/proto-loader";
import { decodeContainerList, decodeSandboxList } from "../../dist/cri/list-decoding.js";

const definition = protoLoader.loadSync(new URL("../../host/cri/runtime-v1.proto", import.meta.url).pathname, { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true });
const service = definition["runtime.v1.RuntimeService"];
const STATES = { CONTAINER_CREATED: "created", CONTAINER_RUNNING: "running", CONTAINER_EXITED: "exited", CONTAINER_UNKNOWN: "unknown" };

/** The CRI client's decoding before list-decoding.ts: proto-loader, then a mapping pass. */
function generic(containerBytes, sandboxBytes) {
  const containers = service.ListContainers.responseDeserialize(containerBytes).containers.map((c) => ({
    id: c.id, sandboxId: c.podSandboxId, name: c.metadata?.name ?? "", attempt: c.metadata?.attempt ?? 0,
    image: c.image?.image ?? "", imageRef: c.imageRef || undefined, state: STATES[c.state] ?? "unknown",
    createdAtNs: BigInt(c.createdAt ?? "0"), labels: c.labels ?? {}, annotations: c.annotations ?? {},
  }));
  const sandboxes = service.ListPodSandbox.responseDeserialize(sandboxBytes).items.map((s) => ({
    id: s.id, podUid: s.metadata?.uid ?? "", podName: s.metadata?.name ?? "", podNamespace: s.metadata?.namespace ?? "",
    attempt: s.metadata?.attempt ?? 0, state: s.state === "SANDBOX_READY" ? "ready" : "not-ready",
    createdAtNs: BigInt(s.createdAt ?? "0"), labels: s.labels ?? {}, annotations: s.annotations ?? {},
  }));
  return containers.length + sandboxes.length;
}

function lists(containerBytes, sandboxBytes) {
  return decodeContainerList(containerBytes).length + decodeSandboxList(sandboxBytes).length;
}

/** The two answers for `containerCount` containers, as containerd writes them for nanolet's pods. */
function answers(containerCount) {
  const containers = [];
  const items = [];
  for (let p = 0; containers.length < containerCount; p++) {
    const uid = `0b5c3f8e-9a1d-4c2b-8e7f-${String(p).padStart(12, "0")}`;
    const sandboxId = `${String(p).padStart(8, "0")}${"5f".repeat(28)}`;
    const labels = { "io.kubernetes.pod.uid": uid, "io.kubernetes.pod.name": `pod-${p}`, "io.kubernetes.pod.namespace": "default", "nanolet.io/managed": "true" };
    items.push({ id: sandboxId, metadata: { name: `pod-${p}`, uid, namespace: "default", attempt: 0 }, state: "SANDBOX_READY", createdAt: "1764000000000000000", labels, annotations: { "io.kubernetes.pod.terminationGracePeriod": "30" }, runtimeHandler: "" });
    for (let c = 0; c < 2 && containers.length < containerCount; c++) {
      containers.push({
        id: `${String(containers.length).padStart(8, "0")}${"e4".repeat(28)}`, podSandboxId: sandboxId, metadata: { name: `c${c}`, attempt: 0 },
        image: { image: `sha256:${"a1".repeat(32)}` }, imageRef: `sha256:${"a1".repeat(32)}`, state: c === 0 ? "CONTAINER_RUNNING" : "CONTAINER_EXITED",
        createdAt: "1764000000000000000", labels: { ...labels, "io.kubernetes.container.name": `c${c}` }, annotations: { "io.kubernetes.container.hash": "00112233aabbccdd" },
      });
    }
  }
  return [service.ListContainers.responseSerialize({ containers }), service.ListPodSandbox.responseSerialize({ items })];
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

console.log("containers  bytes      generic ms  lists ms  lists/generic");
for (const count of [110, 1000, 10_000]) {
  const [containerBytes, sandboxBytes] = answers(count);
  if (generic(containerBytes, sandboxBytes) !== lists(containerBytes, sandboxBytes)) throw new Error("the decoders disagree");
  const iterations = count >= 10_000 ? 40 : count >= 1000 ? 300 : 2000;
  const samples = { generic: [], lists: [] };
  for (let i = 0; i < iterations + 5; i++) {
    for (const [name, decode] of i % 2 ? [["generic", generic], ["lists", lists]] : [["lists", lists], ["generic", generic]]) {
      const t0 = performance.now();
      decode(containerBytes, sandboxBytes);
      if (i >= 5) samples[name].push(performance.now() - t0);
    }
  }
  const g = median(samples.generic);
  const l = median(samples.lists);
  console.log(`${String(count).padStart(10)}  ${String(containerBytes.length + sandboxBytes.length).padStart(9)}  ${g.toFixed(3).padStart(10)}  ${l.toFixed(3).padStart(8)}  ${(l / g).toFixed(2).padStart(13)}`);
}
