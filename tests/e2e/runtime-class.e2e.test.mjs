// RuntimeClass on a real kube-apiserver and a real containerd with a second runc handler
// (`runc-alt`, a wrapper that notes its calls): a pod of a RuntimeClass runs on that class's
// handler with the class's overhead in its spec and its cgroup; a class whose handler the runtime
// does not know, and a static pod naming a class that does not exist, fail their sandbox with
// upstream's event. Skipped, saying why, without KUBEBUILDER_ASSETS.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { ALT_HANDLER } from "../../build/containerd.mjs";
import { RealControlPlane, controlPlaneSkipReason } from "./control-plane.mjs";
import { Nanolet, podCgroupDirs, privateContainerdForFile, tempDir, waitFor } from "./harness.mjs";

const NODE = "rc-nanolet";
const skip = controlPlaneSkipReason();

if (skip) {
  describe("RuntimeClass", () => test(`skipped: ${skip}`, { skip }, () => {}));
} else {
  const work = tempDir("nanolet-runtime-class-");
  const containerdDir = path.join(work, "containerd");
  const containerd = privateContainerdForFile(containerdDir);
  const manifestDir = path.join(work, "manifests");
  fs.mkdirSync(manifestDir);
  let cp;
  let nanolet;

  before(async () => {
    cp = await RealControlPlane.start(work, NODE);
    nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir, rootDir: path.join(work, "root"), logsDir: path.join(work, "logs"), node: NODE });
    nanolet.start(["--kubeconfig", cp.nodeKubeconfig, "--node-ip", "127.0.0.1"]);
    await waitFor("the node registered", () => cp.get("nodes", undefined, NODE), 60_000, 500);
  });

  after(async () => {
    for (const f of fs.readdirSync(manifestDir)) fs.rmSync(path.join(manifestDir, f));
    for (const name of ["alt-pod", "bad-handler"]) await cp?.admin.request("DELETE", `/api/v1/namespaces/default/pods/${name}`, { gracePeriodSeconds: 0 }).catch(() => {});
    await nanolet?.stop();
    await cp?.stop();
  });

  const runtimeClass = (name, handler, overhead) => cp.admin.request("POST", "/apis/node.k8s.io/v1/runtimeclasses", {
    apiVersion: "node.k8s.io/v1", kind: "RuntimeClass", metadata: { name }, handler, ...(overhead ? { overhead: { podFixed: overhead } } : {}),
  });
  const pod = (name, runtimeClassName, resources) => cp.admin.request("POST", "/api/v1/namespaces/default/pods", {
    apiVersion: "v1", kind: "Pod", metadata: { name, namespace: "default" },
    spec: {
      nodeName: NODE, hostNetwork: true, automountServiceAccountToken: false, terminationGracePeriodSeconds: 2, runtimeClassName,
      containers: [{ name: "main", image: "busybox", imagePullPolicy: "IfNotPresent", command: ["sleep", "3600"], ...(resources ? { resources } : {}) }],
    },
  });
  const events = async (name) => (await cp.list("events", "default")).filter((e) => e.involvedObject?.name === name);

  describe("RuntimeClass", { concurrency: false }, () => {
    test("a pod of a RuntimeClass runs on its handler, with its overhead in its cgroup", { timeout: 120_000 }, async () => {
      await runtimeClass("alt", ALT_HANDLER, { cpu: "50m", memory: "32Mi" });
      await pod("alt-pod", "alt", { limits: { cpu: "100m", memory: "64Mi" } });
      const running = await waitFor("alt-pod Running", async () => {
        const p = await cp.get("pods", "default", "alt-pod");
        return p?.status?.phase === "Running" ? p : false;
      }, 90_000);
      // The apiserver copied the class's overhead into the pod; the node counted it.
      assert.deepEqual(running.spec.overhead, { cpu: "50m", memory: "32Mi" });
      const calls = fs.readFileSync(path.join(containerdDir, `${ALT_HANDLER}.log`), "utf8");
      assert.match(calls, /\bcreate\b/, "the handler's runc created the pod's containers");
      // Every container of the pod (pause and main) ran through the handler.
      const ids = running.status.containerStatuses.map((c) => c.containerID.replace(/^containerd:\/\//, ""));
      for (const id of ids) assert.ok(calls.includes(id), `${id} ran through ${ALT_HANDLER}`);
      // Guaranteed (limits only): the pod cgroup's memory limit is the container's plus the overhead.
      const dirs = podCgroupDirs(running.metadata.uid);
      const memoryMax = dirs.map((d) => [path.join(d, "memory.max"), path.join(d, "memory.limit_in_bytes")]).flat().find((f) => fs.existsSync(f));
      if (memoryMax) assert.equal(Number(fs.readFileSync(memoryMax, "utf8").trim()), (64 + 32) * 1024 * 1024);
    });

    test("a class whose handler the runtime lacks fails the sandbox with the runtime's words", { timeout: 120_000 }, async () => {
      await runtimeClass("missing-handler", "no-such-handler");
      await pod("bad-handler", "missing-handler");
      const event = await waitFor("FailedCreatePodSandBox", async () => (await events("bad-handler")).find((e) => e.reason === "FailedCreatePodSandBox"), 60_000);
      assert.match(event.message, /^Failed to create pod sandbox: rpc error: code = \w+ desc = .*no-such-handler/);
      assert.equal((await cp.get("pods", "default", "bad-handler")).status.phase, "Pending");
    });

    test("a static pod naming a class that does not exist fails its sandbox with upstream's words", { timeout: 120_000 }, async () => {
      fs.writeFileSync(path.join(manifestDir, "ghost.yaml"), [
        "apiVersion: v1", "kind: Pod", "metadata: {name: ghost}", "spec:", "  hostNetwork: true", "  runtimeClassName: ghost-class",
        "  containers: [{name: main, image: busybox, imagePullPolicy: IfNotPresent, command: [sleep, '3600']}]", "",
      ].join("\n"));
      const event = await waitFor("FailedCreatePodSandBox on the mirror pod", async () => (await events(`ghost-${NODE}`)).find((e) => e.reason === "FailedCreatePodSandBox"), 90_000);
      assert.equal(event.message, 'Failed to create pod sandbox: runtimeclass.node.k8s.io "ghost-class" not found');
      // Made later, the class is found at the next try: the pod runs.
      await runtimeClass("ghost-class", ALT_HANDLER);
      // (Its mirror pod was refused by the apiserver's RuntimeClass admission; the node's own view counts.)
      await waitFor("ghost runs once its class exists", async () => (await nanolet.pod("ghost"))?.phase === "Running", 90_000);
    });
  });
}
