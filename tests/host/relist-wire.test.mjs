// The relist packed straight from the runtime's answers (relist/list-scanning.ts,
// relist/wire-packing.ts, relist/observations.ts) against the path it replaced: the answers
// decoded into records (list-decoding.ts), mapped to observations as the Relister mapped them, and
// packed from those (core/snapshot-packing.ts). Random answers encoded by protobufjs from the CRI proto:
// the same strings and numbers in both packed forms, the same observations, and a malformed
// answer is a WireError, never anything else.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as protoLoader from "@grpc/proto-loader";
import { decodeContainerList, decodeSandboxList, WireError } from "../../dist/cri/list-decoding.js";
import { CONTAINER_ROW, generalContainer, generalSandbox, SANDBOX_ROW, scanContainerList, scanSandboxList } from "../../dist/relist/list-scanning.js";
import { fastContainer, fastSandbox } from "../../dist/relist/list-scanning-fast.js";
import { Reader } from "../../dist/cri/list-decoding.js";
import { WirePacker } from "../../dist/relist/wire-packing.js";
import { lazySnapshot } from "../../dist/relist/observations.js";
import { packSnapshot } from "../../dist/core/snapshot-packing.js";

const protoPath = new URL("../../host/cri/runtime-v1.proto", import.meta.url).pathname;
const service = protoLoader.loadSync(protoPath, { keepCase: false, longs: String, enums: String, defaults: true })["runtime.v1.RuntimeService"];
const encodeSandboxes = (items) => service.ListPodSandbox.responseSerialize({ items });
const encodeContainers = (containers) => service.ListContainers.responseSerialize({ containers });

const UID = "io.kubernetes.pod.uid";
const HASH = "io.kubernetes.container.hash";
const GRACE = "io.kubernetes.pod.terminationGracePeriod";
const STATES = ["created", "running", "exited", "unknown"];

function rng(seed) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

function answers(seed) {
  const r = rng(seed);
  const pick = (xs) => xs[Math.floor(r() * xs.length)];
  const text = () => pick(["", "a", "pod-ü", "ünïcödé 🚀 text", "x".repeat(70), `id-${Math.floor(r() * 1e9).toString(16)}`]);
  const maybe = (value) => (r() < 0.7 ? value : undefined);
  const big = () => pick(["0", "1", "-1", "1700000000123456789", "-9223372036854775808", "9223372036854775807", String(Math.floor(r() * 2 ** 40))]);
  const sandboxes = Array.from({ length: Math.floor(r() * 8) }, (_, i) => {
    const labels = { "nanolet.io/managed": "true" };
    const uid = maybe(text());
    if (uid !== undefined) labels[UID] = uid;
    const annotations = {};
    const grace = maybe(pick(["30", "0", "", "3x", "-5", "12345678901234567890", "007", "99999999999999999999999"]));
    if (grace !== undefined) annotations[GRACE] = grace;
    if (r() < 0.5) annotations.other = text();
    return {
      id: `sb-${i}-${text()}`, metadata: { name: text(), uid: text(), namespace: text(), attempt: Math.floor(r() * 5) },
      state: pick(["SANDBOX_READY", "SANDBOX_NOTREADY"]), createdAt: big(), labels, annotations,
    };
  });
  const containers = Array.from({ length: Math.floor(r() * 12) }, (_, i) => {
    const labels = { "nanolet.io/managed": "true" };
    const uid = maybe(text());
    if (uid !== undefined) labels[UID] = uid;
    const annotations = {};
    const hash = maybe(text());
    if (hash !== undefined) annotations[HASH] = hash;
    return {
      id: `c-${i}-${text()}`, podSandboxId: text(), metadata: { name: text(), attempt: pick([0, 1, 3, 200, Math.floor(r() * 2 ** 31)]) },
      image: { image: text() }, imageRef: pick(["", "sha256:abc"]), state: pick(["CONTAINER_CREATED", "CONTAINER_RUNNING", "CONTAINER_EXITED", "CONTAINER_UNKNOWN"]),
      createdAt: big(), labels, annotations,
    };
  });
  // What the relist knows beyond the list: details for some containers, some shared strings.
  const states = new Uint8Array(containers.map(() => Math.floor(r() * 4)));
  const details = containers.map(() =>
    r() < 0.6
      ? { exitCode: pick([0, 1, 137, -1, 255, 2 ** 31 - 1, -(2 ** 31)]), reason: pick(["", "Error", "OOMKilled", "Complétée"]), message: pick(["", "m", "a long message 🎉 ".repeat(3)]), startedAtNs: BigInt(big()), finishedAtNs: BigInt(big()) }
      : undefined,
  );
  return { sandboxBytes: encodeSandboxes(sandboxes), containerBytes: encodeContainers(containers), facts: { states, details } };
}

