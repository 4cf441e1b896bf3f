// The node's cluster access: kubeconfig reading as the kubelet reads it, and the REST client
// against the strict fake apiserver, over HTTP with a token and over TLS with a client certificate.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { stringify } from "yaml";
import { ApiClient, ApiStatusError } from "../../dist/cluster/api-client.js";
import { KubeconfigError, loadKubeconfig, readKubeconfig } from "../../dist/cluster/kubeconfig.js";
import { FakeApiServer } from "../apiserver/fake-apiserver.mjs";
import { makeTestPki } from "../apiserver/throwaway-pki.mjs";

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-cluster-"));

function kubeconfig({ server, cluster = {}, user = {} }) {
  return {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "c", cluster: { server, ...cluster } }],
    users: [{ name: "u", user }],
    contexts: [{ name: "ctx", context: { cluster: "c", user: "u" } }],
    "current-context": "ctx",
  };
}

test("kubeconfig: inline data, files relative to the kubeconfig, a token file; mistakes named by field", () => {
  const dir = tmp();
  fs.writeFileSync(path.join(dir, "ca.crt"), "CA PEM");
  fs.writeFileSync(path.join(dir, "token"), "secret-token\n");
  const file = path.join(dir, "kubelet.conf");
  fs.writeFileSync(file, stringify(kubeconfig({ server: "https://10.0.0.1:6443/", cluster: { "certificate-authority": "ca.crt" }, user: { tokenFile: "token" } })));
  const access = loadKubeconfig(file);
  assert.equal(access.server, "https://10.0.0.1:6443");
  assert.equal(access.caPem, "CA PEM");
  assert.equal(access.token, "secret-token");
  const inline = readKubeconfig(
    kubeconfig({ server: "https://x", user: { "client-certificate-data": Buffer.from("CERT").toString("base64"), "client-key-data": Buffer.from("KEY").toString("base64") } }),
    "k.yaml",
  );
  assert.equal(inline.certPem, "CERT");
  assert.equal(inline.keyPem, "KEY");
  const bad = [
    [(k) => (k["current-context"] = "other"), /k\.yaml: contexts: no entry named "other"/],
    [(k) => (k.users[0].user = {}), /k\.yaml: user: no credentials/],
    [(k) => (k.users[0].user = { "client-certificate-data": "Q0VSVA==" }), /k\.yaml: user: a client certificate needs its key/],
    [(k) => (k.clusters[0].cluster.server = "10.0.0.1:6443"), /k\.yaml: cluster\.server: expected an http\(s\) URL/],
    [(k) => (k.clusters[0].cluster["certificate-authority"] = "/nonexistent/ca.crt"), /k\.yaml: cluster\.certificate-authority: cannot read/],
  ];
  for (const [edit, message] of bad) {
    const k = kubeconfig({ server: "https://x", user: { token: "t" } });
    edit(k);
    assert.throws(() => readKubeconfig(k, "k.yaml"), (e) => e instanceof KubeconfigError && message.test(e.message), String(message));
  }
});

test("client over HTTP with a token: requests, the apiserver's refusals, and watches", async (t) => {
  const api = await FakeApiServer.start({ tokens: { "node-a": { name: "system:node:a", groups: ["system:nodes"] } }, bookmarkIntervalMs: 30 });
  t.after(() => api.stop());
  api.seed("pods", { metadata: { name: "web", namespace: "default" }, spec: { nodeName: "a", containers: [{ name: "app", image: "busybox" }] } });
  const client = new ApiClient({ server: api.url, token: "node-a", insecureSkipTlsVerify: false });
  t.after(() => client.close());
  const list = await client.request("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Da");
  assert.deepEqual(list.items.map((p) => p.metadata.name), ["web"]);
  await assert.rejects(client.request("GET", "/api/v1/pods"), (e) => e instanceof ApiStatusError && e.code === 403 && e.reason === "Forbidden" && /spec.nodeName field selector/.test(e.message));
  const node = await client.request("POST", "/api/v1/nodes", { metadata: { name: "a" } });
  assert.equal(node.metadata.name, "a");
  const patched = await client.request("PATCH", "/api/v1/nodes/a/status", { status: { conditions: [{ type: "Ready", status: "True" }] } }, "application/strategic-merge-patch+json");
  assert.equal(patched.status.conditions[0].type, "Ready");

  const events = [];
  const controller = new AbortController();
  const watching = client.watch(`/api/v1/pods?fieldSelector=spec.nodeName%3Da&watch=1&allowWatchBookmarks=true&resourceVersion=${list.metadata.resourceVersion}`, (e) => events.push(e), controller.signal);
  await new Promise((r) => setTimeout(r, 20));
  api.seed("pods", { metadata: { name: "two", namespace: "default" }, spec: { nodeName: "a", containers: [{ name: "app", image: "busybox" }] } });
  while (!(events.some((e) => e.type === "ADDED") && events.some((e) => e.type === "BOOKMARK"))) await new Promise((r) => setTimeout(r, 10));
  controller.abort();
  await watching;
  assert.equal(events.find((e) => e.type === "ADDED").object.metadata.name, "two");

  api.compact();
  const expired = [];
  await client.watch(`/api/v1/pods?fieldSelector=spec.nodeName%3Da&watch=1&resourceVersion=${list.metadata.resourceVersion}`, (e) => expired.push(e));
  assert.equal(expired[0].type, "ERROR");
  assert.equal(expired[0].object.code, 410);
  await assert.rejects(client.watch("/api/v1/pods?watch=1", () => {}), (e) => e.code === 403);
});

test("client over TLS with a client certificate from a kubeconfig: the node's identity is the certificate's", async (t) => {
  const dir = tmp();
  const pki = makeTestPki(dir);
  const api = await FakeApiServer.start({ tls: { key: pki.serverKey, cert: pki.serverCert, ca: pki.ca } });
  t.after(() => api.stop());
  const file = path.join(dir, "kubelet.conf");
  fs.writeFileSync(file, stringify(kubeconfig({ server: api.url, cluster: { "certificate-authority": "ca.crt" }, user: { "client-certificate": "node.crt", "client-key": "node.key" } })));
  const client = new ApiClient(loadKubeconfig(file));
  t.after(() => client.close());
  assert.equal((await client.request("POST", "/api/v1/nodes", { metadata: { name: "a" } })).metadata.name, "a");
  await assert.rejects(client.request("POST", "/api/v1/nodes", { metadata: { name: "b" } }), (e) => e.code === 403 && /node "a" is not allowed to modify node "b"/.test(e.message));
  assert.equal(api.requests.at(-1).user, "system:node:a");
  // A client that does not trust the server's CA does not talk to it.
  const untrusting = new ApiClient({ ...loadKubeconfig(file), caPem: undefined });
  t.after(() => untrusting.close());
  await assert.rejects(untrusting.request("GET", "/api/v1/nodes/a"), (e) => e instanceof ApiStatusError && e.reason === "ConnectionFailed");
});
