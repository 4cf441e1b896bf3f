// What the node's conversation with its control plane costs on a metered uplink, beside the
// upstream kubelet: one real kube-apiserver; nanolet and the kubelet run at once, each behind its
// own byte-counting TCP relay (tests/bench/byte-proxy.mjs: TLS included, as the link's meter sees
// it), on the same workload: PODS (10) pods per node with an exec readiness probe, a configMap
// volume and the service-account token volume, plus one static pod per node. Both have the same
// clusterDNS (so neither warns about its absence on every sync). Phases, each ended when both
// nodes reached its state, so both are measured over the same window:
//   join      agent start to node Ready and the static pod's mirror Ready
//   apply     the pods created to all of them Ready
//   steady    STEADY_S (180) quiet seconds; also as MiB per day
//   restart   the pods replaced by new ones (what `rollout restart` does) to all new Ready, old gone
//   outage    the apiserver stopped OUTAGE_S (30) s and started: to both leases renewed, plus 30 s
// Printed: bytes up / down per agent, the ratio nanolet / kubelet of the totals, and connections.
// A benchmark, not a test: CI does not run it.
//   npm run build && KUBEBUILDER_ASSETS=... node tests/bench/uplink-vs-kubelet.mjs
import fs from "node:fs";
import path from "node:path";
import { stringify } from "yaml";
import { ensurePackages, PrivateContainerd } from "../../build/containerd.mjs";
import { RealControlPlane, controlPlaneSkipReason } from "../e2e/control-plane.mjs";
import { Nanolet, podManifest, tempDir, waitFor } from "../e2e/harness.mjs";
import { UpstreamKubelet } from "../e2e/upstream-kubelet.mjs";
import { ByteProxy } from "./byte-proxy.mjs";

const PODS = Number(process.env.PODS ?? 10);
const STEADY_S = Number(process.env.STEADY_S ?? 180);
const OUTAGE_S = Number(process.env.OUTAGE_S ?? 30);
const skip = controlPlaneSkipReason();
if (skip) {
  console.log(`uplink-vs-kubelet: skipped: ${skip}`);
  process.exit(0);
}

const AGENTS = ["nanolet", "kubelet"];
const NODES = { nanolet: "uplink-nanolet", kubelet: "uplink-kubelet" };
const DNS = { clusterDNS: ["10.96.0.10"], clusterDomain: "cluster.local" };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

ensurePackages();
const work = tempDir("nanolet-uplink-bench-");
const cp = await RealControlPlane.start(work, NODES.nanolet);
await cp.create("/api/v1/namespaces/default/configmaps", { metadata: { name: "app-config" }, data: { "app.conf": "port=80\n" } });
const proxies = {};
for (const agent of AGENTS) proxies[agent] = await ByteProxy.start(cp.port);

/** The agent's node kubeconfig, its server the agent's relay. */
function proxiedKubeconfig(agent) {
  const source = agent === "nanolet" ? cp.nodeKubeconfig : cp.nodeKubeconfigFor(NODES.kubelet);
  const file = path.join(work, `${agent}-proxied.conf`);
  fs.writeFileSync(file, fs.readFileSync(source, "utf8").replaceAll(cp.url, proxies[agent].url));
  return file;
}

function podObject(name, node) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "default", labels: { app: "web" } },
    spec: {
      nodeName: node,
      hostNetwork: true,
      terminationGracePeriodSeconds: 1,
      volumes: [{ name: "config", configMap: { name: "app-config" } }],
      containers: [{
        name: "web", image: "busybox", imagePullPolicy: "IfNotPresent", command: ["sleep", "3600"],
        readinessProbe: { exec: { command: ["cat", "/etc/app/app.conf"] }, periodSeconds: 10 },
        volumeMounts: [{ name: "config", mountPath: "/etc/app" }],
      }],
    },
  };
}

const ready = (pod) => pod?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;
const podsOn = async (node) => (await cp.admin.request("GET", `/api/v1/namespaces/default/pods?fieldSelector=${encodeURIComponent(`spec.nodeName=${node}`)}`)).items;

