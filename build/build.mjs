#!/usr/bin/env node
// Builds nanolet from clean: AssemblyScript core module -> component (WIT embedded, exports
// renamed) -> JS bindings (jco transpile --instantiation async) -> host (tsc).
// Every output goes under build/out/ or dist/, both git-ignored.
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import binaryen from "binaryen";
import { componentEmbed, componentNew } from "@bytecodealliance/jco";
import { _setPreopens } from "@bytecodealliance/preview2-shim/filesystem";
import { EXPORT_NAMES, INTERNAL_EXPORTS } from "./exports.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const out = path.join(root, "build/out");
const bin = (name) => path.join(root, "node_modules/.bin", name);
const step = (what) => process.stderr.write(`build: ${what}\n`);

function run(cmd, args) {
  execFileSync(cmd, args, { cwd: root, stdio: "inherit" });
}

/** Renames the module's exports to the WIT names; jco checks them against the world. */
function renameExports(coreBytes) {
  const module = binaryen.readBinary(coreBytes);
  const wanted = new Set();
  for (const [from, to, post] of EXPORT_NAMES) {
    const info = binaryen.getExportInfo(module.getExport(from));
    module.removeExport(from);
    module.addFunctionExport(info.value, to);
    wanted.add(to);
    if (post) {
      const postInfo = binaryen.getExportInfo(module.getExport(post));
      module.addFunctionExport(postInfo.value, `cabi_post_${to}`);
    }
  }
  for (const name of INTERNAL_EXPORTS) module.removeExport(name);
  // Binaryen drops the name section unless asked to keep it (NANOLET_CORE_NAMES, below).
  binaryen.setDebugInfo(process.env.NANOLET_CORE_NAMES === "1");
  const bytes = module.emitBinary();
  module.dispose();
  return bytes;
}

export async function build({ host = true } = {}) {
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });

  step("asc assembly/exports.ts");
  // NANOLET_CORE_NAMES=1 keeps function names in the module, so CPU profiles name the core's code.
  const names = process.env.NANOLET_CORE_NAMES === "1" ? ["--debug"] : [];
  run(bin("asc"), ["assembly/exports.ts", "--target", "release", "--outFile", "build/out/core.wasm", ...names]);

  step("component: rename exports, embed wit/, componentNew");
  const core = renameExports(fs.readFileSync(path.join(out, "core.wasm")));
  fs.writeFileSync(path.join(out, "core.renamed.wasm"), core);
  // jco's bundled wasm-tools sees the filesystem only through preopens.
  _setPreopens({ "/": "/" });
  const embedded = await componentEmbed({
    binary: core,
    witPath: path.join(root, "wit"),
    world: "core",
    stringEncoding: "utf16",
  });
  const component = await componentNew(embedded);
  fs.writeFileSync(path.join(out, "nanolet-core.wasm"), component);

  step("jco transpile --instantiation async");
  run(bin("jco"), [
    "transpile", "build/out/nanolet-core.wasm", "-o", "build/out/core-js", "--instantiation", "async",
    "--name", "nanolet-core", "--quiet",
  ]);
  patchDebugLog(path.join(out, "core-js/nanolet-core.js"));

  if (host) {
    step("tsc -p host");
    // From clean, so that a moved or removed source leaves no old module behind in dist/.
    fs.rmSync(path.join(root, "dist"), { recursive: true, force: true });
    run(bin("tsc"), ["-p", "host/tsconfig.json"]);
    step("esbuild host/sim/report/browser.ts (the report page's re-run)");
    try {
      await bundleReport();
    } catch (error) {
      // The agent does not need it: only `sim --report` pages lose their re-run button.
      step(`esbuild failed, report pages will not re-run: ${error.message}`);
    }
  }
  if (host) fs.writeFileSync(STAMP, sourceDigest());
  step(`done: component ${component.length} bytes`);
}

/** Where a whole build records the digest of the sources it was made from. */
const STAMP = path.join(root, "dist/.source-digest");
const SOURCES = ["assembly", "wit", "host", "build", "package-lock.json"];

/** A digest of every source file's path and content (a second or so; no build tool state needed). */
function sourceDigest() {
  const hash = crypto.createHash("sha256");
  const walk = (rel) => {
    const full = path.join(root, rel);
    const stat = fs.statSync(full, { throwIfNoEntry: false });
    if (!stat) return;
    if (stat.isDirectory()) {
      if (rel === "build/out") return;
      for (const name of fs.readdirSync(full).sort()) walk(path.join(rel, name));
    } else if (stat.isFile()) {
      hash.update(`${rel}\0`).update(fs.readFileSync(full)).update("\0");
    }
  };
  for (const rel of SOURCES) walk(rel);
  return hash.digest("hex");
}

/** True when dist/ and build/out/ were built from exactly the sources in the tree now. */
export function isBuilt() {
  try {
    return fs.readFileSync(STAMP, "utf8") === sourceDigest() && fs.existsSync(path.join(out, "core-js/nanolet-core.js"));
  } catch {
    return false;
  }
}

/**
 * The simulator, the jco bindings and the report's drawing code as one browser module, for the
 * page `nanolet sim --report` writes. Node.js modules resolve to host/sim/report/node-stubs.ts.
 */
async function bundleReport() {
  const { build: esbuild } = await import("esbuild");
  const stubs = path.join(root, "host/sim/report/node-stubs.ts");
  const nodeModules = ["node:fs", "node:fs/promises", "node:path", "node:url", "node:crypto"];
  await esbuild({
    entryPoints: [path.join(root, "host/sim/report/browser.ts")],
    outfile: path.join(out, "report/browser.js"),
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    legalComments: "none",
    alias: Object.fromEntries(nodeModules.map((m) => [m, stubs])),
    logLevel: "warning",
  });
}

/**
 * jco 1.35's bindings look up process.env.JCO_DEBUG on every one of the ~20 debug-log calls each
 * call into the component makes; process.env is a getenv per access, and that was 6% of the
 * simulator's time. Read it once, when the bindings load. Refuses to build if the code changed.
 */
function patchDebugLog(file) {
  const before = "if (!globalThis?.process?.env?.JCO_DEBUG) { return; }";
  const text = fs.readFileSync(file, "utf8");
  if (!text.includes(before)) throw new Error(`${file}: jco's _debugLog changed; update patchDebugLog in build/build.mjs`);
  const patched = text.replace(before, "if (!JCO_DEBUG_ONCE) { return; }");
  fs.writeFileSync(file, `const JCO_DEBUG_ONCE = !!globalThis?.process?.env?.JCO_DEBUG;\n${patched}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await build({ host: !process.argv.includes("--core-only") });
}
