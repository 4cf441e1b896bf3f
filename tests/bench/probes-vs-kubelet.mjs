// What probes cost the agent, side by side with the upstream kubelet in one run: PODS (110) static
// pods on each, every pod with an exec readiness probe and an httpGet liveness probe (busybox
// httpd on its own port, host network), both agents on their own private containerd at the same
// time. Once every pod is ready on both, the agents' CPU (utime+stime from /proc) is sampled over
// WINDOWS (3) windows of WINDOW_S (30) seconds; printed per window, with min/median/max and the
// ratio nanolet / kubelet. A benchmark, not a test: CI does not run it.
//   npm run build && KUBEBUILDER_ASSETS=... node tests/bench/probes-vs-kubelet.mjs
import fs from "node:fs";
import path from "node:path";
import { PrivateContainerd, ensurePackages } from "../../build/containerd.mjs";
import { controlPlaneSkipReason, freePort } from "../e2e/control-plane.mjs";
import { Nanolet, tempDir, waitFor } from "../e2e/harness.mjs";
import { UpstreamKubelet } from "../e2e/upstream-kubelet.mjs";

const PODS = Number(process.env.PODS ?? 110);
const WINDOWS = Number(process.env.WINDOWS ?? 3);
const WINDOW_S = Number(process.env.WINDOW_S ?? 30);
const skip = controlPlaneSkipReason();
if (skip) {
  console.log(`probes-vs-kubelet: skipped: ${skip}`);
  process.exit(0);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cpuMs = (pid) => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime, USER_HZ 100
};
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0], median: s[Math.floor(s.length / 2)], max: s[s.length - 1] };
};

/** A pod serving `port` with an exec readiness probe and an httpGet liveness probe. */
function probedPod(name, port) {
  const serve = `mkdir -p /tmp/w-${port} && echo ok > /tmp/w-${port}/index.html && exec httpd -f -p ${port} -h /tmp/w-${port}`;
  return [
    "apiVersion: v1",
    "kind: Pod",
    `metadata: {name: ${name}}`,
    "spec:",
    "  hostNetwork: true",
    "  terminationGracePeriodSeconds: 2",
    "  containers:",
    "    - name: main",
    "      image: busybox",
    "      imagePullPolicy: IfNotPresent",
    `      command: ["/bin/sh", "-c", ${JSON.stringify(serve)}]`,
    `      readinessProbe: {exec: {command: ["cat", "/tmp/w-${port}/index.html"]}, periodSeconds: 10}`,
    `      livenessProbe: {httpGet: {path: /, port: ${port}}, periodSeconds: 10}`,
    "",
  ].join("\n");
}

const work = tempDir("nanolet-probe-bench-");
ensurePackages();
const containerd = new PrivateContainerd(path.join(work, "nanolet-containerd"));
await containerd.start();
const nanoManifests = path.join(work, "nanolet-manifests");
const kubeManifests = path.join(work, "kubelet-manifests");
fs.mkdirSync(nanoManifests);
fs.mkdirSync(kubeManifests);
const basePort = 20000 + (process.pid % 1000) * 20;
for (let i = 0; i < PODS; i++) {
  fs.writeFileSync(path.join(nanoManifests, `p${i}.yaml`), probedPod(`p${i}`, basePort + 2 * i));
  fs.writeFileSync(path.join(kubeManifests, `p${i}.yaml`), probedPod(`p${i}`, basePort + 2 * i + 1));
}
const readOnlyPort = await freePort();
let nanolet;
let kubelet;
try {
  nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir: nanoManifests, rootDir: path.join(work, "nanolet-root"), logsDir: path.join(work, "nanolet-logs"), node: "bench-nanolet" })
    .start(["--v", "info", "--max-pods", String(PODS + 10)]);
  kubelet = await UpstreamKubelet.start(path.join(work, "kubelet"), { node: "bench-kubelet", config: { staticPodPath: kubeManifests, readOnlyPort, maxPods: PODS + 10 } });
  const readyNano = async () => (await nanolet.pods()).filter((p) => p.containers.every((c) => c.ready)).length;
  const readyKube = async () => {
    const list = await (await fetch(`http://127.0.0.1:${readOnlyPort}/pods`)).json();
    return list.items.filter((p) => p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")).length;
  };
  let shown = "";
  await waitFor(`${PODS} pods ready on both`, async () => {
    const [n, k] = [await readyNano().catch(() => -1), await readyKube().catch(() => -1)];
    const line = `ready: nanolet ${n}/${PODS}, kubelet ${k}/${PODS}`;
    if (line !== shown) console.log(line);
    shown = line;
    return n === PODS && k === PODS;
  }, 900_000, 5000);
  console.log(`${PODS} pods ready on both agents; sampling ${WINDOWS} x ${WINDOW_S} s`);
  const nanoPct = [];
  const kubePct = [];
  for (let w = 0; w < WINDOWS; w++) {
    const n0 = cpuMs(nanolet.proc.pid);
    const k0 = cpuMs(kubelet.pid);
    await sleep(WINDOW_S * 1000);
    nanoPct.push(((cpuMs(nanolet.proc.pid) - n0) / (WINDOW_S * 1000)) * 100);
    kubePct.push(((cpuMs(kubelet.pid) - k0) / (WINDOW_S * 1000)) * 100);
    console.log(`window ${w + 1}: nanolet ${nanoPct[w].toFixed(2)}% of a core, kubelet ${kubePct[w].toFixed(2)}%`);
  }
  const n = stats(nanoPct);
  const k = stats(kubePct);
  const f = (s) => `${s.median.toFixed(2)}% (${s.min.toFixed(2)}-${s.max.toFixed(2)})`;
  console.log(`agent CPU with ${PODS} pods, an exec and an http probe each: nanolet ${f(n)}, kubelet ${f(k)}, nanolet/kubelet ${(n.median / k.median).toFixed(2)}`);
} finally {
  await nanolet?.stop();
  await kubelet?.stop();
  await containerd.stop();
}
