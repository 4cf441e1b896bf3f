// Manifest files' bytes: random bytes, mutations of a valid manifest, YAML shapes (anchors,
// aliases, deep flow nesting, many documents, odd scalars) and Pods with random field values.
// Each goes through the static pod source's reader and the real core, beside one good pod.
// Properties: nothing throws or traps; every refusal names its file and says what it refused;
// the good pod is never refused.
import fc from "fast-check";
import { manifestsFromBytes } from "../../../dist/sources/static-pods.js";
import { CoreAgent, CoreTrapError, DEFAULT_CORE_CONFIG } from "../../../dist/core/core.js";
import { anyJson, podObject } from "./pod-values.mjs";

const FILE = "/fuzz/manifests/pod.yaml";
export const GOOD_YAML = `apiVersion: v1
kind: Pod
metadata:
  name: good
spec:
  containers:
    - name: app
      image: busybox
      command: ["sleep", "3600"]
      resources: { limits: { cpu: 100m, memory: 64Mi } }
`;
const utf8 = new TextEncoder();

const mutation = fc.oneof(
  fc.record({ op: fc.constant("insert"), at: fc.nat(), text: fc.string({ unit: "binary", maxLength: 12 }) }),
  fc.record({ op: fc.constant("delete"), at: fc.nat(), length: fc.nat({ max: 40 }) }),
  fc.record({ op: fc.constant("repeat"), at: fc.nat(), length: fc.nat({ max: 40 }), times: fc.integer({ min: 1, max: 50 }) }),
);

function mutate(text, edits) {
  let s = text;
  for (const e of edits) {
    const at = s.length === 0 ? 0 : e.at % (s.length + 1);
    if (e.op === "insert") s = s.slice(0, at) + e.text + s.slice(at);
    else if (e.op === "delete") s = s.slice(0, at) + s.slice(at + e.length);
    else s = s.slice(0, at) + s.slice(at, at + e.length).repeat(e.times) + s.slice(at);
  }
  return s;
}

const yamlShapes = fc.oneof(
  // Flow nesting, deep enough to pass any limit.
  fc.integer({ min: 1, max: 20_000 }).map((n) => `${"[".repeat(n)}${"]".repeat(n)}`),
  fc.integer({ min: 1, max: 5_000 }).map((n) => `${'{"a":'.repeat(n)}1${"}".repeat(n)}`),
  // Block nesting by indentation.
  fc.integer({ min: 1, max: 300 }).map((n) => Array.from({ length: n }, (_, i) => `${" ".repeat(i)}k${i}:`).join("\n") + " 1\n"),
  // Aliases: a bomb of `levels` x `fanout`, or many aliases of one node.
  fc.record({ levels: fc.integer({ min: 1, max: 12 }), fanout: fc.integer({ min: 1, max: 12 }) }).map(({ levels, fanout }) => {
    const lines = ["a0: &a0 [x]"];
    for (let i = 1; i < levels; i++) lines.push(`a${i}: &a${i} [${Array(fanout).fill(`*a${i - 1}`).join(", ")}]`);
    return lines.join("\n") + "\n";
  }),
  fc.integer({ min: 0, max: 3000 }).map((n) => GOOD_YAML.replace("name: good", "name: &n many") + `  tolerations: [${Array(n).fill("{key: *n, operator: Exists}").join(", ")}]\n`),
  // Self-reference and cycles.
  fc.constantFrom("&a [*a]\n", "&a {x: *a}\n", "apiVersion: v1\nkind: Pod\nmetadata: &m {name: x, self: *m}\nspec: {containers: [{name: a, image: b}]}\n", "*undefined\n", "&a\n"),
  // Many documents.
  fc.integer({ min: 0, max: 400 }).map((n) => Array(n).fill(GOOD_YAML).join("---\n")),
  // Tags and odd scalars YAML allows.
  fc.constantFrom("!!binary aGVsbG8=\n", "!!set {a, b}\n", "? [a, b]\n: c\n", "!!omap [a: 1]\n", "%YAML 1.1\n---\nx: y\n", "x: !!int 99999999999999999999999\n", "x: .inf\n", "<<: *x\n", "x: !custom 1\n"),
);

export const arbitrary = fc.oneof(
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 4096 }) },
  { weight: 4, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 8 }).map((edits) => utf8.encode(mutate(GOOD_YAML, edits))) },
  { weight: 2, arbitrary: yamlShapes.map((t) => utf8.encode(t)) },
  { weight: 4, arbitrary: podObject.map((o) => utf8.encode(JSON.stringify(o))) },
  { weight: 1, arbitrary: anyJson.map((o) => utf8.encode(JSON.stringify(o) ?? "")) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom([0xff, 0xfe], [0xfe, 0xff], [0xef, 0xbb, 0xbf], [0x1f, 0x8b]), fc.uint8Array({ maxLength: 512 })).map(([head, rest]) => Uint8Array.from([...head, ...rest])) },
);

export async function setup() {
  const core = await CoreAgent.create({ nodeName: "fuzz", ...DEFAULT_CORE_CONFIG });
  const good = manifestsFromBytes(utf8.encode(GOOD_YAML), "/fuzz/manifests/good.yaml", "fuzz").pods[0];
  return { core, good, calls: 0 };
}

export async function property(bytes, ctx) {
  const input = bytes instanceof Uint8Array ? bytes : Uint8Array.from(bytes);
  const { pods, problems } = manifestsFromBytes(input, FILE, "fuzz");
  for (const p of problems) {
    if (!p.origin.startsWith(FILE)) throw new Error(`a problem names another file: ${JSON.stringify(p)}`);
    if (typeof p.message !== "string" || p.message.length === 0) throw new Error(`a refusal without words: ${JSON.stringify(p)}`);
    if (/could not be read: /.test(p.message)) throw new Error(`an input reached a bug of the reader: ${p.message}`);
  }
  let rejections;
  try {
    rejections = ctx.core.handlePods(0, [ctx.good.spec, ...pods.map((p) => p.spec)]);
  } catch (error) {
    if (error instanceof CoreTrapError) throw new Error(`the core trapped: ${error.message}`);
    throw error;
  }
  for (const r of rejections) {
    if (r.index === 0) throw new Error(`the good pod was refused beside this input: ${r.field}: ${r.message}`);
    if (!r.message) throw new Error(`a core refusal without words: ${JSON.stringify(r)}`);
  }
  // A fresh core now and then, so that state from earlier inputs cannot hide a problem.
  if (++ctx.calls % 500 === 0) ctx.core = await CoreAgent.create({ nodeName: "fuzz", ...DEFAULT_CORE_CONFIG });
}
