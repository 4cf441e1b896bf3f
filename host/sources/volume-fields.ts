// `spec.volumes` and each container's `volumeMounts`, checked with the apiserver's rules and words
// (validateVolumes, validateVolumeMounts), and the volumes as the core's pod-spec carries them: a
// name, a type and a version of what a downward API volume shows. The host's volume manager reads
// the sources again from the pod object when it sets them up.
import { createHash } from "node:crypto";
import type { VolumeSpec } from "../core/types.js";
import { FieldReader, NOT_IMPLEMENTED, isObject, type JsonObject } from "./field-reader.js";
import { CONFIG_KEY_MESSAGE, isConfigKey } from "./env-fields.js";

type VolumeKind = VolumeSpec["kind"];

/** The volume types nanolet sets up, by their field in a volume. */
const KINDS: Record<string, VolumeKind> = {
  emptyDir: "empty-dir",
  hostPath: "host-path",
  configMap: "config-map",
  secret: "secret",
  downwardAPI: "downward-api",
  projected: "projected",
  persistentVolumeClaim: "persistent-volume-claim",
  csi: "csi",
};
/** Every other volume type of the Pod API: they need a storage driver (CSI, in-tree plugins). */
const DRIVER_TYPES = new Set([
  "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "nfs", "iscsi", "glusterfs", "rbd", "flexVolume", "cinder",
  "cephfs", "flocker", "fc", "azureFile", "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "portworxVolume",
  "scaleIO", "storageos", "ephemeral", "image",
]);
export const HOST_PATH_TYPES = ["", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"];
const PROPAGATION_MODES = ["Bidirectional", "HostToContainer", "None"];
const DOWNWARD_FIELD_PATHS = ["metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid"];
/** upstream's limits on a projected token's life. */
const MIN_TOKEN_SECONDS = 600;
const MAX_TOKEN_SECONDS = 2 ** 32;
const MAX_MODE = 0o777;

/** upstream validateLocalDescendingPath: relative and without `..` elements. */
export function descendingPathProblem(p: string): string | undefined {
  if (p.startsWith("/")) return "must be a relative path";
  if (p.split("/").includes("..")) return "must not contain '..'";
  return undefined;
}

function checkMode(r: FieldReader, value: unknown, field: string): void {
  if (value === undefined || value === null) return;
  const mode = r.integer(value, field);
  if (mode !== undefined && (mode < 0 || mode > MAX_MODE)) r.add(field, `Invalid value: ${mode}: must be a number between 0 and 0777 (octal), both inclusive`);
}

/** `items[]` of a configMap or secret source: key, path, mode. */
function checkKeyItems(r: FieldReader, value: unknown, field: string, paths: Set<string>): void {
  r.array(value, field).forEach((item, i) => {
    const at = `${field}[${i}]`;
    const kp = r.object(item, at, true) ?? {};
    r.onlyFields(kp, at, new Set(["key", "path", "mode"]));
    const key = r.string(kp.key, `${at}.key`) ?? "";
    if (key === "") r.add(`${at}.key`, "Required value");
    else if (!isConfigKey(key)) r.add(`${at}.key`, `Invalid value: "${key}": ${CONFIG_KEY_MESSAGE}`);
    checkItemPath(r, kp.path, `${at}.path`, paths);
    checkMode(r, kp.mode, `${at}.mode`);
  });
}

function checkItemPath(r: FieldReader, value: unknown, field: string, paths: Set<string>): void {
  const p = r.string(value, field) ?? "";
  if (p === "") {
    r.add(field, "Required value");
    return;
  }
  const problem = descendingPathProblem(p) ?? (p.startsWith("..") ? "must not start with '..'" : undefined);
  if (problem) r.add(field, `Invalid value: "${p}": ${problem}`);
  else if (paths.has(p)) r.add(field, `Invalid value: "${p}": conflicting duplicate paths`);
  paths.add(p);
}

function checkObjectSource(r: FieldReader, source: JsonObject, field: string, nameField: "name" | "secretName", paths: Set<string>, modeField: string | undefined, nameRequired: boolean): void {
  const allowed = new Set([nameField, "items", "optional", ...(modeField ? [modeField] : [])]);
  r.onlyFields(source, field, allowed);
  const name = r.string(source[nameField], `${field}.${nameField}`) ?? "";
  if (name === "" && nameRequired) r.add(`${field}.${nameField}`, "Required value");
  checkKeyItems(r, source.items, `${field}.items`, paths);
  r.boolean(source.optional, `${field}.optional`);
  if (modeField) checkMode(r, source[modeField], `${field}.${modeField}`);
}

function checkDownwardItems(r: FieldReader, value: unknown, field: string, paths: Set<string>): void {
  r.array(value, field).forEach((item, i) => {
    const at = `${field}[${i}]`;
    const file = r.object(item, at, true) ?? {};
    r.onlyFields(file, at, new Set(["path", "fieldRef", "resourceFieldRef", "mode"]));
    checkItemPath(r, file.path, `${at}.path`, paths);
    checkMode(r, file.mode, `${at}.mode`);
    const hasField = file.fieldRef !== undefined && file.fieldRef !== null;
    const hasResource = file.resourceFieldRef !== undefined && file.resourceFieldRef !== null;
    if (hasField && hasResource) r.add(at, "Invalid value: \"\": fieldRef and resourceFieldRef can not be specified simultaneously");
    if (hasField) {
      const ref = r.object(file.fieldRef, `${at}.fieldRef`, true) ?? {};
      r.onlyFields(ref, `${at}.fieldRef`, new Set(["apiVersion", "fieldPath"]));
      const fieldPath = r.string(ref.fieldPath, `${at}.fieldRef.fieldPath`) ?? "";
      const subscript = /^metadata\.(labels|annotations)\['.+'\]$/.test(fieldPath);
      if (fieldPath === "") r.add(`${at}.fieldRef.fieldPath`, "Required value");
      else if (!subscript && !DOWNWARD_FIELD_PATHS.includes(fieldPath)) {
        r.add(`${at}.fieldRef.fieldPath`, `Unsupported value: "${fieldPath}": supported values: ${DOWNWARD_FIELD_PATHS.map((p) => `"${p}"`).join(", ")}`);
      }
    } else if (hasResource) {
      const ref = r.object(file.resourceFieldRef, `${at}.resourceFieldRef`, true) ?? {};
      r.onlyFields(ref, `${at}.resourceFieldRef`, new Set(["containerName", "resource", "divisor"]));
      if (!(r.string(ref.containerName, `${at}.resourceFieldRef.containerName`) ?? "")) r.add(`${at}.resourceFieldRef.containerName`, "Required value");
      if (!(r.string(ref.resource, `${at}.resourceFieldRef.resource`) ?? "")) r.add(`${at}.resourceFieldRef.resource`, "Required value");
    } else {
      r.add(at, "Required value: one of fieldRef and resourceFieldRef is required");
    }
  });
}

function checkProjected(r: FieldReader, source: JsonObject, field: string): void {
  r.onlyFields(source, field, new Set(["sources", "defaultMode"]));
  checkMode(r, source.defaultMode, `${field}.defaultMode`);
  const paths = new Set<string>();
  r.array(source.sources, `${field}.sources`).forEach((item, i) => {
    const at = `${field}.sources[${i}]`;
    const projection = r.object(item, at, true) ?? {};
    const given = Object.keys(projection).filter((k) => projection[k] !== null && projection[k] !== undefined);
    if (given.length !== 1) {
      r.add(at, given.length === 0 ? "Required value: must specify exactly 1 projected source" : "Forbidden: may not specify more than 1 volume type per source");
      return;
    }
    const kind = given[0];
    const body = r.object(projection[kind], `${at}.${kind}`, true) ?? {};
    if (kind === "configMap" || kind === "secret") checkObjectSource(r, body, `${at}.${kind}`, "name", paths, undefined, false);
    else if (kind === "downwardAPI") {
      r.onlyFields(body, `${at}.downwardAPI`, new Set(["items"]));
      checkDownwardItems(r, body.items, `${at}.downwardAPI.items`, paths);
    } else if (kind === "serviceAccountToken") {
      r.onlyFields(body, `${at}.serviceAccountToken`, new Set(["audience", "expirationSeconds", "path"]));
      r.string(body.audience, `${at}.serviceAccountToken.audience`);
      const seconds = r.integer(body.expirationSeconds, `${at}.serviceAccountToken.expirationSeconds`);
      if (seconds !== undefined && seconds < MIN_TOKEN_SECONDS) r.add(`${at}.serviceAccountToken.expirationSeconds`, "Invalid value: " + seconds + ": may not specify a duration less than 10 minutes");
      if (seconds !== undefined && seconds > MAX_TOKEN_SECONDS) r.add(`${at}.serviceAccountToken.expirationSeconds`, "Invalid value: " + seconds + ": may not specify a duration larger than 2^32 seconds");
      checkItemPath(r, body.path, `${at}.serviceAccountToken.path`, paths);
    } else {
      r.add(`${at}.${kind}`, NOT_IMPLEMENTED);
    }
  });
}

function checkVolumeSource(r: FieldReader, kind: string, source: JsonObject, field: string): void {
  switch (kind) {
    case "emptyDir": {
      r.onlyFields(source, field, new Set(["medium", "sizeLimit"]));
      const medium = r.string(source.medium, `${field}.medium`) ?? "";
      if (medium !== "" && medium !== "Memory") r.add(`${field}.medium`, `Unsupported value: "${medium}": supported values: "", "Memory"`);
      const size = source.sizeLimit;
      if (size !== undefined && typeof size !== "number") r.string(size, `${field}.sizeLimit`);
      return;
    }
    case "hostPath": {
      r.onlyFields(source, field, new Set(["path", "type"]));
      const p = r.string(source.path, `${field}.path`) ?? "";
      if (p === "") r.add(`${field}.path`, "Required value");
      else if (p.split("/").includes("..")) r.add(`${field}.path`, `Invalid value: "${p}": must not contain '..'`);
      const type = r.string(source.type, `${field}.type`) ?? "";
      if (!HOST_PATH_TYPES.includes(type)) r.add(`${field}.type`, `Unsupported value: "${type}": supported values: ${HOST_PATH_TYPES.map((t) => `"${t}"`).join(", ")}`);
      return;
    }
    case "configMap":
      checkObjectSource(r, source, field, "name", new Set(), "defaultMode", true);
      return;
    case "secret":
      checkObjectSource(r, source, field, "secretName", new Set(), "defaultMode", true);
      return;
    case "downwardAPI":
      r.onlyFields(source, field, new Set(["items", "defaultMode"]));
      checkMode(r, source.defaultMode, `${field}.defaultMode`);
      checkDownwardItems(r, source.items, `${field}.items`, new Set());
      return;
    case "projected":
      checkProjected(r, source, field);
      return;
    case "csi": {
      r.onlyFields(source, field, new Set(["driver", "readOnly", "fsType", "volumeAttributes", "nodePublishSecretRef"]));
      if (!(r.string(source.driver, `${field}.driver`) ?? "")) r.add(`${field}.driver`, "Required value");
      r.boolean(source.readOnly, `${field}.readOnly`);
      r.string(source.fsType, `${field}.fsType`);
      const attributes = source.volumeAttributes === undefined || source.volumeAttributes === null ? {} : r.object(source.volumeAttributes, `${field}.volumeAttributes`, true) ?? {};
      for (const [key, value] of Object.entries(attributes)) r.string(value, `${field}.volumeAttributes.${key.slice(0, 64)}`);
      if (source.nodePublishSecretRef !== undefined && source.nodePublishSecretRef !== null) {
        r.add(`${field}.nodePublishSecretRef`, "Unsupported value: nanolet does not pass secrets to CSI drivers yet");
      }
      return;
    }
    case "persistentVolumeClaim":
      r.onlyFields(source, field, new Set(["claimName", "readOnly"]));
      if (!(r.string(source.claimName, `${field}.claimName`) ?? "")) r.add(`${field}.claimName`, "Required value");
      r.boolean(source.readOnly, `${field}.readOnly`);
      return;
  }
}

/** Labels and annotations a downward API source shows (directly or in a projection), as a digest. */
function downwardVersion(volume: JsonObject, metadata: JsonObject): string {
  const text = JSON.stringify(volume);
  if (!text.includes("metadata.labels") && !text.includes("metadata.annotations")) return "";
  return createHash("sha256").update(JSON.stringify([metadata.labels ?? {}, metadata.annotations ?? {}])).digest("hex").slice(0, 16);
}

/**
 * Checks `spec.volumes` and returns them for the core. `staticPod`: a static pod cannot read
 * objects from the apiserver (the Node authorizer shows a node only its bound pods' objects).
 */
export function volumesOf(r: FieldReader, spec: JsonObject, metadata: JsonObject, staticPod: boolean): VolumeSpec[] {
  const out: VolumeSpec[] = [];
  const mounted = mountedVolumeNames(spec);
  r.array(spec.volumes, "spec.volumes").forEach((item, i) => {
    const at = `spec.volumes[${i}]`;
    const volume = r.object(item, at, true);
    if (!volume) return;
    const name = r.string(volume.name, `${at}.name`) ?? "";
    const types = Object.keys(volume).filter((k) => k !== "name" && volume[k] !== null && volume[k] !== undefined);
    if (types.length === 0) {
      r.add(at, "Required value: must specify a volume type");
      return;
    }
    if (types.length > 1) {
      r.add(`${at}.${types[1]}`, "Forbidden: may not specify more than 1 volume type");
      return;
    }
    const type = types[0];
    const kind = KINDS[type];
    if (!kind) {
      r.add(`${at}.${type}`, DRIVER_TYPES.has(type) ? "Unsupported field: nanolet has no in-tree volume plugins; use a CSI driver" : NOT_IMPLEMENTED);
      return;
    }
    const source = isObject(volume[type]) ? (volume[type] as JsonObject) : (r.object(volume[type], `${at}.${type}`, true) ?? {});
    checkVolumeSource(r, type, source, `${at}.${type}`);
    if (staticPod && (kind === "config-map" || kind === "secret" || kind === "projected" || kind === "persistent-volume-claim")) {
      r.add(`${at}.${type}`, "Forbidden: a static pod may not use a volume backed by apiserver objects (its node may read only the objects of pods bound to it)");
      return;
    }
    const sizeLimit = kind === "empty-dir" && source.sizeLimit !== undefined && source.sizeLimit !== null ? String(source.sizeLimit) : "";
    out.push({ name, kind, used: mounted.has(name), sizeLimit, sourceVersion: kind === "downward-api" || kind === "projected" ? downwardVersion(volume, metadata) : "" });
  });
  return out;
}

/** The volumes some container or init container mounts (upstream GetPodVolumeNames). */
function mountedVolumeNames(spec: JsonObject): Set<string> {
  const names = new Set<string>();
  for (const list of [spec.containers, spec.initContainers]) {
    for (const c of Array.isArray(list) ? list : []) {
      const mounts = isObject(c) && Array.isArray(c.volumeMounts) ? c.volumeMounts : [];
      for (const m of mounts) if (isObject(m) && typeof m.name === "string") names.add(m.name);
    }
  }
  return names;
}

/** Checks each `volumeMounts[]` of a container against the pod's volumes. */
export function checkVolumeMounts(r: FieldReader, value: unknown, field: string, volumeNames: ReadonlySet<string>, privileged: boolean): void {
  const mountPaths = new Set<string>();
  r.array(value, field).forEach((item, i) => {
    const at = `${field}[${i}]`;
    const mount = r.object(item, at, true) ?? {};
    r.onlyFields(mount, at, new Set(["name", "mountPath", "readOnly", "subPath", "subPathExpr", "mountPropagation", "recursiveReadOnly"]));
    const name = r.string(mount.name, `${at}.name`) ?? "";
    if (name === "") r.add(`${at}.name`, "Required value");
    else if (!volumeNames.has(name)) r.add(`${at}.name`, `Not found: "${name}"`);
    const mountPath = r.string(mount.mountPath, `${at}.mountPath`) ?? "";
    if (mountPath === "") r.add(`${at}.mountPath`, "Required value");
    else if (mountPaths.has(mountPath)) r.add(`${at}.mountPath`, `Invalid value: "${mountPath}": must be unique`);
    mountPaths.add(mountPath);
    r.boolean(mount.readOnly, `${at}.readOnly`);
    const subPath = r.string(mount.subPath, `${at}.subPath`) ?? "";
    const subPathExpr = r.string(mount.subPathExpr, `${at}.subPathExpr`) ?? "";
    if (subPath !== "" && subPathExpr !== "") r.add(`${at}.subPathExpr`, `Invalid value: "${subPathExpr}": subPathExpr and subPath are mutually exclusive`);
    for (const [p, key] of [[subPath, "subPath"], [subPathExpr, "subPathExpr"]]) {
      const problem = p === "" ? undefined : descendingPathProblem(p);
      if (problem) r.add(`${at}.${key}`, `Invalid value: "${p}": ${problem}`);
    }
    const propagation = r.string(mount.mountPropagation, `${at}.mountPropagation`);
    if (propagation !== undefined && !PROPAGATION_MODES.includes(propagation)) {
      r.add(`${at}.mountPropagation`, `Unsupported value: "${propagation}": supported values: "Bidirectional", "HostToContainer", "None"`);
    } else if (propagation === "Bidirectional" && !privileged) {
      r.add(`${at}.mountPropagation`, "Forbidden: Bidirectional mount propagation is available only to privileged containers");
    }
    const recursive = r.string(mount.recursiveReadOnly, `${at}.recursiveReadOnly`);
    if (recursive !== undefined && recursive !== "Disabled") r.add(`${at}.recursiveReadOnly`, NOT_IMPLEMENTED);
  });
}
