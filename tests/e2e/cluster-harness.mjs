// A cluster for end-to-end tests: a real, private containerd, the strict fake apiserver in the
// test process (no kube-apiserver can be installed here), an admin client, and a kubeconfig that
// holds the node's token (system:node:<node>), as a user would give nanolet.
import fs from "node:fs";
import path from "node:path";
import { stringify } from "yaml";
import { PrivateContainerd, ensurePackages } from "../../build/containerd.mjs";
import { ApiClient } from "../../dist/cluster/api-client.js";
import { FakeApiServer } from "../apiserver/fake-apiserver.mjs";
import { runtimeContainers, waitFor } from "./harness.mjs";

export class TestCluster {
  /** Starts containerd and the apiserver under `work`; `apiOptions` go to the fake apiserver. */
  static async start(work, node, apiOptions = {}) {
    const cluster = new TestCluster(work, node);
    ensurePackages();
    cluster.containerd = new PrivateContainerd(path.join(work, "containerd"));
    await cluster.containerd.start();
    cluster.api = await FakeApiServer.start({
      tokens: {
        "node-token": { name: `system:node:${node}`, groups: ["system:nodes", "system:authenticated"] },
        "admin-token": { name: "admin", groups: ["system:masters"] },
      },
      ...apiOptions,
    });
    cluster.admin = new ApiClient({ server: cluster.api.url, token: "admin-token" });
    cluster.kubeconfig = path.join(work, "kubelet.conf");
    fs.writeFileSync(cluster.kubeconfig, stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "fake", cluster: { server: cluster.api.url } }],
      users: [{ name: node, user: { token: "node-token" } }],
      contexts: [{ name: "node", context: { cluster: "fake", user: node } }],
      "current-context": "node",
    }));
    return cluster;
  }

  constructor(work, node) {
    this.work = work;
    this.node = node;
  }

  /**
   * Deletes whatever pods a test left (or a filtered run skipped), waits for the node to remove
   * their containers, then stops `nanolet`, the apiserver and containerd.
   */
  async stop(nanolet) {
    try {
      for (const p of this.api?.store.list("pods").items ?? []) {
        await this.admin.request("DELETE", `/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}`, { gracePeriodSeconds: 0 }).catch(() => {});
      }
      if (this.containerd) await waitFor("every pod gone from containerd", () => runtimeContainers(this.containerd).length === 0, 60_000);
    } finally {
      await nanolet?.stop();
      this.admin?.close();
      await this.api?.stop();
      await this.containerd?.stop();
    }
  }
}
