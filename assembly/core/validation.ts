// Validation of pod specs, with the apiserver's field paths and wording, so that a bad manifest is
// refused with a message naming the field instead of being half-run.
import { ContainerSpec, EnvSourceTag, EnvVar, PodPhase, PodRejection, PodSpec } from "./model";
import { parseQuantity } from "./quantity";

const DNS1123_LABEL_MAX = 63;
const DNS1123_SUBDOMAIN_MAX = 253;
/// A bound on what one pod may carry (Tiger style: a limit on everything).
export const MAX_CONTAINERS_PER_POD = 64;

function isAlnum(c: i32): bool {
  return (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
}

export function isDns1123Label(text: string): bool {
  const n = text.length;
  if (n == 0 || n > DNS1123_LABEL_MAX) return false;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (!isAlnum(c) && !(c == 45 && i > 0 && i < n - 1)) return false;
  }
  return true;
}

export function isDns1123Subdomain(text: string): bool {
  const n = text.length;
  if (n == 0 || n > DNS1123_SUBDOMAIN_MAX) return false;
  const parts = text.split(".");
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (part.length == 0) return false;
    for (let j = 0; j < part.length; j++) {
      const c = part.charCodeAt(j);
      if (!isAlnum(c) && !(c == 45 && j > 0 && j < part.length - 1)) return false;
    }
  }
  return true;
}

const LABEL_MESSAGE =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const ENV_NAME_MESSAGE = "a valid environment variable name must consist only of printable ASCII characters other than '='";
/// The longest uid nanolet takes: an apiserver uid is a 36-character UUID, a static pod's 32 hex.
export const MAX_UID_LENGTH = 128;
const UID_MESSAGE =
  "a pod uid becomes part of file and cgroup paths, so it must consist of alphanumeric characters, '-', '_' or '.', must not start with '.', and must be no more than 128 characters";

function invalid(value: string, detail: string): string {
  return 'Invalid value: "' + value + '": ' + detail;
}

function tooLong(max: i32): string {
  return "must be no more than " + max.toString() + " characters";
}

/// A uid safe to put in a path: [A-Za-z0-9._-], not starting with '.', at most 128 characters.
/// Upstream takes a static pod's uid as written, so `a/../b` walks out of its pod directory;
/// nanolet refuses it before any path is made from it.
export function isSafeUid(uid: string): bool {
  const n = uid.length;
  if (n == 0 || n > MAX_UID_LENGTH || uid.charCodeAt(0) == 46) return false;
  for (let i = 0; i < n; i++) {
    const c = uid.charCodeAt(i);
    const ok = (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c == 45 || c == 46 || c == 95;
    if (!ok) return false;
  }
  return true;
}

/// Every problem of a DNS-1123 label or subdomain, as the apiserver lists them.
function nameProblems(out: PodRejection[], index: u32, uid: string, field: string, value: string, subdomain: bool): void {
  const max = subdomain ? DNS1123_SUBDOMAIN_MAX : DNS1123_LABEL_MAX;
  if (value.length > max) out.push(new PodRejection(index, uid, field, invalid(value, tooLong(max))));
  // The character rules alone (the length was told above).
  const shape = subdomain ? isDns1123SubdomainShape(value) : isDns1123LabelShape(value);
  if (!shape) out.push(new PodRejection(index, uid, field, invalid(value, subdomain ? SUBDOMAIN_MESSAGE : LABEL_MESSAGE)));
}

function isDns1123LabelShape(text: string): bool {
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (!isAlnum(c) && !(c == 45 && i > 0 && i < n - 1)) return false;
  }
  return n > 0;
}

function isDns1123SubdomainShape(text: string): bool {
  const parts = text.split(".");
  for (let i = 0; i < parts.length; i++) if (!isDns1123LabelShape(parts[i])) return false;
  return true;
}

function isEnvVarName(name: string): bool {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 32 || c > 126 || c == 61) return false;
  }
  return true;
}

/// The first problem of `pod`, or null when it is valid. `index` is its place in the input list.
export function validatePod(pod: PodSpec, index: u32): PodRejection | null {
  const all = podProblems(pod, index);
  return all.length > 0 ? all[0] : null;
}

