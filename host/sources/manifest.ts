// Turns one parsed Pod manifest (YAML or JSON) into the core's pod-spec, checking types field by
// field so that a bad manifest is reported with its file and field path. Semantic rules (names,
// policies, duplicates) are the core's job; this layer only checks shapes and types.
import { createHash } from "node:crypto";
import type { ContainerSpec, PodSpec } from "../core-types.js";

export class ManifestError extends Error {
  constructor(
    readonly field: string,
    readonly detail: string,
  ) {
    super(field ? `${field}: ${detail}` : detail);
    this.name = "ManifestError";
  }
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function isObject(value: unknown): value is Record<string, Json> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function objectAt(value: unknown, field: string, required = false): Record<string, Json> | undefined {
  if (value === undefined || value === null) {
    if (required) throw new ManifestError(field, "Required value");
    return undefined;
  }
  if (!isObject(value)) throw new ManifestError(field, `Invalid type: expected object, got ${typeName(value)}`);
  return value;
}

function stringAt(value: unknown, field: string, required = false): string | undefined {
  if (value === undefined || value === null) {
    if (required) throw new ManifestError(field, "Required value");
    return undefined;
  }
  if (typeof value !== "string") throw new ManifestError(field, `Invalid type: expected string, got ${typeName(value)}`);
  return value;
}

function stringListAt(value: unknown, field: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new ManifestError(field, `Invalid type: expected array of strings, got ${typeName(value)}`);
  return value.map((item, i) => stringAt(item, `${field}[${i}]`, true)!);
}

function quantityMap(value: unknown, field: string): { name: string; quantity: string }[] {
  const map = objectAt(value, field);
  if (!map) return [];
  return Object.keys(map)
    .sort()
    .map((name) => {
      const raw = map[name];
      // YAML turns `cpu: 1` into a number; Kubernetes accepts both.
      if (typeof raw === "number") return { name, quantity: String(raw) };
      return { name, quantity: stringAt(raw, `${field}[${name}]`, true)! };
    });
}

const SUPPORTED_CONTAINER_FIELDS = new Set([
  "name", "image", "command", "args", "env", "workingDir", "resources", "imagePullPolicy",
  "terminationMessagePath", "terminationMessagePolicy", "ports", "resizePolicy",
]);

const RESIZE_RESOURCES = new Set(["cpu", "memory"]);
const RESIZE_POLICIES = new Set(["NotRequired", "RestartContainer"]);

/** The resources whose `resizePolicy` is RestartContainer (a missing policy is NotRequired). */
function restartOnResizeAt(value: unknown, field: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new ManifestError(field, `Invalid type: expected array, got ${typeName(value)}`);
  const out: string[] = [];
  value.forEach((item, i) => {
    const p = objectAt(item, `${field}[${i}]`, true)!;
    const resource = stringAt(p.resourceName, `${field}[${i}].resourceName`, true)!;
    if (!RESIZE_RESOURCES.has(resource)) throw new ManifestError(`${field}[${i}].resourceName`, `Unsupported value: "${resource}": supported values: "cpu", "memory"`);
    const policy = stringAt(p.restartPolicy, `${field}[${i}].restartPolicy`, true)!;
    if (!RESIZE_POLICIES.has(policy)) throw new ManifestError(`${field}[${i}].restartPolicy`, `Unsupported value: "${policy}": supported values: "NotRequired", "RestartContainer"`);
    if (policy === "RestartContainer") out.push(resource);
  });
  return out;
}

const MEMORY_PRESSURE_TAINT = "node.kubernetes.io/memory-pressure";

/** Whether `spec.tolerations` tolerate the memory-pressure NoSchedule taint (upstream ToleratesTaint). */
function toleratesMemoryPressure(value: unknown): boolean {
  if (!Array.isArray(value)) return false;
  return value.some((t) => {
    if (t === null || typeof t !== "object") return false;
    const { key = "", operator = "Equal", value = "", effect = "" } = t as Record<string, unknown>;
    if (effect !== "" && effect !== "NoSchedule") return false;
    if (key !== "" && key !== MEMORY_PRESSURE_TAINT) return false;
    if (operator === "Exists") return true;
    return key === MEMORY_PRESSURE_TAINT && operator === "Equal" && value === "";
  });
}

/** `spec.priority` as a 32-bit integer (the priority admission plugin fills it in; 0 when unset). */
function priorityAt(value: unknown): number {
  if (value === undefined || value === null) return 0;
  if (typeof value !== "number" || !Number.isInteger(value) || value < -2147483648 || value > 2147483647) {
    throw new ManifestError("spec.priority", `Invalid type: expected 32-bit integer, got ${typeName(value)}`);
  }
  return value;
}

function containerAt(value: unknown, field: string, ignoredMounts: Set<string> = new Set()): ContainerSpec {
  const c = objectAt(value, field, true)!;
  for (const key of Object.keys(c)) {
    if (key === "volumeMounts" && mountsOnlyIgnored(c.volumeMounts, `${field}.volumeMounts`, ignoredMounts)) continue;
    if (!SUPPORTED_CONTAINER_FIELDS.has(key)) throw new ManifestError(`${field}.${key}`, "Unsupported field: nanolet does not implement it yet");
  }
  const env = c.env === undefined || c.env === null ? [] : c.env;
  if (!Array.isArray(env)) throw new ManifestError(`${field}.env`, `Invalid type: expected array, got ${typeName(env)}`);
  const resources = objectAt(c.resources, `${field}.resources`) ?? {};
  return {
    name: stringAt(c.name, `${field}.name`) ?? "",
    image: stringAt(c.image, `${field}.image`) ?? "",
    command: stringListAt(c.command, `${field}.command`),
    args: stringListAt(c.args, `${field}.args`),
    env: env.map((item, i) => {
      const e = objectAt(item, `${field}.env[${i}]`, true)!;
      if (e.valueFrom !== undefined) throw new ManifestError(`${field}.env[${i}].valueFrom`, "Unsupported field: nanolet does not implement it yet");
      const raw = e.value;
      const value = typeof raw === "number" || typeof raw === "boolean" ? String(raw) : stringAt(raw, `${field}.env[${i}].value`) ?? "";
      return { name: stringAt(e.name, `${field}.env[${i}].name`) ?? "", value };
    }),
    workingDir: stringAt(c.workingDir, `${field}.workingDir`) || undefined,
    requests: quantityMap(resources.requests, `${field}.resources.requests`),
    limits: quantityMap(resources.limits, `${field}.resources.limits`),
    restartOnResize: restartOnResizeAt(c.resizePolicy, `${field}.resizePolicy`),
  };
}

function mountsOnlyIgnored(value: unknown, field: string, ignored: Set<string>): boolean {
  if (!Array.isArray(value)) throw new ManifestError(field, `Invalid type: expected array, got ${typeName(value)}`);
  return value.every((m, i) => ignored.has(stringAt(objectAt(m, `${field}[${i}]`, true)!.name, `${field}[${i}].name`, true)!));
}

function integerAt(value: unknown, field: string): bigint | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value)) throw new ManifestError(field, `Invalid type: expected integer, got ${typeName(value)}`);
  return BigInt(value);
}

