// What probes cost the agent, beside the upstream kubelet in one run: PODS (110) static pods, every
// pod with an exec readiness probe and an httpGet liveness probe (busybox httpd on its own port,
// host network), each agent on its own private containerd. The agents take turns (ROUNDS, 2,
// alternating who goes first): both at once overload a 2-core machine (220 runc execs every 10 s
// made every exec probe time out). Once every pod is ready, the agent's CPU (utime+stime from
// /proc) is sampled over WINDOWS (3) windows of WINDOW_S (30) seconds; printed per window, with
// min/median/max and the ratio nanolet / kubelet. A benchmark, not a test: CI does not run it.
//   npm run build && KUBEBUILDER_ASSETS=... node tests/bench/probes-vs-kubelet.mjs
import fs from "node:fs";
import path from "node:path";
import { PrivateContainerd, ensurePackages } from "../../build/containerd.mjs";
import { controlPlaneSkipReason, freePort } from "../e2e/control-plane.mjs";
import { Nanolet, tempDir, waitFor } from "../e2e/harness.mjs";
import { UpstreamKubelet } from "../e2e/upstream-kubelet.mjs";

const PODS = Number(process.env.PODS ?? 110);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
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

/** A pod serving `port` with an exec readiness probe and an httpGet liveness probe (JSON is YAML). */
function probedPod(name, port) {
  const www = `/tmp/w-${port}`;
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: {
      hostNetwork: true,
      terminationGracePeriodSeconds: 2,
      containers: [{
        name: "main",
        image: "busybox",
        imagePullPolicy: "IfNotPresent",
        command: ["/bin/sh", "-c", `mkdir -p ${www} && echo ok > ${www}/index.html && exec httpd -f -p ${port} -h ${www}`],
        readinessProbe: { exec: { command: ["cat", `${www}/index.html`] }, periodSeconds: 10 },
        livenessProbe: { httpGet: { path: "/", port }, periodSeconds: 10 },
      }],
    },
  });
}

const work = tempDir("nanolet-probe-bench-");
ensurePackages();
const manifests = path.join(work, "manifests");
fs.mkdirSync(manifests);
const basePort = 20000 + (process.pid % 1000) * 20;
for (let i = 0; i < PODS; i++) fs.writeFileSync(path.join(manifests, `p${i}.yaml`), probedPod(`p${i}`, basePort + i));

/** One agent with the pods: started, all pods ready, then `sample` windows of its CPU, stopped. */
async function phase(agent, round) {
  const dir = path.join(work, `${agent}-${round}`);
  let pid;
  let ready;
  let stop;
  if (agent === "nanolet") {
    const containerd = new PrivateContainerd(path.join(dir, "containerd"));
    await containerd.start();
    const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir: manifests, rootDir: path.join(dir, "root"), logsDir: path.join(dir, "logs"), node: "bench-nanolet" })
      .start(["--v", "info", "--max-pods", String(PODS + 10)]);
    pid = nanolet.proc.pid;
    ready = async () => {
      const pods = await nanolet.pods();
      return {
        running: pods.filter((p) => p.containers.every((c) => c.state === "running")).length,
        ready: pods.filter((p) => p.containers.every((c) => c.ready)).length,
        restarts: pods.reduce((n, p) => n + p.containers.reduce((m, c) => m + c.restartCount, 0), 0),
      };
    };
    stop = async () => {
      await nanolet.stop();
      await containerd.stop();
    };
  } else {
    const readOnlyPort = await freePort();
    const kubelet = await UpstreamKubelet.start(dir, { node: "bench-kubelet", config: { staticPodPath: manifests, readOnlyPort, maxPods: PODS + 10 } });
    pid = kubelet.pid;
    ready = async () => {
      const list = (await (await fetch(`http://127.0.0.1:${readOnlyPort}/pods`)).json()).items;
      return {
        running: list.filter((p) => p.status?.containerStatuses?.[0]?.state?.running).length,
        ready: list.filter((p) => p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")).length,
        restarts: list.reduce((n, p) => n + (p.status?.containerStatuses?.[0]?.restartCount ?? 0), 0),
      };
    };
    stop = () => kubelet.stop();
  }
  current = stop;
  try {
    // Every container running: the probes are all scheduled. (Ready is shown, not waited for: on
    // a small machine 110 runc execs every 10 s make some exec probes time out, for either agent.)
    await waitFor(`${PODS} pods running on ${agent}`, async () => (await ready().catch(() => ({ running: -1 }))).running === PODS, 900_000, 2000);
    await sleep(WINDOW_S * 1000); // the start's own work settles
    const out = [];
    for (let w = 0; w < WINDOWS; w++) {
      const before = cpuMs(pid);
      await sleep(WINDOW_S * 1000);
      out.push(((cpuMs(pid) - before) / (WINDOW_S * 1000)) * 100);
      const now = await ready().catch(() => ({ ready: -1, restarts: -1 }));
      console.log(`round ${round} ${agent} window ${w + 1}: ${out[w].toFixed(2)}% of a core (${now.ready}/${PODS} pods ready, ${now.restarts} restarts)`);
    }
    return out;
  } finally {
    current = undefined;
    await stop();
  }
}

// Interrupted: the running agent, its containerd and its pods are stopped before leaving.
let current;
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, async () => {
    await current?.();
    process.exit(130);
  });
}

const cpu = { nanolet: [], kubelet: [] };
for (let round = 1; round <= ROUNDS; round++) {
  // Interleaved: the order alternates so that neither agent always runs first.
  const order = round % 2 === 1 ? ["kubelet", "nanolet"] : ["nanolet", "kubelet"];
  // AGENTS=nanolet (or kubelet) runs one alone, when looking into it.
  for (const agent of order.filter((a) => !process.env.AGENTS || process.env.AGENTS.split(",").includes(a))) cpu[agent].push(...(await phase(agent, round)));
}
const n = stats(cpu.nanolet);
const k = stats(cpu.kubelet);
const f = (s) => `${s.median.toFixed(2)}% (${s.min.toFixed(2)}-${s.max.toFixed(2)})`;
console.log(`agent CPU with ${PODS} pods, an exec and an http probe each (${ROUNDS} rounds x ${WINDOWS} windows of ${WINDOW_S} s): nanolet ${f(n)} of a core, kubelet ${f(k)}, nanolet/kubelet ${(n.median / k.median).toFixed(2)}`);
