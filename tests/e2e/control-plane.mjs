// A real Kubernetes control plane for end-to-end tests, as envtest runs one: upstream etcd and
// kube-apiserver from the directory named by KUBEBUILDER_ASSETS (../shared/k8s/README.md), on
// free loopback ports, with Node,RBAC authorization and NodeRestriction, a PKI made with openssl,
// an audit log of every request, and admin and node kubeconfigs. Where KUBEBUILDER_ASSETS is
// unset, `controlPlaneSkipReason()` says why the tests that need it are skipped.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { stringify } from "yaml";
import { freePort } from "../../build/registry.mjs";
import { ApiClient, ApiStatusError } from "../../dist/cluster/api-client.js";
import { loadKubeconfig } from "../../dist/cluster/kubeconfig.js";

const ASSETS = process.env.KUBEBUILDER_ASSETS;
const READY_TIMEOUT_MS = 120_000;

/** Why the real control plane cannot run here, or undefined when it can. */
export function controlPlaneSkipReason() {
  if (!ASSETS) return "KUBEBUILDER_ASSETS is not set (the directory holding kube-apiserver, etcd and kubectl; .ci/run sets it)";
  for (const bin of ["etcd", "kube-apiserver", "kubectl"]) {
    if (!fs.existsSync(path.join(ASSETS, bin))) return `KUBEBUILDER_ASSETS=${ASSETS} has no ${bin}`;
  }
  if (!fs.existsSync("/usr/bin/openssl")) return "openssl is not installed (it makes the test PKI)";
  return undefined;
}

export { freePort };

export const assetPath = (bin) => path.join(ASSETS, bin);

/** A PKI for one control plane: a CA and certificates signed by it, EC P-256 (fast to make). */
export class TestPki {
  constructor(dir) {
    this.dir = dir;
    fs.mkdirSync(dir, { recursive: true });
    this.caCert = path.join(dir, "ca.crt");
    this.caKey = path.join(dir, "ca.key");
    this.openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", this.caKey, "-out", this.caCert, "-days", "3", "-subj", "/CN=nanolet-test-ca");
  }

  openssl(...args) {
    execFileSync("openssl", args, { stdio: ["ignore", "ignore", "pipe"] });
  }

  /**
   * A key and certificate named `name` for `subject` (e.g. `/CN=admin/O=system:masters`):
   * `server` with the given SANs, else a client certificate. Returns { cert, key } paths.
   */
  issue(name, subject, { sans } = {}) {
    const key = path.join(this.dir, `${name}.key`);
    const csr = path.join(this.dir, `${name}.csr`);
    const cert = path.join(this.dir, `${name}.crt`);
    const ext = path.join(this.dir, `${name}.ext`);
    this.openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", csr, "-subj", subject);
    const lines = ["basicConstraints=CA:FALSE", "keyUsage=critical,digitalSignature,keyEncipherment"];
    if (sans) lines.push("extendedKeyUsage=serverAuth", `subjectAltName=${sans.join(",")}`);
    else lines.push("extendedKeyUsage=clientAuth");
    fs.writeFileSync(ext, lines.join("\n") + "\n");
    const serial = `0x${Date.now().toString(16)}${Math.floor(Math.random() * 0xffff).toString(16)}`;
    this.openssl("x509", "-req", "-in", csr, "-CA", this.caCert, "-CAkey", this.caKey, "-set_serial", serial, "-out", cert, "-days", "3", "-extfile", ext);
    fs.rmSync(csr);
    fs.rmSync(ext);
    return { cert, key };
  }
}

/** A kubeconfig file for `user` with a client certificate (paths inlined as data). */
export function writeKubeconfig(file, server, caCert, { cert, key }, user) {
  fs.writeFileSync(file, stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "test", cluster: { server, "certificate-authority-data": fs.readFileSync(caCert).toString("base64") } }],
    users: [{ name: user, user: { "client-certificate-data": fs.readFileSync(cert).toString("base64"), "client-key-data": fs.readFileSync(key).toString("base64") } }],
    contexts: [{ name: user, context: { cluster: "test", user } }],
    "current-context": user,
  }));
}

