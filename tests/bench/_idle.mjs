import fs from "node:fs";
import path from "node:path";
import { PrivateContainerd, ensurePackages } from "../../build/containerd.mjs";
import { Nanolet, nanoletBin, podManifest, tempDir, waitFor } from "../e2e/harness.mjs";
const PODS = 50;
ensurePackages();
const work = tempDir("nanolet-idle-");
const containerd = new PrivateContainerd(path.join(work, "containerd"));
await containerd.start();
const manifests = path.join(work, "manifests");
fs.mkdirSync(manifests);
for (let i = 0; i < PODS; i++) fs.writeFileSync(path.join(manifests, `m${i}.yaml`), podManifest(`m${i}`, { script: "exec sleep 3600" }));
const cpu = (pid) => { const f = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" "); return (Number(f[11]) + Number(f[12])) / 100; };
const agent = new Nanolet({ endpoint: containerd.endpoint, manifestDir: manifests, rootDir: path.join(work, "root"), logsDir: path.join(work, "logs"), node: "idle", bin: nanoletBin, nodeArgs: ["--max-semi-space-size=1", "--cpu-prof", "--cpu-prof-dir=/tmp/w/idleprof"] }).start(["--v", "info", "--max-pods", "60"]);
try {
  await waitFor("pods", async () => (await agent.pods().catch(() => [])).filter((p) => p.containers.length > 0 && p.containers.every((c) => c.state === "running")).length === PODS, 600_000, 500);
  await new Promise((r) => setTimeout(r, 10_000));
  const t0 = Date.now(); const c0 = cpu(agent.proc.pid);
  console.log("idle window starts", t0);
  await new Promise((r) => setTimeout(r, 60_000));
  const c1 = cpu(agent.proc.pid);
  console.log("idle CPU %", ((c1 - c0) / ((Date.now() - t0) / 1000) * 100).toFixed(2), "window", t0, Date.now());
} finally {
  await agent.stop();
  await containerd.stop();
}
