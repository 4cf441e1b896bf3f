#!/usr/bin/env node
// Unpacks the upstream Kubernetes binaries kept gzipped in ../shared/k8s (kube-apiserver, etcd,
// kubectl, kube-controller-manager, kubelet) into a cache directory, after checking SHA256SUMS,
// and prints that directory: `export KUBEBUILDER_ASSETS=$(node build/k8s-assets.mjs)` is envtest's
// convention, which the cluster tests follow. Unpacks only what is missing or changed.
//   node build/k8s-assets.mjs [SOURCE_DIR] [CACHE_DIR]
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const source = path.resolve(process.argv[2] ?? path.join(root, "../shared/k8s"));
const cache = path.resolve(process.argv[3] ?? path.join(os.homedir(), ".cache/nanolet/k8s-assets"));

function fail(message) {
  process.stderr.write(`k8s-assets: ${message}\n`);
  process.exit(1);
}

const sumsFile = path.join(source, "SHA256SUMS");
if (!fs.existsSync(sumsFile)) fail(`no ${sumsFile}`);
fs.mkdirSync(cache, { recursive: true });
for (const line of fs.readFileSync(sumsFile, "utf8").split("\n").filter(Boolean)) {
  const [sum, file] = line.trim().split(/\s+/);
  if (!file.endsWith(".gz")) continue;
  const bin = path.join(cache, file.slice(0, -3));
  const stamp = `${bin}.sha256`;
  if (fs.existsSync(bin) && fs.existsSync(stamp) && fs.readFileSync(stamp, "utf8") === sum) continue;
  const packed = fs.readFileSync(path.join(source, file));
  const got = crypto.createHash("sha256").update(packed).digest("hex");
  if (got !== sum) fail(`${file}: sha256 ${got}, SHA256SUMS says ${sum}`);
  fs.writeFileSync(`${bin}.tmp`, zlib.gunzipSync(packed), { mode: 0o755 });
  fs.renameSync(`${bin}.tmp`, bin);
  fs.writeFileSync(stamp, sum);
  process.stderr.write(`k8s-assets: unpacked ${path.basename(bin)}\n`);
}
process.stdout.write(`${cache}\n`);
