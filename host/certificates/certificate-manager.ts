// The kubelet's client certificate manager: TLS bootstrap and rotation.
//
// Bootstrap (`--bootstrap-kubeconfig`): when the node's kubeconfig does not exist, or its client
// certificate has expired (a node offline for longer than its certificate lives), a new P-256 key
// and a CSR (signer kubernetes.io/kube-apiserver-client-kubelet, CN system:node:<name>, O
// system:nodes) are sent with the bootstrap credentials; once the CSR is approved and signed,
// the certificate and key go to <cert-dir>/kubelet-client-<time>.pem, the link
// kubelet-client-current.pem points at it, and the kubeconfig is written to use it.
// Rotation (`rotateCertificates`): at a random point between 70% and 90% of the certificate's
// life, the same with the node's own certificate.
//
// Unlike the kubelet, nothing waits for this: the agent runs its static and checkpointed pods
// meanwhile, and the apiserver client takes the certificate as soon as it comes.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { stringify } from "yaml";
import type { Logger } from "../common/log.js";
import { ApiClient, ApiStatusError } from "../cluster/api-client.js";
import type { ClusterAccess } from "../cluster/kubeconfig.js";
import { newKeyAndRequest } from "./csr.js";

export const CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client-kubelet";
export const SERVING_SIGNER = "kubernetes.io/kubelet-serving";
export const CURRENT_CLIENT_FILE = "kubelet-client-current.pem";
export const CURRENT_SERVING_FILE = "kubelet-server-current.pem";
/** Retries of a failed bootstrap or rotation: 2 s doubling to 5 min. */
const RETRY_INITIAL_MS = 2_000;
const RETRY_MAX_MS = 5 * 60_000;
/** How often a pending CSR is read again. */
const POLL_MS = 1_000;
/** A CSR not signed within this is given up (and made again): upstream's certificateWaitTimeout is 1 h. */
const WAIT_MS = 60 * 60_000;

export interface CertificateValidity {
  notBeforeMs: number;
  notAfterMs: number;
}

/** The validity of the first certificate in `pem`, or undefined if there is none that parses. */
export function validityOf(pem: string | undefined): CertificateValidity | undefined {
  if (!pem) return undefined;
  try {
    const cert = new crypto.X509Certificate(pem);
    return { notBeforeMs: Date.parse(cert.validFrom), notAfterMs: Date.parse(cert.validTo) };
  } catch {
    return undefined;
  }
}

/** When to rotate: a random point in 70%-90% of the life, as upstream's nextRotationDeadline. */
export function rotationDeadlineMs(validity: CertificateValidity, random: () => number = Math.random): number {
  const total = validity.notAfterMs - validity.notBeforeMs;
  return Math.round(validity.notBeforeMs + total * (0.7 + 0.2 * random()));
}

/**
 * The life a rotation deadline is taken from. A signer backdates notBefore (csrsigning by 5 min)
 * against clock skew; for a short-lived certificate 70-90% of that stretched life can fall in
 * the seconds after it arrived, or before, and each new certificate would be renewed at once,
 * over and over. A certificate this manager obtained lives, for rotation, from when it got it;
 * for a year-long certificate the difference is nothing.
 */
export function lifeFrom(validity: CertificateValidity, obtainedAtMs: number | undefined): CertificateValidity {
  if (obtainedAtMs === undefined || obtainedAtMs <= validity.notBeforeMs) return validity;
  return { notBeforeMs: Math.min(obtainedAtMs, validity.notAfterMs), notAfterMs: validity.notAfterMs };
}

export interface CertificateManagerOptions {
  nodeName: string;
  certDir: string;
  /** --kubeconfig: written after a bootstrap. */
  kubeconfigPath: string;
  /** --bootstrap-kubeconfig's access (a bootstrap token, usually). */
  bootstrap?: ClusterAccess;
  /** The node's client, whose certificate is replaced. */
  client: ApiClient;
  /** The certificate the node's kubeconfig has now (none: bootstrap). */
  currentCertPem?: string;
  /** The server and CA the node talks to (for the kubeconfig written after a bootstrap). */
  access: ClusterAccess;
  rotate: boolean;
  log: Logger;
  nowMs?: () => number;
  /**
   * The kubelet API's serving certificate instead (`serverTLSBootstrap`): signer
   * kubernetes.io/kubelet-serving with the node's names and addresses, asked as the node itself,
   * and handed to the API server; always rotated. Such CSRs wait for an approver (a user's
   * `kubectl certificate approve` or an approving controller): the controller-manager does not
   * approve them.
   */
  serving?: { dnsNames: string[]; ipAddresses: string[]; onCertificate: (certPem: string, keyPem: string) => void };
}