/** Waits until `check(agent)` holds for both agents. */
async function both(what, check, timeoutMs = 300_000) {
  await Promise.all(AGENTS.map((agent) => waitFor(`${agent}: ${what}`, () => check(agent), timeoutMs, 500)));
}

/** An audit line's request as "VERB resource[/subresource]" (a watch is WATCH). */
function requestKind(r) {
  const url = new URL(r.path, "https://x");
  const parts = url.pathname.split("/").filter(Boolean);
  const rest = parts[0] === "api" ? parts.slice(2) : parts.slice(3);
  if (rest[0] === "namespaces" && rest.length > 2) rest.splice(0, 2);
  const resource = rest.length > 2 ? `${rest[0]}/${rest[2]}` : rest[0] ?? url.pathname;
  const verb = url.searchParams.get("watch") === "1" || url.searchParams.get("watch") === "true" ? "WATCH" : r.method;
  return `${verb} ${resource}`;
}

/** Each agent's requests the apiserver finished so far, by kind. */
function requestCounts() {
  const counts = Object.fromEntries(AGENTS.map((a) => [a, {}]));
  for (const r of cp.requests()) {
    if (r.stage !== "ResponseComplete") continue;
    const agent = AGENTS.find((a) => r.user === `system:node:${NODES[a]}`);
    if (agent) counts[agent][requestKind(r)] = (counts[agent][requestKind(r)] ?? 0) + 1;
  }
  return counts;
}

const rows = [];
/** Runs `body` as a phase: what crossed each relay from its start to its end. */
async function phase(name, body) {
  const before = Object.fromEntries(AGENTS.map((a) => [a, proxies[a].reading()]));
  const requestsBefore = requestCounts();
  for (const a of AGENTS) proxies[a].resetMostOpen();
  const startMs = Date.now();
  await body();
  const seconds = (Date.now() - startMs) / 1000;
  const row = { name, seconds };
  for (const a of AGENTS) {
    const now = proxies[a].reading();
    row[a] = { up: now.up - before[a].up, down: now.down - before[a].down, opened: now.opened - before[a].opened, mostOpen: now.mostOpen };
  }
  rows.push(row);
  // What each agent asked for in the phase (a watch counts when it ends, so some show a phase late).
  const requestsAfter = requestCounts();
  for (const a of AGENTS) {
    const delta = Object.entries(requestsAfter[a]).map(([k, n]) => [k, n - (requestsBefore[a][k] ?? 0)]).filter(([, n]) => n > 0).sort();
    console.log(`  ${a} requests: ${delta.map(([k, n]) => `${k} ${n}`).join(", ") || "none"}`);
  }
  const kb = (n) => (n / 1024).toFixed(1);
  const total = (a) => row[a].up + row[a].down;
  console.log(`${name} (${seconds.toFixed(0)} s): nanolet ${kb(row.nanolet.up)} / ${kb(row.nanolet.down)} KB, kubelet ${kb(row.kubelet.up)} / ${kb(row.kubelet.down)} KB, ratio ${(total("nanolet") / total("kubelet")).toFixed(2)}; connections opened ${row.nanolet.opened} / ${row.kubelet.opened}, most open ${row.nanolet.mostOpen} / ${row.kubelet.mostOpen}`);
  return row;
}

const stops = [];
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, async () => {
    for (const stop of stops) await stop().catch(() => {});
    await cp.stop();
    process.exit(130);
  });
}