/** The observations as the Relister made them from decoded records (the path before scanning). */
function reference(sandboxBytes, containerBytes, facts) {
  const sandboxes = decodeSandboxList(sandboxBytes).map((s) => {
    const grace = s.annotations[GRACE];
    return {
      id: s.id, podUid: s.labels[UID] ?? s.podUid, podName: s.podName, podNamespace: s.podNamespace, attempt: s.attempt, state: s.state, createdAtNs: s.createdAtNs,
      terminationGracePeriodSeconds: grace !== undefined && /^\d+$/.test(grace) ? BigInt.asIntN(64, BigInt(grace)) : undefined,
    };
  });
  const containers = decodeContainerList(containerBytes).map((c, i) => {
    const d = facts.details[i];
    return {
      id: c.id, sandboxId: c.sandboxId, podUid: c.labels[UID] ?? "", name: c.name, attempt: c.attempt, state: STATES[facts.states[i]], image: c.image,
      specHash: c.annotations[HASH] ?? "", exitCode: d?.exitCode ?? 0, reason: d?.reason ?? "", message: d?.message ?? "",
      createdAtNs: c.createdAtNs, startedAtNs: d?.startedAtNs ?? 0n, finishedAtNs: d?.finishedAtNs ?? 0n,
    };
  });
  return { sandboxes, containers };
}

/** A packed snapshot read back into strings and numbers (the layout of wit/runtime-state.wit). */
function unpack(p) {
  const decoder = new TextDecoder();
  const str = (words, w) => decoder.decode(p.text.subarray(words[w], words[w] + words[w + 1]));
  const sandboxes = [];
  for (let i = 0; i < p.sandboxes.length / 10; i++) {
    const w = i * 10;
    sandboxes.push([str(p.sandboxes, w), str(p.sandboxes, w + 2), str(p.sandboxes, w + 4), str(p.sandboxes, w + 6), p.sandboxes[w + 8], p.sandboxes[w + 9], p.sandboxNumbers[i * 2], p.sandboxNumbers[i * 2 + 1]]);
  }
  const containers = [];
  for (let i = 0; i < p.containers.length / 18; i++) {
    const w = i * 18;
    containers.push([...[0, 2, 4, 6, 8, 10, 12, 14].map((k) => str(p.containers, w + k)), p.containers[w + 16], p.containers[w + 17], ...p.containerNumbers.slice(i * 4, i * 4 + 4)]);
  }
  return { sandboxes, containers, uninspected: p.uninspectedPodUids };
}

test("packed from the answers as they came: the same relist as decoding and packing records", () => {
  const packer = new WirePacker();
  let objects = 0;
  for (let seed = 1; seed <= 300; seed++) {
    const { sandboxBytes, containerBytes, facts } = answers(seed);
    const sandboxes = scanSandboxList(sandboxBytes);
    const containers = scanContainerList(containerBytes);
    const snapshot = lazySnapshot(7n, sandboxes, containers, facts, ["u"]);
    const expected = reference(sandboxBytes, containerBytes, facts);
    assert.deepEqual(snapshot.sandboxes, expected.sandboxes, `seed ${seed}: sandboxes`);
    assert.deepEqual(snapshot.containers, expected.containers, `seed ${seed}: containers`);
    const wire = packer.pack(7n, sandboxes, containers, facts, ["u"]);
    const records = packSnapshot({ listedAtMs: 7n, ...expected, uninspectedPodUids: ["u"] });
    assert.deepEqual(unpack(wire), unpack(records), `seed ${seed}: packed`);
    objects += sandboxes.count + containers.count;
  }
  assert.ok(objects > 1000, `${objects} objects compared`);
});

/** Each element's (start, end) in a list answer (repeated field 1). */
function elements(bytes) {
  const out = [];
  let at = 0;
  while (at < bytes.length) {
    at++; // the tag: 0x0a in every answer these tests encode
    let length = 0;
    for (let place = 1; ; place *= 128) {
      const byte = bytes[at++];
      length += (byte & 0x7f) * place;
      if (byte < 0x80) break;
    }
    out.push([at, at + length]);
    at += length;
  }
  return out;
}

/**
 * Scans one message with the fast scanner and, on the same bytes, with the general one: where
 * the fast one takes the message, the rows must be the same. Returns whether it took it.
 */
