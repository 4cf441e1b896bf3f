// Canonical-ABI lowering of a call's arguments into a byte image (strings, lists and records
// laid out as abi-types.mjs says), with the flat arguments that point into it. The .wast driver
// and the library benchmark's direct calls into the core module both use it.
import { alignment, cases, fieldOffsets, flatten, payloadOffset, record, size } from "./abi-types.mjs";

/** Argument bytes for one call, with the offsets that hold pointers relative to its start. */
class Image {
  constructor() {
    this.buffer = new ArrayBuffer(1024);
    this.length = 0;
    this.pointerSlots = [];
  }
  get view() {
    return new DataView(this.buffer);
  }
  alloc(bytes, align) {
    const at = Math.ceil(this.length / align) * align;
    this.length = at + bytes;
    while (this.length > this.buffer.byteLength) {
      const bigger = new ArrayBuffer(this.buffer.byteLength * 2);
      new Uint8Array(bigger).set(new Uint8Array(this.buffer));
      this.buffer = bigger;
    }
    return at;
  }
  pointer(at, relative) {
    this.view.setUint32(at, relative, true);
    this.pointerSlots.push(at);
  }
  bytes() {
    return new Uint8Array(this.buffer, 0, this.length);
  }
}

export function caseIndex(t, value) {
  if (t.k === "option") return value === undefined ? 0 : 1;
  if (t.k === "variant") {
    const i = t.cases.findIndex(([name]) => name === value.tag);
    if (i < 0) throw new Error(`variant: no case ${value.tag}`);
    return i;
  }
  throw new Error(`no discriminant for ${t.k}`);
}

export const caseValue = (t, value) => (t.k === "option" ? value : value.val);

function storeString(img, at, text) {
  const p = img.alloc(text.length * 2, 2);
  for (let i = 0; i < text.length; i++) img.view.setUint16(p + 2 * i, text.charCodeAt(i), true);
  img.pointer(at, p);
  img.view.setUint32(at + 4, text.length, true);
}

/** Stores `value` of type `t` at `at` in the image (canonical-ABI `store`). */
function store(img, t, value, at) {
  const v = img.view;
  switch (t.k) {
    case "bool": v.setUint8(at, value ? 1 : 0); return;
    case "u32": v.setUint32(at, value, true); return;
    case "s32": v.setInt32(at, value, true); return;
    case "u64": case "s64": v.setBigInt64(at, BigInt.asIntN(64, value), true); return;
    case "f32": v.setFloat32(at, value, true); return;
    case "enum": v.setUint8(at, enumIndex(t, value)); return;
    case "string": storeString(img, at, value); return;
    case "list": {
      const p = img.alloc(size(t.of) * value.length, alignment(t.of));
      value.forEach((item, i) => store(img, t.of, item, p + i * size(t.of)));
      img.pointer(at, p);
      img.view.setUint32(at + 4, value.length, true);
      return;
    }
    case "record": {
      const offsets = fieldOffsets(t);
      t.fields.forEach(([name, f], i) => store(img, f, value[name], at + offsets[i]));
      return;
    }
    default: {
      const index = caseIndex(t, value);
      v.setUint8(at, index);
      const c = cases(t)[index];
      if (c) store(img, c, caseValue(t, value), at + payloadOffset(t));
    }
  }
}

export function enumIndex(t, value) {
  const i = t.cases.indexOf(value);
  if (i < 0) throw new Error(`enum: no case ${value}`);
  return i;
}

/** One flat argument: a constant, or (relative: true) an offset into the image. */
const flat = (type, value, relative = false) => ({ type, value, relative });

export function f32Bits(x) {
  const v = new DataView(new ArrayBuffer(4));
  v.setFloat32(0, x, true);
  return v.getUint32(0, true);
}

/** Canonical-ABI `lower_flat`, the lists and strings written into the image. */
function lowerFlat(img, t, value) {
  switch (t.k) {
    case "bool": return [flat("i32", value ? 1 : 0)];
    case "u32": case "s32": return [flat("i32", value | 0)];
    case "u64": case "s64": return [flat("i64", BigInt.asIntN(64, value))];
    case "f32": return [flat("f32", value)];
    case "enum": return [flat("i32", enumIndex(t, value))];
    case "string": case "list": {
      // Write it into a scratch slot of the image, then read the pair back as two flat values.
      const slot = img.alloc(8, 4);
      store(img, t, value, slot);
      img.pointerSlots.pop(); // the slot itself is not passed; its pointer is
      return [flat("i32", img.view.getUint32(slot, true), true), flat("i32", img.view.getUint32(slot + 4, true))];
    }
    case "record": return t.fields.flatMap(([name, f]) => lowerFlat(img, f, value[name]));
    default: {
      const joined = flatten(t).slice(1);
      const index = caseIndex(t, value);
      const c = cases(t)[index];
      const payload = c ? lowerFlat(img, c, caseValue(t, value)) : [];
      const out = [flat("i32", index)];
      joined.forEach((jt, i) => {
        const p = payload[i];
        if (!p) out.push(flat(jt, jt === "i64" ? 0n : 0));
        else if (p.type === jt) out.push(p);
        else if (jt === "i64") out.push(flat("i64", p.type === "f32" ? BigInt(f32Bits(p.value)) : BigInt(p.value >>> 0)));
        else out.push(flat("i32", f32Bits(p.value))); // f32 joined with i32
      });
      return out;
    }
  }
}

/** The canonical ABI's limit: more flat parameters than this go in memory, by one pointer. */
export const MAX_FLAT_PARAMS = 16;

/** The parameters of `sig` as a tuple (a record of its parameters, in order). */
export function paramTuple(sig) {
  return record(sig.params.map((t, i) => [String(i), t]));
}

/**
 * Lowers a whole call: the image to copy in and the flat arguments (some relative to it). Past 16
 * flat values the parameters are stored as a tuple in the image and passed as its address.
 */
export function lowerCall(sig, args) {
  const img = new Image();
  let flatArgs;
  if (sig.params.flatMap(flatten).length > MAX_FLAT_PARAMS) {
    const tuple = paramTuple(sig);
    const at = img.alloc(size(tuple), alignment(tuple));
    store(img, tuple, Object.fromEntries(args.map((a, i) => [String(i), a])), at);
    flatArgs = [flat("i32", at, true)];
  } else {
    flatArgs = sig.params.flatMap((t, i) => lowerFlat(img, t, args[i]));
  }
  return { bytes: img.bytes().slice(), pointerSlots: img.pointerSlots, flat: flatArgs };
}