export interface ManifestContext {
  nodeName: string;
  /** File the manifest came from; part of a static pod's uid, as upstream. */
  source: string;
  /** Position of the document in its file (several documents per file are allowed). */
  documentIndex: number;
}

/**
 * Converts a parsed manifest into a pod-spec. Static pods get upstream's treatment: namespace
 * "default" when unset, the node name appended to the pod name, and a uid hashed from the
 * manifest and its source when it has none (so an edited manifest is a new pod).
 */
export function podFromManifest(doc: unknown, ctx: ManifestContext): PodSpec {
  const pod = objectAt(doc, "", true)!;
  const kind = stringAt(pod.kind, "kind", true);
  if (kind !== "Pod") throw new ManifestError("kind", `Unsupported value: "${kind}": supported values: "Pod"`);
  const apiVersion = stringAt(pod.apiVersion, "apiVersion", true);
  if (apiVersion !== "v1") throw new ManifestError("apiVersion", `Unsupported value: "${apiVersion}": supported values: "v1"`);
  const metadata = objectAt(pod.metadata, "metadata") ?? {};
  const spec = objectAt(pod.spec, "spec", true)!;
  const name = stringAt(metadata.name, "metadata.name") ?? "";
  const namespace = stringAt(metadata.namespace, "metadata.namespace") || "default";
  const containersRaw = spec.containers;
  if (containersRaw !== undefined && containersRaw !== null && !Array.isArray(containersRaw)) {
    throw new ManifestError("spec.containers", `Invalid type: expected array, got ${typeName(containersRaw)}`);
  }
  if (spec.initContainers !== undefined) throw new ManifestError("spec.initContainers", "Unsupported field: nanolet does not implement it yet");
  if (spec.volumes !== undefined) throw new ManifestError("spec.volumes", "Unsupported field: nanolet does not implement it yet");
  const hostNetwork = spec.hostNetwork ?? false;
  if (typeof hostNetwork !== "boolean") throw new ManifestError("spec.hostNetwork", `Invalid type: expected boolean, got ${typeName(hostNetwork)}`);
  const uid =
    stringAt(metadata.uid, "metadata.uid") ||
    createHash("md5")
      .update(JSON.stringify(doc))
      .update(`host:${ctx.nodeName}`)
      .update(`file:${ctx.source}#${ctx.documentIndex}`)
      .digest("hex");
  return {
    uid,
    namespace,
    name: name ? `${name}-${ctx.nodeName}` : "",
    restartPolicy: stringAt(spec.restartPolicy, "spec.restartPolicy") ?? "",
    terminationGracePeriodSeconds: integerAt(spec.terminationGracePeriodSeconds, "spec.terminationGracePeriodSeconds"),
    hostNetwork,
    containers: (containersRaw ?? []).map((c, i) => containerAt(c, `spec.containers[${i}]`)),
    deletionGracePeriodSeconds: undefined,
    reportedTerminalPhase: undefined,
    priority: priorityAt(spec.priority),
    staticPod: true,
    toleratesMemoryPressure: toleratesMemoryPressure(spec.tolerations),
  };
}

