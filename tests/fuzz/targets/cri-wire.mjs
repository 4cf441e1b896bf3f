// The relist's own reader of ListContainersResponse and ListPodSandboxResponse
// (host/cri/list-decoding.ts) on answers a runtime could send: lists protobufjs encodes from
// fuzzed values, then bytes flipped, cut, inserted, repeated and dropped. Properties: the reader
// returns well-formed records (every field of its type and range) or throws a WireError, never
// anything else; and on bytes left untouched it reads what protobufjs reads.
import * as protoLoader from "@grpc/proto-loader";
import fc from "fast-check";
import { decodeContainerList, decodeSandboxList, WireError } from "../../../dist/cri/list-decoding.js";
import { container, sandbox } from "./cri-responses.mjs";

const protoPath = new URL("../../../host/cri/runtime-v1.proto", import.meta.url).pathname;
const service = protoLoader.loadSync(protoPath, { keepCase: false, longs: String, enums: String, defaults: true })["runtime.v1.RuntimeService"];

const edit = fc.oneof(
  fc.record({ op: fc.constant("flip"), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ op: fc.constant("cut"), at: fc.nat() }),
  fc.record({ op: fc.constant("insert"), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 12 }) }),
  fc.record({ op: fc.constant("repeat"), at: fc.nat(), length: fc.integer({ min: 1, max: 64 }) }),
  fc.record({ op: fc.constant("drop"), at: fc.nat(), length: fc.integer({ min: 1, max: 16 }) }),
);

export const arbitrary = fc.record({
  kind: fc.constantFrom("containers", "sandboxes"),
  containers: fc.array(container, { maxLength: 5 }),
  sandboxes: fc.array(sandbox, { maxLength: 5 }),
  edits: fc.array(edit, { maxLength: 4 }),
});

function applyEdit(bytes, e) {
  if (bytes.length === 0) return e.op === "insert" ? Buffer.from(e.bytes) : bytes;
  const at = e.at % bytes.length;
  switch (e.op) {
    case "flip": {
      const copy = Buffer.from(bytes);
      copy[at] ^= 1 << e.bit;
      return copy;
    }
    case "cut":
      return bytes.subarray(0, at);
    case "insert":
      return Buffer.concat([bytes.subarray(0, at), Buffer.from(e.bytes), bytes.subarray(at)]);
    case "repeat":
      return Buffer.concat([bytes.subarray(0, at + e.length), bytes.subarray(at)]);
    case "drop":
      return Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + e.length)]);
  }
  return bytes;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function checkStrings(record, fields, where) {
  for (const f of fields) if (typeof record[f] !== "string") throw new Error(`${where}: ${f} is ${typeof record[f]}`);
}

function checkCommon(r, where) {
  if (!Number.isInteger(r.attempt) || r.attempt < 0 || r.attempt > 0xffffffff) throw new Error(`${where}: attempt ${r.attempt}`);
  if (typeof r.createdAtNs !== "bigint" || r.createdAtNs < INT64_MIN || r.createdAtNs > INT64_MAX) throw new Error(`${where}: createdAtNs ${r.createdAtNs}`);
  for (const map of [r.labels, r.annotations]) {
    if (typeof map !== "object" || map === null) throw new Error(`${where}: a map is ${map}`);
    for (const [k, v] of Object.entries(map)) if (typeof k !== "string" || typeof v !== "string") throw new Error(`${where}: map entry ${k}=${v}`);
  }
}

export function property(input) {
  const pristine = input.kind === "containers"
    ? service.ListContainers.responseSerialize({ containers: input.containers })
    : service.ListPodSandbox.responseSerialize({ items: input.sandboxes });
  const bytes = input.edits.reduce(applyEdit, pristine);
  const decode = input.kind === "containers" ? decodeContainerList : decodeSandboxList;
  let records;
  try {
    records = decode(bytes);
  } catch (error) {
    if (error instanceof WireError) return;
    throw new Error(`the reader threw something other than a WireError: ${error?.stack ?? error}`);
  }
  if (!Array.isArray(records)) throw new Error("the reader returned no list");
  records.forEach((r, i) => {
    const where = `${input.kind}[${i}]`;
    if (input.kind === "containers") {
      checkStrings(r, ["id", "sandboxId", "name", "image"], where);
      if (r.imageRef !== undefined && (typeof r.imageRef !== "string" || r.imageRef === "")) throw new Error(`${where}: imageRef ${r.imageRef}`);
      if (!["created", "running", "exited", "unknown"].includes(r.state)) throw new Error(`${where}: state ${r.state}`);
    } else {
      checkStrings(r, ["id", "podUid", "podName", "podNamespace"], where);
      if (r.state !== "ready" && r.state !== "not-ready") throw new Error(`${where}: state ${r.state}`);
    }
    checkCommon(r, where);
  });
  if (input.edits.length === 0) {
    const expected = input.kind === "containers" ? input.containers.length : input.sandboxes.length;
    if (records.length !== expected) throw new Error(`read ${records.length} of ${expected} untouched ${input.kind}`);
    const generic = input.kind === "containers"
      ? service.ListContainers.responseDeserialize(bytes).containers.map((c) => [c.id, c.podSandboxId, String(c.createdAt)])
      : service.ListPodSandbox.responseDeserialize(bytes).items.map((s) => [s.id, s.metadata?.uid ?? "", String(s.createdAt)]);
    const own = records.map((r) => [r.id, input.kind === "containers" ? r.sandboxId : r.podUid, String(r.createdAtNs)]);
    if (JSON.stringify(own) !== JSON.stringify(generic)) throw new Error(`untouched bytes read differently: ${JSON.stringify(own)} vs ${JSON.stringify(generic)}`);
  }
}
