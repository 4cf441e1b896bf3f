// Generates a .wast script that runs the pure interfaces' cases on the core module alone, with
// no component model and no JavaScript: a driver module lowers each case's arguments into the
// core's memory by the canonical ABI (abi-types.mjs), calls the export, and walks the result,
// returning 0 when it is exactly the expected value or the number of the first check that failed.
// wabt's spectest-interp (Debian package `wabt`) runs it: tests/library/wast.test.mjs.
import { SIGNATURES, cases, fieldOffsets, flatten, payloadOffset, size } from "./abi-types.mjs";
import { MAX_FLAT_PARAMS, caseIndex, caseValue, enumIndex, f32Bits, lowerCall } from "./abi-lower.mjs";


const watString = (bytes) => Array.from(bytes, (b) => `\\${b.toString(16).padStart(2, "0")}`).join("");

const constOf = (f) => {
  if (f.type === "i64") return `(i64.const ${f.value})`;
  if (f.type === "f32") return `(f32.const ${Number.isFinite(f.value) ? f.value : 0})`;
  return `(i32.const ${f.value | 0})`;
};

/** Wat that checks the value of type `t` at `offset` from the address in local `base`. */
class Checker {
  constructor() {
    this.lines = [];
    this.checks = 0;
    this.locals = 0;
  }
  fail(condition) {
    this.lines.push(`(if ${condition} (then (return (i32.const ${++this.checks}))))`);
  }
  local() {
    return `$t${this.locals++}`;
  }
  check(t, value, base, offset) {
    const at = `offset=${offset} (local.get ${base})`;
    switch (t.k) {
      case "bool": return this.fail(`(i32.ne (i32.load8_u ${at}) (i32.const ${value ? 1 : 0}))`);
      case "enum": return this.fail(`(i32.ne (i32.load8_u ${at}) (i32.const ${enumIndex(t, value)}))`);
      case "u32": case "s32": return this.fail(`(i32.ne (i32.load ${at}) (i32.const ${value | 0}))`);
      case "f32": return this.fail(`(i32.ne (i32.load ${at}) (i32.const ${f32Bits(value) | 0}))`);
      case "u64": case "s64": return this.fail(`(i64.ne (i64.load ${at}) (i64.const ${BigInt.asIntN(64, value)}))`);
      case "string": {
        this.fail(`(i32.ne (i32.load offset=${offset + 4} (local.get ${base})) (i32.const ${value.length}))`);
        const p = this.local();
        this.lines.push(`(local.set ${p} (i32.load ${at}))`);
        for (let i = 0; i < value.length; i++) this.fail(`(i32.ne (i32.load16_u offset=${2 * i} (local.get ${p})) (i32.const ${value.charCodeAt(i)}))`);
        return;
      }
      case "list": {
        this.fail(`(i32.ne (i32.load offset=${offset + 4} (local.get ${base})) (i32.const ${value.length}))`);
        const p = this.local();
        this.lines.push(`(local.set ${p} (i32.load ${at}))`);
        value.forEach((item, i) => this.check(t.of, item, p, i * size(t.of)));
        return;
      }
      case "record": {
        const offsets = fieldOffsets(t);
        t.fields.forEach(([name, f], i) => this.check(f, value[name], base, offset + offsets[i]));
        return;
      }
      case "result": {
        const isErr = "err" in value;
        this.fail(`(i32.ne (i32.load8_u ${at}) (i32.const ${isErr ? 1 : 0}))`);
        return this.check(isErr ? t.err : t.ok, isErr ? value.err : value.ok, base, offset + payloadOffset(t));
      }
      default: {
        const index = caseIndex(t, value);
        this.fail(`(i32.ne (i32.load8_u ${at}) (i32.const ${index}))`);
        const c = cases(t)[index];
        if (c) this.check(c, caseValue(t, value), base, offset + payloadOffset(t));
      }
    }
  }
}

/**
 * The .wast text: stub imports, the core module, the driver, and one assert_return per case.
 * `coreBytes` is the core module (build/out/core.renamed.wasm: WIT export names, no component).
 */
