// From a container's exit to its status in the apiserver, on a real containerd, with nanolet
// joined to the in-process fake apiserver. Pods with restartPolicy Never exit at staggered
// moments; for each, the latency is the time from the container's finish (CRI finishedAt,
// nanoseconds) to the moment the apiserver stores a status showing it terminated. Run with the
// default 1 s relist (the figure the issue targets, 1.5 s) and, side by side in the same process,
// with a 250 ms relist as the baseline: their difference is what the relist period costs.
// Then what joining costs in memory: the agent's resident memory with 20 running pods from the
// apiserver, beside the same 20 pods as static pods with no apiserver (the baseline).
//   npm run build && node tests/bench/cluster.bench.mjs
import fs from "node:fs";
import path from "node:path";
import { stringify } from "yaml";
import { PrivateContainerd, ensurePackages } from "../../build/containerd.mjs";
import { ApiClient } from "../../dist/cluster/api-client.js";
import { GrpcRuntime } from "../../dist/cri/grpc-runtime.js";
import { FakeApiServer } from "../apiserver/fake-apiserver.mjs";
import { Nanolet, runtimeContainers, tempDir, waitFor } from "../e2e/harness.mjs";

const PODS = Number(process.env.PODS ?? 12);
const NODE = "bench-node";
const work = tempDir("nanolet-cluster-bench-");
ensurePackages();
const containerd = new PrivateContainerd(path.join(work, "containerd"));
await containerd.start();
const api = await FakeApiServer.start({
  tokens: { node: { name: `system:node:${NODE}`, groups: ["system:nodes"] }, admin: { name: "admin", groups: ["system:masters"] } },
});
const admin = new ApiClient({ server: api.url, token: "admin" });
const runtime = new GrpcRuntime({ endpoint: containerd.endpoint });
const kubeconfig = path.join(work, "kubelet.conf");
fs.writeFileSync(kubeconfig, stringify({
  apiVersion: "v1", kind: "Config", "current-context": "n",
  clusters: [{ name: "c", cluster: { server: api.url } }],
  users: [{ name: "u", user: { token: "node" } }],
  contexts: [{ name: "n", context: { cluster: "c", user: "u" } }],
}));

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