/// Every problem of `pod`, in field order (empty when it is valid), as the apiserver lists them.
export function podProblems(pod: PodSpec, index: u32): PodRejection[] {
  const out: PodRejection[] = [];
  const uid = pod.uid;
  if (uid.length == 0) out.push(new PodRejection(index, uid, "metadata.uid", "Required value"));
  else if (!isSafeUid(uid)) out.push(new PodRejection(index, uid, "metadata.uid", invalid(uid, UID_MESSAGE)));
  if (pod.name.length == 0) {
    out.push(new PodRejection(index, uid, "metadata.name", "Required value: name or generateName is required"));
  } else {
    nameProblems(out, index, uid, "metadata.name", pod.name, true);
  }
  nameProblems(out, index, uid, "metadata.namespace", pod.namespace, false);
  const policyProblem = restartPolicyProblem(pod.restartPolicy);
  if (policyProblem.length > 0) out.push(new PodRejection(index, uid, "spec.restartPolicy", policyProblem));
  if (pod.hasGracePeriod && pod.terminationGracePeriodSeconds < 0) {
    out.push(new PodRejection(
      index, uid, "spec.terminationGracePeriodSeconds",
      "Invalid value: " + pod.terminationGracePeriodSeconds.toString() + ": must be greater than or equal to 0"));
  }
  if (pod.hasActiveDeadline && (pod.activeDeadlineSeconds < 1 || pod.activeDeadlineSeconds > 2147483647)) {
    out.push(new PodRejection(
      index, uid, "spec.activeDeadlineSeconds",
      "Invalid value: " + pod.activeDeadlineSeconds.toString() + ": must be between 1 and 2147483647, inclusive"));
  }
  if (pod.beingDeleted && pod.deletionGracePeriodSeconds < 0) {
    out.push(new PodRejection(
      index, uid, "metadata.deletionGracePeriodSeconds",
      "Invalid value: " + pod.deletionGracePeriodSeconds.toString() + ": must be greater than or equal to 0"));
  }
  if (pod.hasReportedTerminalPhase && pod.reportedTerminalPhase != PodPhase.Succeeded && pod.reportedTerminalPhase != PodPhase.Failed) {
    out.push(new PodRejection(index, uid, "status.phase", "Invalid value: a reported terminal phase must be Succeeded or Failed"));
  }
  volumeNameProblems(out, index, uid, pod);
  if (pod.containers.length == 0) {
    out.push(new PodRejection(index, uid, "spec.containers", "Required value"));
    return out;
  }
  if (pod.containers.length > MAX_CONTAINERS_PER_POD) {
    out.push(new PodRejection(
      index, uid, "spec.containers",
      "Too many: " + pod.containers.length.toString() + ": must have at most " + MAX_CONTAINERS_PER_POD.toString() + " items"));
    return out;
  }
  const seen = new Set<string>();
  containerProblems(out, index, uid, pod.containers, "spec.containers", seen, false);
  containerProblems(out, index, uid, pod.initContainers, "spec.initContainers", seen, true);
  ephemeralProblems(out, index, uid, pod, seen);
  return out;
}

/// Upstream validateEphemeralContainers: a container as any other, but without what only a
/// container the pod was made with can have (ports, probes, lifecycle, resources), and with a
/// target, if any, among the pod's regular or init containers.
function ephemeralProblems(out: PodRejection[], index: u32, uid: string, pod: PodSpec, seen: Set<string>): void {
  if (pod.ephemeralContainers.length == 0) return;
  const others = new Set<string>();
  for (let i = 0; i < pod.containers.length; i++) others.add(pod.containers[i].name);
  for (let i = 0; i < pod.initContainers.length; i++) others.add(pod.initContainers[i].name);
  containerProblems(out, index, uid, pod.ephemeralContainers, "spec.ephemeralContainers", seen, false);
  const forbidden = "Forbidden: cannot be set for an Ephemeral Container";
  for (let i = 0; i < pod.ephemeralContainers.length; i++) {
    const c = pod.ephemeralContainers[i];
    const path = "spec.ephemeralContainers[" + i.toString() + "]";
    if (c.ports.length > 0) out.push(new PodRejection(index, uid, path + ".ports", forbidden));
    if (c.livenessProbe !== null) out.push(new PodRejection(index, uid, path + ".livenessProbe", forbidden));
    if (c.readinessProbe !== null) out.push(new PodRejection(index, uid, path + ".readinessProbe", forbidden));
    if (c.startupProbe !== null) out.push(new PodRejection(index, uid, path + ".startupProbe", forbidden));
    if (c.postStart !== null || c.preStop !== null) out.push(new PodRejection(index, uid, path + ".lifecycle", forbidden));
    if (c.requests.length > 0 || c.limits.length > 0) out.push(new PodRejection(index, uid, path + ".resources", forbidden));
    const target = c.targetContainerName;
    if (target.length > 0 && !others.has(target)) out.push(new PodRejection(index, uid, path + ".targetContainerName", 'Not found: "' + target + '"'));
  }
}

