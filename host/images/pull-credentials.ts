// A pod's `imagePullSecrets` and the node's own credential file as the kubelet's keyring reads
// them: the registries of `kubernetes.io/dockerconfigjson` (`.dockerconfigjson`, `{"auths": {...}}`)
// and `kubernetes.io/dockercfg` (`.dockercfg`) secrets, then the node's docker `config.json`,
// matched against an image's registry and path (a `*` matches one host label); every match is a
// CRI AuthConfig to try, in order, with where it came from (a secret, or the node).
import crypto from "node:crypto";

import type { RegistryAuth } from "../cri/runtime.js";

export type { RegistryAuth };

/** The names Docker Hub goes by in credential files. */
const DOCKER_HUB = new Set(["docker.io", "index.docker.io", "registry-1.docker.io"]);

/** An image reference's registry host and repository path (`docker.io` when it names none). */
export function registryOf(image: string): { host: string; path: string } {
  const name = image.split("@")[0];
  const slash = name.indexOf("/");
  const first = slash < 0 ? "" : name.slice(0, slash);
  const hasHost = first !== "" && (first.includes(".") || first.includes(":") || first === "localhost");
  const host = hasHost ? first : "docker.io";
  let rest = hasHost ? name.slice(slash + 1) : name;
  const colon = rest.lastIndexOf(":");
  if (colon > rest.lastIndexOf("/")) rest = rest.slice(0, colon);
  if (host === "docker.io" && !rest.includes("/")) rest = `library/${rest}`;
  return { host, path: rest };
}

/** A credential file key (`https://reg.example:5000/team`) as host and path. */
function keyParts(key: string): { host: string; path: string } {
  const bare = key.replace(/^[a-z]+:\/\//i, "");
  const slash = bare.indexOf("/");
  const host = (slash < 0 ? bare : bare.slice(0, slash)).toLowerCase();
  const path = slash < 0 ? "" : bare.slice(slash + 1).replace(/\/+$/, "");
  // Docker Hub's old index URL (`https://index.docker.io/v1/`) names the whole registry.
  return { host, path: DOCKER_HUB.has(host) && path === "v1" ? "" : path };
}

function hostMatches(pattern: string, host: string): boolean {
  if (DOCKER_HUB.has(pattern) && DOCKER_HUB.has(host)) return true;
  const p = pattern.split(".");
  const h = host.toLowerCase().split(".");
  if (p.length !== h.length) return false;
  return p.every((label, i) => label === "*" || label === h[i] || (label.includes("*") && new RegExp(`^${label.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^.]*")}$`).test(h[i])));
}

/** The entries of one pull secret by registry key; {} when it is not a registry secret or cannot be read. */
function entriesOf(secret: Record<string, any>): Record<string, Record<string, any>> {
  const data = secret?.data ?? {};
  const decode = (v: unknown) => JSON.parse(Buffer.from(String(v), "base64").toString("utf8"));
  try {
    if (secret.type === "kubernetes.io/dockerconfigjson" && data[".dockerconfigjson"]) return decode(data[".dockerconfigjson"]).auths ?? {};
    if (secret.type === "kubernetes.io/dockercfg" && data[".dockercfg"]) return decode(data[".dockercfg"]) ?? {};
  } catch {
    return {};
  }
  return {};
}

/** The secret a credential came from (upstream's coordinates of a pulled-image record). */
export interface SecretSource {
  uid: string;
  namespace: string;
  name: string;
}

/** A credential to try, its hash (for pulled-image records) and its source; no source: the node's. */
export interface TrackedCredential {
  auth: RegistryAuth;
  /** sha256 of the credential's fields: records compare credentials without keeping them. */
  hash: string;
  secret?: SecretSource;
}

/** A credential's hash: the same credential hashes the same; nothing of it can be read back. */
export function credentialHash(auth: RegistryAuth): string {
  const fields = [auth.username, auth.password, auth.auth, auth.serverAddress, auth.identityToken, auth.registryToken];
  return crypto.createHash("sha256").update(JSON.stringify(fields.map((f) => f ?? ""))).digest("hex");
}

function matching(image: string, auths: Record<string, Record<string, any>>): { pathLength: number; auth: RegistryAuth }[] {
  const target = registryOf(image);
  const found: { pathLength: number; auth: RegistryAuth }[] = [];
  for (const [key, entry] of Object.entries(auths)) {
    const k = keyParts(key);
    if (!hostMatches(k.host, target.host)) continue;
    if (k.path !== "" && target.path !== k.path && !target.path.startsWith(`${k.path}/`)) continue;
    let { username, password } = entry ?? {};
    if ((!username || !password) && typeof entry?.auth === "string") {
      const decoded = Buffer.from(entry.auth, "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      if (colon > 0) [username, password] = [decoded.slice(0, colon), decoded.slice(colon + 1)];
    }
    // No server address: the image names its registry, and containerd refuses one it cannot
    // parse as a URL (a bare `host:port`); the kubelet sends none either.
    const auth: RegistryAuth = {};
    if (username) auth.username = String(username);
    if (password) auth.password = String(password);
    if (typeof entry?.identitytoken === "string") auth.identityToken = entry.identitytoken;
    if (typeof entry?.registrytoken === "string") auth.registryToken = entry.registrytoken;
    found.push({ pathLength: k.path.length, auth });
  }
  return found.sort((a, b) => b.pathLength - a.pathLength);
}

/**
 * Every credential for `image`: the pod's secrets' first (most specific path first, upstream's
 * keyring order), then the node's (`nodeAuths`, a docker config's `auths`).
 */
export function trackedCredentialsFor(image: string, secrets: Record<string, any>[], nodeAuths: Record<string, Record<string, any>> = {}): TrackedCredential[] {
  const fromSecrets: { pathLength: number; auth: RegistryAuth; secret: SecretSource }[] = [];
  for (const secret of secrets) {
    const source = { uid: String(secret?.metadata?.uid ?? ""), namespace: String(secret?.metadata?.namespace ?? ""), name: String(secret?.metadata?.name ?? "") };
    for (const m of matching(image, entriesOf(secret))) fromSecrets.push({ ...m, secret: source });
  }
  fromSecrets.sort((a, b) => b.pathLength - a.pathLength);
  return [
    ...fromSecrets.map(({ auth, secret }) => ({ auth, hash: credentialHash(auth), secret })),
    ...matching(image, nodeAuths).map(({ auth }) => ({ auth, hash: credentialHash(auth) })),
  ];
}

/** Every credential of `secrets` for `image`, most specific path first (upstream's keyring order). */
export function credentialsFor(image: string, secrets: Record<string, any>[]): RegistryAuth[] {
  return trackedCredentialsFor(image, secrets).map((c) => c.auth);
}