function sameAsGeneral(bytes, start, end, fast, general, rowWords, what) {
  const fastRow = new Uint32Array(rowWords);
  const generalRow = new Uint32Array(rowWords);
  if (!fast(bytes, start, end, fastRow, 0)) return false;
  general(new Reader(bytes, what, start, end), generalRow, 0);
  assert.deepEqual([...fastRow], [...generalRow], `${what} at ${start}: ${bytes.subarray(start, end).toString("hex")}`);
  return true;
}

/** A varint's bytes; `padded` writes a small value in one byte more than it needs. */
function varint(value, padded = false) {
  const out = [];
  while (value >= 0x80) {
    out.push((value % 128) | 0x80);
    value = Math.floor(value / 128);
  }
  if (padded) out.push(value | 0x80, 0);
  else out.push(value);
  return out;
}

/** A message of random fields of the kinds the list answers hold (see its use). */
function randomMessage(r, depth) {
  const pick = (xs) => xs[Math.floor(r() * xs.length)];
  const out = [];
  for (let n = 1 + Math.floor(r() * 6); n > 0; n--) {
    const tag = pick([0x0a, 0x12, 0x1a, 0x22, 0x2a, 0x32, 0x3a, 0x42, 0x4a, 0x10, 0x18, 0x20, 0x30, 0x38, 0x09, 0x0d]);
    out.push(tag);
    const wire = tag & 7;
    if (wire === 0) {
      const value = pick([0, 1, 3, 127, 128, 300, 2 ** 31, 2 ** 35, 2 ** 52]);
      const bytes = r() < 0.1 ? [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01] : varint(value);
      out.push(...(r() < 0.05 ? bytes.slice(0, -1) : bytes));
    } else if (wire === 1) out.push(...Array.from({ length: 8 }, () => Math.floor(r() * 256)));
    else if (wire === 5) out.push(...Array.from({ length: 4 }, () => Math.floor(r() * 256)));
    else {
      let body;
      const kind = r();
      if (kind < 0.35 && depth < 1) body = randomMessage(r, depth + 1);
      else if (kind < 0.75) {
        const key = [...Buffer.from(pick([UID, GRACE, HASH, "other", ""]))];
        const value = [...Buffer.from(pick(["", "30", "u-1", "x".repeat(130)]))];
        body = r() < 0.7 ? [0x0a, ...varint(key.length), ...key, 0x12, ...varint(value.length), ...value] : [0x12, ...varint(value.length), ...value, 0x0a, ...varint(key.length), ...key];
        if (r() < 0.2) body.push(...pick([[0x12, 0x01, 0x41], [0x18, 0x01], [0x0a, 0x00]]));
      } else body = Array.from({ length: Math.floor(r() * 6) }, () => Math.floor(r() * 256));
      const length = Math.max(0, body.length + pick([0, 0, 0, 0, 0, 0, -1, 1]));
      out.push(...varint(length, r() < 0.1), ...body);
    }
  }
  return Buffer.from(out);
}

