// Pulls from a real registry: Debian's docker-registry with TLS from its own CA and htpasswd
// accounts, images copied in by skopeo, each node's containerd trusting it through a hosts.toml.
// nanolet and the upstream kubelet (v1.36.2) run the same pods on one real kube-apiserver; the
// waiting reasons, messages and events of their pulls are compared. Skipped, saying why, without
// KUBEBUILDER_ASSETS.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { buildImages } from "../../build/containerd.mjs";
import { PrivateRegistry } from "../../build/registry.mjs";
import { RealControlPlane, controlPlaneSkipReason } from "./control-plane.mjs";
import { Nanolet, privateContainerdForFile, tempDir, waitFor } from "./harness.mjs";
import { UpstreamKubelet } from "./upstream-kubelet.mjs";

const NANO = "pull-nanolet";
const KUBE = "pull-kubelet";
const RIGHT = "right-password";
const WRONG = "wrong-password-do-not-leak";
const skip = controlPlaneSkipReason();

/** A kubernetes.io/dockerconfigjson secret for `host` as `user`. */
function pullSecret(name, host, user, password) {
  const auth = Buffer.from(`${user}:${password}`).toString("base64");
  const config = { auths: { [host]: { username: user, password, auth } } };
  return { metadata: { name }, type: "kubernetes.io/dockerconfigjson", data: { ".dockerconfigjson": Buffer.from(JSON.stringify(config)).toString("base64") } };
}

