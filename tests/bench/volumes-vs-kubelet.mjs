// Time from a pod bound to the node to Running when it has volumes to set up, beside the upstream
// kubelet: each pod mounts two configMaps and a secret, and gets the service-account token volume
// (kube-api-access: a TokenRequest, kube-root-ca.crt) as every pod of a real cluster does. One
// real apiserver; the agents take turns (each on its own containerd); BURSTS (1,30) pods created
// at once, ROUNDS (2) times, alternating who goes first. Printed: median and last pod's time to
// Running per burst, the ratio nanolet / kubelet, and the API requests each node made for the
// pods' objects (configMaps, secrets, tokens) per pod, from the apiserver's audit log.
// A benchmark, not a test: CI does not run it.
//   npm run build && KUBEBUILDER_ASSETS=... node tests/bench/volumes-vs-kubelet.mjs
import path from "node:path";
import { ensurePackages, PrivateContainerd } from "../../build/containerd.mjs";
import { RealControlPlane, controlPlaneSkipReason } from "../e2e/control-plane.mjs";
import { Nanolet, tempDir, waitFor } from "../e2e/harness.mjs";
import { UpstreamKubelet } from "../e2e/upstream-kubelet.mjs";

const BURSTS = (process.env.BURSTS ?? "1,30").split(",").map(Number);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const skip = controlPlaneSkipReason();
if (skip) {
  console.log(`volumes-vs-kubelet: skipped: ${skip}`);
  process.exit(0);
}

const NODES = { nanolet: "bench-nanolet", kubelet: "bench-kubelet" };
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)], max: s[s.length - 1] };
};

function podObject(name, node) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "default" },
    spec: {
      nodeName: node,
      hostNetwork: true,
      terminationGracePeriodSeconds: 1,
      volumes: [
        { name: "app-config", configMap: { name: "app-config" } },
        { name: "feature-flags", configMap: { name: "feature-flags", items: [{ key: "flags", path: "flags.json" }] } },
        { name: "db-credentials", secret: { secretName: "db-credentials" } },
      ],
      containers: [{
        name: "main", image: "busybox", imagePullPolicy: "IfNotPresent", command: ["sleep", "3600"],
        volumeMounts: [{ name: "app-config", mountPath: "/etc/app" }, { name: "feature-flags", mountPath: "/etc/flags" }, { name: "db-credentials", mountPath: "/etc/db" }],
      }],
    },
  };
}

ensurePackages();
const work = tempDir("nanolet-volume-bench-");
const cp = await RealControlPlane.start(work, NODES.nanolet);
await cp.create("/api/v1/namespaces/default/configmaps", { metadata: { name: "app-config" }, data: { "app.conf": "port=80\n", "log.conf": "level=info\n" } });
await cp.create("/api/v1/namespaces/default/configmaps", { metadata: { name: "feature-flags" }, data: { flags: '{"new-ui": true}' } });
await cp.create("/api/v1/namespaces/default/secrets", { metadata: { name: "db-credentials" }, stringData: { user: "app", password: "hunter2" } });

/** Creates `count` pods on the agent's node at once; returns each pod's ms from its create to Running. */
async function burst(agent, count, round) {
  const node = NODES[agent];
  const names = Array.from({ length: count }, (_, i) => `v${round}-${count}-${i}`);
  const created = new Map();
  await Promise.all(names.map(async (name) => {
    created.set(name, Date.now());
    await cp.admin.request("POST", "/api/v1/namespaces/default/pods", podObject(name, node));
  }));
  const running = new Map();
  await waitFor(`${count} pods Running on ${agent}`, async () => {
    const list = await cp.admin.request("GET", `/api/v1/namespaces/default/pods?fieldSelector=${encodeURIComponent(`spec.nodeName=${node}`)}`);
    const now = Date.now();
    for (const p of list.items) if (p.status?.phase === "Running" && created.has(p.metadata.name) && !running.has(p.metadata.name)) running.set(p.metadata.name, now - created.get(p.metadata.name));
    return running.size === count;
  }, 600_000, 100);
  for (const name of names) await cp.admin.request("DELETE", `/api/v1/namespaces/default/pods/${name}`, { gracePeriodSeconds: 0 }).catch(() => {});
  await waitFor(`${agent}'s pods gone`, async () => (await cp.admin.request("GET", `/api/v1/namespaces/default/pods?fieldSelector=${encodeURIComponent(`spec.nodeName=${node}`)}`)).items.length === 0, 300_000, 500);
  return [...running.values()];
}

