// Turns one parsed Pod manifest (YAML or JSON) into the core's pod-spec, checking types field by
// field so that a bad manifest is reported with its file and field path. Semantic rules (names,
// policies, duplicates) are the core's job; this layer only checks shapes and types.
import { createHash } from "node:crypto";
import type { ContainerSpec, EphemeralContainer, PodSpec } from "../core/types.js";
import { FieldReader, fieldKey, isObject, NOT_IMPLEMENTED, type JsonObject } from "./field-reader.js";
import { checkHostNetworkPorts, checkImagePullPolicy, checkPorts, checkTerminationMessage, checkTolerations } from "./pod-fields.js";
import { checkNamingFields } from "./dns-fields.js";
import { checkContainerSecurityContext, checkPodSecurityContext } from "./security-fields.js";
import { checkPlacement } from "./affinity-fields.js";
import { lifecycleOf, portsOf, probeOf, readinessGatesOf } from "./probe-fields.js";
import { checkEnvFrom, envSourceOf } from "./env-fields.js";
import { checkVolumeMounts, volumesOf } from "./volume-fields.js";

export { ManifestError } from "./field-reader.js";

function quantityMap(r: FieldReader, value: unknown, field: string): { name: string; quantity: string }[] {
  const map = r.object(value, field);
  if (!map) return [];
  return Object.keys(map)
    .sort()
    .map((name) => {
      const raw = map[name];
      // YAML turns `cpu: 1` into a number; Kubernetes accepts both.
      if (typeof raw === "number" && Number.isFinite(raw)) return { name, quantity: String(raw) };
      return { name, quantity: r.string(raw, `${field}[${name}]`, true) ?? "0" };
    });
}

/** Container fields nanolet acts on, or that only describe (ports) or carry defaults the apiserver fills in. */
const CONTAINER_FIELDS = new Set([
  "name", "image", "command", "args", "env", "workingDir", "resources", "imagePullPolicy",
  "terminationMessagePath", "terminationMessagePolicy", "ports", "resizePolicy",
  "startupProbe", "livenessProbe", "readinessProbe", "restartPolicy", "lifecycle",
  "securityContext", "stdin", "stdinOnce", "tty", "volumeMounts", "envFrom",
]);
/** Container fields that mean nothing when false or empty (the apiserver writes some of them). */
const CONTAINER_FIELDS_IF_EMPTY = new Set(["volumeDevices"]);

/**
 * Pod spec fields nanolet acts on, and those that are the scheduler's or the apiserver's alone
 * (placing the pod, defaulting it), which a node has nothing to do for once the pod is bound.
 */
const POD_SPEC_FIELDS = new Set([
  "containers", "restartPolicy", "terminationGracePeriodSeconds", "hostNetwork", "priority", "tolerations",
  "dnsPolicy", "nodeName", "schedulerName", "priorityClassName", "preemptionPolicy", "serviceAccountName",
  "serviceAccount", "automountServiceAccountToken", "enableServiceLinks", "topologySpreadConstraints", "schedulingGates",
  "readinessGates", "initContainers", "activeDeadlineSeconds", "ephemeralContainers",
  "securityContext", "hostPID", "hostIPC", "shareProcessNamespace", "hostAliases", "dnsConfig", "hostname", "subdomain",
  "setHostnameAsFQDN", "nodeSelector", "affinity", "volumes", "imagePullSecrets", "runtimeClassName", "overhead",
]);
/**
 * Pod spec fields nanolet does not implement but accepts when they say nothing: the apiserver
 * writes `securityContext: {}` into every pod, and `hostPID: false` asks for nothing.
 */
const POD_SPEC_FIELDS_IF_EMPTY = new Set([
  "resourceClaims",
  "os", "hostUsers", "resources",
]);
const POD_FIELDS = new Set(["apiVersion", "kind", "metadata", "spec", "status"]);

const RESIZE_RESOURCES = new Set(["cpu", "memory"]);
const RESIZE_POLICIES = new Set(["NotRequired", "RestartContainer"]);

