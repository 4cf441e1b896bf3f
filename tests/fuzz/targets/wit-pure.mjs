// Every pure WIT interface through the component (jco, as another host calls it), with random
// records shaped by the WIT types (tests/library/abi-types.mjs) and mixed with the library's own
// cases, so that both nonsense and near-valid input reach the core. Property: every call returns
// a value or an error (a value jco cannot lower is refused before the core sees it); none traps.
import fc from "fast-check";
import { loadLibrary } from "../../../dist/core/library.js";
import { SIGNATURES } from "../../library/abi-types.mjs";
import { CASES } from "../../library/cases.mjs";
import { someString } from "./pod-values.mjs";

const interesting = fc.constantFrom("memory.available", "nodefs.available", "imagefs.inodesFree", "pid.available", "allocatableMemory.available",
  "memory.available<100Mi", "nodefs.available<10%", "memory.available=1m30s", "memory.available<10..5%", "5-5%", "1.2.3%", "10ns", "Always", "OnFailure", "Never", "100Mi", "-1", "1Ei");

/** A fast-check arbitrary for a WIT type. */
export function arbOf(t) {
  switch (t.k) {
    case "string": return fc.oneof(someString, interesting);
    case "bool": return fc.boolean();
    case "u32": return fc.oneof(fc.nat(), fc.constantFrom(0, 1, 0xffffffff));
    case "s32": return fc.oneof(fc.integer(), fc.constantFrom(-(2 ** 31), 2 ** 31 - 1, 0, 2000001000));
    case "u64": return fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.constantFrom(0n, 1n, 10000n, 300000n, 2n ** 63n));
    case "s64": return fc.oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.constantFrom(0n, -1n, 1n, 2n ** 63n - 1n));
    case "f32": return fc.oneof(fc.float(), fc.constantFrom(0, 0.5, 1, 1.5, -1, Number.NaN));
    case "list": return fc.array(arbOf(t.of), { maxLength: 6 });
    case "record": return fc.record(Object.fromEntries(t.fields.map(([name, f]) => [name, arbOf(f)])));
    case "enum": return fc.constantFrom(...t.cases);
    case "option": return fc.option(arbOf(t.of), { nil: undefined });
    case "variant": return fc.oneof(...t.cases.map(([tag, c]) => (c ? arbOf(c).map((val) => ({ tag, val })) : fc.constant({ tag }))));
    default: throw new Error(`no arbitrary for ${t.k}`);
  }
}

const names = Object.keys(SIGNATURES);
export const arbitrary = fc.constantFrom(...names).chain((name) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.tuple(...SIGNATURES[name].params.map(arbOf)) },
    // A case's own arguments with one of them replaced by a random one: near-valid input.
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...CASES.filter((c) => c.fn.join(".") === name)), fc.nat()).chain(([c, which]) => {
      const i = which % c.args.length;
      return arbOf(SIGNATURES[name].params[i]).map((v) => c.args.map((a, k) => (k === i ? v : a)));
    }) },
  ).map((args) => ({ fn: name, args })),
);

export async function setup() {
  return { library: await loadLibrary() };
}

export async function property({ fn, args }, ctx) {
  const [iface, name] = fn.split(".");
  try {
    ctx.library[iface][name](...args);
  } catch (error) {
    // jco refuses values it cannot lower (a u32 out of range, a NaN it would not pass) with a
    // TypeError or RangeError: the host's refusal. An `err` result is a ComponentError with a payload.
    if (error instanceof TypeError || error instanceof RangeError) return;
    if (typeof error?.payload === "string") {
      if (!error.payload) throw new Error(`${fn}: an error without words`);
      return;
    }
    // Anything else is a trap: the instance is now poisoned, so load a new one for what follows.
    ctx.library = await loadLibrary();
    throw new Error(`${fn} trapped: ${error?.message ?? error}`);
  }
}