/// Upstream validateVolumes: each name a DNS-1123 label, used once.
function volumeNameProblems(out: PodRejection[], index: u32, uid: string, pod: PodSpec): void {
  const seen = new Set<string>();
  for (let i = 0; i < pod.volumes.length; i++) {
    const name = pod.volumes[i].name;
    const field = "spec.volumes[" + i.toString() + "].name";
    if (name.length == 0) {
      out.push(new PodRejection(index, uid, field, "Required value"));
      continue;
    }
    nameProblems(out, index, uid, field, name, false);
    if (seen.has(name)) out.push(new PodRejection(index, uid, field, 'Duplicate value: "' + name + '"'));
    seen.add(name);
  }
}

/// The problems of one list of containers (regular or init); `seen` holds the names taken in
/// the pod so far, for duplicates across both lists.
function containerProblems(out: PodRejection[], index: u32, uid: string, list: ContainerSpec[], listPath: string, seen: Set<string>, init: bool): void {
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    const path = listPath + "[" + i.toString() + "]";
    if (c.name.length == 0) out.push(new PodRejection(index, uid, path + ".name", "Required value"));
    else {
      nameProblems(out, index, uid, path + ".name", c.name, false);
      if (seen.has(c.name)) out.push(new PodRejection(index, uid, path + ".name", 'Duplicate value: "' + c.name + '"'));
      seen.add(c.name);
    }
    if (c.image.trim().length == 0) out.push(new PodRejection(index, uid, path + ".image", "Required value"));
    else if (c.image.trim().length != c.image.length) out.push(new PodRejection(index, uid, path + ".image", invalid(c.image, "must not have leading or trailing whitespace")));
    for (let e = 0; e < c.env.length; e++) {
      const name = c.env[e].name;
      // The field path is made only for a problem: a pod of thousands of good variables makes no garbage.
      if (name.length == 0) out.push(new PodRejection(index, uid, path + ".env[" + e.toString() + "].name", "Required value"));
      else if (!isEnvVarName(name)) out.push(new PodRejection(index, uid, path + ".env[" + e.toString() + "].name", invalid(name, ENV_NAME_MESSAGE)));
      if (c.env[e].valueFrom !== null) envSourceProblems(out, index, uid, c.env[e], path + ".env[" + e.toString() + "]");
    }
    const resources = resourcesProblems(c, path + ".");
    for (let r = 0; r < resources.length; r++) out.push(new PodRejection(index, uid, resources[r].field, resources[r].message));
    const pull = c.imagePullPolicy;
    if (pull.length > 0 && pull != "Always" && pull != "IfNotPresent" && pull != "Never") {
      out.push(new PodRejection(index, uid, path + ".imagePullPolicy", 'Unsupported value: "' + pull + '": supported values: "Always", "IfNotPresent", "Never"'));
    }
    if (c.restartPolicy.length > 0) {
      if (!init) out.push(new PodRejection(index, uid, path + ".restartPolicy", "Forbidden: may not be set for non-init containers"));
      else if (c.restartPolicy != "Always") out.push(new PodRejection(index, uid, path + ".restartPolicy", 'Unsupported value: "' + c.restartPolicy + '": supported values: "Always"'));
    }
    if (init && !c.isSidecar) {
      // Probes of a regular init container could never matter: it runs to completion.
      const forbidden = "Forbidden: may not be set for init containers without restartPolicy=Always";
      if (c.livenessProbe !== null) out.push(new PodRejection(index, uid, path + ".livenessProbe", forbidden));
      if (c.readinessProbe !== null) out.push(new PodRejection(index, uid, path + ".readinessProbe", forbidden));
      if (c.startupProbe !== null) out.push(new PodRejection(index, uid, path + ".startupProbe", forbidden));
      if (c.postStart !== null || c.preStop !== null) out.push(new PodRejection(index, uid, path + ".lifecycle", forbidden));
    }
    probeProblems(out, index, uid, c, path);
  }
}

