// What the files of a configMap, secret, downward API or projected volume hold: the payload the
// atomic writer puts in place, made as upstream's volume plugins make it (keys or `items`, modes,
// `optional`, labels as `key="value"` lines), with upstream's words when it cannot be made.
import type { PodObject } from "../cluster/pod-reflector.js";
import { fieldValue, resourceValue, type PodFacts } from "../env/container-env.js";
import type { Payload } from "./atomic-writer.js";
import { singular, type ObjectGetter, type ObjectResource } from "./object-store.js";
import type { TokenManager } from "./token-manager.js";

/** The Pod API's default file mode of these volumes (0644). */
export const DEFAULT_FILE_MODE = 0o644;
/** A configMap or secret larger than the apiserver allows (1 MiB) is refused, not written. */
export const MAX_OBJECT_BYTES = 1024 * 1024;

/** The set-up failed for a reason the user can fix; the message is upstream's. */
export class VolumeSetUpError extends Error {}

/** The data of a configMap or secret, as bytes by key. */
function dataOf(resource: ObjectResource, object: PodObject): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  let total = 0;
  const put = (key: string, value: Buffer) => {
    total += value.length;
    out.set(key, value);
  };
  if (resource === "configmaps") {
    for (const [k, v] of Object.entries(object.data ?? {})) put(k, Buffer.from(String(v), "utf8"));
    for (const [k, v] of Object.entries(object.binaryData ?? {})) put(k, Buffer.from(String(v), "base64"));
  } else {
    for (const [k, v] of Object.entries(object.data ?? {})) put(k, Buffer.from(String(v), "base64"));
  }
  if (total > MAX_OBJECT_BYTES) {
    throw new VolumeSetUpError(`${singular(resource)} "${object?.metadata?.name}" holds ${total} bytes, more than the ${MAX_OBJECT_BYTES} a ${singular(resource)} may hold`);
  }
  return out;
}

interface KeyItem {
  key: string;
  path: string;
  mode?: number;
}

/** A configMap or secret source: all keys, or `items`; missing object or key per `optional`. */
export async function objectPayload(
  objects: ObjectGetter | undefined,
  resource: ObjectResource,
  namespace: string,
  source: { name?: string; secretName?: string; items?: KeyItem[]; optional?: boolean },
  defaultMode: number,
  payload: Payload,
): Promise<void> {
  const name = (resource === "secrets" ? source.secretName ?? source.name : source.name) ?? "";
  const optional = source.optional === true;
  if (!objects) throw new VolumeSetUpError(`cannot get ${singular(resource)} "${name}": this node has no apiserver`);
  const object = await objects.get({ resource, namespace, name });
  if (!object) {
    if (optional) return;
    throw new VolumeSetUpError(`${singular(resource)} "${name}" not found`);
  }
  const data = dataOf(resource, object);
  const items = Array.isArray(source.items) ? source.items : undefined;
  if (!items || items.length === 0) {
    for (const [key, content] of data) payload.set(key, { content, mode: defaultMode });
    return;
  }
  for (const item of items) {
    const content = data.get(item.key);
    if (!content) {
      if (optional) continue;
      throw new VolumeSetUpError(resource === "configmaps" ? `configmap references non-existent config key: ${item.key}` : `references non-existent secret key: ${item.key}`);
    }
    payload.set(item.path, { content, mode: item.mode ?? defaultMode });
  }
}

/** upstream FormatMap: `key="value"` lines in key order. */
export function formatMap(map: Record<string, string>): string {
  return Object.keys(map)
    .sort()
    .map((k) => `${k}=${JSON.stringify(String(map[k]))}`)
    .join("\n");
}

/** A downward API source's files. */
export function downwardPayload(items: any[], facts: PodFacts, defaultMode: number, payload: Payload): void {
  for (const item of Array.isArray(items) ? items : []) {
    let value: string;
    if (item.fieldRef) {
      const fieldPath = String(item.fieldRef.fieldPath ?? "");
      if (fieldPath === "metadata.labels") value = formatMap(facts.labels);
      else if (fieldPath === "metadata.annotations") value = formatMap(facts.annotations);
      else value = fieldValue(fieldPath, facts);
    } else {
      const ref = item.resourceFieldRef ?? {};
      const container = facts.containers.find((c) => c.name === ref.containerName);
      if (!container) throw new VolumeSetUpError(`container ${ref.containerName} not found`);
      const divisor = typeof ref.divisor === "number" ? String(ref.divisor) : String(ref.divisor ?? "");
      value = resourceValue({ containerName: ref.containerName, resource: String(ref.resource ?? ""), divisor }, container, facts);
    }
    payload.set(String(item.path), { content: Buffer.from(value, "utf8"), mode: item.mode ?? defaultMode });
  }
}

/** upstream FsUserFrom: the runAsUser every container (and init container) runs as, if they agree. */
export function fsUserOf(spec: Record<string, any>): number | undefined {
  const podUser = spec.securityContext?.runAsUser;
  let user: number | undefined;
  const containers = [...(spec.containers ?? []), ...(spec.initContainers ?? [])];
  for (const c of containers) {
    const own = c?.securityContext?.runAsUser ?? podUser;
    if (typeof own !== "number") return undefined;
    if (user !== undefined && own !== user) return undefined;
    user = own;
  }
  return user;
}

/** A projected volume's sources, in one directory. */
export async function projectedPayload(
  source: { sources?: any[] },
  defaultMode: number,
  facts: PodFacts,
  objects: ObjectGetter | undefined,
  tokens: TokenManager | undefined,
): Promise<Payload> {
  const payload: Payload = new Map();
  for (const s of Array.isArray(source.sources) ? source.sources : []) {
    if (s.configMap) await objectPayload(objects, "configmaps", facts.namespace, s.configMap, defaultMode, payload);
    else if (s.secret) await objectPayload(objects, "secrets", facts.namespace, s.secret, defaultMode, payload);
    else if (s.downwardAPI) downwardPayload(s.downwardAPI.items, facts, defaultMode, payload);
    else if (s.serviceAccountToken) {
      if (!tokens) throw new VolumeSetUpError("failed to fetch token: this node has no apiserver");
      const t = s.serviceAccountToken;
      const token = await tokens.token({
        namespace: facts.namespace,
        serviceAccountName: facts.serviceAccountName || "default",
        audience: String(t.audience ?? ""),
        expirationSeconds: Number(t.expirationSeconds ?? 3600),
        podName: facts.name,
        podUid: facts.uid,
      });
      // upstream: a pod that runs as one user, or has an fsGroup, gets its token readable by it
      // alone (0600, owned by that user), not the volume's defaultMode.
      const fsUser = fsUserOf(facts.spec ?? {});
      const fsGroup = facts.spec?.securityContext?.fsGroup;
      const owned = fsUser !== undefined || typeof fsGroup === "number";
      payload.set(String(t.path), { content: Buffer.from(token, "utf8"), mode: owned ? 0o600 : defaultMode, ...(fsUser !== undefined ? { uid: fsUser } : {}) });
    }
  }
  return payload;
}
