// What exec probes cost the agent on containerd 1.6, whose task-exit events include the end of
// every exec'd process: one pod with an exec readiness probe every second, 30 s once it runs;
// printed: the exit watches the probes set off (each up to 25 ContainerStatus calls and a relist
// before exec exits were told apart) and the agent's CPU. A benchmark, not a test.
//   npm run build && node tests/bench/exec-probe-exits.mjs
//   BIN=<another checkout>/bin/nanolet node tests/bench/exec-probe-exits.mjs   (that build)
import fs from "node:fs";
import path from "node:path";
import { Nanolet, tempDir, runtimeContainers, waitFor, nanoletBin } from "../e2e/harness.mjs";
import { PrivateContainerd, ensurePackages } from "../../build/containerd.mjs";

ensurePackages();
const work = tempDir("nanolet-execprobe-");
const containerd = new PrivateContainerd(path.join(work, "containerd")); await containerd.start();
const manifestDir = path.join(work, "m"); fs.mkdirSync(manifestDir);
const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir, rootDir: path.join(work, "root"), logsDir: path.join(work, "logs"), bin: process.env.BIN ?? nanoletBin });
fs.writeFileSync(path.join(manifestDir, "p.yaml"), `apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: busybox
    imagePullPolicy: IfNotPresent
    command: ["/bin/sh", "-c", "exec sleep 3600"]
    readinessProbe:
      exec:
        command: ["true"]
      periodSeconds: 1
`);
try {
  nanolet.start(["--v", "debug"]);
  await nanolet.waitPod("p", (p) => p.containers[0]?.state === "running", "running", 60_000);
  const cpu0 = fs.readFileSync(`/proc/${nanolet.proc.pid}/stat`, "utf8").split(") ")[1].split(" ");
  const before = nanolet.logLines(/Relist asked by a runtime event/).length;
  await new Promise((r) => setTimeout(r, 30_000));
  const cpu1 = fs.readFileSync(`/proc/${nanolet.proc.pid}/stat`, "utf8").split(") ")[1].split(" ");
  const cpuMs = (Number(cpu1[11]) + Number(cpu1[12]) - Number(cpu0[11]) - Number(cpu0[12])) * 10;
  console.log(`${process.env.BIN ?? "this tree"}: 30 s of exec probes every 1 s: ${nanolet.logLines(/Relist asked by a runtime event/).length - before} exit watches set off; agent CPU ${cpuMs} ms (${(cpuMs / 300).toFixed(2)}% of a core)`);
} finally {
  fs.rmSync(path.join(manifestDir, "p.yaml"));
  await waitFor("removed", () => runtimeContainers(containerd).length === 0, 60_000);
  await nanolet.stop();
  await containerd.stop();
}
