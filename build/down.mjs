#!/usr/bin/env node
// `npm run down`: undoes `npm start`. Stops the example pods' containers and the private
// containerd that `npm start` left running under /var/lib/nanolet/containerd (stop the agent
// first: Ctrl-C). With `-- --purge` it also removes /var/lib/nanolet (the agent's state, the
// containerd's images and snapshots) and the example pods' logs under /var/log/pods.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { PrivateContainerd } from "./containerd.mjs";

const rootDir = process.env.NANOLET_ROOT_DIR ?? "/var/lib/nanolet";
const purge = process.argv.includes("--purge");
const containerd = new PrivateContainerd(path.join(rootDir, "containerd"));

if (await containerd.answering()) {
  await containerd.stop();
  process.stderr.write(`down: stopped the pods and the containerd at ${containerd.endpoint}\n`);
} else {
  process.stderr.write(`down: no containerd is answering at ${containerd.endpoint}\n`);
}
if (purge) {
  fs.rmSync(rootDir, { recursive: true, force: true });
  // The example pods' log directories: default_<name>-<node name>_<uid>.
  const examples = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../examples");
  const names = fs.readdirSync(examples).flatMap((f) => parseAllDocuments(fs.readFileSync(path.join(examples, f), "utf8")).map((d) => d.toJS()?.metadata?.name)).filter(Boolean);
  const logs = "/var/log/pods";
  for (const dir of fs.existsSync(logs) ? fs.readdirSync(logs) : []) {
    if (names.some((name) => dir.startsWith(`default_${name}-`))) fs.rmSync(path.join(logs, dir), { recursive: true, force: true });
  }
  process.stderr.write(`down: removed ${rootDir} and the example pods' logs\n`);
}