/**
 * The node's requests for configMaps, secrets and tokens (lists, watches, gets, TokenRequests),
 * all of its run: the audit log writes a watch when it ends, so it is counted after the agent
 * stopped (its last watches end then).
 */
function objectRequests(agent) {
  const user = `system:node:${NODES[agent]}`;
  // A watch is written twice (when its answer starts and when it ends): counted once.
  return cp.requests().filter((r) => r.user === user && r.stage !== "ResponseStarted" && /\/(configmaps|secrets|serviceaccounts)\b/.test(r.path)).length;
}

let current;
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, async () => {
    await current?.();
    await cp.stop();
    process.exit(130);
  });
}

async function start(agent, dir) {
  if (agent === "nanolet") {
    const containerd = new PrivateContainerd(path.join(dir, "containerd"));
    await containerd.start();
    const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir: path.join(dir, "manifests"), rootDir: path.join(dir, "root"), logsDir: path.join(dir, "logs"), node: NODES.nanolet })
      .start(["--v", "info", "--kubeconfig", cp.nodeKubeconfig, "--node-ip", "127.0.0.1"]);
    return async () => {
      await nanolet.stop();
      await containerd.stop();
    };
  }
  const kubelet = await UpstreamKubelet.start(dir, { node: NODES.kubelet, kubeconfig: cp.nodeKubeconfigFor(NODES.kubelet) });
  return () => kubelet.stop();
}

const times = {};
const requests = { nanolet: { count: 0, pods: 0 }, kubelet: { count: 0, pods: 0 } };
try {
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 === 1 ? ["kubelet", "nanolet"] : ["nanolet", "kubelet"];
    for (const agent of order) {
      const fs = await import("node:fs");
      const dir = path.join(work, `${agent}-${round}`);
      fs.mkdirSync(path.join(dir, "manifests"), { recursive: true });
      current = await start(agent, dir);
      await waitFor(`node ${NODES[agent]} Ready`, async () => (await cp.get("nodes", undefined, NODES[agent]))?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"), 120_000, 500);
      // One pod first, so that the image and the agent are warm for every measured burst.
      await burst(agent, 1, `${round}w`);
      requests[agent].pods += 1;
      for (const count of BURSTS) {
        const ms = await burst(agent, count, round);
        requests[agent].pods += count;
        (times[`${agent}/${count}`] ??= []).push(...ms);
        const s = stats(ms);
        console.log(`round ${round} ${agent} ${count} pod(s): median ${s.median} ms, last ${s.max} ms to Running`);
      }
      await current();
      current = undefined;
    }
  }
  for (const agent of ["nanolet", "kubelet"]) requests[agent].count = objectRequests(agent);
} finally {
  await current?.();
  await cp.stop();
}
for (const count of BURSTS) {
  const n = stats(times[`nanolet/${count}`]);
  const k = stats(times[`kubelet/${count}`]);
  console.log(`${count} pod(s) at once, 3 volumes + token each: median nanolet ${n.median} ms, kubelet ${k.median} ms (nanolet/kubelet ${(n.median / k.median).toFixed(2)}); last pod nanolet ${n.max} ms, kubelet ${k.max} ms (${(n.max / k.max).toFixed(2)})`);
}
const per = (a) => (requests[a].count / requests[a].pods).toFixed(2);
console.log(`API requests for configMaps, secrets and tokens per pod (${requests.nanolet.pods} pods each): nanolet ${per("nanolet")}, kubelet ${per("kubelet")}`);