/** The resources whose `resizePolicy` is RestartContainer (a missing policy is NotRequired). */
function restartOnResizeAt(r: FieldReader, value: unknown, field: string): string[] {
  const out: string[] = [];
  r.array(value, field).forEach((item, i) => {
    const p = r.object(item, `${field}[${i}]`, true);
    if (!p) return;
    const resource = r.string(p.resourceName, `${field}[${i}].resourceName`, true);
    if (resource !== undefined && !RESIZE_RESOURCES.has(resource)) r.add(`${field}[${i}].resourceName`, `Unsupported value: "${resource}": supported values: "cpu", "memory"`);
    const policy = r.string(p.restartPolicy, `${field}[${i}].restartPolicy`, true);
    if (policy !== undefined && !RESIZE_POLICIES.has(policy)) r.add(`${field}[${i}].restartPolicy`, `Unsupported value: "${policy}": supported values: "NotRequired", "RestartContainer"`);
    if (policy === "RestartContainer" && resource !== undefined) out.push(resource);
  });
  return out;
}

const MEMORY_PRESSURE_TAINT = "node.kubernetes.io/memory-pressure";

/** Whether `spec.tolerations` tolerate the memory-pressure NoSchedule taint (upstream ToleratesTaint). */
function toleratesMemoryPressure(value: unknown): boolean {
  if (!Array.isArray(value)) return false;
  return value.some((t) => {
    if (!isObject(t)) return false;
    const { key = "", operator = "Equal", value = "", effect = "" } = t as Record<string, unknown>;
    if (effect !== "" && effect !== "NoSchedule") return false;
    if (key !== "" && key !== MEMORY_PRESSURE_TAINT) return false;
    if (operator === "Exists") return true;
    return key === MEMORY_PRESSURE_TAINT && operator === "Equal" && value === "";
  });
}

/** Every volume's name, whether or not the volume is valid (a mount of an invalid one is not "Not found"). */
function volumeNamesOf(spec: JsonObject): Set<string> {
  const list = Array.isArray(spec.volumes) ? spec.volumes : [];
  return new Set(list.map((v) => (isObject(v) && typeof v.name === "string" ? v.name : "")).filter((n) => n !== ""));
}

/** What a container's checks need of its pod. */
interface PodContext {
  volumeNames: ReadonlySet<string>;
  /** A static pod: it cannot read configMaps or secrets from the apiserver. */
  staticPod: boolean;
}

const STATIC_OBJECT_REF = "Forbidden: a static pod may not reference configMaps or secrets (its node may read only the objects of pods bound to it)";

function containerAt(r: FieldReader, value: unknown, field: string, pod: PodContext): ContainerSpec {
  const c = r.object(value, field, true) ?? {};
  for (const key of Object.keys(c)) {
    if (CONTAINER_FIELDS.has(key)) continue;
    if (CONTAINER_FIELDS_IF_EMPTY.has(key) && isEmptyField(c[key])) continue;
    r.add(`${field}.${key}`, NOT_IMPLEMENTED);
  }
  const privileged = isObject(c.securityContext) && c.securityContext.privileged === true;
  checkVolumeMounts(r, c.volumeMounts, `${field}.volumeMounts`, pod.volumeNames, privileged);
  checkEnvFrom(r, c.envFrom, `${field}.envFrom`);
  if (pod.staticPod && !isEmptyField(c.envFrom)) r.add(`${field}.envFrom`, STATIC_OBJECT_REF);
  const resources = r.object(c.resources, `${field}.resources`) ?? {};
  r.onlyFields(resources, `${field}.resources`, new Set(["requests", "limits"]), new Set(["claims"]));
  checkPorts(r, c.ports, `${field}.ports`);
  checkImagePullPolicy(r, c.imagePullPolicy, `${field}.imagePullPolicy`);
  checkTerminationMessage(r, c, field);
  checkContainerSecurityContext(r, c.securityContext, `${field}.securityContext`);
  for (const key of ["stdin", "stdinOnce", "tty"]) r.boolean(c[key], `${field}.${key}`);
  const ports = portsOf(c.ports);
  const portNames = new Set(ports.map((p) => p.name).filter((name) => name !== ""));
  return {
    name: r.string(c.name, `${field}.name`) ?? "",
    image: r.string(c.image, `${field}.image`) ?? "",
    command: r.stringList(c.command, `${field}.command`),
    args: r.stringList(c.args, `${field}.args`),
    env: r.array(c.env, `${field}.env`).map((item, i) => {
      const e = r.object(item, `${field}.env[${i}]`, true) ?? {};
      r.onlyFields(e, `${field}.env[${i}]`, new Set(["name", "value", "valueFrom"]));
      const raw = e.value;
      const value = typeof raw === "number" || typeof raw === "boolean" ? String(raw) : r.string(raw, `${field}.env[${i}].value`) ?? "";
      const valueFrom = envSourceOf(r, e.valueFrom, `${field}.env[${i}].valueFrom`);
      if (pod.staticPod && isObject(e.valueFrom) && (e.valueFrom.configMapKeyRef || e.valueFrom.secretKeyRef)) r.add(`${field}.env[${i}].valueFrom`, STATIC_OBJECT_REF);
      return { name: r.string(e.name, `${field}.env[${i}].name`) ?? "", value, ...(valueFrom ? { valueFrom } : {}) };
    }),
    workingDir: r.string(c.workingDir, `${field}.workingDir`) || undefined,
    requests: quantityMap(r, resources.requests, `${field}.resources.requests`),
    limits: quantityMap(r, resources.limits, `${field}.resources.limits`),
    restartOnResize: restartOnResizeAt(r, c.resizePolicy, `${field}.resizePolicy`),
    ports,
    startupProbe: probeOf(r, c.startupProbe, `${field}.startupProbe`, "startupProbe", portNames),
    livenessProbe: probeOf(r, c.livenessProbe, `${field}.livenessProbe`, "livenessProbe", portNames),
    readinessProbe: probeOf(r, c.readinessProbe, `${field}.readinessProbe`, "readinessProbe", portNames),
    restartPolicy: r.string(c.restartPolicy, `${field}.restartPolicy`) ?? "",
    imagePullPolicy: r.string(c.imagePullPolicy, `${field}.imagePullPolicy`) ?? "",
    ...lifecycleOf(r, c.lifecycle, `${field}.lifecycle`, portNames),
  };
}