const ENV_FIELD_PATHS: string[] = [
  "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName",
  "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs",
];
const ENV_RESOURCES: string[] = [
  "limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu", "requests.ephemeral-storage", "requests.memory",
];

function quoted(values: string[]): string {
  const out: string[] = [];
  for (let i = 0; i < values.length; i++) out.push('"' + values[i] + '"');
  return out.join(", ");
}

/// A `metadata.labels['key']` or `metadata.annotations['key']` path.
function isSubscriptPath(path: string): bool {
  const label = path.startsWith("metadata.labels['");
  const annotation = path.startsWith("metadata.annotations['");
  return (label || annotation) && path.endsWith("']") && path.length > (label ? 19 : 24);
}

/// What the Pod API's validateEnvVarValueFrom checks of `env[].valueFrom`.
function envSourceProblems(out: PodRejection[], index: u32, uid: string, env: EnvVar, path: string): void {
  const source = env.valueFrom!;
  if (env.value.length > 0) out.push(new PodRejection(index, uid, path + ".valueFrom", 'Invalid value: "": may not be specified when `value` is not empty'));
  if (source.tag == EnvSourceTag.FieldRef) {
    const fieldPath = source.fieldPath;
    if (fieldPath.length == 0) out.push(new PodRejection(index, uid, path + ".valueFrom.fieldRef.fieldPath", "Required value"));
    else if (!ENV_FIELD_PATHS.includes(fieldPath) && !isSubscriptPath(fieldPath)) {
      out.push(new PodRejection(index, uid, path + ".valueFrom.fieldRef.fieldPath",
        'Unsupported value: "' + fieldPath + '": supported values: ' + quoted(ENV_FIELD_PATHS)));
    }
    return;
  }
  const resource = source.resource;
  if (resource.length == 0) out.push(new PodRejection(index, uid, path + ".valueFrom.resourceFieldRef.resource", "Required value"));
  else if (!ENV_RESOURCES.includes(resource) && !resource.startsWith("limits.hugepages-") && !resource.startsWith("requests.hugepages-")) {
    out.push(new PodRejection(index, uid, path + ".valueFrom.resourceFieldRef.resource", 'Unsupported value: "' + resource + '": supported values: ' + quoted(ENV_RESOURCES)));
  }
}

/// What the Pod API's validateProbe checks of the numbers (the host checks handler shapes).
function probeProblems(out: PodRejection[], index: u32, uid: string, c: ContainerSpec, path: string): void {
  for (let type = 0; type < 3; type++) {
    const probe = c.probe(type);
    if (probe === null) continue;
    const at = path + "." + (type == 0 ? "startupProbe" : type == 1 ? "livenessProbe" : "readinessProbe");
    if (probe.periodSeconds < 1) out.push(new PodRejection(index, uid, at + ".periodSeconds", "Invalid value: " + probe.periodSeconds.toString() + ": must be greater than 0"));
    if (probe.timeoutSeconds < 1) out.push(new PodRejection(index, uid, at + ".timeoutSeconds", "Invalid value: " + probe.timeoutSeconds.toString() + ": must be greater than 0"));
    if (probe.initialDelaySeconds < 0) out.push(new PodRejection(index, uid, at + ".initialDelaySeconds", "Invalid value: " + probe.initialDelaySeconds.toString() + ": must be greater than or equal to 0"));
    if (probe.successThreshold < 1) out.push(new PodRejection(index, uid, at + ".successThreshold", "Invalid value: " + probe.successThreshold.toString() + ": must be greater than 0"));
    else if (type != 2 && probe.successThreshold != 1) out.push(new PodRejection(index, uid, at + ".successThreshold", "Invalid value: " + probe.successThreshold.toString() + ": must be 1"));
    if (probe.failureThreshold < 1) out.push(new PodRejection(index, uid, at + ".failureThreshold", "Invalid value: " + probe.failureThreshold.toString() + ": must be greater than 0"));
    if (probe.hasGracePeriod && probe.terminationGracePeriodSeconds <= 0) {
      out.push(new PodRejection(index, uid, at + ".terminationGracePeriodSeconds", "Invalid value: " + probe.terminationGracePeriodSeconds.toString() + ": must be greater than 0"));
    }
  }
}