test("the fast scanners read every message they take as the general ones do, and leave the rest to them", () => {
  const taken = { sandboxes: 0, containers: 0 };
  const left = { sandboxes: 0, containers: 0 };
  for (let seed = 1; seed <= 300; seed++) {
    const { sandboxBytes, containerBytes } = answers(seed);
    for (const [start, end] of elements(sandboxBytes)) {
      if (sameAsGeneral(sandboxBytes, start, end, fastSandbox, generalSandbox, SANDBOX_ROW, "PodSandbox")) taken.sandboxes++;
      else left.sandboxes++;
    }
    for (const [start, end] of elements(containerBytes)) {
      if (sameAsGeneral(containerBytes, start, end, fastContainer, generalContainer, CONTAINER_ROW, "Container")) taken.containers++;
      else left.containers++;
    }
  }
  // Both ways are taken: large attempts, negative timestamps and long strings go the general way.
  for (const kind of ["sandboxes", "containers"]) assert.ok(taken[kind] > 100 && left[kind] > 10, `${kind}: ${taken[kind]} taken, ${left[kind]} left`);

  // Timestamps at the edges of the nine bytes the fast scanners read; attempts of one byte and more.
  const times = ["0", "1", "127", "128", "4294967295", "4294967296", "9007199254740993", "1764000000123456789", "9223372036854775807", "-1", "-9223372036854775808"];
  for (const createdAt of times) {
    for (const attempt of [0, 127, 128, 2 ** 31]) {
      const sandboxBytes = encodeSandboxes([{ id: "s", metadata: { name: "n", uid: "u", namespace: "ns", attempt }, state: "SANDBOX_NOTREADY", createdAt, labels: { [UID]: "u" }, annotations: { [GRACE]: "30" } }]);
      const containerBytes = encodeContainers([{ id: "c", podSandboxId: "s", metadata: { name: "n", attempt }, image: { image: "i" }, state: "CONTAINER_EXITED", createdAt, labels: { [UID]: "u" }, annotations: { [HASH]: "h" } }]);
      const [[ss, se]] = elements(sandboxBytes);
      const [[cs, ce]] = elements(containerBytes);
      const expectTaken = !createdAt.startsWith("-") && attempt < 128;
      assert.equal(sameAsGeneral(sandboxBytes, ss, se, fastSandbox, generalSandbox, SANDBOX_ROW, "PodSandbox"), expectTaken, `sandbox ${createdAt} ${attempt}`);
      assert.equal(sameAsGeneral(containerBytes, cs, ce, fastContainer, generalContainer, CONTAINER_ROW, "Container"), expectTaken, `container ${createdAt} ${attempt}`);
      // And the list scan, whichever way it went, says what decoding says.
      assert.equal(scanContainerList(containerBytes).infoAt(0).createdAtNs, BigInt(createdAt));
    }
  }

  // A nested message that ends inside a field (its tag, or a string's length, the last byte
  // before the next field): the fast scanners give up, the general ones call it malformed.
  for (const [fast, general, words, what, nestedTag, varintTag] of [[fastSandbox, generalSandbox, SANDBOX_ROW, "PodSandbox", 0x12, 0x20], [fastContainer, generalContainer, CONTAINER_ROW, "Container", 0x1a, 0x10]]) {
    for (const cut of [[varintTag], [0x0a], [0x0a, 0x05, 0x41]]) {
      const bytes = Buffer.from([nestedTag, cut.length, ...cut, 0x0a, 0x01, 0x41]);
      assert.equal(fast(bytes, 0, bytes.length, new Uint32Array(words), 0), false, `${what} ${bytes.toString("hex")}`);
      assert.throws(() => general(new Reader(bytes, what, 0, bytes.length), new Uint32Array(words), 0), WireError);
    }
  }

  // Random messages built from the fields these answers have (nested messages, map entries with
  // and without the wanted keys, varints of every length, lengths now and then one off, written
  // in two bytes where one would do): what the fast scanners take, the general ones read the
  // same, without error.
  const r = rng(5);
  let randomTaken = 0;
  for (let i = 0; i < 20000; i++) {
    // Between other bytes, as in an answer: a scanner must not read past its message's end.
    const message = randomMessage(r, 0);
    const before = Math.floor(r() * 3);
    const bytes = Buffer.concat([Buffer.alloc(before, 0x0a), message, Buffer.from([0x80, 0x80, 0x01, 0x0a])]);
    for (const [fast, general, words, what] of [[fastSandbox, generalSandbox, SANDBOX_ROW, "PodSandbox"], [fastContainer, generalContainer, CONTAINER_ROW, "Container"]]) {
      if (sameAsGeneral(bytes, before, before + message.length, fast, general, words, what)) randomTaken++;
    }
  }
  assert.ok(randomTaken > 500, `${randomTaken} random messages taken`);
});

test("the packer's buffers are kept and grown: larger, smaller and larger relists each pack whole", () => {
  // One packer across relists of every size, as the Relister has: what it left in its buffers
  // (a detail, a grace period, a longer text) never shows in a later relist.
  const packer = new WirePacker();
  const sizes = [];
  for (const seed of [3, 40, 7, 41, 2, 40, 5, 12, 9]) {
    const { sandboxBytes, containerBytes, facts } = answers(seed);
    const sandboxes = scanSandboxList(sandboxBytes);
    const containers = scanContainerList(containerBytes);
    const expected = reference(sandboxBytes, containerBytes, facts);
    const wire = packer.pack(1n, sandboxes, containers, facts, []);
    assert.deepEqual(unpack(wire), unpack(packSnapshot({ listedAtMs: 1n, ...expected, uninspectedPodUids: [] })), `seed ${seed}`);
    sizes.push(containers.count);
  }
  assert.ok(sizes.some((n, i) => i > 0 && n < sizes[i - 1]) && sizes.some((n, i) => i > 0 && n > sizes[i - 1]), `sizes ${sizes}`);
});

