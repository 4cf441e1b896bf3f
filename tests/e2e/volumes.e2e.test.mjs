// Volumes as a pod on a real cluster has them: the real kube-apiserver (Node authorizer), the real
// kubectl, nanolet on a real containerd. A pod reads its configMap and secret as files and env,
// sees a configMap update land as one swap, calls the apiserver with its projected token, shares
// an emptyDir between two containers; a pod whose configMap is missing waits with FailedMount and
// starts once it exists; nothing stays mounted once the pods are gone.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import https from "node:https";
import path from "node:path";
import { mountsUnder } from "../../build/containerd.mjs";
import { TestCluster } from "./cluster-harness.mjs";
import { controlPlaneSkipReason, freePort } from "./control-plane.mjs";
import { Nanolet, tempDir, waitFor } from "./harness.mjs";
import { ApiClient } from "../../dist/cluster/api-client.js";
import { loadKubeconfig } from "../../dist/cluster/kubeconfig.js";

const NODE = "volume-node";
const skip = controlPlaneSkipReason();

function podObject(name, spec) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "default", labels: { app: name } },
    spec: { nodeName: NODE, hostNetwork: true, terminationGracePeriodSeconds: 1, ...spec },
  };
}

const container = (name, script, extra = {}) => ({ name, image: "busybox", imagePullPolicy: "IfNotPresent", command: ["/bin/sh", "-c", script], ...extra });

/** One HTTPS request to the apiserver with a bearer token: { code, body }. */
function apiRequest(server, ca, token, method, pathname, body) {
  return new Promise((resolve, reject) => {
    const url = new URL(pathname, server);
    const payload = body ? Buffer.from(JSON.stringify(body)) : undefined;
    const req = https.request({ host: url.hostname, port: url.port, path: url.pathname, method, ca, headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...(payload ? { "content-length": payload.length } : {}) } }, (res) => {
      let text = "";
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve({ code: res.statusCode, body: text ? JSON.parse(text) : undefined }));
    });
    req.on("error", reject);
    req.end(payload);
  });
}