/** A child process whose output goes to a log file; `stop()` ends it and waits. */
export class Service {
  constructor(name, bin, args, logFile, { env } = {}) {
    this.name = name;
    this.logFile = logFile;
    const out = fs.openSync(logFile, "a");
    this.proc = spawn(bin, args, { stdio: ["ignore", out, out], ...(env ? { env } : {}) });
    fs.closeSync(out);
    this.exited = new Promise((resolve) => this.proc.once("exit", (code, signal) => resolve({ code, signal })));
  }

  get running() {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  tail(lines = 20) {
    return fs.readFileSync(this.logFile, "utf8").split("\n").slice(-lines).join("\n");
  }

  async stop() {
    if (!this.running) return;
    this.proc.kill("SIGTERM");
    const timer = setTimeout(() => this.proc.kill("SIGKILL"), 10_000);
    await this.exited;
    clearTimeout(timer);
  }
}

export class RealControlPlane {
  /** Starts etcd and kube-apiserver under `work` for node `node` (the node's certificate too). */
  static async start(work, node) {
    const reason = controlPlaneSkipReason();
    if (reason) throw new Error(`no real control plane: ${reason}`);
    const cp = new RealControlPlane(work, node);
    await cp.setUp();
    return cp;
  }

  constructor(work, node) {
    this.work = path.join(work, "control-plane");
    this.node = node;
    fs.mkdirSync(this.work, { recursive: true });
  }

  async setUp() {
    const pki = (this.pki = new TestPki(path.join(this.work, "pki")));
    this.apiserverCert = pki.issue("apiserver", "/CN=kube-apiserver", { sans: ["IP:127.0.0.1", "DNS:localhost", "DNS:kubernetes", "DNS:kubernetes.default.svc", "IP:10.96.0.1"] });
    this.adminCert = pki.issue("admin", "/CN=admin/O=system:masters");
    this.nodeCert = pki.issue("node", `/CN=system:node:${this.node}/O=system:nodes`);
    // The node's serving certificate for its kubelet API, which the apiserver verifies.
    this.nodeServingCert = pki.issue("node-serving", `/CN=system:node:${this.node}/O=system:nodes`, { sans: ["IP:127.0.0.1", `DNS:${this.node}`, "DNS:localhost"] });
    // The apiserver's identity towards node agents (kubectl logs/exec go through it).
    this.kubeletClientCert = pki.issue("apiserver-kubelet-client", "/CN=kube-apiserver-kubelet-client/O=kubeadm:cluster-admins");
    this.saKey = path.join(pki.dir, "sa.key");
    pki.openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", this.saKey);
    this.saPub = path.join(pki.dir, "sa.pub");
    pki.openssl("ec", "-in", this.saKey, "-pubout", "-out", this.saPub);

    const [etcdClient, etcdPeer, securePort] = await Promise.all([freePort(), freePort(), freePort()]);
    this.etcdUrl = `http://127.0.0.1:${etcdClient}`;
    this.port = securePort;
    this.url = `https://127.0.0.1:${securePort}`;
    this.auditLog = path.join(this.work, "audit.log");
    fs.writeFileSync(path.join(this.work, "audit-policy.yaml"), stringify({
      apiVersion: "audit.k8s.io/v1",
      kind: "Policy",
      omitStages: ["RequestReceived"],
      rules: [{ level: "Metadata" }],
    }));
    this.adminKubeconfig = path.join(this.work, "admin.conf");
    this.nodeKubeconfig = path.join(this.work, "node.conf");
    writeKubeconfig(this.adminKubeconfig, this.url, pki.caCert, this.adminCert, "admin");
    writeKubeconfig(this.nodeKubeconfig, this.url, pki.caCert, this.nodeCert, `system:node:${this.node}`);

    this.etcd = new Service("etcd", assetPath("etcd"), [
      "--name", "test", "--data-dir", path.join(this.work, "etcd"),
      "--listen-client-urls", this.etcdUrl, "--advertise-client-urls", this.etcdUrl,
      "--listen-peer-urls", `http://127.0.0.1:${etcdPeer}`, "--initial-advertise-peer-urls", `http://127.0.0.1:${etcdPeer}`,
      "--initial-cluster", `test=http://127.0.0.1:${etcdPeer}`, "--unsafe-no-fsync",
    ], path.join(this.work, "etcd.log"));
    await this.startApiserver();
    this.admin = new ApiClient(loadKubeconfig(this.adminKubeconfig));
    // The ServiceAccount admission plugin needs the namespace's default account (the
    // controller-manager would make it); pods then get the kube-api-access token volume.
    await this.create("/api/v1/namespaces/default/serviceaccounts", { metadata: { name: "default" } });
    // The cluster's CA for the kube-api-access volume, as the controller-manager's root CA
    // publisher puts it in every namespace.
    await this.create("/api/v1/namespaces/default/configmaps", { metadata: { name: "kube-root-ca.crt" }, data: { "ca.crt": fs.readFileSync(pki.caCert, "utf8") } });
    // This apiserver build's ServiceAccount admission also projects `openshift-service-ca.crt`
    // (key service-ca.crt) into that volume; its service-CA operator would publish it.
    await this.create("/api/v1/namespaces/default/configmaps", { metadata: { name: "openshift-service-ca.crt" }, data: { "service-ca.crt": fs.readFileSync(pki.caCert, "utf8") } });
    // The apiserver's identity towards kubelets may use their API, as kubeadm binds it.
    await this.create("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
      metadata: { name: "kube-apiserver:kubelet-api-admin" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:kubelet-api-admin" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "kube-apiserver-kubelet-client" }],
    });
  }

