// The relist's own decoder of ListContainersResponse and ListPodSandboxResponse against protobufjs
// (through @grpc/proto-loader, the generic decoder it replaced) on the same bytes: every field,
// defaults, unknown fields, 64-bit and negative numbers, non-ASCII text; and malformed answers,
// which fail with a WireError (through gRPC: a RuntimeError), never with anything else.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import fc from "fast-check";
import { decodeContainerList, decodeSandboxList, WireError } from "../../dist/cri/list-decoding.js";
import { GrpcRuntime } from "../../dist/cri/grpc-runtime.js";
import { RuntimeError } from "../../dist/cri/runtime.js";

const definition = protoLoader.loadSync(new URL("../../host/cri/runtime-v1.proto", import.meta.url).pathname, { keepCase: false, longs: String, enums: String, defaults: true });
const service = definition["runtime.v1.RuntimeService"];
const encodeContainers = (containers) => service.ListContainers.responseSerialize({ containers });
const encodeSandboxes = (items) => service.ListPodSandbox.responseSerialize({ items });

const STATES = { CONTAINER_CREATED: "created", CONTAINER_RUNNING: "running", CONTAINER_EXITED: "exited", CONTAINER_UNKNOWN: "unknown" };

/** What the generic decoder made of the same bytes, in the host's record form (the old mapping). */
function genericContainers(bytes) {
  return service.ListContainers.responseDeserialize(bytes).containers.map((c) => ({
    id: c.id, sandboxId: c.podSandboxId, name: c.metadata?.name ?? "", attempt: c.metadata?.attempt ?? 0,
    image: c.image?.image ?? "", imageRef: c.imageRef || undefined, state: STATES[c.state] ?? "unknown",
    createdAtNs: BigInt(c.createdAt ?? "0"), labels: c.labels ?? {}, annotations: c.annotations ?? {},
  }));
}

function genericSandboxes(bytes) {
  return service.ListPodSandbox.responseDeserialize(bytes).items.map((s) => ({
    id: s.id, podUid: s.metadata?.uid ?? "", podName: s.metadata?.name ?? "", podNamespace: s.metadata?.namespace ?? "",
    attempt: s.metadata?.attempt ?? 0, state: s.state === "SANDBOX_READY" ? "ready" : "not-ready",
    createdAtNs: BigInt(s.createdAt ?? "0"), labels: s.labels ?? {}, annotations: s.annotations ?? {},
  }));
}

/** A field key followed by a length-delimited value, or a raw varint field. */
const varint = (n) => {
  const out = [];
  let v = BigInt.asUintN(64, BigInt(n));
  while (v > 0x7fn) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return Buffer.from(out);
};
const delimited = (field, bytes) => Buffer.concat([varint(field * 8 + 2), varint(bytes.length), bytes]);

test("containers: every field as protobufjs reads it, defaults for absent ones", () => {
  const bytes = encodeContainers([
    {
      id: "a".repeat(64), podSandboxId: "s1", metadata: { name: "app", attempt: 4294967295 }, image: { image: "busybox", annotations: { k: "v" } },
      imageRef: "sha256:0123", state: "CONTAINER_EXITED", createdAt: "1764000000123456789",
      labels: { "io.kubernetes.pod.uid": "u1", "io.kubernetes.pod.name": "pödß", "": "empty key" }, annotations: { "io.kubernetes.container.hash": "77", note: "日本語 ✓" },
    },
    {},
    { id: "c3", state: "CONTAINER_RUNNING", createdAt: "-5" },
    { id: "c4", state: "CONTAINER_UNKNOWN", createdAt: "9223372036854775807" },
    { id: "c5", state: "CONTAINER_CREATED", createdAt: "-9223372036854775808" },
  ]);
  const decoded = decodeContainerList(bytes);
  assert.deepEqual(decoded, genericContainers(bytes));
  assert.equal(decoded[0].attempt, 4294967295);
  assert.equal(decoded[0].labels["io.kubernetes.pod.name"], "pödß");
  assert.equal(decoded[1].state, "created");
  assert.equal(decoded[1].imageRef, undefined);
  assert.equal(decoded[2].createdAtNs, -5n);
  assert.equal(decoded[4].createdAtNs, -(2n ** 63n));
});

test("sandboxes: every field as protobufjs reads it", () => {
  const bytes = encodeSandboxes([
    { id: "s1", metadata: { name: "web", uid: "u1", namespace: "default", attempt: 2 }, state: "SANDBOX_NOTREADY", createdAt: "1764000000999999999", labels: { a: "b" }, annotations: { "io.kubernetes.pod.terminationGracePeriod": "30" }, runtimeHandler: "runc" },
    { id: "s2", state: "SANDBOX_READY" },
    {},
  ]);
  const decoded = decodeSandboxList(bytes);
  assert.deepEqual(decoded, genericSandboxes(bytes));
  assert.deepEqual(decoded.map((s) => s.state), ["not-ready", "ready", "ready"]);
});

test("unknown fields of every wire type are skipped, in the list, the element and its nested messages", () => {
  const unknown = Buffer.concat([
    varint(20 * 8 + 0), varint(300),
    varint(21 * 8 + 1), Buffer.alloc(8, 7),
    varint(22 * 8 + 5), Buffer.alloc(4, 9),
    delimited(23, Buffer.from("later field")),
  ]);
  const metadata = Buffer.concat([delimited(1, Buffer.from("app")), unknown, varint(2 * 8), varint(3)]);
  const container = Buffer.concat([delimited(1, Buffer.from("c1")), unknown, delimited(3, metadata), varint(6 * 8), varint(1)]);
  const bytes = Buffer.concat([unknown, delimited(1, container), unknown]);
  const [c, ...rest] = decodeContainerList(bytes);
  assert.equal(rest.length, 0);
  assert.deepEqual([c.id, c.name, c.attempt, c.state], ["c1", "app", 3, "running"]);
  assert.deepEqual(decodeContainerList(bytes), genericContainers(bytes));
});

