// Graceful node shutdown beside the upstream kubelet (v1.36.2): both nodes on one private system
// bus with one logind stand-in, both reporting to one real kube-apiserver, the same pods of three
// priorities on each. One PrepareForShutdown reaches both: each must stop its pods in the same
// order, end them with the same status (phase, reason, message, DisruptionTarget, the containers'
// terminations), say the same on its Node's Ready condition, and let its lock go; a cancellation
// brings both back. Skipped, saying why, without KUBEBUILDER_ASSETS.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { stringify } from "yaml";
import { RealControlPlane, controlPlaneSkipReason } from "./control-plane.mjs";
import { Nanolet, privateContainerdForFile, tempDir, waitFor } from "./harness.mjs";
import { UpstreamKubelet } from "./upstream-kubelet.mjs";
import { startFakeLogind, startSystemBus } from "./system-bus.mjs";

const NANO = "sd-nanolet";
const KUBE = "sd-kubelet";
const skip = controlPlaneSkipReason();

/** Three groups; logind's delay (60 s) is longer than their sum, so neither agent writes a drop-in. */
const SHUTDOWN = {
  shutdownGracePeriodByPodPriority: [
    { priority: 0, shutdownGracePeriodSeconds: 3 },
    { priority: 1000, shutdownGracePeriodSeconds: 4 },
    { priority: 5000, shutdownGracePeriodSeconds: 3 },
  ],
};

/** name -> [priority class or none, what it does on SIGTERM] */
const PODS = {
  low: [undefined, "exit"],
  mid: ["sd-mid", "ignore"],
  high: ["sd-high", "exit"],
};

