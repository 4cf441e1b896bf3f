// A container's environment as the kubelet makes it at creation (makeEnvironmentVariables):
// `valueFrom` resolved from the pod and its resources, then `$(VAR)` references expanded in env
// values (each against the variables before it), command and args (against all of them), with
// `$$` as an escaped `$` and an unknown or unclosed reference left as written.
import type { ContainerSpec } from "../core/types.js";

/** What a container's env may read of its pod and node, known at creation. */
export interface PodFacts {
  name: string;
  namespace: string;
  uid: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  nodeName: string;
  serviceAccountName: string;
  hostIps: string[];
  podIps: string[];
  /** Every container of the pod (regular and init), for resourceFieldRef.containerName. */
  containers: ContainerSpec[];
  /** What an unset limit means (the node's allocatable), as quantities. */
  allocatable: { cpu: string; memory: string; "ephemeral-storage": string };
  /**
   * The service environment variables for this pod (host/env/service-env.ts): under the
   * container's own, a source for `$(VAR)`, and added where the container does not set the name.
   */
  serviceEnv?: Record<string, string>;
  /** The node has an apiserver but has not listed its Services yet: no env can be made. */
  servicesUnknown?: boolean;
  /** The pod's spec as its source gave it (DNS, ports, security, hosts file). */
  spec?: Record<string, any>;
  /**
   * The configMaps and secrets the container's env reads (`configmaps/<name>`, `secrets/<name>`),
   * fetched before the env is made: an object, or undefined when it does not exist.
   */
  envObjects?: Map<string, Record<string, any> | undefined>;
  /** Each container's `terminationMessagePath` and `terminationMessagePolicy`, by name. */
  terminationMessages?: Record<string, { path: string; policy: string }>;
}

export class EnvError extends Error {}

const SUFFIX: Record<string, number> = {
  "": 1, n: 1e-9, u: 1e-6, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};

/** A Kubernetes quantity as a number of base units (cores, bytes); NaN if unreadable. */
export function quantityValue(text: string): number {
  const m = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?)$/.exec(text.trim());
  if (!m) return NaN;
  const base = Number(m[1] + (m[2] ?? ""));
  return base * SUFFIX[m[3] ?? ""];
}

/** `metadata.labels['k']` → ["labels", "k"]. */
function subscript(path: string): [string, string] | undefined {
  const m = /^metadata\.(labels|annotations)\['(.*)'\]$/.exec(path);
  return m ? [m[1], m[2]] : undefined;
}

export function fieldValue(path: string, facts: PodFacts): string {
  switch (path) {
    case "metadata.name":
      return facts.name;
    case "metadata.namespace":
      return facts.namespace;
    case "metadata.uid":
      return facts.uid;
    case "spec.nodeName":
      return facts.nodeName;
    case "spec.serviceAccountName":
      return facts.serviceAccountName;
    case "status.hostIP":
      return facts.hostIps[0] ?? "";
    case "status.hostIPs":
      return facts.hostIps.join(",");
    case "status.podIP":
      return facts.podIps[0] ?? "";
    case "status.podIPs":
      return facts.podIps.join(",");
  }
  const sub = subscript(path);
  if (sub) return (sub[0] === "labels" ? facts.labels : facts.annotations)[sub[1]] ?? "";
  throw new EnvError(`unsupported fieldPath: ${path}`);
}

export function resourceValue(selector: { containerName: string; resource: string; divisor: string }, self: ContainerSpec, facts: PodFacts): string {
  const container = selector.containerName ? facts.containers.find((c) => c.name === selector.containerName) : self;
  if (!container) throw new EnvError(`container ${selector.containerName} not found`);
  const [kind, name] = selector.resource.split(".", 2) as ["limits" | "requests", string];
  const list = kind === "limits" ? container.limits : container.requests;
  let written = list.find((q) => q.name === name)?.quantity;
  // An unset limit is the node's allocatable, as upstream merges it before resolving.
  if (written === undefined && kind === "limits" && name in facts.allocatable) written = facts.allocatable[name as keyof PodFacts["allocatable"]];
  const value = written === undefined ? 0 : quantityValue(written);
  // A zero divisor is the API's default (the apiserver stores `divisor: "0"`): it means 1.
  const writtenDivisor = quantityValue(selector.divisor || "1");
  const divisor = writtenDivisor === 0 ? 1 : writtenDivisor;
  if (!(divisor > 0) || Number.isNaN(value)) throw new EnvError(`invalid quantity for ${selector.resource}`);
  // CPU rounds up in millicores, the rest in whole units, as upstream's conversions do.
  if (name === "cpu") return String(Math.ceil(Math.round(value * 1000) / Math.round(divisor * 1000)));
  return String(Math.ceil(value / divisor));
}

