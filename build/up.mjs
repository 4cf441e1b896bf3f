#!/usr/bin/env node
// `npm start`: nanolet's main job on an embedded default. Installs containerd when missing,
// builds nanolet when its sources changed, starts a private containerd under
// /var/lib/nanolet/containerd (kept running, like a system service, so pods outlive the agent),
// and runs the agent on examples/.
// Extra arguments go to `nanolet run` (e.g. `npm start -- --pod-manifest-path /etc/nanolet/pods`).
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build, isBuilt } from "./build.mjs";
import { PrivateContainerd, ensurePackages } from "./containerd.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const rootDir = process.env.NANOLET_ROOT_DIR ?? "/var/lib/nanolet";

ensurePackages();
// Built once; again only when a source changed (a restart is then immediate).
if (isBuilt()) process.stderr.write("up: build is up to date\n");
else await build();
const containerd = new PrivateContainerd(path.join(rootDir, "containerd"));
await containerd.start();
process.stderr.write(`up: containerd at ${containerd.endpoint} (log: ${containerd.dir}/containerd.log)\n`);
process.stderr.write(`up: watch the pods with: ./bin/nanolet pods --root-dir ${rootDir}\n`);

const args = [
  path.join(root, "bin/nanolet"), "run",
  "--pod-manifest-path", path.join(root, "examples"),
  "--container-runtime-endpoint", containerd.endpoint,
  "--root-dir", rootDir,
  ...process.argv.slice(2),
];
const agent = spawn(process.execPath, args, { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => agent.kill(signal));
agent.on("exit", (code) => process.exit(code ?? 0));
