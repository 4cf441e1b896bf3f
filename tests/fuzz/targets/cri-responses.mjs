// CRI responses, from a gRPC server on a unix socket speaking the real runtime.v1 proto, whose
// answers are the fuzzed values: unknown states, missing fields, huge and odd numbers, duplicate
// IDs, containers of sandboxes that do not exist, labels that lie, errors of every gRPC code.
// The real GrpcRuntime and Relister read them, and the real core takes the snapshot.
// Properties: a relist resolves or fails with a RuntimeError; the core never traps.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import fc from "fast-check";
import { GrpcRuntime } from "../../../dist/cri/grpc-runtime.js";
import { RuntimeError } from "../../../dist/cri/runtime.js";
import { Relister } from "../../../dist/relist/relister.js";
import { CoreAgent, CoreTrapError, DEFAULT_CORE_CONFIG } from "../../../dist/core/core.js";
import { someString } from "./pod-values.mjs";

const protoPath = new URL("../../../host/cri/runtime-v1.proto", import.meta.url).pathname;
const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(protoPath, { keepCase: false, longs: String, enums: String, defaults: true })).runtime.v1;

const id = fc.oneof(fc.constantFrom("s1", "s2", "c1", "c2", "c3", ""), someString);
const int64 = fc.oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String), fc.constantFrom("0", "1764000000123456789"));
const labels = fc.record({
  "nanolet.io/managed": fc.constantFrom("true", "false"),
  "io.kubernetes.pod.uid": fc.oneof(fc.constantFrom("u1", "u2", "../x", ""), someString),
  "io.kubernetes.container.name": someString,
}, { requiredKeys: [] });
const annotations = fc.record({ "io.kubernetes.container.hash": someString, "io.kubernetes.pod.terminationGracePeriod": fc.oneof(fc.constantFrom("30", "-1", "99999999999999999999"), someString) }, { requiredKeys: [] });
export const sandbox = fc.record({
  id, metadata: fc.record({ name: someString, uid: someString, namespace: someString, attempt: fc.nat() }, { requiredKeys: [] }),
  state: fc.oneof(fc.constantFrom("SANDBOX_READY", "SANDBOX_NOTREADY"), fc.integer({ min: 2, max: 99 })), createdAt: int64, labels, annotations,
}, { requiredKeys: [] });
const containerState = fc.oneof(fc.constantFrom("CONTAINER_CREATED", "CONTAINER_RUNNING", "CONTAINER_EXITED", "CONTAINER_UNKNOWN"), fc.integer({ min: 4, max: 99 }));
export const container = fc.record({
  id, podSandboxId: id, metadata: fc.record({ name: someString, attempt: fc.nat() }, { requiredKeys: [] }), image: fc.record({ image: someString }),
  imageRef: someString, state: containerState, createdAt: int64, labels, annotations,
}, { requiredKeys: [] });
const status = fc.record({
  id, metadata: fc.record({ name: someString, attempt: fc.nat() }, { requiredKeys: [] }), state: containerState, createdAt: int64, startedAt: int64, finishedAt: int64,
  exitCode: fc.integer(), image: fc.record({ image: someString }), reason: someString, message: someString, labels, annotations,
}, { requiredKeys: [] });
const grpcError = fc.integer({ min: 1, max: 16 }).map((code) => ({ code, details: `fuzzed error ${code}` }));
const answer = (arb) => fc.oneof({ weight: 5, arbitrary: arb.map((ok) => ({ ok })) }, { weight: 1, arbitrary: grpcError.map((err) => ({ err })) });

export const arbitrary = fc.record({
  sandboxes: answer(fc.oneof({ weight: 8, arbitrary: fc.array(sandbox, { maxLength: 6 }) }, { weight: 1, arbitrary: fc.integer({ min: 1000, max: 3000 }).map((n) => Array.from({ length: n }, (_, i) => ({ id: `s${i % 500}`, state: "SANDBOX_READY", labels: { "io.kubernetes.pod.uid": `u${i}` } }))) })),
  containers: answer(fc.array(container, { maxLength: 8 })),
  status: answer(status),
  sandboxStatus: answer(fc.record({ status: fc.record({ network: fc.record({ ip: someString }) }) })),
  relists: fc.integer({ min: 1, max: 3 }),
});

export async function setup() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-fuzz-cri-"));
  const socket = path.join(dir, "cri.sock");
  const ctx = { dir, input: undefined };
  const reply = (pick) => (_call, cb) => {
    const a = pick(ctx.input);
    if (a.err) cb(a.err);
    else cb(null, a.ok);
  };
  const server = new grpc.Server();
  server.addService(pkg.RuntimeService.service, {
    ListPodSandbox: reply((i) => (i.sandboxes.err ? i.sandboxes : { ok: { items: i.sandboxes.ok } })),
    ListContainers: reply((i) => (i.containers.err ? i.containers : { ok: { containers: i.containers.ok } })),
    ContainerStatus: reply((i) => (i.status.err ? i.status : { ok: { status: i.status.ok } })),
    PodSandboxStatus: reply((i) => i.sandboxStatus),
  });
  await new Promise((resolve, reject) => server.bindAsync(`unix://${socket}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())));
  ctx.server = server;
  ctx.runtime = new GrpcRuntime({ endpoint: socket, retryBudgetMs: 0 });
  ctx.core = await CoreAgent.create({ nodeName: "fuzz", ...DEFAULT_CORE_CONFIG });
  return ctx;
}

export async function teardown(ctx) {
  ctx.runtime.close();
  ctx.server.forceShutdown();
  fs.rmSync(ctx.dir, { recursive: true, force: true });
}

export async function property(input, ctx) {
  ctx.input = input;
  const relister = new Relister(ctx.runtime, () => 1000);
  for (let i = 0; i < input.relists; i++) {
    let relist;
    try {
      relist = await relister.relist();
    } catch (error) {
      if (error instanceof RuntimeError) continue;
      throw new Error(`a relist failed with something other than a RuntimeError: ${error?.stack ?? error}`);
    }
    try {
      // The host's records of the relist are read too: they must be made from any answer.
      void relist.snapshot.containers.length;
      ctx.core.handleSnapshot(1000 + i, relist.snapshot, relist.packed);
      ctx.core.pollActions(1000 + i);
    } catch (error) {
      if (error instanceof CoreTrapError) throw new Error(`the core trapped: ${error.message}`);
      throw error;
    }
  }
}