/** Upstream's expansion of `$(VAR)` in `input`, `lookup` giving undefined for an unknown name. */
export function expand(input: string, lookup: (name: string) => string | undefined): string {
  let out = "";
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== "$" || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const next = input[cursor + 1];
    let advance = 1;
    if (next === "$") {
      out += "$"; // an escaped operator
    } else if (next === "(") {
      const close = input.indexOf(")", cursor + 2);
      if (close < 0) {
        out += "$("; // an unclosed reference stays as written
      } else {
        const name = input.slice(cursor + 2, close);
        out += lookup(name) ?? `$(${name})`;
        advance = close - cursor;
      }
    } else {
      out += "$" + next;
    }
    cursor += advance;
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}

/** The container as its pod object has it (env sources the core does not carry). */
function rawContainer(container: ContainerSpec, facts: PodFacts): Record<string, any> | undefined {
  const spec = facts.spec ?? {};
  return [...(spec.containers ?? []), ...(spec.initContainers ?? [])].find((c: Record<string, any>) => c?.name === container.name);
}

/** The string values of a configMap (data, binaryData) or secret (data, decoded). */
function objectValues(kind: string, object: Record<string, any>): Record<string, string> {
  const out: Record<string, string> = {};
  if (kind === "configmaps") {
    for (const [k, v] of Object.entries(object.data ?? {})) out[k] = String(v);
    for (const [k, v] of Object.entries(object.binaryData ?? {})) out[k] = Buffer.from(String(v), "base64").toString("utf8");
  } else {
    for (const [k, v] of Object.entries(object.data ?? {})) out[k] = Buffer.from(String(v), "base64").toString("utf8");
  }
  return out;
}

/** One configMap or secret as env reads it; undefined when missing and optional. */
function envObject(facts: PodFacts, kind: "configmaps" | "secrets", name: string, optional: boolean): Record<string, string> | undefined {
  const key = `${kind}/${name}`;
  const object = facts.envObjects?.get(key);
  if (!object) {
    if (optional) return undefined;
    throw new EnvError(`${kind === "configmaps" ? "configmap" : "secret"} "${name}" not found`);
  }
  return objectValues(kind, object);
}

/** A `configMapKeyRef` or `secretKeyRef` value; undefined when optional and missing. */
function keyRefValue(facts: PodFacts, source: Record<string, any>): string | undefined {
  const kind = source.configMapKeyRef ? "configmaps" : "secrets";
  const ref = source.configMapKeyRef ?? source.secretKeyRef;
  const optional = ref.optional === true;
  const values = envObject(facts, kind, String(ref.name), optional);
  if (!values) return undefined;
  if (!Object.hasOwn(values, ref.key)) {
    if (optional) return undefined;
    throw new EnvError(`couldn't find key ${ref.key} in ${kind === "configmaps" ? "ConfigMap" : "Secret"} ${facts.namespace}/${ref.name}`);
  }
  return values[ref.key];
}

/** The container's env, command and args as the runtime gets them. */
export function containerEnvironment(container: ContainerSpec, facts: PodFacts): { env: { name: string; value: string }[]; command: string[]; args: string[] } {
  if (facts.servicesUnknown) throw new EnvError("services have not yet been read at least once, cannot construct envvars");
  const defined = new Map<string, string>();
  const services = facts.serviceEnv ?? {};
  const lookup = (name: string) => defined.get(name) ?? (Object.hasOwn(services, name) ? services[name] : undefined);
  const raw = rawContainer(container, facts);
  // envFrom first, each source over the ones before; then env over all of them (upstream order).
  for (const from of Array.isArray(raw?.envFrom) ? raw!.envFrom : []) {
    const kind = from.configMapRef ? "configmaps" : "secrets";
    const ref = from.configMapRef ?? from.secretRef;
    const values = envObject(facts, kind, String(ref.name), ref.optional === true);
    for (const [k, v] of Object.entries(values ?? {})) defined.set(`${from.prefix ?? ""}${k}`, v);
  }
  container.env.forEach((e, i) => {
    let value: string | undefined;
    const source = e.valueFrom;
    const rawSource = raw?.env?.[i]?.name === e.name ? raw.env[i].valueFrom : undefined;
    if (rawSource && (rawSource.configMapKeyRef || rawSource.secretKeyRef)) {
      value = keyRefValue(facts, rawSource);
      if (value === undefined) return; // optional and missing: the variable is not set
    } else if (!source) value = expand(e.value, lookup);
    else if (source.tag === "field-ref") value = fieldValue(source.val, facts);
    else value = resourceValue(source.val, container, facts);
    defined.delete(e.name); // keeps the last definition's place
    defined.set(e.name, value);
  });
  const env: { name: string; value: string }[] = [...defined.entries()].map(([name, value]) => ({ name, value }));
  for (const name of Object.keys(services).sort()) if (!defined.has(name)) env.push({ name, value: services[name] });
  return { env, command: container.command.map((c) => expand(c, lookup)), args: container.args.map((a) => expand(a, lookup)) };
}
