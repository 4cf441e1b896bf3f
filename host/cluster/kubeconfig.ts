// Reads a kubeconfig as the kubelet does (`--kubeconfig`): the current context's cluster (server,
// CA) and user (bearer token, token file, or client certificate and key), inline (`*-data`, base64)
// or as files relative to the kubeconfig's own directory. Every mistake names the file and field.
import path from "node:path";
import { parse } from "yaml";
import { FILE_LIMITS, FileReadError, readBoundedText } from "../files/bounded-file.js";

export class KubeconfigError extends Error {
  constructor(file: string, field: string, message: string) {
    super(`${file}: ${field ? `${field}: ` : ""}${message}`);
    this.name = "KubeconfigError";
  }
}

/** What a client needs to reach the apiserver as this node. PEM texts, not file names. */
export interface ClusterAccess {
  server: string;
  caPem?: string;
  insecureSkipTlsVerify: boolean;
  token?: string;
  certPem?: string;
  keyPem?: string;
  /** The context's namespace, if any. */
  namespace?: string;
}

type Obj = Record<string, unknown>;

export function loadKubeconfig(file: string): ClusterAccess {
  let text: string;
  try {
    text = readBoundedText(file, FILE_LIMITS.configBytes);
  } catch (error) {
    throw new KubeconfigError(file, "", (error as FileReadError).reason ?? (error as Error).message);
  }
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (error) {
    throw new KubeconfigError(file, "", `invalid YAML: ${(error as Error).message.split("\n")[0]}`);
  }
  return readKubeconfig(doc, file);
}

export function readKubeconfig(doc: unknown, file: string): ClusterAccess {
  const fail = (field: string, message: string): never => {
    throw new KubeconfigError(file, field, message);
  };
  const obj = (v: unknown, field: string): Obj => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Obj) : fail(field, "expected a mapping"));
  const str = (v: unknown, field: string): string | undefined => (v === undefined || v === null ? undefined : typeof v === "string" ? v : fail(field, "expected a string"));
  const dir = path.dirname(path.resolve(file));
  const root = obj(doc, "");
  if (root.kind !== undefined && root.kind !== "Config") fail("kind", `expected Config, got ${JSON.stringify(root.kind)}`);
  const named = (list: unknown, field: string, name: string): Obj => {
    if (!Array.isArray(list)) return fail(field, "expected a list");
    const i = list.findIndex((e) => obj(e, field).name === name);
    if (i < 0) return fail(field, `no entry named "${name}"`);
    return obj((list[i] as Obj)[field.slice(0, -1)], `${field}[${i}].${field.slice(0, -1)}`);
  };
  const contextName = str(root["current-context"], "current-context") ?? fail("current-context", "Required value");
  const context = named(root.contexts, "contexts", contextName);
  const cluster = named(root.clusters, "clusters", str(context.cluster, "context.cluster") ?? fail("context.cluster", "Required value"));
  const user = context.user === undefined ? {} : named(root.users, "users", str(context.user, "context.user")!);

  /** Inline base64 data or a file, relative to the kubeconfig. */
  const pem = (section: Obj, key: string, where: string): string | undefined => {
    const data = str(section[`${key}-data`], `${where}.${key}-data`);
    const fileName = str(section[key], `${where}.${key}`);
    if (data !== undefined && fileName !== undefined) fail(`${where}.${key}`, `give ${key} or ${key}-data, not both`);
    if (data !== undefined) return Buffer.from(data, "base64").toString("utf8");
    if (fileName === undefined) return undefined;
    const full = path.resolve(dir, fileName);
    try {
      return readBoundedText(full, FILE_LIMITS.pemBytes);
    } catch (error) {
      return fail(`${where}.${key}`, `cannot read ${full}: ${(error as FileReadError).reason ?? (error as Error).message}`);
    }
  };

  const server = str(cluster.server, "cluster.server") ?? fail("cluster.server", "Required value");
  if (!/^https?:\/\/[^/]+/.test(server)) fail("cluster.server", `expected an http(s) URL, got "${server}"`);
  let token = str(user.token, "user.token");
  const tokenFile = str(user.tokenFile, "user.tokenFile");
  if (token === undefined && tokenFile !== undefined) {
    try {
      token = readBoundedText(path.resolve(dir, tokenFile), FILE_LIMITS.smallBytes).trim();
    } catch (error) {
      fail("user.tokenFile", `cannot read: ${(error as FileReadError).reason ?? (error as Error).message}`);
    }
  }
  const access: ClusterAccess = {
    server: server.replace(/\/+$/, ""),
    caPem: pem(cluster, "certificate-authority", "cluster"),
    insecureSkipTlsVerify: cluster["insecure-skip-tls-verify"] === true,
    token,
    certPem: pem(user, "client-certificate", "user"),
    keyPem: pem(user, "client-key", "user"),
    namespace: str(context.namespace, "context.namespace"),
  };
  if ((access.certPem === undefined) !== (access.keyPem === undefined)) fail("user", "a client certificate needs its key, and a key its certificate");
  if (access.token === undefined && access.certPem === undefined) fail("user", "no credentials: give a token, a tokenFile, or a client certificate and key");
  return access;
}
