// Packs a runtime snapshot into the core's packed-snapshot form (see wit/types.wit): typed
// arrays, which cross into the component as block copies. Layout constants mirror
// assembly/core/packed.ts.
import type { PackedSnapshot, RuntimeSnapshot } from "./core-types.js";

const SANDBOX_WORDS = 10;
const CONTAINER_WORDS = 18;
const STATE_CODES: Record<string, number> = { created: 0, running: 1, exited: 2, unknown: 3 };

export function packSnapshot(s: RuntimeSnapshot): PackedSnapshot {
  let units = 0;
  for (const x of s.sandboxes) units += x.id.length + x.podUid.length + x.podName.length + x.podNamespace.length;
  for (const c of s.containers) {
    units += c.id.length + c.sandboxId.length + c.podUid.length + c.name.length + c.image.length + c.specHash.length + c.reason.length + c.message.length;
  }
  const text = new Uint16Array(units);
  // Strings are copied by Buffer's native UTF-16 writer: a charCodeAt loop was most of the cost.
  const textBytes = Buffer.from(text.buffer, text.byteOffset, text.byteLength);
  let at = 0;
  const sandboxes = new Uint32Array(s.sandboxes.length * SANDBOX_WORDS);
  const sandboxNumbers = new BigInt64Array(s.sandboxes.length * 2);
  const containers = new Uint32Array(s.containers.length * CONTAINER_WORDS);
  const containerNumbers = new BigInt64Array(s.containers.length * 4);
  const put = (words: Uint32Array, w: number, value: string) => {
    words[w] = at;
    words[w + 1] = value.length;
    if (value.length > 0) textBytes.write(value, at * 2, "utf16le");
    at += value.length;
  };
  s.sandboxes.forEach((x, i) => {
    const w = i * SANDBOX_WORDS;
    put(sandboxes, w, x.id);
    put(sandboxes, w + 2, x.podUid);
    put(sandboxes, w + 4, x.podName);
    put(sandboxes, w + 6, x.podNamespace);
    sandboxes[w + 8] = x.attempt;
    sandboxes[w + 9] = (x.state === "ready" ? 1 : 0) | (x.terminationGracePeriodSeconds !== undefined ? 2 : 0);
    sandboxNumbers[i * 2] = x.createdAtNs;
    sandboxNumbers[i * 2 + 1] = x.terminationGracePeriodSeconds ?? 0n;
  });
  s.containers.forEach((c, i) => {
    const w = i * CONTAINER_WORDS;
    put(containers, w, c.id);
    put(containers, w + 2, c.sandboxId);
    put(containers, w + 4, c.podUid);
    put(containers, w + 6, c.name);
    put(containers, w + 8, c.image);
    put(containers, w + 10, c.specHash);
    put(containers, w + 12, c.reason);
    put(containers, w + 14, c.message);
    containers[w + 16] = c.attempt;
    containers[w + 17] = STATE_CODES[c.state] ?? 3;
    containerNumbers[i * 4] = BigInt(c.exitCode);
    containerNumbers[i * 4 + 1] = c.createdAtNs;
    containerNumbers[i * 4 + 2] = c.startedAtNs;
    containerNumbers[i * 4 + 3] = c.finishedAtNs;
  });
  return {
    listedAtMs: s.listedAtMs,
    text: text,
    sandboxes: sandboxes,
    sandboxNumbers: sandboxNumbers,
    containers: containers,
    containerNumbers: containerNumbers,
    uninspectedPodUids: s.uninspectedPodUids,
  };
}