test("a malformed answer is a WireError naming the message; every cut and random bytes too", () => {
  const { sandboxBytes, containerBytes } = answers(11);
  for (const [bytes, scan] of [[sandboxBytes, scanSandboxList], [containerBytes, scanContainerList]]) {
    for (let cut = 0; cut < bytes.length; cut++) {
      try {
        scan(bytes.subarray(0, cut));
      } catch (error) {
        assert.ok(error instanceof WireError, `cut at ${cut}: ${error}`);
      }
    }
  }
  const r = rng(99);
  for (let i = 0; i < 2000; i++) {
    const bytes = Buffer.from(Array.from({ length: Math.floor(r() * 64) }, () => Math.floor(r() * 256)));
    for (const scan of [scanSandboxList, scanContainerList]) {
      try {
        const rows = scan(bytes);
        // What was scanned packs into ranges inside the text, or the core would refuse it.
        const packed = new WirePacker().pack(0n, scan === scanSandboxList ? rows : scanSandboxList(Buffer.alloc(0)), scan === scanContainerList ? rows : scanContainerList(Buffer.alloc(0)), { states: new Uint8Array(rows.count), details: [] }, []);
        for (const [words, per, strings] of [[packed.sandboxes, 10, 4], [packed.containers, 18, 8]]) {
          for (let w = 0; w < words.length; w += per) for (let k = 0; k < strings; k++) assert.ok(words[w + 2 * k] + words[w + 2 * k + 1] <= packed.text.length);
        }
      } catch (error) {
        assert.ok(error instanceof WireError, `random bytes: ${error}`);
      }
    }
  }
});

test("map entries however a runtime writes them: value first, no value, long values, extra fields, repeated keys", () => {
  const varint = (n) => {
    const out = [];
    for (; n >= 0x80; n = Math.floor(n / 128)) out.push((n % 128) | 0x80);
    out.push(n);
    return out;
  };
  const field = (number, bytes) => [...varint(number * 8 + 2), ...varint(bytes.length), ...bytes];
  const str = (number, text) => field(number, [...Buffer.from(text, "utf8")]);
  const long = "v".repeat(200);
  const entries = [
    [...str(2, "value-first"), ...str(1, UID)],
    [...str(1, HASH)], // no value: ""
    [...str(1, UID), ...str(2, long)], // a two-byte length
    [...str(1, HASH), 0x18, 0x05, ...str(2, "after-a-varint-field")],
    [...str(1, UID), ...str(2, "repeated-wins")],
    [...str(1, "other"), ...str(2, "x")],
  ];
  const container = [
    ...str(1, "c1"), ...str(2, "sb"), ...field(3, str(1, "app")), 0x30, 0x01,
    ...field(8, entries[0]), ...field(9, entries[1]), ...field(8, entries[2]), ...field(9, entries[3]), ...field(8, entries[4]), ...field(8, entries[5]),
  ];
  const containerBytes = Buffer.from(field(1, container));
  const sandboxBytes = Buffer.from([
    ...field(1, [...str(1, "sb"), ...field(2, [...str(2, "meta-uid")]), ...field(5, [...str(2, "sandbox-uid"), ...str(1, UID)]), ...field(6, [...str(1, GRACE)])]),
    // Key and value, then a second value: the later value is the entry's.
    ...field(1, [...str(1, "sb2"), ...field(6, [...str(1, GRACE), ...str(2, "5"), ...str(2, "45")])]),
  ]);
  const facts = { states: new Uint8Array([1]), details: [undefined] };
  const snapshot = lazySnapshot(1n, scanSandboxList(sandboxBytes), scanContainerList(containerBytes), facts, []);
  const expected = reference(sandboxBytes, containerBytes, facts);
  assert.deepEqual(snapshot.containers, expected.containers);
  assert.deepEqual(snapshot.sandboxes, expected.sandboxes);
  assert.equal(snapshot.containers[0].podUid, "repeated-wins");
  assert.equal(snapshot.containers[0].specHash, "after-a-varint-field");
  assert.equal(snapshot.sandboxes[0].podUid, "sandbox-uid");
  assert.equal(snapshot.sandboxes[0].terminationGracePeriodSeconds, undefined, "an empty grace period is no grace period");
  assert.equal(snapshot.sandboxes[1].terminationGracePeriodSeconds, 45n);
  const packed = unpack(new WirePacker().pack(1n, scanSandboxList(sandboxBytes), scanContainerList(containerBytes), facts, []));
  assert.deepEqual(packed, unpack(packSnapshot({ listedAtMs: 1n, ...expected, uninspectedPodUids: [] })));
});
