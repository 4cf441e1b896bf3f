// Puts the kubelet API together from the flags: the serving certificate, who authenticates and
// who authorizes, the pods view, and the ports (--port HTTPS, --read-only-port plain HTTP with no
// auth and only read-only paths, as upstream's read-only port).
import os from "node:os";
import type { ApiClient } from "../cluster/api-client.js";
import type { Runtime } from "../cri/runtime.js";
import type { Logger } from "../common/log.js";
import type { PodTable } from "../agent/pod-table.js";
import { ANONYMOUS, Authenticator } from "./authn.js";
import { AlwaysAllow, WebhookAuthorizer } from "./authz.js";
import { type Handler, KubeletServer } from "./kubelet-server.js";
import { podListItems, type PodsViewSource } from "./pods-view.js";
import { loadServingCert, type ServingFiles } from "./serving-cert.js";
import { FILE_LIMITS, readBoundedText } from "../files/bounded-file.js";
import { CertificateManager, CURRENT_SERVING_FILE, validityOf } from "../certificates/certificate-manager.js";
import net from "node:net";
import path from "node:path";

export interface KubeletApiOptions {
  runtime: Runtime;
  log: Logger;
  podTable: PodTable;
  /** The accepted pods and what their statuses need, for /pods. */
  podsView: PodsViewSource;
  podLogsDir: string;
  nodeName: string;
  nodeIp?: string;
  /** The node's apiserver client, for TokenReview and SubjectAccessReview. */
  client?: ApiClient;
  syncLoopProblem: () => string | undefined;
  port: number;
  address: string;
  readOnlyPort: number;
  tlsCertFile?: string;
  /** The certificate, key and client CA, read and checked at start (readServingFiles). */
  servingFiles?: ServingFiles;
  tlsKeyFile?: string;
  certDir: string;
  clientCaFile?: string;
  tokenWebhook: boolean;
  anonymous: boolean;
  authorizationMode: "Webhook" | "AlwaysAllow";
  configz: () => object;
  extraHandlers?: Record<string, Handler>;
  /**
   * serverTLSBootstrap: the serving certificate comes from a CSR (kubernetes.io/kubelet-serving)
   * and is rotated; a self-signed one serves until the first is approved and signed.
   */
  serverTlsBootstrap?: boolean;
  /** Started with the API when serverTlsBootstrap is on (stopped by the caller). */
  onCertificateManager?: (manager: CertificateManager) => void;
}

/** The serving certificate a CSR gave before (certificate and key in one file), if still valid. */
function readCurrentServing(certDir: string): { certPem: string; keyPem: string; certFile: string } | undefined {
  const file = path.join(certDir, CURRENT_SERVING_FILE);
  try {
    const text = readBoundedText(file, FILE_LIMITS.pemBytes);
    const certPem = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/.exec(text)?.[0];
    const keyPem = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+?-----END [A-Z ]*PRIVATE KEY-----\n?/.exec(text)?.[0];
    const validity = validityOf(certPem);
    if (!certPem || !keyPem || !validity || Date.now() >= validity.notAfterMs) return undefined;
    return { certPem, keyPem, certFile: file };
  } catch {
    return undefined;
  }
}

function nodeAddresses(): string[] {
  return Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address.split("%")[0]));
}

/** Starts the kubelet API; undefined when --port 0 and no read-only port turn it off. */
export async function startKubeletApi(o: KubeletApiOptions): Promise<KubeletServer | undefined> {
  if (o.port === 0 && o.readOnlyPort === 0) return undefined;
  const common = {
    runtime: o.runtime,
    podLogsDir: o.podLogsDir,
    log: o.log,
    pods: () => podListItems(o.podTable, o.nodeName, o.podsView),
    lastTerminatedId: (podUid: string, container: string) => {
      const status = o.podTable.statusOf(podUid);
      if (!status) return undefined;
      const all = [...status.containerStatuses, ...status.initContainerStatuses, ...status.ephemeralContainerStatuses];
      const found = all.find((c) => c.name === container);
      return found ? (found.lastState?.containerId ?? "") : undefined;
    },
    syncLoopProblem: o.syncLoopProblem,
    configz: o.configz,
    extraHandlers: o.extraHandlers,
  };
  const server = new KubeletServer({
    ...common,
    authenticator: new Authenticator({ anonymous: o.anonymous, tokenReviewer: o.tokenWebhook ? o.client : undefined }),
    authorizer: o.authorizationMode === "Webhook" ? new WebhookAuthorizer(o.client!, o.nodeName) : new AlwaysAllow(),
  });
  if (o.port > 0) {
    const cert = loadServingCert({
      given: o.servingFiles?.cert,
      certDir: o.certDir,
      names: [o.nodeName, os.hostname(), "localhost", o.nodeIp ?? "", ...nodeAddresses()],
    });
    const clientCaPem = o.servingFiles?.clientCaPem;
    const bootstrapped = o.serverTlsBootstrap && !o.tlsCertFile ? readCurrentServing(o.certDir) : undefined;
    if (bootstrapped) Object.assign(cert, bootstrapped, { selfSigned: false });
    const https = await server.listenHttps(o.port, o.address, { certPem: cert.certPem, keyPem: cert.keyPem, clientCaPem });
    if (o.serverTlsBootstrap && !o.tlsCertFile && o.client) {
      const names = [...new Set([o.nodeName, os.hostname(), ...(o.nodeIp ? [o.nodeIp] : []), ...nodeAddresses()].filter(Boolean))];
      const manager = new CertificateManager({
        nodeName: o.nodeName, certDir: o.certDir, kubeconfigPath: "", client: o.client, access: { server: "", insecureSkipTlsVerify: false },
        currentCertPem: bootstrapped?.certPem, rotate: true, log: o.log,
        serving: {
          dnsNames: names.filter((n) => net.isIP(n) === 0),
          ipAddresses: names.filter((n) => net.isIP(n) !== 0 && !n.startsWith("fe80")),
          onCertificate: (certPem, keyPem) => https.setSecureContext({ cert: certPem, key: keyPem, ca: clientCaPem }),
        },
      });
      manager.start();
      o.onCertificateManager?.(manager);
    }
    o.log.log("info", "Kubelet API listening", {
      address: `${o.address}:${o.port}`,
      cert: cert.selfSigned ? `${cert.certFile} (self-signed)` : cert.certFile,
      clientCA: o.clientCaFile ?? "none",
      tokenWebhook: o.tokenWebhook,
      anonymous: o.anonymous,
      authorization: o.authorizationMode,
    });
  }
  if (o.readOnlyPort > 0) {
    // Upstream's read-only port: no authentication, no exec/attach/port-forward/logs.
    const readOnly = new KubeletServer({
      ...common,
      authenticator: new Authenticator({ anonymous: true }),
      authorizer: { allowed: async (user, a) => user === ANONYMOUS && a.verb === "get" && ["pods", "stats", "metrics", "healthz", "proxy"].includes(a.subresource) },
      readOnly: true,
    });
    await readOnly.listenHttp(o.readOnlyPort, o.address);
    o.log.log("warn", "Kubelet read-only port listening without authentication", { address: `${o.address}:${o.readOnlyPort}` });
    const close = server.close.bind(server);
    server.close = () => {
      close();
      readOnly.close();
    };
  }
  return server;
}