function isEmptyField(value: unknown): boolean {
  if (value === null || value === undefined || value === false) return true;
  if (Array.isArray(value)) return value.length === 0;
  return isObject(value) && Object.keys(value).length === 0;
}

function integerAt(r: FieldReader, value: unknown, field: string): bigint | undefined {
  const n = r.integer(value, field);
  return n === undefined ? undefined : BigInt(n);
}

/** The fields of `spec` both sources share: an allowlist, the rest refused by name. */
function checkSpecFields(r: FieldReader, spec: JsonObject): void {
  for (const key of Object.keys(spec)) {
    if (POD_SPEC_FIELDS.has(key)) continue;
    if (POD_SPEC_FIELDS_IF_EMPTY.has(key) && isEmptyField(spec[key])) continue;
    r.add(`spec.${key}`, NOT_IMPLEMENTED);
  }
  checkTolerations(r, spec.tolerations);
  checkNamingFields(r, spec);
  checkPodSecurityContext(r, spec);
  checkHostNetworkPorts(r, spec);
  checkPlacement(r, spec.nodeSelector, spec.affinity);
  r.array(spec.imagePullSecrets, "spec.imagePullSecrets").forEach((item, i) => {
    const ref = r.object(item, `spec.imagePullSecrets[${i}]`, true) ?? {};
    r.onlyFields(ref, `spec.imagePullSecrets[${i}]`, new Set(["name"]));
    r.string(ref.name, `spec.imagePullSecrets[${i}].name`);
  });
  r.string(spec.nodeName, "spec.nodeName");
  r.string(spec.priorityClassName, "spec.priorityClassName");
  // A RuntimeClass's name is a DNS subdomain (upstream's ValidateRuntimeClassName).
  const runtimeClass = r.string(spec.runtimeClassName, "spec.runtimeClassName");
  if (runtimeClass !== undefined && (runtimeClass.length > 253 || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(runtimeClass))) {
    r.add("spec.runtimeClassName", `Invalid value: ${JSON.stringify(runtimeClass.slice(0, 64))}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`);
  }
}

/** `spec.overhead` (cpu and memory as quantities), sorted by name. */
function overheadOf(r: FieldReader, spec: JsonObject): { name: string; quantity: string }[] {
  return quantityMap(r, spec.overhead, "spec.overhead");
}

/** `spec.containers` as a list (a wrong type is one problem, not one per item). */
function containersOf(r: FieldReader, spec: JsonObject, pod: PodContext): ContainerSpec[] {
  return r.array(spec.containers, "spec.containers").map((c, i) => containerAt(r, c, `spec.containers[${i}]`, pod));
}

/** `spec.initContainers`, read as containers are. */
function initContainersOf(r: FieldReader, spec: JsonObject, pod: PodContext): ContainerSpec[] {
  return r.array(spec.initContainers, "spec.initContainers").map((c, i) => containerAt(r, c, `spec.initContainers[${i}]`, pod));
}

/**
 * `spec.ephemeralContainers` (added to a running pod by `kubectl debug`), read as containers are,
 * with their `targetContainerName`. A pod is never created with them: a static manifest that has
 * them is refused, as the apiserver refuses them on create.
 */