  /** Creates an object as the admin; one that exists already is fine. */
  async create(path, object) {
    await this.admin.request("POST", path, object).catch((e) => {
      if (!(e instanceof ApiStatusError && e.code === 409)) throw e;
    });
  }

  apiserverArgs() {
    const pki = this.pki;
    return [
      "--etcd-servers", this.etcdUrl,
      "--bind-address", "127.0.0.1", "--secure-port", String(this.port), "--advertise-address", "127.0.0.1",
      "--endpoint-reconciler-type", "none",
      "--tls-cert-file", this.apiserverCert.cert, "--tls-private-key-file", this.apiserverCert.key,
      "--client-ca-file", pki.caCert,
      "--authorization-mode", "Node,RBAC", "--enable-admission-plugins", "NodeRestriction",
      "--enable-bootstrap-token-auth",
      "--service-account-issuer", "https://kubernetes.default.svc", "--service-account-key-file", this.saPub,
      "--service-account-signing-key-file", this.saKey,
      "--service-cluster-ip-range", "10.96.0.0/16", "--allow-privileged=true",
      "--kubelet-client-certificate", this.kubeletClientCert.cert, "--kubelet-client-key", this.kubeletClientCert.key,
      "--kubelet-certificate-authority", pki.caCert,
      "--kubelet-preferred-address-types", "InternalIP,Hostname",
      "--audit-policy-file", path.join(this.work, "audit-policy.yaml"), "--audit-log-path", this.auditLog, "--audit-log-mode", "blocking",
    ];
  }