test("a later occurrence of a scalar field wins, as protobuf merges; an out-of-range state reads as unknown", () => {
  const container = Buffer.concat([delimited(1, Buffer.from("first")), delimited(1, Buffer.from("second")), varint(6 * 8), varint(9)]);
  const [c] = decodeContainerList(delimited(1, container));
  assert.equal(c.id, "second");
  assert.equal(c.state, "unknown");
});

const text = fc.string({ unit: "grapheme", maxLength: 12 });
const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String);
const containerArb = fc.record({
  id: text, podSandboxId: text, metadata: fc.record({ name: text, attempt: fc.nat({ max: 4294967295 }) }), image: fc.record({ image: text }),
  imageRef: text, state: fc.constantFrom(...Object.keys(STATES)), createdAt: int64, labels: fc.dictionary(text, text, { maxKeys: 4 }), annotations: fc.dictionary(text, text, { maxKeys: 3 }),
}, { requiredKeys: [] });
const sandboxArb = fc.record({
  id: text, metadata: fc.record({ name: text, uid: text, namespace: text, attempt: fc.nat({ max: 4294967295 }) }, { requiredKeys: [] }),
  state: fc.constantFrom("SANDBOX_READY", "SANDBOX_NOTREADY"), createdAt: int64, labels: fc.dictionary(text, text, { maxKeys: 4 }), annotations: fc.dictionary(text, text, { maxKeys: 3 }), runtimeHandler: text,
}, { requiredKeys: [] });

test("any list protobufjs writes decodes as protobufjs reads it (seeded)", () => {
  fc.assert(fc.property(fc.array(containerArb, { maxLength: 6 }), (containers) => {
    const bytes = encodeContainers(containers);
    assert.deepEqual(decodeContainerList(bytes), genericContainers(bytes));
  }), { seed: 1905, numRuns: 300 });
  fc.assert(fc.property(fc.array(sandboxArb, { maxLength: 6 }), (items) => {
    const bytes = encodeSandboxes(items);
    assert.deepEqual(decodeSandboxList(bytes), genericSandboxes(bytes));
  }), { seed: 1906, numRuns: 300 });
});

test("a truncated answer fails with a WireError or is a shorter list, never anything else", () => {
  const full = encodeContainers([
    { id: "c1", podSandboxId: "s1", metadata: { name: "app", attempt: 1 }, state: "CONTAINER_RUNNING", createdAt: "1764000000123456789", labels: { a: "b" } },
    { id: "c2", podSandboxId: "s1", metadata: { name: "sidecar" }, state: "CONTAINER_EXITED", createdAt: "-1", annotations: { x: "y" } },
  ]);
  const whole = decodeContainerList(full);
  let failures = 0;
  for (let cut = 0; cut < full.length; cut++) {
    try {
      const partial = decodeContainerList(full.subarray(0, cut));
      // Cut between two elements: a valid, shorter list.
      assert.deepEqual(partial, whole.slice(0, partial.length));
      assert.ok(partial.length < whole.length);
    } catch (e) {
      assert.ok(e instanceof WireError, `cut at ${cut}: ${e}`);
      assert.match(e.message, /^(ListContainersResponse|Container|ContainerMetadata|ImageSpec): .* at byte \d+$/);
      failures++;
    }
  }
  assert.ok(failures > full.length / 2);
});

test("garbage bytes fail with a WireError naming the message", () => {
  fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
    for (const decode of [decodeContainerList, decodeSandboxList]) {
      try {
        decode(Buffer.from(bytes));
      } catch (e) {
        assert.ok(e instanceof WireError, String(e));
      }
    }
  }), { seed: 1907, numRuns: 2000 });
  assert.throws(() => decodeContainerList(Buffer.from([0x0a, 0x05, 0x0a])), /ListContainersResponse: length past the end of the message at byte 2/);
  assert.throws(() => decodeSandboxList(Buffer.from([0x0b])), /ListPodSandboxResponse: unsupported wire type 3/);
});

test("through gRPC, a malformed list answer is a RuntimeError of that call; the next good answer is read", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-wire-"));
  const socket = path.join(dir, "cri.sock");
  let broken = true;
  const good = encodeContainers([{ id: "c1", podSandboxId: "s1", state: "CONTAINER_RUNNING" }]);
  // A service whose ListContainers answer is written as raw bytes.
  const raw = { ...service, ListContainers: { ...service.ListContainers, responseSerialize: (b) => b } };
  const server = new grpc.Server();
  server.addService(raw, { ListContainers: (_call, cb) => cb(null, broken ? Buffer.from([0x0a, 0x7f, 0x0a]) : good) });
  await new Promise((resolve, reject) => server.bindAsync(`unix://${socket}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())));
  after(() => server.forceShutdown());
  const runtime = new GrpcRuntime({ endpoint: socket, retryBudgetMs: 200 });
  await assert.rejects(runtime.listContainers({}), (e) => e instanceof RuntimeError && e.call === "ListContainers" && /ListContainersResponse: length past the end/.test(e.message));
  broken = false;
  const [c] = await runtime.listContainers({});
  assert.deepEqual([c.id, c.sandboxId, c.state], ["c1", "s1", "running"]);
  runtime.close();
});
