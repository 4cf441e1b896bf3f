// An edge node's worst day, on the real containerd and the real kube-apiserver: power lost (every
// container, shim, containerd and the agent killed with SIGKILL, tmpfs volumes gone) while the
// apiserver is out of reach; the node comes back without it and runs every pod again, with its
// volumes, from checkpoints; the apiserver returns and nothing is restarted or recreated.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { mountsUnder, unmountUnder } from "../../build/containerd.mjs";
import { TestCluster } from "./cluster-harness.mjs";
import { controlPlaneSkipReason } from "./control-plane.mjs";
import { Nanolet, runtimeContainers, tempDir, waitFor } from "./harness.mjs";

const NODE = "offline-node";
const skip = controlPlaneSkipReason();
const PODS = ["reader", "sleeper-1", "sleeper-2"];

function podObject(name, spec) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "default", labels: { app: name } },
    spec: { nodeName: NODE, hostNetwork: true, terminationGracePeriodSeconds: 1, ...spec },
  };
}

const container = (name, script, extra = {}) => ({ name, image: "busybox", imagePullPolicy: "IfNotPresent", command: ["/bin/sh", "-c", script], ...extra });

/** Mount points under `dir` in this machine's mount table, deepest first. */

if (skip) {
  describe("offline autonomy", () => test(`skipped: ${skip}`, { skip }, () => {}));
} else {
  const work = tempDir("nanolet-offline-e2e-");
  const rootDir = path.join(work, "root");
  let cluster;
  let nanolet;
  const args = () => ["--kubeconfig", cluster.kubeconfig, ...cluster.nanoletArgs];
  const newNanolet = () => new Nanolet({ endpoint: cluster.containerd.endpoint, manifestDir: path.join(work, "manifests"), rootDir, logsDir: path.join(work, "logs"), node: NODE });
  const kubectlJson = async (a) => JSON.parse(await cluster.kubectl([...a, "-o", "json"]));

  before(async () => {
    cluster = await TestCluster.startReal(work, NODE);
    fs.mkdirSync(path.join(work, "manifests"), { recursive: true });
    nanolet = newNanolet().start(args());
    await cluster.kubectl(["create", "configmap", "settings", "--from-literal=mode=fast"]);
    await cluster.kubectl(["create", "secret", "generic", "creds", "--from-literal=password=hunter2"]);
    const reader = podObject("reader", {
      volumes: [{ name: "cfg", configMap: { name: "settings" } }, { name: "sec", secret: { secretName: "creds" } }],
      containers: [container("app", "sleep 3600", {
        volumeMounts: [{ name: "cfg", mountPath: "/etc/cfg" }, { name: "sec", mountPath: "/etc/sec" }],
        env: [{ name: "MODE", valueFrom: { configMapKeyRef: { name: "settings", key: "mode" } } }],
      })],
    });
    await cluster.kubectl(["create", "-f", "-"], { input: JSON.stringify(reader) });
    for (const name of PODS.slice(1)) await cluster.kubectl(["create", "-f", "-"], { input: JSON.stringify(podObject(name, { containers: [container("app", "sleep 3600")] })) });
    await waitFor("every pod Running", async () => {
      const pods = (await kubectlJson(["get", "pods"])).items;
      return PODS.every((n) => pods.find((p) => p.metadata.name === n)?.status?.phase === "Running");
    }, 120_000);
  });

  after(async () => {
    await cluster?.startApiserver().catch(() => {});
    await cluster?.stop(nanolet);
  });

  describe("offline autonomy", { concurrency: false }, () => {
    let uids;
    let idsOffline;

    test("power loss with the apiserver down: every pod Running again, with its volumes, from checkpoints", { timeout: 240_000 }, async () => {
      uids = Object.fromEntries((await kubectlJson(["get", "pods"])).items.map((p) => [p.metadata.name, p.metadata.uid]));
      const containersBefore = runtimeContainers(cluster.containerd).map((c) => c.id);
      assert.equal(containersBefore.length, 6, "three sandboxes and three containers");

      // The power goes: the agent, every container, every shim and containerd die at once, and
      // the memory-backed volumes with them. The apiserver is out of reach when the node is back.
      await nanolet.stop("SIGKILL");
      for (const id of cluster.containerd.ctr("tasks", "ls", "-q").split("\n").filter(Boolean)) {
        try {
          cluster.containerd.ctr("tasks", "kill", "-s", "SIGKILL", id);
        } catch {}
      }
      try {
        execFileSync("pkill", ["-9", "-f", `containerd-shim-runc-v2 -namespace k8s.io -id .* -address ${cluster.containerd.socket}`], { stdio: "ignore" });
      } catch {}
      cluster.containerd.kill9();
      assert.deepEqual(unmountUnder(rootDir), [], "every tmpfs of the node's volumes unmounted");
      await cluster.stopApiserver();

      await cluster.containerd.start({ images: false });
      nanolet = newNanolet().start(args());
      // Running in the agent's pod table with a container the runtime runs (the table a restarted
      // agent starts from is the last one written before the power went).
      await waitFor("every pod Running again without the apiserver", async () => {
        const pods = await nanolet.pods().catch(() => []);
        const runningIds = new Set(runtimeContainers(cluster.containerd).filter((c) => c.task === "RUNNING").map((c) => c.id));
        return PODS.every((n) => {
          const p = pods.find((o) => o.name === n);
          return p?.phase === "Running" && p.containers.every((c) => runningIds.has(c.containerId));
        });
      }, 120_000);
      const pods = await nanolet.pods();
      assert.equal(pods.filter((p) => PODS.includes(p.name) && p.phase === "Running").length, PODS.length, "counted: every pod");
      assert.ok(nanolet.logLines(/Running the checkpointed pods until the apiserver answers/).length > 0);
      // The volumes were made again from the checkpointed configMap and secret (tmpfs was lost).
      const volumes = path.join(rootDir, "pods", uids.reader, "volumes");
      assert.equal(fs.readFileSync(path.join(volumes, "kubernetes.io~configmap", "cfg", "mode"), "utf8"), "fast");
      assert.equal(fs.readFileSync(path.join(volumes, "kubernetes.io~secret", "sec", "password"), "utf8"), "hunter2");
      assert.ok(mountsUnder(path.join(volumes, "kubernetes.io~secret")).length > 0, "the secret is on a new tmpfs");
      // The checkpoints holding the secret are root's alone.
      const objectsDir = path.join(rootDir, "checkpoints", "objects");
      for (const file of fs.readdirSync(objectsDir)) assert.equal(fs.statSync(path.join(objectsDir, file)).mode & 0o777, 0o600, file);
      idsOffline = runtimeContainers(cluster.containerd).filter((c) => c.task === "RUNNING").map((c) => c.id).sort();
      assert.equal(idsOffline.length, 6, "three new sandboxes and three new containers run");
    });

    test("the apiserver returns: zero restarts, zero recreations, statuses current", { timeout: 180_000 }, async () => {
      assert.ok(idsOffline, "runs after the power-loss test");
      const createdBefore = nanolet.logLines(/reason=(Created|SandboxChanged|Killing)\b/).length;
      await cluster.startApiserver();
      // Statuses current: the apiserver shows the containers the node runs now.
      await waitFor("statuses reported with the new containers", async () => {
        const pods = (await kubectlJson(["get", "pods"]).catch(() => ({ items: [] }))).items;
        return PODS.every((n) => {
          const p = pods.find((o) => o.metadata.name === n);
          const id = p?.status?.containerStatuses?.[0]?.containerID?.replace(/^containerd:\/\//, "");
          return p?.status?.phase === "Running" && id && idsOffline.includes(id) && p.status.containerStatuses[0].ready;
        });
      }, 120_000);
      await waitFor("the node Ready", async () => (await kubectlJson(["get", "node", NODE])).status.conditions.find((c) => c.type === "Ready")?.status === "True", 60_000);
      const running = runtimeContainers(cluster.containerd).filter((c) => c.task === "RUNNING").map((c) => c.id).sort();
      assert.deepEqual(running, idsOffline, "the same sandboxes and containers: nothing restarted or recreated");
      assert.equal(nanolet.logLines(/reason=(Created|SandboxChanged|Killing)\b/).length, createdBefore, "nothing created after reconnecting");
      const pods = (await kubectlJson(["get", "pods"])).items;
      for (const name of PODS) assert.equal(pods.find((p) => p.metadata.name === name).metadata.uid, uids[name], `${name} is the same pod`);
    });
  });
}