try {
  await phase("join", async () => {
    const dir = path.join(work, "nanolet");
    fs.mkdirSync(path.join(dir, "manifests"), { recursive: true });
    fs.writeFileSync(path.join(dir, "manifests", "static.yaml"), podManifest("static"));
    const config = path.join(dir, "config.yaml");
    fs.writeFileSync(config, stringify({ apiVersion: "kubelet.config.k8s.io/v1beta1", kind: "KubeletConfiguration", ...DNS }));
    const containerd = new PrivateContainerd(path.join(dir, "containerd"));
    await containerd.start();
    const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir: path.join(dir, "manifests"), rootDir: path.join(dir, "root"), logsDir: path.join(dir, "logs"), node: NODES.nanolet })
      .start(["--v", "info", "--config", config, "--kubeconfig", proxiedKubeconfig("nanolet"), "--node-ip", "127.0.0.1"]);
    stops.push(async () => { await nanolet.stop(); await containerd.stop(); });
    const kdir = path.join(work, "kubelet");
    fs.mkdirSync(path.join(kdir, "manifests"), { recursive: true });
    fs.writeFileSync(path.join(kdir, "manifests", "static.yaml"), podManifest("static"));
    const kubelet = await UpstreamKubelet.start(kdir, { node: NODES.kubelet, kubeconfig: proxiedKubeconfig("kubelet"), config: { ...DNS, staticPodPath: path.join(kdir, "manifests") } });
    stops.push(() => kubelet.stop());
    await both("node Ready and its static pod's mirror Ready", async (a) => {
      const node = await cp.get("nodes", undefined, NODES[a]);
      return node?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") && ready(await cp.get("pods", "default", `static-${NODES[a]}`));
    });
  });

  const create = (generation) => Promise.all(AGENTS.flatMap((a) => Array.from({ length: PODS }, (_, i) => cp.admin.request("POST", "/api/v1/namespaces/default/pods", podObject(`web-${generation}-${i}-${a}`, NODES[a])))));
  const allReady = (generation) => both(`${PODS} pods of generation ${generation} Ready, no other`, async (a) => {
    const pods = (await podsOn(NODES[a])).filter((p) => p.metadata.labels?.app === "web");
    return pods.length === PODS && pods.every((p) => p.metadata.name.startsWith(`web-${generation}-`) && ready(p));
  });

  await phase("apply", async () => {
    await create(1);
    await allReady(1);
  });

  const steady = await phase("steady", () => sleep(STEADY_S * 1000));

  await phase("restart", async () => {
    const old = (await Promise.all(AGENTS.map((a) => podsOn(NODES[a])))).flat().filter((p) => p.metadata.labels?.app === "web");
    await create(2);
    await Promise.all(old.map((p) => cp.admin.request("DELETE", `/api/v1/namespaces/default/pods/${p.metadata.name}`)));
    await allReady(2);
  });

  await phase("outage", async () => {
    await cp.stopApiserver();
    await sleep(OUTAGE_S * 1000);
    const backAt = new Date();
    await cp.startApiserver();
    await both("lease renewed after the apiserver came back", async (a) => {
      const lease = await cp.admin.request("GET", `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${NODES[a]}`).catch(() => undefined);
      return lease && new Date(lease.spec.renewTime) > backAt;
    });
    await sleep(30_000);
  });

  console.log("\n| phase | nanolet up / down | kubelet up / down | ratio (total) | connections opened |");
  console.log("|---|---|---|---|---|");
  const kb = (n) => (n / 1024).toFixed(1);
  for (const r of rows) {
    const ratio = (r.nanolet.up + r.nanolet.down) / (r.kubelet.up + r.kubelet.down);
    console.log(`| ${r.name} (${r.seconds.toFixed(0)} s) | ${kb(r.nanolet.up)} / ${kb(r.nanolet.down)} KB | ${kb(r.kubelet.up)} / ${kb(r.kubelet.down)} KB | ${ratio.toFixed(2)} | ${r.nanolet.opened} / ${r.kubelet.opened} |`);
  }
  const perDay = (a) => ((steady[a].up + steady[a].down) / steady.seconds) * 86_400 / 2 ** 20;
  console.log(`\nsteady state: nanolet ${perDay("nanolet").toFixed(1)} MiB/day, kubelet ${perDay("kubelet").toFixed(1)} MiB/day (ratio ${(perDay("nanolet") / perDay("kubelet")).toFixed(2)})`);
} finally {
  for (const stop of stops.reverse()) await stop().catch((e) => console.error(`stop: ${e.message}`));
  for (const p of Object.values(proxies)) p.close();
  await cp.stop();
}