/**
 * The volumes nanolet may leave unmounted: the service account token volume the apiserver adds
 * to every pod (`kube-api-access-*`, a projected token, CA and namespace). nanolet does not
 * mount volumes yet; refusing every pod for this one would refuse every pod of a real cluster.
 */
function ignorableVolumes(spec: Record<string, Json>): Set<string> {
  const names = new Set<string>();
  if (spec.volumes === undefined || spec.volumes === null) return names;
  if (!Array.isArray(spec.volumes)) throw new ManifestError("spec.volumes", `Invalid type: expected array, got ${typeName(spec.volumes)}`);
  spec.volumes.forEach((v, i) => {
    const volume = objectAt(v, `spec.volumes[${i}]`, true)!;
    const name = stringAt(volume.name, `spec.volumes[${i}].name`, true)!;
    if (!name.startsWith("kube-api-access-") || volume.projected === undefined) {
      throw new ManifestError(`spec.volumes[${i}]`, "Unsupported field: nanolet does not mount volumes yet");
    }
    names.add(name);
  });
  return names;
}

const TERMINAL_PHASES: Record<string, "succeeded" | "failed" | undefined> = { Succeeded: "succeeded", Failed: "failed" };

/**
 * Converts a Pod object from the apiserver into a pod-spec: its uid and name as they are, and
 * its deletion mark (`metadata.deletionTimestamp` with `deletionGracePeriodSeconds`).
 */
export function podFromApiObject(doc: unknown): PodSpec {
  const pod = objectAt(doc, "", true)!;
  const metadata = objectAt(pod.metadata, "metadata", true)!;
  const spec = objectAt(pod.spec, "spec", true)!;
  const containersRaw = spec.containers;
  if (containersRaw !== undefined && containersRaw !== null && !Array.isArray(containersRaw)) {
    throw new ManifestError("spec.containers", `Invalid type: expected array, got ${typeName(containersRaw)}`);
  }
  if (spec.initContainers !== undefined && spec.initContainers !== null) throw new ManifestError("spec.initContainers", "Unsupported field: nanolet does not implement it yet");
  const ignored = ignorableVolumes(spec);
  const hostNetwork = spec.hostNetwork ?? false;
  if (typeof hostNetwork !== "boolean") throw new ManifestError("spec.hostNetwork", `Invalid type: expected boolean, got ${typeName(hostNetwork)}`);
  const deleting = metadata.deletionTimestamp !== undefined && metadata.deletionTimestamp !== null;
  return {
    uid: stringAt(metadata.uid, "metadata.uid", true)!,
    namespace: stringAt(metadata.namespace, "metadata.namespace") || "default",
    name: stringAt(metadata.name, "metadata.name", true)!,
    restartPolicy: stringAt(spec.restartPolicy, "spec.restartPolicy") ?? "",
    terminationGracePeriodSeconds: integerAt(spec.terminationGracePeriodSeconds, "spec.terminationGracePeriodSeconds"),
    hostNetwork,
    containers: (containersRaw ?? []).map((c, i) => containerAt(c, `spec.containers[${i}]`, ignored)),
    deletionGracePeriodSeconds: deleting ? integerAt(metadata.deletionGracePeriodSeconds, "metadata.deletionGracePeriodSeconds") ?? 0n : undefined,
    // Finished pods stay desired (their containers keep their logs) but never start again.
    reportedTerminalPhase: TERMINAL_PHASES[String(objectAt(pod.status, "status")?.phase ?? "")],
    priority: priorityAt(spec.priority),
    staticPod: false,
    toleratesMemoryPressure: toleratesMemoryPressure(spec.tolerations),
  };
}