if (skip) {
  describe("volumes through a real apiserver", () => test(`skipped: ${skip}`, { skip }, () => {}));
} else {
  const work = tempDir("nanolet-volumes-e2e-");
  const rootDir = path.join(work, "root");
  let cluster;
  let nanolet;

  const kubectlJson = async (args) => JSON.parse(await cluster.kubectl([...args, "-o", "json"]));
  const exec = (pod, c, ...command) => cluster.kubectl(["exec", pod, "-c", c, "--", ...command]);
  const phaseOf = async (name) => (await kubectlJson(["get", "pod", name])).status?.phase;

  before(async () => {
    cluster = await TestCluster.startReal(work, NODE);
    const [apiPort, healthzPort] = await Promise.all([freePort(), freePort()]);
    const cp = cluster.real;
    fs.mkdirSync(path.join(work, "manifests"), { recursive: true });
    nanolet = new Nanolet({ endpoint: cluster.containerd.endpoint, manifestDir: path.join(work, "manifests"), rootDir, logsDir: path.join(work, "logs"), node: NODE });
    nanolet.start([
      "--kubeconfig", cluster.kubeconfig, ...cluster.nanoletArgs,
      "--port", String(apiPort), "--healthz-port", String(healthzPort),
      "--tls-cert-file", cp.nodeServingCert.cert, "--tls-private-key-file", cp.nodeServingCert.key,
      "--client-ca-file", cp.pki.caCert, "--authentication-token-webhook",
    ]);
    await cluster.kubectl(["create", "configmap", "settings", "--from-literal=app.conf=port=80", "--from-literal=mode=fast"]);
    await cluster.kubectl(["create", "secret", "generic", "creds", "--from-literal=password=hunter2"]);
    const reader = podObject("reader", {
      volumes: [
        { name: "cfg", configMap: { name: "settings" } },
        { name: "sec", secret: { secretName: "creds", defaultMode: 0o400 } },
        { name: "shared", emptyDir: {} },
        { name: "info", downwardAPI: { items: [{ path: "labels", fieldRef: { fieldPath: "metadata.labels" } }] } },
      ],
      containers: [
        container("app", "sleep 3600", {
          volumeMounts: [{ name: "cfg", mountPath: "/etc/cfg" }, { name: "sec", mountPath: "/etc/sec" }, { name: "shared", mountPath: "/shared" }, { name: "info", mountPath: "/etc/info" }, { name: "cfg", mountPath: "/etc/app.conf", subPath: "app.conf" }],
          env: [
            { name: "MODE", valueFrom: { configMapKeyRef: { name: "settings", key: "mode" } } },
            { name: "PASS", valueFrom: { secretKeyRef: { name: "creds", key: "password" } } },
            { name: "NOPE", valueFrom: { configMapKeyRef: { name: "settings", key: "absent", optional: true } } },
          ],
          envFrom: [{ prefix: "CFG_", configMapRef: { name: "settings" } }],
        }),
        container("writer", "echo written-by-writer > /shared/hello; sleep 3600", { volumeMounts: [{ name: "shared", mountPath: "/shared" }] }),
      ],
    });
    await cluster.kubectl(["create", "-f", "-"], { input: JSON.stringify(reader) });
    try {
      await waitFor("reader Running", async () => (await phaseOf("reader")) === "Running", 90_000);
    } catch (error) {
      // What the node said is what tells why.
      console.error(nanolet.logLines(/warn|error|olume/).slice(-30).join("\n"));
      throw error;
    }
  });

  after(async () => {
    await cluster?.stop(nanolet);
  });

  describe("volumes through a real apiserver", { concurrency: false }, () => {
    test("configMap and secret files, their env, envFrom, the downward API", async () => {
      assert.equal(await exec("reader", "app", "cat", "/etc/cfg/app.conf"), "port=80");
      assert.equal(await exec("reader", "app", "cat", "/etc/sec/password"), "hunter2");
      assert.equal(await exec("reader", "app", "stat", "-L", "-c", "%a", "/etc/sec/password"), "400\n");
      assert.equal(await exec("reader", "app", "cat", "/etc/app.conf"), "port=80");
      assert.equal(await exec("reader", "app", "readlink", "/etc/cfg/mode"), "..data/mode\n");
      assert.equal(await exec("reader", "app", "cat", "/etc/info/labels"), 'app="reader"');
      const env = Object.fromEntries((await exec("reader", "app", "env")).trim().split("\n").map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]));
      assert.equal(env.MODE, "fast");
      assert.equal(env.PASS, "hunter2");
      assert.equal(env["CFG_app.conf"], "port=80");
      assert.equal(env.NOPE, undefined);
      // configMaps are mounted read-only, as the kubelet mounts them.
      await assert.rejects(exec("reader", "app", "sh", "-c", "echo x > /etc/cfg/new"), /Read-only file system/);
    });

    test("an emptyDir is shared by the pod's containers", async () => {
      await waitFor("the writer's file", async () => (await exec("reader", "app", "cat", "/shared/hello").catch(() => "")) === "written-by-writer\n", 30_000);
    });

    test("the projected service-account token authenticates the pod to the apiserver, bound to it", async () => {
      const sa = "/var/run/secrets/kubernetes.io/serviceaccount";
      const token = await exec("reader", "app", "cat", `${sa}/token`);
      assert.equal(await exec("reader", "app", "cat", `${sa}/namespace`), "default");
      const ca = await exec("reader", "app", "cat", `${sa}/ca.crt`);
      assert.equal(ca, fs.readFileSync(cluster.real.pki.caCert, "utf8"));
      const review = await apiRequest(cluster.real.url, ca, token, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" });
      assert.equal(review.code, 201, JSON.stringify(review.body));
      const user = review.body.status.userInfo;
      assert.equal(user.username, "system:serviceaccount:default:default");
      assert.deepEqual(user.extra["authentication.kubernetes.io/pod-name"], ["reader"]);
      const pod = await kubectlJson(["get", "pod", "reader"]);
      assert.deepEqual(user.extra["authentication.kubernetes.io/pod-uid"], [pod.metadata.uid]);
    });

    test("a configMap update reaches the mounted files as one swap (not the subPath mount)", async () => {
      const before = await exec("reader", "app", "readlink", "/etc/cfg/..data");
      await cluster.kubectl(["create", "configmap", "settings", "--from-literal=app.conf=port=8080", "--from-literal=mode=slow", "--dry-run=client", "-o", "yaml"]).then((yaml) => cluster.kubectl(["replace", "-f", "-"], { input: yaml }));
      // Every read sees one version whole: both keys old, or both new.
      const seen = new Set();
      await waitFor("the new files", async () => {
        const both = await exec("reader", "app", "sh", "-c", "cat /etc/cfg/..data/app.conf; echo; cat /etc/cfg/..data/mode");
        seen.add(both);
        return both === "port=8080\nslow";
      }, 150_000, 500);
      for (const version of seen) assert.ok(version === "port=80\nfast" || version === "port=8080\nslow", `a mixed read: ${JSON.stringify(version)}`);
      assert.notEqual(await exec("reader", "app", "readlink", "/etc/cfg/..data"), before);
      assert.equal(await exec("reader", "app", "cat", "/etc/app.conf"), "port=80", "a subPath mount keeps the file it was made with, as upstream");
    });

    test("a missing configMap: FailedMount, ContainerCreating; created, the pod starts", async () => {
      await cluster.kubectl(["create", "-f", "-"], { input: JSON.stringify(podObject("waiter", { volumes: [{ name: "cfg", configMap: { name: "later" } }], containers: [container("app", "cat /etc/later/greeting; sleep 3600", { volumeMounts: [{ name: "cfg", mountPath: "/etc/later" }] })] })) });
      await waitFor("a FailedMount event", async () => {
        const events = (await kubectlJson(["get", "events", "--field-selector", "involvedObject.name=waiter"])).items;
        return events.some((e) => e.reason === "FailedMount" && e.message === 'MountVolume.SetUp failed for volume "cfg" : configmap "later" not found');
      }, 60_000);
      const pod = await kubectlJson(["get", "pod", "waiter"]);
      assert.equal(pod.status.phase, "Pending");
      assert.equal(pod.status.containerStatuses?.[0]?.state?.waiting?.reason, "ContainerCreating");
      await cluster.kubectl(["create", "configmap", "later", "--from-literal=greeting=hello"]);
      await waitFor("waiter Running", async () => (await phaseOf("waiter")) === "Running", 180_000);
      assert.equal(await exec("waiter", "app", "cat", "/etc/later/greeting"), "hello");
    });

    test("an emptyDir over its sizeLimit gets its pod evicted, as upstream's local storage eviction", async () => {
      await cluster.kubectl(["create", "-f", "-"], { input: JSON.stringify(podObject("filler", {
        restartPolicy: "Never",
        volumes: [{ name: "scratch", emptyDir: { sizeLimit: "1Mi" } }],
        containers: [container("app", "head -c 3145728 /dev/zero > /scratch/blob; sleep 3600", { volumeMounts: [{ name: "scratch", mountPath: "/scratch" }] })],
      })) });
      const pod = await waitFor("filler evicted", async () => {
        const p = await kubectlJson(["get", "pod", "filler"]);
        return p.status?.phase === "Failed" ? p : false;
      }, 120_000, 1000);
      assert.equal(pod.status.reason, "Evicted");
      assert.equal(pod.status.message, 'Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". ');
      await cluster.kubectl(["delete", "pod", "filler", "--grace-period=1"], { timeoutMs: 120_000 });
    });

    test("the Node authorizer: the node reads its pods' secrets, never one of a pod elsewhere", async () => {
      await cluster.kubectl(["create", "secret", "generic", "elsewhere", "--from-literal=k=v"]);
      const node = new ApiClient(loadKubeconfig(cluster.kubeconfig));
      try {
        const own = await node.request("GET", "/api/v1/namespaces/default/secrets/creds");
        assert.equal(own.metadata.name, "creds");
        await assert.rejects(node.request("GET", "/api/v1/namespaces/default/secrets/elsewhere"), (e) => e.code === 403 && /no relationship found between node/.test(e.message));
      } finally {
        node.close?.();
      }
    });

    test("deleted pods leave nothing mounted and no pod directory", async () => {
      const podsDir = path.join(rootDir, "pods");
      assert.ok(mountsUnder(podsDir).length >= 3, "the running pods' secret, downward API and token volumes are tmpfs mounts");
      await cluster.kubectl(["delete", "pod", "reader", "waiter", "--grace-period=1"], { timeoutMs: 120_000 });
      await waitFor("nothing mounted under the pods directory", () => mountsUnder(podsDir).length === 0, 60_000);
      await waitFor("the pod directories removed", () => fs.readdirSync(podsDir).length === 0, 60_000);
    });
  });
}
