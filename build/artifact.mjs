#!/usr/bin/env node
// Builds the artifact to flash onto a device: one directory, no node_modules tree.
//
//   nanolet-<version>-linux-<arch>/
//     bin/nanolet          launcher (runs lib/nanolet.mjs on bin/node if present, else on `node`)
//     bin/node             this Node.js binary, with --with-node (or --node FILE: another one,
//                          e.g. an arm64 build)
//     lib/nanolet.mjs      the host and its dependencies (grpc-js, proto-loader, yaml), bundled
//     lib/core-js/         the WebAssembly component's bindings and core modules
//     lib/runtime-v1.proto the CRI proto
//     VERSION
//
// Usage: node build/artifact.mjs [--out DIR] [--arch x64|arm64] [--with-node | --node FILE]
// (`npm run artifact`; run `npm run build` first). Prints the artifact's directory.
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const LAUNCHER = `#!/bin/sh
# nanolet's launcher: the bundled agent on the Node.js beside it (bin/node) or on the PATH.
# MALLOC_MMAP_THRESHOLD_ keeps glibc from holding freed manifest-sized buffers in a fragmented heap;
# --max-semi-space-size=1 trades a little GC time for a smaller young generation (see docs/benchmarks.md).
here=$(dirname "$(readlink -f "$0")")
node="$here/node"
[ -x "$node" ] || node=node
MALLOC_MMAP_THRESHOLD_=131072 exec "$node" --max-semi-space-size=1 "$here/../lib/nanolet.mjs" "$@"
`;

/** The version nanolet reports (package.json's). */
export function packageVersion() {
  return JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).version;
}

/** Builds the artifact under `outDir`; returns its directory. */
export async function buildArtifact({ outDir = path.join(root, "build/out/artifact"), arch = process.arch, node } = {}) {
  const coreJs = path.join(root, "build/out/core-js");
  if (!fs.existsSync(path.join(root, "dist/cli/main.js")) || !fs.existsSync(coreJs)) throw new Error("run `npm run build` first");
  const version = packageVersion();
  const dir = path.join(outDir, `nanolet-${version}-linux-${arch}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, "bin"), { recursive: true });
  fs.mkdirSync(path.join(dir, "lib"), { recursive: true });
  const { build } = await import("esbuild");
  await build({
    stdin: {
      contents: 'import { main } from "./dist/cli/main.js";\nconst code = await main(process.argv.slice(2));\nif (code !== 0) process.exit(code);\n',
      resolveDir: root,
      sourcefile: "nanolet-entry.mjs",
    },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    outfile: path.join(dir, "lib/nanolet.mjs"),
    define: { NANOLET_BUNDLED: "true" },
    // CommonJS dependencies (grpc-js, protobufjs) call require(); an ES module has none of its own.
    banner: { js: 'import { createRequire as __nanoletRequire } from "node:module";\nconst require = __nanoletRequire(import.meta.url);' },
    legalComments: "linked",
    logLevel: "warning",
  });
  fs.cpSync(coreJs, path.join(dir, "lib/core-js"), { recursive: true });
  fs.copyFileSync(path.join(root, "host/cri/runtime-v1.proto"), path.join(dir, "lib/runtime-v1.proto"));
  for (const proto of ["host/devices/deviceplugin-v1beta1.proto", "host/devices/pluginregistration-v1.proto", "host/csi/csi-v1.proto"]) {
    fs.copyFileSync(path.join(root, proto), path.join(dir, "lib", path.basename(proto)));
  }
  const report = path.join(root, "build/out/report/browser.js");
  if (fs.existsSync(report)) fs.copyFileSync(report, path.join(dir, "lib/report-browser.js"));
  fs.writeFileSync(path.join(dir, "bin/nanolet"), LAUNCHER, { mode: 0o755 });
  if (node) fs.copyFileSync(node, path.join(dir, "bin/node")), fs.chmodSync(path.join(dir, "bin/node"), 0o755);
  fs.writeFileSync(path.join(dir, "VERSION"), `${version}\n`);
  return dir;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { out: { type: "string" }, arch: { type: "string" }, "with-node": { type: "boolean" }, node: { type: "string" } } });
  const node = values.node ?? (values["with-node"] ? process.execPath : undefined);
  const dir = await buildArtifact({ outDir: values.out && path.resolve(values.out), arch: values.arch, node });
  process.stdout.write(`${dir}\n`);
}
