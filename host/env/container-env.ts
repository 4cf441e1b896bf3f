// A container's environment as the kubelet makes it at creation (makeEnvironmentVariables):
// `valueFrom` resolved from the pod and its resources, then `$(VAR)` references expanded in env
// values (each against the variables before it), command and args (against all of them), with
// `$$` as an escaped `$` and an unknown or unclosed reference left as written.
import type { ContainerSpec } from "../core-types.js";

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

function fieldValue(path: string, facts: PodFacts): string {
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

function resourceValue(selector: { containerName: string; resource: string; divisor: string }, self: ContainerSpec, facts: PodFacts): string {
  const container = selector.containerName ? facts.containers.find((c) => c.name === selector.containerName) : self;
  if (!container) throw new EnvError(`container ${selector.containerName} not found`);
  const [kind, name] = selector.resource.split(".", 2) as ["limits" | "requests", string];
  const list = kind === "limits" ? container.limits : container.requests;
  let written = list.find((q) => q.name === name)?.quantity;
  // An unset limit is the node's allocatable, as upstream merges it before resolving.
  if (written === undefined && kind === "limits" && name in facts.allocatable) written = facts.allocatable[name as keyof PodFacts["allocatable"]];
  const value = written === undefined ? 0 : quantityValue(written);
  const divisor = quantityValue(selector.divisor || "1");
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

/** The container's env, command and args as the runtime gets them. */
export function containerEnvironment(container: ContainerSpec, facts: PodFacts): { env: { name: string; value: string }[]; command: string[]; args: string[] } {
  if (facts.servicesUnknown) throw new EnvError("services have not yet been read at least once, cannot construct envvars");
  const defined = new Map<string, string>();
  const services = facts.serviceEnv ?? {};
  const lookup = (name: string) => defined.get(name) ?? (Object.hasOwn(services, name) ? services[name] : undefined);
  const env: { name: string; value: string }[] = [];
  for (const e of container.env) {
    let value: string;
    const source = e.valueFrom;
    if (!source) value = expand(e.value, lookup);
    else if (source.tag === "field-ref") value = fieldValue(source.val, facts);
    else value = resourceValue(source.val, container, facts);
    defined.set(e.name, value);
    env.push({ name: e.name, value });
  }
  for (const name of Object.keys(services).sort()) if (!defined.has(name)) env.push({ name, value: services[name] });
  return { env, command: container.command.map((c) => expand(c, lookup)), args: container.args.map((a) => expand(a, lookup)) };
}