async function measure(relist) {
  const dir = path.join(work, `run-${relist}`);
  fs.mkdirSync(path.join(dir, "manifests"), { recursive: true });
  const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir: path.join(dir, "manifests"), rootDir: path.join(dir, "root"), logsDir: path.join(dir, "logs"), node: NODE });
  nanolet.start(["--kubeconfig", kubeconfig, "--relist-period", relist]);
  // The moment the apiserver first stores each pod's terminated status, seen from inside it.
  const storedAtMs = new Map();
  const stopWatch = api.store.watch("pods", "default", () => true, undefined, (_type, pod) => {
    const terminated = pod.status?.containerStatuses?.[0]?.state?.terminated;
    if (terminated && !storedAtMs.has(pod.metadata.name)) storedAtMs.set(pod.metadata.name, { atMs: Date.now(), id: terminated.containerID });
  });
  const names = [];
  for (let i = 0; i < PODS; i++) {
    const name = `exit-${relist}-${i}`;
    names.push(name);
    // Exits spread over several relist periods, so the phase of the relist tick varies.
    const sleepSeconds = (4 + i * 0.29).toFixed(2);
    await admin.request("POST", "/api/v1/namespaces/default/pods", {
      metadata: { name, namespace: "default" },
      spec: { nodeName: NODE, hostNetwork: true, restartPolicy: "Never", terminationGracePeriodSeconds: 1, containers: [{ name: "main", image: "busybox", command: ["/bin/sh", "-c", `sleep ${sleepSeconds}; exit 1`] }] },
    });
  }
  await waitFor("every exit in the apiserver", () => names.every((n) => storedAtMs.has(n)), 120_000, 100);
  stopWatch();
  const latencies = [];
  for (const n of names) {
    const { atMs, id } = storedAtMs.get(n);
    const detail = await runtime.containerStatus(id.replace(/^containerd:\/\//, ""));
    latencies.push(atMs - Number(detail.finishedAtNs / 1_000_000n));
  }
  for (const n of names) await admin.request("DELETE", `/api/v1/namespaces/default/pods/${n}`, { gracePeriodSeconds: 0 });
  await waitFor("pods removed", () => runtimeContainers(containerd).length === 0, 60_000);
  await nanolet.stop();
  return latencies;
}

const RSS_PODS = 20;
const rssMiB = (pid) => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024;

/** The agent's RSS with RSS_PODS sleeping pods, from the apiserver or from manifest files. */
async function memory(fromApiserver) {
  const dir = path.join(work, `rss-${fromApiserver ? "cluster" : "static"}`);
  const manifests = path.join(dir, "manifests");
  fs.mkdirSync(manifests, { recursive: true });
  const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir: manifests, rootDir: path.join(dir, "root"), logsDir: path.join(dir, "logs"), node: NODE });
  const names = Array.from({ length: RSS_PODS }, (_, i) => `rss-${i}`);
  for (const name of names) {
    const container = { name: "main", image: "busybox", command: ["/bin/sh", "-c", "sleep 3600"] };
    if (fromApiserver) {
      await admin.request("POST", "/api/v1/namespaces/default/pods", { metadata: { name, namespace: "default" }, spec: { nodeName: NODE, hostNetwork: true, terminationGracePeriodSeconds: 1, containers: [container] } });
    } else {
      fs.writeFileSync(path.join(manifests, `${name}.yaml`), JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name }, spec: { hostNetwork: true, terminationGracePeriodSeconds: 1, containers: [container] } }));
    }
  }
  nanolet.start(fromApiserver ? ["--kubeconfig", kubeconfig] : []);
  await waitFor(`${RSS_PODS} pods running`, () => runtimeContainers(containerd).filter((c) => c.task === "RUNNING").length === 2 * RSS_PODS, 120_000, 200); // pause + main
  await new Promise((r) => setTimeout(r, 15_000)); // a node status, a lease renewal or two, steady relists
  const samples = [];
  for (let i = 0; i < 5; i++, await new Promise((r) => setTimeout(r, 1000))) samples.push(rssMiB(nanolet.proc.pid));
  if (fromApiserver) for (const name of names) await admin.request("DELETE", `/api/v1/namespaces/default/pods/${name}`, { gracePeriodSeconds: 0 });
  else for (const f of fs.readdirSync(manifests)) fs.rmSync(path.join(manifests, f));
  await waitFor("pods removed", () => runtimeContainers(containerd).length === 0, 60_000);
  await nanolet.stop();
  return pct(samples, 0.5);
}

try {
  const slow = await measure("1s");
  const fast = await measure("250ms");
  const staticRss = await memory(false);
  const clusterRss = await memory(true);
  const line = (label, xs) => `${label}: median ${pct(xs, 0.5).toFixed(0)} ms, p90 ${pct(xs, 0.9).toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms (${xs.length} exits)`;
  console.log("container exit -> terminated status stored in the apiserver, real containerd:");
  console.log(line("  relist 1 s    ", slow));
  console.log(line("  relist 250 ms ", fast));
  console.log(`  ratio 1 s / 250 ms (median): ${(pct(slow, 0.5) / pct(fast, 0.5)).toFixed(2)}x; target: max within 1500 ms at 1 s: ${Math.max(...slow) <= 1500 ? "met" : "NOT met"}`);
  console.log(`agent RSS with ${RSS_PODS} running pods: static pods, no apiserver ${staticRss.toFixed(1)} MiB; joined, pods from the apiserver ${clusterRss.toFixed(1)} MiB (${(clusterRss / staticRss).toFixed(2)}x, +${(clusterRss - staticRss).toFixed(1)} MiB)`);
} finally {
  runtime.close();
  admin.close();
  await api.stop();
  await containerd.stop();
}