function ephemeralContainersOf(r: FieldReader, spec: JsonObject, pod: PodContext): EphemeralContainer[] {
  if (pod.staticPod) {
    if (!isEmptyField(spec.ephemeralContainers)) r.add("spec.ephemeralContainers", "Forbidden: cannot be set on create");
    return [];
  }
  return r.array(spec.ephemeralContainers, "spec.ephemeralContainers").map((item, i) => {
    const field = `spec.ephemeralContainers[${i}]`;
    const c = r.object(item, field, true) ?? {};
    const { targetContainerName, ...rest } = c;
    return { container: containerAt(r, rest, field, pod), targetContainerName: r.string(targetContainerName, `${field}.targetContainerName`) ?? "" };
  });
}

export interface ManifestContext {
  nodeName: string;
  /** File the manifest came from; part of a static pod's uid, as upstream. */
  source: string;
  /** Position of the document in its file (several documents per file are allowed). */
  documentIndex: number;
  /** Served by a URL (`--manifest-url`): the uid is hashed from the manifest and the URL, as upstream's http source does. */
  fromUrl?: boolean;
  /**
   * The manifest stands for an apiserver's pod (the simulator's apiserver source): what only such
   * a pod may have (ephemeral containers, references to the apiserver's objects) is allowed.
   */
  fromApiserver?: boolean;
}

/**
 * Converts a parsed manifest into a pod-spec. Static pods get upstream's treatment: namespace
 * "default" when unset, the node name appended to the pod name, and a uid hashed from the
 * manifest and its source when it has none (so an edited manifest is a new pod).
 */
export function podFromManifest(doc: unknown, ctx: ManifestContext): PodSpec {
  const r = new FieldReader();
  const pod = r.object(doc, "", true);
  if (!pod) r.done();
  // What is not a Pod at all (no apiVersion or kind, or another kind) is refused as a whole:
  // its fields mean nothing here, and naming them would echo whatever the file holds.
  if (pod!.kind === undefined && pod!.apiVersion === undefined) {
    r.add("", "not a Pod manifest: it has neither apiVersion nor kind (a Pod manifest says apiVersion: v1, kind: Pod)");
    r.done();
  }
  if (typeof pod!.kind === "string" && pod!.kind !== "Pod") {
    r.add("kind", `Unsupported value: ${JSON.stringify(fieldKey(pod!.kind))}: supported values: "Pod"`);
    r.done();
  }
  r.onlyFields(pod!, "", POD_FIELDS);
  const kind = r.string(pod!.kind, "kind", true);
  if (kind !== undefined && kind !== "Pod") r.add("kind", `Unsupported value: "${kind}": supported values: "Pod"`);
  const apiVersion = r.string(pod!.apiVersion, "apiVersion", true);
  if (apiVersion !== undefined && apiVersion !== "v1") r.add("apiVersion", `Unsupported value: "${apiVersion}": supported values: "v1"`);
  const metadata = r.object(pod!.metadata, "metadata") ?? {};
  const spec = r.object(pod!.spec, "spec", true) ?? {};
  const name = r.string(metadata.name, "metadata.name") ?? "";
  const namespace = r.string(metadata.namespace, "metadata.namespace") || "default";
  const explicitUid = r.string(metadata.uid, "metadata.uid");
  r.stringMap(metadata.labels, "metadata.labels");
  r.stringMap(metadata.annotations, "metadata.annotations");
  checkSpecFields(r, spec);
  if (!isEmptyField(spec.imagePullSecrets)) r.add("spec.imagePullSecrets", STATIC_OBJECT_REF);
  const volumes = volumesOf(r, spec, metadata, true);
  const podContext = { volumeNames: volumeNamesOf(spec), staticPod: ctx.fromApiserver !== true };
  const hostNetwork = r.boolean(spec.hostNetwork, "spec.hostNetwork") ?? false;
  const containers = containersOf(r, spec, podContext);
  const initContainers = initContainersOf(r, spec, podContext);
  const ephemeralContainers = ephemeralContainersOf(r, spec, podContext);
  const terminationGracePeriodSeconds = integerAt(r, spec.terminationGracePeriodSeconds, "spec.terminationGracePeriodSeconds");
  const priority = r.integer(spec.priority, "spec.priority", -2147483648, 2147483647) ?? 0;
  const restartPolicy = r.string(spec.restartPolicy, "spec.restartPolicy") ?? "";
  const readinessGates = readinessGatesOf(r, spec.readinessGates, undefined);
  const activeDeadlineSeconds = integerAt(r, spec.activeDeadlineSeconds, "spec.activeDeadlineSeconds");
  const overhead = overheadOf(r, spec);
  r.done();
  const uid =
    explicitUid ||
    (ctx.fromUrl
      ? createHash("md5").update(JSON.stringify(doc)).update(`url:${ctx.source}#${ctx.documentIndex}`).digest("hex")
      : createHash("md5")
          .update(JSON.stringify(doc))
          .update(`host:${ctx.nodeName}`)
          .update(`file:${ctx.source}#${ctx.documentIndex}`)
          .digest("hex"));
  return {
    uid,
    namespace,
    name: name ? `${name}-${ctx.nodeName}` : "",
    restartPolicy,
    terminationGracePeriodSeconds,
    hostNetwork,
    containers,
    deletionGracePeriodSeconds: undefined,
    reportedTerminalPhase: undefined,
    priority,
    staticPod: true,
    toleratesMemoryPressure: toleratesMemoryPressure(spec.tolerations),
    readinessGates,
    initContainers,
    activeDeadlineSeconds,
    volumes,
    ephemeralContainers,
    overhead,
  };
}

