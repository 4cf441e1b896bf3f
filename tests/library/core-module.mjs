// The core module alone (build/out/core.renamed.wasm) in this process, with no component model:
// its two imports stubbed and a caller that lowers a call's arguments by abi-lower.mjs. The
// library benchmark measures direct calls with it; the leak test repeats them.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { flatten } from "./abi-types.mjs";
import { lowerCall } from "./abi-lower.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export async function instantiateCoreModule() {
  const bytes = fs.readFileSync(path.join(root, "build/out/core.renamed.wasm"));
  const { instance } = await WebAssembly.instantiate(bytes, {
    "nanolet:core/diagnostics@0.1.0": { "report-trap": () => { throw new Error("core trapped"); } },
    "[export]nanolet:core/agent-api@0.1.0": { "[resource-new]agent": (rep) => rep },
  });
  return instance.exports;
}

/**
 * A function that makes one call of `sig` with `args` on the core module: copies the pre-lowered
 * image in (memory from cabi_realloc), relocates its pointers, calls, checks the result's tag and
 * frees the result (cabi_post_*). Returns the result's tag (0 ok, 1 err) or the flat value.
 */
export function directCaller(exports, sig, args) {
  const { bytes, pointerSlots, flat } = lowerCall(sig, args);
  const fn = exports[sig.export];
  const post = exports[`cabi_post_${sig.export}`];
  const realloc = exports.cabi_realloc;
  const returnsPointer = flatten(sig.result).length > 1;
  const size = Math.max(bytes.length, 8);
  const argv = new Array(flat.length);
  return () => {
    const base = realloc(0, 0, 8, size);
    new Uint8Array(exports.memory.buffer).set(bytes, base);
    const view = new DataView(exports.memory.buffer);
    for (const slot of pointerSlots) view.setUint32(base + slot, view.getUint32(base + slot, true) + base, true);
    for (let i = 0; i < flat.length; i++) argv[i] = flat[i].relative ? base + flat[i].value : flat[i].value;
    const result = fn(...argv);
    if (!returnsPointer) return result;
    // The call may have grown memory, which detaches the old buffer.
    const tag = new DataView(exports.memory.buffer).getUint8(result);
    post?.(result);
    return tag;
  };
}