if (skip) {
  describe("graceful shutdown beside the upstream kubelet", () => test(`skipped: ${skip}`, { skip }, () => {}));
} else {
  const work = tempDir("nanolet-shutdown-diff-");
  const containerd = privateContainerdForFile(path.join(work, "nanolet-containerd"));
  let cp;
  let nanolet;
  let kubelet;
  let bus;
  let logind;

  before(async () => {
    cp = await RealControlPlane.start(work, NANO);
    bus = await startSystemBus(path.join(work, "bus"));
    logind = await startFakeLogind(bus, path.join(work, "logind.conf.d"), 60);
    process.env.DBUS_SYSTEM_BUS_ADDRESS = bus.address;
    const config = path.join(work, "nanolet.yaml");
    fs.writeFileSync(config, stringify({ apiVersion: "kubelet.config.k8s.io/v1beta1", kind: "KubeletConfiguration", authentication: { webhook: { enabled: false } }, authorization: { mode: "AlwaysAllow" }, ...SHUTDOWN }));
    fs.mkdirSync(path.join(work, "manifests"));
    nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir: path.join(work, "manifests"), rootDir: path.join(work, "nanolet-root"), logsDir: path.join(work, "nanolet-logs"), node: NANO });
    nanolet.start(["--config", config, "--kubeconfig", cp.nodeKubeconfig, "--node-ip", "127.0.0.1", "--logind-conf-dir", path.join(work, "logind.conf.d")]);
    kubelet = await UpstreamKubelet.start(path.join(work, "kubelet"), { node: KUBE, kubeconfig: cp.nodeKubeconfigFor(KUBE), config: SHUTDOWN });
    for (const node of [NANO, KUBE]) await waitFor(`node ${node} registered`, () => cp.get("nodes", undefined, node), 60_000, 500);
    for (const [name, value] of [["sd-mid", 1000], ["sd-high", 5000]]) {
      await cp.create("/apis/scheduling.k8s.io/v1/priorityclasses", { apiVersion: "scheduling.k8s.io/v1", kind: "PriorityClass", metadata: { name }, value });
    }
  });

  after(async () => {
    for (const node of [NANO, KUBE]) {
      for (const name of Object.keys(PODS)) await cp?.admin.request("DELETE", `/api/v1/namespaces/default/pods/${name}-${node}`, { gracePeriodSeconds: 0 }).catch(() => {});
    }
    await nanolet?.stop();
    await kubelet?.stop();
    logind?.stop();
    bus?.stop();
    delete process.env.DBUS_SYSTEM_BUS_ADDRESS;
    await cp?.stop();
  });

  const ready = async (node) => (await cp.get("nodes", undefined, node))?.status?.conditions?.find((c) => c.type === "Ready");

  describe("graceful shutdown beside the upstream kubelet", { concurrency: false }, () => {
    test("one PrepareForShutdown: the same order, statuses and Ready condition on both nodes; a cancellation brings both back", { timeout: 300_000 }, async (t) => {
      await waitFor("both locks taken", () => ["nanolet", "kubelet"].every((who) => logind.events.some((e) => e.event === "inhibit" && e.who === who)), 90_000);
      for (const [name, [priorityClassName, onTerm]] of Object.entries(PODS)) {
        const script = onTerm === "ignore" ? "trap '' TERM; while true; do sleep 1; done" : "trap 'exit 0' TERM; while true; do sleep 1 & wait; done";
        for (const node of [NANO, KUBE]) {
          await cp.admin.request("POST", "/api/v1/namespaces/default/pods", {
            apiVersion: "v1", kind: "Pod", metadata: { name: `${name}-${node}`, namespace: "default" },
            spec: {
              nodeName: node, hostNetwork: true, automountServiceAccountToken: false, terminationGracePeriodSeconds: 30,
              ...(priorityClassName ? { priorityClassName } : {}),
              containers: [{ name: "main", image: "busybox", imagePullPolicy: "IfNotPresent", command: ["/bin/sh", "-c", script] }],
            },
          });
        }
      }
      for (const name of Object.keys(PODS)) {
        for (const node of [NANO, KUBE]) await waitFor(`${name} Running on ${node}`, async () => (await cp.get("pods", "default", `${name}-${node}`))?.status?.phase === "Running", 90_000);
      }

      logind.send("shutdown");
      for (const node of [NANO, KUBE]) {
        const c = await waitFor(`${node} not Ready`, async () => ((await ready(node))?.status === "False" ? await ready(node) : false), 60_000);
        assert.equal(c.reason, "KubeletNotReady", node);
        assert.equal(c.message, "node is shutting down", node);
      }
      await waitFor("both locks released", () => ["nanolet", "kubelet"].every((who) => logind.events.some((e) => e.event === "released" && e.who === who)), 90_000);

      // Each pod's status, with what differs by nature (times, IDs) left out.
      const shape = (p) => {
        const disruption = p.status.conditions?.find((c) => c.type === "DisruptionTarget");
        const term = p.status.containerStatuses?.[0]?.state?.terminated;
        return {
          phase: p.status.phase, reason: p.status.reason, message: p.status.message,
          disruption: disruption && { status: disruption.status, reason: disruption.reason, message: disruption.message },
          terminated: term && { reason: term.reason, exitCode: term.exitCode },
        };
      };
      const finished = {};
      for (const name of Object.keys(PODS)) {
        const [mine, theirs] = await Promise.all([NANO, KUBE].map((node) => waitFor(`${name} on ${node} finished`, async () => {
          const p = await cp.get("pods", "default", `${name}-${node}`);
          return (p?.status?.phase === "Failed" || p?.status?.phase === "Succeeded") && p.status.containerStatuses?.[0]?.state?.terminated ? p : false;
        }, 60_000).catch(async (e) => {
          t.diagnostic(`${name} on ${node}: ${JSON.stringify((await cp.get("pods", "default", `${name}-${node}`))?.status)}`);
          throw e;
        })));
        t.diagnostic(`${name}: nanolet ${JSON.stringify(shape(mine))}`);
        t.diagnostic(`${name}: kubelet ${JSON.stringify(shape(theirs))}`);
        assert.deepEqual(shape(mine), shape(theirs), name);
        finished[name] = { [NANO]: Date.parse(mine.status.containerStatuses[0].state.terminated.finishedAt), [KUBE]: Date.parse(theirs.status.containerStatuses[0].state.terminated.finishedAt) };
      }
      // The groups in order on both. low's group ends before the others start; high's starts only
      // when mid's 4 s are over. mid (which ignores SIGTERM) is killed at the very end of those
      // 4 s, the moment high's group starts: neither agent orders those two (upstream's group
      // timer is the kill's grace), so high is held to starting 4 s after low ended, which
      // finishedAt's whole seconds show as at least 3.
      for (const node of [NANO, KUBE]) {
        assert.ok(finished.low[node] <= finished.mid[node] && finished.low[node] <= finished.high[node], `${node}: ${JSON.stringify(finished)}`);
        assert.ok(finished.high[node] - finished.low[node] >= 3000, `${node}: high was stopped before mid's group's 4 s were over: ${JSON.stringify(finished)}`);
      }

      logind.send("cancel");
      for (const node of [NANO, KUBE]) await waitFor(`${node} Ready again`, async () => (await ready(node))?.status === "True", 90_000);
    });
  });
}