const TERMINAL_PHASES: Record<string, "succeeded" | "failed" | undefined> = { Succeeded: "succeeded", Failed: "failed" };

/**
 * Converts a Pod object from the apiserver into a pod-spec: its uid and name as they are, and
 * its deletion mark (`metadata.deletionTimestamp` with `deletionGracePeriodSeconds`).
 */
export function podFromApiObject(doc: unknown): PodSpec {
  const r = new FieldReader();
  const pod = r.object(doc, "", true);
  if (!pod) r.done();
  const metadata = r.object(pod!.metadata, "metadata", true) ?? {};
  const spec = r.object(pod!.spec, "spec", true) ?? {};
  checkSpecFields(r, spec);
  const volumes = volumesOf(r, spec, metadata, false);
  const podContext = { volumeNames: volumeNamesOf(spec), staticPod: false };
  const hostNetwork = r.boolean(spec.hostNetwork, "spec.hostNetwork") ?? false;
  const containers = containersOf(r, spec, podContext);
  const initContainers = initContainersOf(r, spec, podContext);
  const ephemeralContainers = ephemeralContainersOf(r, spec, podContext);
  const deleting = metadata.deletionTimestamp !== undefined && metadata.deletionTimestamp !== null;
  const uid = r.string(metadata.uid, "metadata.uid", true) ?? "";
  const namespace = r.string(metadata.namespace, "metadata.namespace") || "default";
  const name = r.string(metadata.name, "metadata.name", true) ?? "";
  const restartPolicy = r.string(spec.restartPolicy, "spec.restartPolicy") ?? "";
  const terminationGracePeriodSeconds = integerAt(r, spec.terminationGracePeriodSeconds, "spec.terminationGracePeriodSeconds");
  const deletionGracePeriodSeconds = deleting ? integerAt(r, metadata.deletionGracePeriodSeconds, "metadata.deletionGracePeriodSeconds") ?? 0n : undefined;
  const priority = r.integer(spec.priority, "spec.priority", -2147483648, 2147483647) ?? 0;
  const status = r.object(pod!.status, "status");
  const readinessGates = readinessGatesOf(r, spec.readinessGates, status);
  const activeDeadlineSeconds = integerAt(r, spec.activeDeadlineSeconds, "spec.activeDeadlineSeconds");
  // The apiserver's start time (set by this node's first status), for the active deadline.
  const startMs = typeof status?.startTime === "string" ? Date.parse(status.startTime) : NaN;
  const overhead = overheadOf(r, spec);
  r.done();
  return {
    uid,
    namespace,
    name,
    restartPolicy,
    terminationGracePeriodSeconds,
    hostNetwork,
    containers,
    deletionGracePeriodSeconds,
    // Finished pods stay desired (their containers keep their logs) but never start again.
    reportedTerminalPhase: TERMINAL_PHASES[String(status?.phase ?? "")],
    priority,
    staticPod: false,
    toleratesMemoryPressure: toleratesMemoryPressure(spec.tolerations),
    readinessGates,
    initContainers,
    activeDeadlineSeconds,
    startTimeMs: Number.isFinite(startMs) && startMs > 0 ? BigInt(startMs) : undefined,
    volumes,
    ephemeralContainers,
    overhead,
  };
}