export class CertificateManager {
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private retryMs = RETRY_INITIAL_MS;
  private validity?: CertificateValidity;
  /** When this manager obtained the current certificate (undefined: it came with the kubeconfig). */
  private obtainedAtMs?: number;
  /** Certificates obtained (tests). */
  issued = 0;

  constructor(private o: CertificateManagerOptions) {
    this.validity = validityOf(o.currentCertPem);
  }

  private now(): number {
    return (this.o.nowMs ?? Date.now)();
  }

  /** Whether the node has a client certificate that is valid now. */
  get valid(): boolean {
    return this.validity !== undefined && this.now() < this.validity.notAfterMs;
  }

  start(): void {
    if (!this.valid && this.o.currentCertPem !== undefined && !this.o.serving) {
      this.o.log.log("warn", "The client certificate has expired; requesting a new one with the bootstrap credentials", { notAfter: new Date(this.validity?.notAfterMs ?? 0).toISOString() });
    }
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private get what(): string {
    return this.o.serving ? "serving certificate" : "client certificate";
  }

  private schedule(): void {
    if (this.stopped) return;
    let atMs: number;
    if (!this.valid && this.o.serving) {
      atMs = this.now();
    } else if (!this.valid) {
      if (!this.o.bootstrap) {
        this.o.log.log("error", "No valid client certificate and no --bootstrap-kubeconfig to request one", {});
        return;
      }
      atMs = this.now();
    } else if (this.o.rotate || this.o.serving) {
      atMs = rotationDeadlineMs(lifeFrom(this.validity!, this.obtainedAtMs));
      this.o.log.log("info", `${this.o.serving ? "Serving" : "Client"} certificate rotation scheduled`, { at: new Date(atMs).toISOString(), notAfter: new Date(this.validity!.notAfterMs).toISOString() });
    } else {
      return;
    }
    this.timer = setTimeout(() => void this.renew(), Math.max(0, Math.min(atMs - this.now(), 2 ** 31 - 1)));
  }

  /** One bootstrap or rotation; retried with a back-off until it works. */
  private async renew(): Promise<void> {
    const bootstrapping = !this.valid && !this.o.serving;
    const client = bootstrapping ? new ApiClient(this.o.bootstrap!) : this.o.client;
    try {
      const { certPem, keyPem } = await this.request(client);
      this.store(certPem, keyPem);
      if (this.o.serving) this.o.serving.onCertificate(certPem, keyPem);
      else this.o.client.setClientCertificate(certPem, keyPem);
      this.validity = validityOf(certPem);
      this.obtainedAtMs = this.now();
      this.issued++;
      this.retryMs = RETRY_INITIAL_MS;
      const message = this.o.serving ? (this.issued === 1 ? "Serving certificate obtained" : "Serving certificate rotated") : bootstrapping ? "Client certificate obtained by TLS bootstrap" : "Client certificate rotated";
      this.o.log.log("info", message, { notAfter: new Date(this.validity!.notAfterMs).toISOString(), file: path.join(this.o.certDir, this.o.serving ? CURRENT_SERVING_FILE : CURRENT_CLIENT_FILE) });
      this.schedule();
    } catch (error) {
      if (this.stopped) return;
      this.o.log.log("warn", bootstrapping ? "TLS bootstrap failed; retrying" : `Requesting a ${this.what} failed; retrying`, { error: (error as Error).message, retryInMs: this.retryMs });
      this.timer = setTimeout(() => void this.renew(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    } finally {
      if (bootstrapping) client.close();
    }
  }

  /** A CSR with a new key, sent with `client`, then waited for until it is signed. */
  private async request(client: ApiClient): Promise<{ certPem: string; keyPem: string }> {
    const serving = this.o.serving;
    const { keyPem, csrPem } = newKeyAndRequest({ commonName: `system:node:${this.o.nodeName}`, organizations: ["system:nodes"], dnsNames: serving?.dnsNames, ipAddresses: serving?.ipAddresses });
    const signerName = serving ? SERVING_SIGNER : CLIENT_SIGNER;
    const created = await client.request("POST", "/apis/certificates.k8s.io/v1/certificatesigningrequests", {
      apiVersion: "certificates.k8s.io/v1",
      kind: "CertificateSigningRequest",
      metadata: { generateName: "csr-" },
      spec: { request: Buffer.from(csrPem).toString("base64"), signerName, usages: ["digital signature", serving ? "server auth" : "client auth"] },
    });
    const name: string = created.metadata.name;
    this.o.log.log("info", "Certificate signing request sent; waiting for approval", { csr: name, signer: signerName });
    const deadline = this.now() + WAIT_MS;
    for (;;) {
      if (this.stopped) throw new Error("stopped");
      let csr: any;
      try {
        csr = await client.request("GET", `/apis/certificates.k8s.io/v1/certificatesigningrequests/${encodeURIComponent(name)}`);
      } catch (error) {
        if (error instanceof ApiStatusError && error.code === 404) throw new Error(`certificate signing request ${name} was deleted`);
        throw error;
      }
      const conditions: any[] = csr?.status?.conditions ?? [];
      const refused = conditions.find((c) => (c.type === "Denied" || c.type === "Failed") && c.status !== "False");
      if (refused) throw new Error(`certificate signing request ${name} ${refused.type === "Denied" ? "was denied" : "failed"}: ${refused.reason ?? ""} ${refused.message ?? ""}`.trim());
      if (typeof csr?.status?.certificate === "string" && csr.status.certificate !== "") {
        return { certPem: Buffer.from(csr.status.certificate, "base64").toString(), keyPem };
      }
      if (this.now() > deadline) throw new Error(`certificate signing request ${name} not signed within ${WAIT_MS / 60_000} min`);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  /** kubelet-client-<time>.pem (certificate and key, 0600), the current link, the kubeconfig. */
  private store(certPem: string, keyPem: string): void {
    fs.mkdirSync(this.o.certDir, { recursive: true, mode: 0o700 });
    const stamp = new Date(this.now()).toISOString().replace(/[-:]/g, "").replace(/\..*$/, "").replace("T", "-");
    const kind = this.o.serving ? "server" : "client";
    const file = path.join(this.o.certDir, `kubelet-${kind}-${stamp}.pem`);
    fs.writeFileSync(file, certPem.trimEnd() + "\n" + keyPem, { mode: 0o600 });
    const link = path.join(this.o.certDir, this.o.serving ? CURRENT_SERVING_FILE : CURRENT_CLIENT_FILE);
    const temporaryLink = `${link}.new`;
    fs.rmSync(temporaryLink, { force: true });
    fs.symlinkSync(path.basename(file), temporaryLink);
    fs.renameSync(temporaryLink, link);
    if (this.o.serving) return;
    const current = path.join(this.o.certDir, CURRENT_CLIENT_FILE);
    const kubeconfig = {
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "default-cluster", cluster: { server: this.o.access.server, ...(this.o.access.caPem ? { "certificate-authority-data": Buffer.from(this.o.access.caPem).toString("base64") } : {}), ...(this.o.access.insecureSkipTlsVerify ? { "insecure-skip-tls-verify": true } : {}) } }],
      users: [{ name: "default-auth", user: { "client-certificate": current, "client-key": current } }],
      contexts: [{ name: "default-context", context: { cluster: "default-cluster", user: "default-auth", namespace: "default" } }],
      "current-context": "default-context",
    };
    fs.mkdirSync(path.dirname(this.o.kubeconfigPath), { recursive: true });
    fs.writeFileSync(`${this.o.kubeconfigPath}.new`, stringify(kubeconfig), { mode: 0o600 });
    fs.renameSync(`${this.o.kubeconfigPath}.new`, this.o.kubeconfigPath);
  }
}
