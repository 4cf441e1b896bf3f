// A cluster for end-to-end tests: a real, private containerd, an apiserver, an admin client, and a
// kubeconfig for the node's identity (system:node:<node>), as a user would give nanolet. Two
// apiservers answer the same questions: the real kube-apiserver (`TestCluster.startReal`, from
// KUBEBUILDER_ASSETS) and the strict fake in the test process (`TestCluster.start`), which stays
// for fast tests; where they disagree the real one is right.
import fs from "node:fs";
import path from "node:path";
import { stringify } from "yaml";
import { PrivateContainerd, ensurePackages } from "../../build/containerd.mjs";
import { ApiClient } from "../../dist/cluster/api-client.js";
import { FakeApiServer } from "../apiserver/fake-apiserver.mjs";
import { RealControlPlane } from "./control-plane.mjs";
import { runtimeContainers, waitFor } from "./harness.mjs";

export class TestCluster {
  /** Starts containerd and the fake apiserver under `work`; `apiOptions` go to the fake. */
  static async start(work, node, apiOptions = {}) {
    const cluster = new TestCluster(work, node, "fake");
    await cluster.startContainerd();
    const api = (cluster.fake = await FakeApiServer.start({
      tokens: {
        "node-token": { name: `system:node:${node}`, groups: ["system:nodes", "system:authenticated"] },
        "admin-token": { name: "admin", groups: ["system:masters"] },
      },
      ...apiOptions,
    }));
    cluster.admin = new ApiClient({ server: api.url, token: "admin-token" });
    cluster.kubeconfig = path.join(work, "kubelet.conf");
    fs.writeFileSync(cluster.kubeconfig, stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "fake", cluster: { server: api.url } }],
      users: [{ name: node, user: { token: "node-token" } }],
      contexts: [{ name: "node", context: { cluster: "fake", user: node } }],
      "current-context": "node",
    }));
    return cluster;
  }

  /** Starts containerd, etcd and the real kube-apiserver under `work`. */
  static async startReal(work, node) {
    const cluster = new TestCluster(work, node, "real");
    await cluster.startContainerd();
    const cp = (cluster.real = await RealControlPlane.start(work, node));
    cluster.admin = cp.admin;
    cluster.kubeconfig = cp.nodeKubeconfig;
    // The apiserver dials the node for logs and exec: everything stays on loopback.
    cluster.nanoletArgs = ["--node-ip", "127.0.0.1"];
    return cluster;
  }

  constructor(work, node, kind) {
    this.work = work;
    this.node = node;
    this.kind = kind;
    this.nanoletArgs = [];
  }

  async startContainerd() {
    ensurePackages();
    this.containerd = new PrivateContainerd(path.join(this.work, "containerd"));
    await this.containerd.start();
  }

  /** The object as the apiserver has it, or undefined. */
  async get(resource, namespace, name) {
    return this.real ? this.real.get(resource, namespace, name) : this.fake.get(resource, namespace, name);
  }

  /** Every object of `resource` (all namespaces). */
  async list(resource) {
    return this.real ? this.real.list(resource) : this.fake.store.list(resource).items;
  }

  /** Every request the apiserver answered: { method, path, user, code }. */
  requests() {
    return this.real ? this.real.requests() : this.fake.requests;
  }

  /** An apiserver outage: nothing answers until `startApiserver`; the objects stay. */
  async stopApiserver() {
    if (this.real) await this.real.stopApiserver();
    else await this.fake.stop();
  }

  async startApiserver() {
    if (this.real) await this.real.startApiserver();
    else await this.fake.start();
  }

  /** The real kubectl as the cluster admin (real apiserver only). */
  kubectl(args, options) {
    if (!this.real) throw new Error("kubectl needs the real apiserver");
    return this.real.kubectl(args, options);
  }

  /**
   * Deletes whatever pods a test left (or a filtered run skipped), waits for the node to remove
   * their containers, then stops `nanolet`, the apiserver and containerd.
   */
  async stop(nanolet) {
    try {
      const pods = this.admin ? await this.list("pods").catch(() => []) : [];
      for (const p of pods) {
        await this.admin.request("DELETE", `/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}`, { gracePeriodSeconds: 0 }).catch(() => {});
      }
      if (this.containerd && nanolet?.proc?.exitCode === null) await waitFor("every pod gone from containerd", () => runtimeContainers(this.containerd).length === 0, 60_000);
    } finally {
      await nanolet?.stop();
      if (this.real) await this.real.stop();
      else {
        this.admin?.close();
        await this.fake?.stop();
      }
      await this.containerd?.stop();
    }
  }
}