export function generateWast(coreBytes, cases) {
  const imports = new Map();
  const data = [];
  const funcs = [];
  const importOf = (name, params, results) => {
    if (!imports.has(name)) {
      const id = `$f${imports.size}`;
      const sig = `${params.length ? `(param ${params.join(" ")})` : ""} ${results.length ? `(result ${results.join(" ")})` : ""}`;
      imports.set(name, { id, line: `(import "core" ${JSON.stringify(name)} (func ${id} ${sig}))` });
    }
    return imports.get(name).id;
  };
  importOf("cabi_realloc", ["i32", "i32", "i32", "i32"], ["i32"]);

  cases.forEach((c, n) => {
    const sig = SIGNATURES[c.fn.join(".")];
    if (!sig) throw new Error(`${c.id}: no signature for ${c.fn.join(".")}`);
    // Past 16 flat values the parameters travel in memory, by one pointer (lowerCall puts them there).
    const allFlat = sig.params.flatMap(flatten);
    const paramTypes = allFlat.length > MAX_FLAT_PARAMS ? ["i32"] : allFlat;
    const resultFlat = flatten(sig.result);
    const returnsPointer = resultFlat.length > 1;
    const callee = importOf(sig.export, paramTypes, returnsPointer ? ["i32"] : resultFlat);
    const post = returnsPointer ? importOf(`cabi_post_${sig.export}`, ["i32"], []) : null;

    const { bytes, pointerSlots, flat: args } = lowerCall(sig, c.args);
    const body = [];
    const imageBytes = Math.max(bytes.length, 8);
    body.push(`(local.set $base (call $f0 (i32.const 0) (i32.const 0) (i32.const 8) (i32.const ${imageBytes})))`);
    if (bytes.length > 0) {
      data.push(`(data $d${n} "${watString(bytes)}")`);
      body.push(`(memory.init $d${n} (local.get $base) (i32.const 0) (i32.const ${bytes.length}))`);
      body.push(`(data.drop $d${n})`);
    } else {
      data.push(`(data $d${n} "")`);
    }
    for (const slot of pointerSlots) {
      body.push(`(i32.store offset=${slot} (local.get $base) (i32.add (i32.load offset=${slot} (local.get $base)) (local.get $base)))`);
    }
    const argText = args.map((a) => (a.relative ? `(i32.add (local.get $base) (i32.const ${a.value}))` : constOf(a))).join(" ");
    body.push(`(local.set $r (call ${callee} ${argText}))`);
    const checker = new Checker();
    const want = "err" in c ? { err: c.err } : { ok: c.ok };
    if (returnsPointer) {
      checker.check(sig.result, sig.result.k === "result" ? want : want.ok, "$r", 0);
    } else {
      // One flat result (a bool here): compare the value itself.
      checker.fail(`(i32.ne (local.get $r) (i32.const ${want.ok ? 1 : 0}))`);
    }
    body.push(...checker.lines);
    if (post) body.push(`(call ${post} (local.get $r))`);
    const locals = ["(local $base i32) (local $r i32)", ...Array.from({ length: checker.locals }, (_, i) => `(local $t${i} i32)`)];
    funcs.push(`  ;; ${c.id}\n  (func (export "case ${n}") (result i32) ${locals.join(" ")}\n    ${body.join("\n    ")}\n    (i32.const 0))`);
  });

  return [
    ";; Generated by tests/library/wast-driver.mjs: the pure interfaces' cases on the core module alone.",
    '(module $stubs',
    '  (func (export "report-trap") (param i32 i32 i32 i32 i32 i32) unreachable)',
    '  (func (export "[resource-new]agent") (param i32) (result i32) (local.get 0)))',
    '(register "nanolet:core/diagnostics@0.1.0" $stubs)',
    '(register "[export]nanolet:core/agent-api@0.1.0" $stubs)',
    `(module $core binary "${watString(coreBytes)}")`,
    '(register "core" $core)',
    "(module $driver",
    '  (import "core" "memory" (memory 0))',
    ...[...imports.values()].map((i) => `  ${i.line}`),
    ...data.map((d) => `  ${d}`),
    ...funcs,
    ")",
    ...cases.map((c, n) => `(assert_return (invoke $driver "case ${n}") (i32.const 0)) ;; ${c.id}`),
    "",
  ].join("\n");
}
