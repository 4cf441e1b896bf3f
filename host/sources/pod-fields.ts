// The Pod fields the core never sees but the apiserver validates: ports, image pull policy,
// tolerations, termination message policy. Checked with the apiserver's rules and words
// (validation.go of k8s.io/kubernetes/pkg/apis/core) so a static pod is refused as a created one is.
import { FieldReader, isObject, type Json } from "./field-reader.js";

const PROTOCOLS = ["SCTP", "TCP", "UDP"];
const PULL_POLICIES = ["Always", "IfNotPresent", "Never"];
const TOLERATION_OPERATORS = ["Equal", "Exists"];
const TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
const TERMINATION_MESSAGE_POLICIES = ["File", "FallbackToLogsOnError"];

function supported(value: string, values: string[]): string {
  return `Unsupported value: "${value}": supported values: ${values.map((v) => `"${v}"`).join(", ")}`;
}

const IANA_SVC_NAME_MAX = 15;

/** A port name: an IANA service name (validation.IsValidPortName). */
function portNameProblems(name: string): string[] {
  const out: string[] = [];
  const invalid = `Invalid value: "${name}": `;
  if (name.length > IANA_SVC_NAME_MAX) out.push(invalid + `must be no more than ${IANA_SVC_NAME_MAX} characters`);
  if (!/^[-a-z0-9]+$/.test(name)) out.push(invalid + "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  if (!/[a-z]/.test(name)) out.push(invalid + "must contain at least one letter (a-z)");
  if (name.includes("--")) out.push(invalid + "must not contain consecutive hyphens");
  if (name.length > 0 && (name.startsWith("-") || name.endsWith("-"))) out.push(invalid + "must not begin or end with a hyphen");
  return out;
}

/** `containers[i].ports`: numbers in 1..65535, names, protocols, no duplicate names. */
export function checkPorts(r: FieldReader, value: unknown, field: string): void {
  const names = new Set<string>();
  r.array(value, field).forEach((item, i) => {
    const path = `${field}[${i}]`;
    const port = r.object(item, path, true);
    if (!port) return;
    r.onlyFields(port, path, new Set(["name", "containerPort", "hostPort", "hostIP", "protocol"]));
    const containerPort = r.integer(port.containerPort, `${path}.containerPort`, -2147483648, 2147483647);
    if (containerPort === undefined || containerPort === 0) {
      if (port.containerPort === undefined || port.containerPort === 0) r.add(`${path}.containerPort`, "Required value");
    } else if (containerPort < 1 || containerPort > 65535) {
      r.add(`${path}.containerPort`, `Invalid value: ${containerPort}: must be between 1 and 65535, inclusive`);
    }
    const hostPort = r.integer(port.hostPort, `${path}.hostPort`, -2147483648, 2147483647);
    if (hostPort !== undefined && hostPort !== 0 && (hostPort < 1 || hostPort > 65535)) {
      r.add(`${path}.hostPort`, `Invalid value: ${hostPort}: must be between 1 and 65535, inclusive`);
    }
    const name = r.string(port.name, `${path}.name`);
    if (name) {
      for (const p of portNameProblems(name)) r.add(`${path}.name`, p);
      if (names.has(name)) r.add(`${path}.name`, `Duplicate value: "${name}"`);
      names.add(name);
    }
    const protocol = r.string(port.protocol, `${path}.protocol`);
    if (protocol !== undefined && protocol !== "" && !PROTOCOLS.includes(protocol)) r.add(`${path}.protocol`, supported(protocol, PROTOCOLS));
  });
}

export function checkImagePullPolicy(r: FieldReader, value: unknown, field: string): void {
  const policy = r.string(value, field);
  if (policy !== undefined && policy !== "" && !PULL_POLICIES.includes(policy)) r.add(field, supported(policy, PULL_POLICIES));
}

export function checkTerminationMessage(r: FieldReader, container: Record<string, Json>, field: string): void {
  const policy = r.string(container.terminationMessagePolicy, `${field}.terminationMessagePolicy`);
  if (policy !== undefined && policy !== "" && !TERMINATION_MESSAGE_POLICIES.includes(policy)) {
    r.add(`${field}.terminationMessagePolicy`, supported(policy, TERMINATION_MESSAGE_POLICIES));
  }
  r.string(container.terminationMessagePath, `${field}.terminationMessagePath`);
}

/**
 * On the node's network a container port is the node's port: `hostPort`, when given, must be the
 * same number (the apiserver defaults it to `containerPort`, validateHostNetwork checks it).
 */
export function checkHostNetworkPorts(r: FieldReader, spec: Record<string, Json>): void {
  if (spec.hostNetwork !== true) return;
  for (const list of ["containers", "initContainers"] as const) {
    const containers = Array.isArray(spec[list]) ? (spec[list] as Json[]) : [];
    containers.forEach((c, i) => {
      if (!isObject(c) || !Array.isArray(c.ports)) return;
      c.ports.forEach((p, j) => {
        if (!isObject(p) || p.hostPort === undefined || p.hostPort === null || p.hostPort === 0) return;
        if (p.hostPort !== p.containerPort) r.add(`spec.${list}[${i}].ports[${j}].containerPort`, `Invalid value: ${JSON.stringify(p.containerPort)}: must match \`hostPort\` when \`hostNetwork\` is true`);
      });
    });
  }
}

/** A qualified name (a label or taint key): an optional DNS subdomain prefix, then a name part. */
function qualifiedNameProblems(key: string): string[] {
  const out: string[] = [];
  const parts = key.split("/");
  let name = key;
  if (parts.length === 2) {
    const [prefix, rest] = parts;
    name = rest;
    if (prefix.length === 0) out.push("prefix part must be non-empty");
    else if (prefix.length > 253 || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(prefix)) {
      out.push("prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
    }
  } else if (parts.length > 2) {
    return ["a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"];
  }
  if (name.length === 0) out.push("name part must be non-empty");
  else if (name.length > 63) out.push("name part must be no more than 63 characters");
  else if (!/^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/.test(name)) {
    out.push("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
  }
  return out;
}

/** `spec.tolerations`, as validateTolerations checks them. */
export function checkTolerations(r: FieldReader, value: unknown): void {
  r.array(value, "spec.tolerations").forEach((item, i) => {
    const path = `spec.tolerations[${i}]`;
    const t = r.object(item, path, true);
    if (!t) return;
    r.onlyFields(t, path, new Set(["key", "operator", "value", "effect", "tolerationSeconds"]));
    const key = r.string(t.key, `${path}.key`) ?? "";
    const operator = r.string(t.operator, `${path}.operator`) ?? "";
    const v = r.string(t.value, `${path}.value`) ?? "";
    const effect = r.string(t.effect, `${path}.effect`) ?? "";
    const seconds = r.integer(t.tolerationSeconds, `${path}.tolerationSeconds`);
    if (key !== "") for (const p of qualifiedNameProblems(key)) r.add(`${path}.key`, `Invalid value: "${key}": ${p}`);
    if (key === "" && operator !== "Exists") {
      r.add(`${path}.operator`, `Invalid value: "${operator}": operator must be Exists when \`key\` is empty, which means "match all values and all keys"`);
    }
    if (seconds !== undefined && effect !== "NoExecute") {
      r.add(`${path}.effect`, `Invalid value: "${effect}": effect must be 'NoExecute' when \`tolerationSeconds\` is set`);
    }
    if (operator === "" || operator === "Equal") {
      if (v !== "" && !/^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/.test(v)) r.add(`${path}.value`, `Invalid value: "${v}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`);
    } else if (operator === "Exists") {
      if (v !== "") r.add(`${path}.operator`, `Invalid value: "${v}": value must be empty when \`operator\` is 'Exists'`);
    } else {
      r.add(`${path}.operator`, supported(operator, TOLERATION_OPERATORS));
    }
    if (effect !== "" && !TAINT_EFFECTS.includes(effect)) r.add(`${path}.effect`, supported(effect, TAINT_EFFECTS));
  });
}

export { isObject };