/// The problem of a restart policy, or empty: `Always`, `OnFailure`, `Never` or empty (Always).
export function restartPolicyProblem(policy: string): string {
  if (policy == "" || policy == "Always" || policy == "OnFailure" || policy == "Never") return "";
  return 'Unsupported value: "' + policy + '": supported values: "Always", "OnFailure", "Never"';
}

/// A field path and what is wrong there.
export class FieldProblem {
  constructor(public field: string, public message: string) {}
}

/// The first bad quantity of a container's requests and limits, or null. `prefix` leads the
/// field path (`spec.containers[0].`).
export function resourcesProblem(c: ContainerSpec, prefix: string): FieldProblem | null {
  const all = resourcesProblems(c, prefix);
  return all.length > 0 ? all[0] : null;
}

/// Standard container resources (a name without a domain must be one of them).
function isStandardContainerResource(name: string): bool {
  return name == "cpu" || name == "memory" || name == "ephemeral-storage" || (name.startsWith("hugepages-") && name.length > 10);
}

function resourceNameProblem(name: string): string {
  if (name.indexOf("/") < 0 && !isStandardContainerResource(name)) return invalid(name, "must be a standard resource for containers");
  return "";
}

/// Every problem of a container's requests and limits (the apiserver's
/// validateResourceRequirements, which the kubelet also runs on static pods).
export function resourcesProblems(c: ContainerSpec, prefix: string): FieldProblem[] {
  const out: FieldProblem[] = [];
  for (let r = 0; r < c.limits.length; r++) {
    const field = prefix + "resources.limits[" + c.limits[r].name + "]";
    const nameProblem = resourceNameProblem(c.limits[r].name);
    if (nameProblem.length > 0) out.push(new FieldProblem(field, nameProblem));
    const problem = checkQuantity(c.limits[r].quantity);
    if (problem.length > 0) out.push(new FieldProblem(field, problem));
  }
  for (let r = 0; r < c.requests.length; r++) {
    const field = prefix + "resources.requests[" + c.requests[r].name + "]";
    const nameProblem = resourceNameProblem(c.requests[r].name);
    if (nameProblem.length > 0) out.push(new FieldProblem(field, nameProblem));
    const problem = checkQuantity(c.requests[r].quantity);
    if (problem.length > 0) out.push(new FieldProblem(field, problem));
  }
  if (out.length > 0) return out;
  // A request may not exceed its limit; an extended resource's must equal it, and must have one.
  // The quantities are quoted as written, where the apiserver prints their canonical form.
  let missingLimit = false;
  for (let r = 0; r < c.requests.length; r++) {
    const request = c.requests[r];
    const overcommit = isOvercommitAllowed(request.name);
    let hasLimit = false;
    for (let l = 0; l < c.limits.length; l++) {
      const limit = c.limits[l];
      if (limit.name != request.name) continue;
      hasLimit = true;
      const requested = parseQuantity(request.quantity).milliValue;
      const limited = parseQuantity(limit.quantity).milliValue;
      if (!overcommit && requested != limited) {
        out.push(new FieldProblem(prefix + "resources.requests", invalid(request.quantity, "must be equal to " + request.name + " limit of " + limit.quantity)));
      } else if (requested > limited) {
        out.push(new FieldProblem(prefix + "resources.requests", invalid(request.quantity, "must be less than or equal to " + request.name + " limit of " + limit.quantity)));
      }
    }
    if (!overcommit && !hasLimit) missingLimit = true;
  }
  if (missingLimit) out.push(new FieldProblem(prefix + "resources.limits", "Required value: Limit must be set for non overcommitable resources"));
  return out;
}

/// Native resources (no domain, or a kubernetes.io one) other than huge pages may be requested
/// below their limit; extended resources may not.
function isOvercommitAllowed(name: string): bool {
  if (name.startsWith("hugepages-")) return false;
  const slash = name.indexOf("/");
  if (slash < 0) return true;
  const domain = name.substring(0, slash);
  return domain == "kubernetes.io" || domain.endsWith(".kubernetes.io");
}

function checkQuantity(text: string): string {
  const parsed = parseQuantity(text);
  if (!parsed.ok) return invalid(text, parsed.error);
  if (parsed.milliValue < 0) return invalid(text, "must be greater than or equal to 0");
  return "";
}