  /** Starts (or restarts, after `stopApiserver`) the apiserver and waits for /readyz. */
  async startApiserver() {
    if (this.apiserver?.running) return; // already up: a second one would only fail to bind
    this.apiserver = new Service("kube-apiserver", assetPath("kube-apiserver"), this.apiserverArgs(), path.join(this.work, "apiserver.log"));
    const probe = new ApiClient(loadKubeconfig(this.adminKubeconfig));
    const deadline = Date.now() + READY_TIMEOUT_MS;
    try {
      for (;;) {
        if (!this.apiserver.running) throw new Error(`kube-apiserver exited:\n${this.apiserver.tail()}`);
        if (!this.etcd.running) throw new Error(`etcd exited:\n${this.etcd.tail()}`);
        const ok = await probe.request("GET", "/readyz").then(() => true, () => false);
        if (ok) return;
        if (Date.now() > deadline) throw new Error(`kube-apiserver not ready in ${READY_TIMEOUT_MS} ms:\n${this.apiserver.tail()}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    } finally {
      probe.close();
    }
  }

  async stopApiserver() {
    await this.apiserver.stop();
  }

  /**
   * A client certificate for `user` in `groups`, signed by the cluster CA (which the node's
   * --client-ca-file trusts): { cert, key } paths.
   */
  clientCert(name, user, groups = []) {
    return this.pki.issue(name, `/CN=${user}${groups.map((g) => `/O=${g}`).join("")}`);
  }

  /** A kubeconfig for another node `name` (system:node:<name>), for a second agent. */
  nodeKubeconfigFor(name) {
    const file = path.join(this.work, `${name}.conf`);
    writeKubeconfig(file, this.url, this.pki.caCert, this.clientCert(`node-${name}`, `system:node:${name}`, ["system:nodes"]), `system:node:${name}`);
    return file;
  }

  /** Runs the real kubectl as the admin; resolves with stdout, rejects with stderr. */
  kubectl(args, { input, timeoutMs = 60_000 } = {}) {
    return new Promise((resolve, reject) => {
      const child = spawn(assetPath("kubectl"), ["--kubeconfig", this.adminKubeconfig, ...args], { stdio: ["pipe", "pipe", "pipe"] });
      let out = "";
      let err = "";
      child.stdout.on("data", (c) => (out += c));
      child.stderr.on("data", (c) => (err += c));
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      child.once("exit", (code) => {
        clearTimeout(timer);
        if (code === 0) resolve(out);
        else reject(new Error(`kubectl ${args.join(" ")} exited ${code}: ${err.trim()}`));
      });
      child.stdin.end(input ?? "");
    });
  }

  /** The object, or undefined when the apiserver says 404. */
  async get(resource, namespace, name) {
    const p = apiPath(resource, namespace, name);
    try {
      return await this.admin.request("GET", p);
    } catch (e) {
      if (e instanceof ApiStatusError && e.code === 404) return undefined;
      throw e;
    }
  }

  async list(resource, namespace) {
    return (await this.admin.request("GET", apiPath(resource, namespace))).items;
  }

  /** Every request the apiserver answered, from its audit log: method, path, user, code. */
  requests() {
    if (!fs.existsSync(this.auditLog)) return [];
    const verbs = { get: "GET", list: "GET", watch: "GET", create: "POST", update: "PUT", patch: "PATCH", delete: "DELETE", deletecollection: "DELETE" };
    return fs.readFileSync(this.auditLog, "utf8").split("\n").filter(Boolean).map((line) => {
      const e = JSON.parse(line);
      return { method: verbs[e.verb] ?? e.verb.toUpperCase(), path: e.requestURI, user: e.user?.username, code: e.responseStatus?.code, stage: e.stage };
    });
  }

  async stop() {
    this.admin?.close();
    await this.apiserver?.stop();
    await this.etcd?.stop();
  }
}

const GROUPS = { leases: "/apis/coordination.k8s.io/v1", csinodes: "/apis/storage.k8s.io/v1", certificatesigningrequests: "/apis/certificates.k8s.io/v1" };
const CLUSTER_SCOPED = new Set(["nodes", "csinodes", "certificatesigningrequests"]);

export function apiPath(resource, namespace, name) {
  const base = GROUPS[resource] ?? "/api/v1";
  const ns = CLUSTER_SCOPED.has(resource) || namespace === undefined ? "" : `/namespaces/${namespace}`;
  return `${base}${ns}/${resource}${name === undefined ? "" : `/${encodeURIComponent(name)}`}`;
}
