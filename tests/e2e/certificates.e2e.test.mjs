// TLS bootstrap and rotation on the real kube-apiserver with the real kube-controller-manager
// approving (csrapproving) and signing (csrsigning): a node given only a bootstrap token gets its
// own client certificate, registers with it, and rotates it before it expires; a node whose
// certificate expired while it was offline falls back to the bootstrap credentials.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import tls from "node:tls";
import { stringify } from "yaml";
import { TestCluster } from "./cluster-harness.mjs";
import { Service, assetPath, controlPlaneSkipReason, freePort } from "./control-plane.mjs";
import { Nanolet, tempDir, waitFor } from "./harness.mjs";

const NODE = "bootstrap-node";
const skip = controlPlaneSkipReason();
const TOKEN_ID = "abcdef";
const TOKEN_SECRET = "0123456789abcdef";

const binding = (name, role, group) => ({
  metadata: { name },
  roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
  subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: group }],
});

if (skip) {
  describe("certificates", () => test(`skipped: ${skip}`, { skip }, () => {}));
} else {
  const work = tempDir("nanolet-certs-e2e-");
  const certDir = path.join(work, "pki-node");
  const kubeconfig = path.join(work, "kubelet.conf");
  const bootstrapKubeconfig = path.join(work, "bootstrap-kubelet.conf");
  let cluster;
  let nanolet;
  let controllerManager;

  before(async () => {
    cluster = await TestCluster.startReal(work, NODE);
    const cp = cluster.real;
    // A bootstrap token, as `kubeadm token create` makes it, and the bindings kubeadm makes for
    // its group: create CSRs, have node client CSRs approved, renew the node's own.
    await cp.create("/api/v1/namespaces/kube-system/secrets", {
      metadata: { name: `bootstrap-token-${TOKEN_ID}` },
      type: "bootstrap.kubernetes.io/token",
      stringData: { "token-id": TOKEN_ID, "token-secret": TOKEN_SECRET, "usage-bootstrap-authentication": "true" },
    });
    const bindings = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings";
    await cp.create(bindings, binding("kubelet-bootstrap", "system:node-bootstrapper", "system:bootstrappers"));
    await cp.create(bindings, binding("node-autoapprove-bootstrap", "system:certificates.k8s.io:certificatesigningrequests:nodeclient", "system:bootstrappers"));
    await cp.create(bindings, binding("node-autoapprove-certificate-rotation", "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", "system:nodes"));
    // Certificates live a minute, so that rotation (at 70-90% of the life) comes within the test.
    controllerManager = new Service("kube-controller-manager", assetPath("kube-controller-manager"), [
      "--kubeconfig", cp.adminKubeconfig, "--authentication-kubeconfig", cp.adminKubeconfig, "--authorization-kubeconfig", cp.adminKubeconfig,
      "--bind-address", "127.0.0.1", "--secure-port", String(await freePort()),
      "--controllers", "csrapproving,csrsigning", "--use-service-account-credentials=false", "--leader-elect=false",
      "--cluster-signing-cert-file", cp.pki.caCert, "--cluster-signing-key-file", cp.pki.caKey, "--cluster-signing-duration", "60s",
    ], path.join(work, "controller-manager.log"));
    fs.writeFileSync(bootstrapKubeconfig, stringify({
      apiVersion: "v1", kind: "Config",
      clusters: [{ name: "c", cluster: { server: cp.url, "certificate-authority": cp.pki.caCert } }],
      users: [{ name: "bootstrap", user: { token: `${TOKEN_ID}.${TOKEN_SECRET}` } }],
      contexts: [{ name: "c", context: { cluster: "c", user: "bootstrap" } }],
      "current-context": "c",
    }));
    fs.mkdirSync(path.join(work, "manifests"), { recursive: true });
    nanolet = new Nanolet({ endpoint: cluster.containerd.endpoint, manifestDir: path.join(work, "manifests"), rootDir: path.join(work, "root"), logsDir: path.join(work, "logs"), node: NODE });
  });

  after(async () => {
    await controllerManager?.stop();
    await cluster?.stop(nanolet);
  });

  const certificate = () => new crypto.X509Certificate(fs.readFileSync(path.join(certDir, "kubelet-client-current.pem")));

  describe("certificates", { concurrency: false }, () => {
    test("TLS bootstrap: a bootstrap token becomes the node's own client certificate, approved and signed by the controller-manager", { timeout: 180_000 }, async (t) => {
      nanolet.start(["--kubeconfig", kubeconfig, "--bootstrap-kubeconfig", bootstrapKubeconfig, "--cert-dir", certDir, "--rotate-certificates", ...cluster.nanoletArgs]);
      await waitFor("the node registered", async () => (await cluster.get("nodes", undefined, NODE)) !== undefined, 120_000, 500);
      const cert = certificate();
      assert.match(cert.subject, /CN=system:node:bootstrap-node/);
      assert.match(cert.subject, /O=system:nodes/);
      assert.ok(cert.verify(new crypto.X509Certificate(fs.readFileSync(cluster.real.pki.caCert)).publicKey), "signed by the cluster CA");
      assert.equal(fs.statSync(fs.realpathSync(path.join(certDir, "kubelet-client-current.pem"))).mode & 0o777, 0o600);
      const csrs = (await cluster.list("certificatesigningrequests")).filter((c) => c.spec.signerName === "kubernetes.io/kube-apiserver-client-kubelet");
      assert.ok(csrs.some((c) => c.spec.username === `system:bootstrap:${TOKEN_ID}` && c.status.conditions?.some((x) => x.type === "Approved")), "the bootstrap CSR was auto-approved");
      // The written kubeconfig uses the certificate: the node's identity, not the token.
      assert.match(fs.readFileSync(kubeconfig, "utf8"), /client-certificate: .*kubelet-client-current\.pem/);
      const requests = cluster.requests().filter((r) => r.path.startsWith("/api/v1/nodes") && r.user === `system:node:${NODE}`);
      assert.ok(requests.length > 0, "the Node was written as system:node:bootstrap-node");
      // Nothing was sent without credentials while the certificate was on its way (it would only
      // have been refused as system:anonymous), and the wait was not called an unreachable apiserver.
      const anonymous = cluster.requests().filter((r) => r.user === "system:anonymous" && /^\/apis?\//.test(r.path));
      assert.deepEqual(anonymous.map((r) => `${r.method} ${r.path}`), [], "no anonymous requests");
      assert.deepEqual(nanolet.logLines(/cannot be reached/), [], "the bootstrap is not an outage");
      // The certificate is used at once: the Node registers on its arrival, not at the next retry
      // of a failed attempt (9 s later, before). 5 s is a generous bound for one POST.
      // The apiserver can show the Node before the agent has logged it: wait for both lines.
      await waitFor("the bootstrap and the registration logged", () => nanolet.logLines(/msg="Client certificate obtained by TLS bootstrap"/).length > 0 && nanolet.logLines(/msg="Node registered"/).length > 0, 10_000);
      const timeOf = (regex) => Date.parse(nanolet.logLines(regex)[0]?.match(/(?:^| )time=(\S+)/)?.[1]);
      const obtained = timeOf(/msg="Client certificate obtained by TLS bootstrap"/);
      const registered = timeOf(/msg="Node registered"/);
      t.diagnostic(`the Node registered ${registered - obtained} ms after the certificate arrived`);
      assert.ok(registered - obtained < 5_000, `registered ${registered - obtained} ms after the certificate arrived`);
      // The signer backdates notBefore by 5 min: the rotation is still planned at 70-90% of the
      // minute the certificate has from its arrival, not at once (read from the plan, so that a
      // slow machine's registration does not matter).
      const planned = nanolet.logLines(/msg="Client certificate rotation scheduled"/)[0];
      assert.ok(planned, "a rotation is planned");
      const field = (name) => Date.parse(planned.match(new RegExp(`(?:^| )${name}=(\\S+)`))[1]);
      const [plannedAt, at, notAfter] = [field("time"), field("at"), field("notAfter")];
      assert.ok(at - plannedAt >= 0.7 * (notAfter - plannedAt) - 1000, `a new certificate is not renewed at once (the signer backdates it): ${planned}`);
    });

    test("rotation: a new certificate before the old one expires, requested as the node itself", { timeout: 180_000 }, async () => {
      const first = certificate();
      await waitFor("the certificate rotated", () => nanolet.logLines(/Client certificate rotated/).length > 0, 150_000, 500);
      const second = certificate();
      assert.notEqual(second.serialNumber, first.serialNumber);
      assert.ok(Date.parse(second.validTo) > Date.parse(first.validTo));
      const csrs = (await cluster.list("certificatesigningrequests")).filter((c) => c.spec.username === `system:node:${NODE}`);
      assert.ok(csrs.some((c) => c.status.conditions?.some((x) => x.type === "Approved")), "the renewal was requested with the node's own certificate");
      // The node goes on working with it: its lease is renewed after the rotation.
      const renewedAfter = Date.now();
      await waitFor("the lease renewed with the new certificate", async () => Date.parse((await cluster.get("leases", "kube-node-lease", NODE))?.spec?.renewTime ?? 0) > renewedAfter, 60_000, 500);
    });

    test("a certificate that expired while the node was off: the restarted agent bootstraps again", { timeout: 180_000 }, async () => {
      await nanolet.stop();
      // Wait out the last certificate (a minute), as a node offline for longer than its life.
      const notAfter = Date.parse(certificate().validTo);
      await waitFor("the certificate expired", () => Date.now() > notAfter + 1000, 120_000, 1000);
      nanolet = new Nanolet({ ...nanolet }).start(["--kubeconfig", kubeconfig, "--bootstrap-kubeconfig", bootstrapKubeconfig, "--cert-dir", certDir, ...cluster.nanoletArgs]);
      await waitFor("bootstrapped again", () => nanolet.logLines(/Client certificate obtained by TLS bootstrap/).length > 0, 120_000, 500);
      assert.ok(nanolet.logLines(/The client certificate has expired; requesting a new one with the bootstrap credentials/).length > 0);
      assert.ok(Date.parse(certificate().validTo) > Date.now());
    });

    test("serverTLSBootstrap: the kubelet API's certificate from a kubelet-serving CSR, approved with kubectl", { timeout: 180_000 }, async () => {
      await nanolet.stop();
      const configFile = path.join(work, "config.yaml");
      fs.writeFileSync(configFile, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nserverTLSBootstrap: true\n");
      const port = await freePort();
      nanolet = new Nanolet({ ...nanolet }).start(["--config", configFile, "--port", String(port), "--kubeconfig", kubeconfig, "--bootstrap-kubeconfig", bootstrapKubeconfig, "--cert-dir", certDir, ...cluster.nanoletArgs]);
      // The controller-manager does not approve serving certificates: an operator does.
      const pending = await waitFor("a kubelet-serving CSR from the node", async () =>
        (await cluster.list("certificatesigningrequests")).find((c) => c.spec.signerName === "kubernetes.io/kubelet-serving" && c.spec.username === `system:node:${NODE}` && !c.status?.certificate), 60_000, 500);
      await cluster.kubectl(["certificate", "approve", pending.metadata.name]);
      await waitFor("the serving certificate in use", () => nanolet.logLines(/Serving certificate obtained/).length > 0, 60_000, 500);
      const served = await new Promise((resolve, reject) => {
        const socket = tls.connect({ host: "127.0.0.1", port, ca: fs.readFileSync(cluster.real.pki.caCert), servername: NODE }, () => {
          resolve(socket.getPeerX509Certificate());
          socket.end();
        });
        socket.on("error", reject);
      });
      assert.match(served.subject, /CN=system:node:bootstrap-node/);
      assert.ok(served.checkIP("127.0.0.1"), "the node's address is in the certificate");
      assert.ok(served.verify(new crypto.X509Certificate(fs.readFileSync(cluster.real.pki.caCert)).publicKey), "signed by the cluster CA, trusted by a client that checks");
    });
  });
}