if (skip) {
  describe("pulls from a real registry", () => test(`skipped: ${skip}`, { skip }, () => {}));
} else {
  const work = tempDir("nanolet-pulls-");
  const containerd = privateContainerdForFile(path.join(work, "nanolet-containerd"));
  const registry = new PrivateRegistry(path.join(work, "registry"), { users: { puller: RIGHT } });
  let cp;
  let nanolet;
  let kubelet;
  const images = {};

  before(async () => {
    await registry.start();
    const { busyboxTar } = buildImages();
    for (const name of ["private/app:1", "private/shared:1", "private/node-only:1"]) images[name] = registry.push(busyboxTar, name);
    cp = await RealControlPlane.start(work, NANO);
    // The node's own credentials, for one repository only (a secret's wrong password must not be
    // rescued by them): the kubelet reads its config.json at start and caches it for minutes.
    const nodeConfig = JSON.stringify({ auths: { [`${registry.host}/private/node-only`]: { auth: Buffer.from(`puller:${RIGHT}`).toString("base64") } } });
    for (const dir of [path.join(work, "nanolet-root"), path.join(work, "kubelet", "root")]) {
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, "config.json"), nodeConfig, { mode: 0o600 });
    }
    registry.trustFrom(containerd.certsDir);
    const nanoRoot = path.join(work, "nanolet-root");
    nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir: path.join(work, "manifests"), rootDir: nanoRoot, logsDir: path.join(work, "nanolet-logs"), node: NANO });
    nanolet.start(["--kubeconfig", cp.nodeKubeconfig, "--node-ip", "127.0.0.1"]);
    kubelet = await UpstreamKubelet.start(path.join(work, "kubelet"), { node: KUBE, kubeconfig: cp.nodeKubeconfigFor(KUBE) });
    registry.trustFrom(kubelet.containerd.certsDir);
    for (const node of [NANO, KUBE]) await waitFor(`node ${node} registered`, () => cp.get("nodes", undefined, node), 60_000, 500);
    await cp.create("/api/v1/namespaces/default/secrets", pullSecret("right", registry.host, "puller", RIGHT));
    await cp.create("/api/v1/namespaces/default/secrets", pullSecret("wrong", registry.host, "puller", WRONG));
  });

  after(async () => {
    if (nanolet) fs.writeFileSync(path.join(work, "nanolet.log"), nanolet.lines.join("\n"));
    await nanolet?.stop();
    await kubelet?.stop();
    await cp?.stop();
    await registry.stop();
  });

  const createPod = (name, node, image, extra = {}) => cp.admin.request("POST", "/api/v1/namespaces/default/pods", {
    apiVersion: "v1", kind: "Pod",
    metadata: { name: `${name}-${node}`, namespace: "default" },
    spec: { nodeName: node, hostNetwork: true, terminationGracePeriodSeconds: 1, automountServiceAccountToken: false, containers: [{ name: "main", image, command: ["/bin/sh", "-c", "sleep 3600"] }], ...extra },
  });
  const deletePod = (name, node) => cp.admin.request("DELETE", `/api/v1/namespaces/default/pods/${name}-${node}`, { gracePeriodSeconds: 0 }).catch(() => {});
  /** The pod's events as `reason: message`, the node's name made alike, times and sizes left out. */
  const eventsOf = async (name, node) => (await cp.list("events", "default"))
    .filter((e) => e.involvedObject?.name === `${name}-${node}`)
    .sort((a, b) => (a.firstTimestamp ?? a.eventTime ?? "").localeCompare(b.firstTimestamp ?? b.eventTime ?? ""))
    .map((e) => `${e.reason}: ${e.message.replace(/ in [0-9.]+[mµn]?s \([0-9.]+[mµn]?s including waiting\)/, " in T (T including waiting)")}`);
  const waitingOf = (pod) => pod?.status?.containerStatuses?.[0]?.state?.waiting;
  const waitReason = (name, node, reason, timeoutMs = 90_000) => waitFor(`${name} on ${node}: ${reason}`, async () => {
    const waiting = waitingOf(await cp.get("pods", "default", `${name}-${node}`));
    return waiting?.reason === reason ? waiting : false;
  }, timeoutMs, 500);
  const running = (name, node) => waitFor(`${name} running on ${node}`, async () => (await cp.get("pods", "default", `${name}-${node}`))?.status?.phase === "Running", 90_000, 500);

  describe("pulls from a real registry", { concurrency: false }, () => {
    test("a pod whose image is only in the authenticated registry runs with the right pull secret; Pulling and Pulled say so as the kubelet's do", { timeout: 180_000 }, async () => {
      for (const node of [NANO, KUBE]) await createPod("right", node, images["private/app:1"], { imagePullSecrets: [{ name: "right" }] });
      await Promise.all([NANO, KUBE].map((node) => running("right", node)));
      const [mine, theirs] = await Promise.all([NANO, KUBE].map((node) => waitFor(`right's Pulled on ${node}`, async () => {
        const events = await eventsOf("right", node);
        return events.some((e) => e.startsWith("Started")) ? events.filter((e) => /^Pull/.test(e)) : false;
      }, 30_000, 500)));
      assert.deepEqual(mine, theirs, "pull events unlike the kubelet's");
      assert.match(mine.at(-1), /^Pulled: Successfully pulled image ".*private\/app:1" in T \(T including waiting\)\. Image size: \d+ bytes\.$/);
    });

    test("the wrong secret: ErrImagePull, then ImagePullBackOff, with the kubelet's messages and events; the password is nowhere", { timeout: 180_000 }, async () => {
      for (const node of [NANO, KUBE]) await createPod("wrong", node, images["private/shared:1"], { imagePullSecrets: [{ name: "wrong" }] });
      const [mine, theirs] = await Promise.all([NANO, KUBE].map((node) => waitReason("wrong", node, "ImagePullBackOff")));
      assert.deepEqual(mine, theirs, "ImagePullBackOff unlike the kubelet's");
      // v1.36 says why: the failure that started the back-off, in the runtime's words.
      assert.ok(mine.message.startsWith(`Back-off pulling image "${images["private/shared:1"]}": ErrImagePull: `), mine.message);
      assert.match(mine.message, /401 Unauthorized$/);
      // Each distinct event once (how often each repeats is a matter of timing).
      const [myEvents, theirEvents] = await Promise.all([NANO, KUBE].map(async (node) => [...new Set(await eventsOf("wrong", node))].sort()));
      assert.ok(myEvents.some((e) => e.startsWith("Failed: Failed to pull image")), "a Failed event");
      assert.deepEqual(myEvents, theirEvents, "the pull's events are the kubelet's");
      const pod = JSON.stringify(await cp.get("pods", "default", `wrong-${NANO}`));
      const events = JSON.stringify(await eventsOf("wrong", NANO));
      for (const [where, text] of [["status", pod], ["events", events], ["log", nanolet.lines.join("\n")]]) {
        assert.ok(!text.includes(WRONG) && !text.includes(Buffer.from(`puller:${WRONG}`).toString("base64")), `the password is in the ${where}`);
      }
    });

    test("an image pulled with one pod's secret is not another's to use without the right credentials (v1.36 verification of pulled images)", { timeout: 180_000 }, async () => {
      // `right` pulled private/app:1 with the right secret; this pod asks for it with the wrong one.
      for (const node of [NANO, KUBE]) await createPod("borrower", node, images["private/app:1"], { imagePullSecrets: [{ name: "wrong" }] });
      const [mine, theirs] = await Promise.all([NANO, KUBE].map((node) => waitReason("borrower", node, "ImagePullBackOff")));
      assert.deepEqual(mine, theirs);
      // With the right secret under another name the image is used as it is.
      await cp.create("/api/v1/namespaces/default/secrets", pullSecret("right-copy", registry.host, "puller", RIGHT));
      for (const node of [NANO, KUBE]) await createPod("sharer", node, images["private/app:1"], { imagePullSecrets: [{ name: "right-copy" }] });
      await Promise.all([NANO, KUBE].map((node) => running("sharer", node)));
      const sharerPulls = await Promise.all([NANO, KUBE].map((node) => eventsOf("sharer", node).then((events) => events.filter((e) => /^Pull/.test(e)))));
      assert.deepEqual(sharerPulls[0], sharerPulls[1]);
      assert.deepEqual(sharerPulls[0], [`Pulled: Container image "${images["private/app:1"]}" already present on machine and can be accessed by the pod`]);
    });

    test("the node's own config.json: a pod without pull secrets pulls with it", { timeout: 180_000 }, async () => {
      for (const node of [NANO, KUBE]) await createPod("node-creds", node, images["private/node-only:1"]);
      await Promise.all([NANO, KUBE].map((node) => running("node-creds", node)));
    });

    test("Node status.images lists the pulled images by their registry names", { timeout: 60_000 }, async () => {
      await waitFor("the pulled image in the Node's status", async () => {
        const node = await cp.get("nodes", undefined, NANO);
        return node?.status?.images?.some((i) => i.names.includes(images["private/app:1"]));
      }, 60_000, 1000);
    });

    after(async () => {
      for (const name of ["right", "wrong", "borrower", "sharer", "node-creds"]) for (const node of [NANO, KUBE]) await deletePod(name, node);
    });
  });
}
