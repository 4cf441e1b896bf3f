// Validation of pod specs, with the apiserver's field paths and wording, so that a bad manifest is
// refused with a message naming the field instead of being half-run.
import { ContainerSpec, PodPhase, PodRejection, PodSpec } from "./model";
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

function invalid(value: string, detail: string): string {
  return 'Invalid value: "' + value + '": ' + detail;
}

/// The first problem of `pod`, or null when it is valid. `index` is its place in the input list.
export function validatePod(pod: PodSpec, index: u32): PodRejection | null {
  if (pod.uid.length == 0) return new PodRejection(index, pod.uid, "metadata.uid", "Required value");
  if (pod.name.length == 0) {
    return new PodRejection(index, pod.uid, "metadata.name", "Required value: name or generateName is required");
  }
  if (!isDns1123Subdomain(pod.name)) {
    return new PodRejection(index, pod.uid, "metadata.name", invalid(pod.name, SUBDOMAIN_MESSAGE));
  }
  if (!isDns1123Label(pod.namespace)) {
    return new PodRejection(index, pod.uid, "metadata.namespace", invalid(pod.namespace, LABEL_MESSAGE));
  }
  const policyProblem = restartPolicyProblem(pod.restartPolicy);
  if (policyProblem.length > 0) return new PodRejection(index, pod.uid, "spec.restartPolicy", policyProblem);
  if (pod.hasGracePeriod && pod.terminationGracePeriodSeconds < 0) {
    return new PodRejection(
      index, pod.uid, "spec.terminationGracePeriodSeconds",
      "Invalid value: " + pod.terminationGracePeriodSeconds.toString() + ": must be greater than or equal to 0");
  }
  if (pod.beingDeleted && pod.deletionGracePeriodSeconds < 0) {
    return new PodRejection(
      index, pod.uid, "metadata.deletionGracePeriodSeconds",
      "Invalid value: " + pod.deletionGracePeriodSeconds.toString() + ": must be greater than or equal to 0");
  }
  if (pod.hasReportedTerminalPhase && pod.reportedTerminalPhase != PodPhase.Succeeded && pod.reportedTerminalPhase != PodPhase.Failed) {
    return new PodRejection(index, pod.uid, "status.phase", "Invalid value: a reported terminal phase must be Succeeded or Failed");
  }
  if (pod.containers.length == 0) {
    return new PodRejection(index, pod.uid, "spec.containers", "Required value");
  }
  if (pod.containers.length > MAX_CONTAINERS_PER_POD) {
    return new PodRejection(
      index, pod.uid, "spec.containers",
      "Too many: " + pod.containers.length.toString() + ": must have at most " + MAX_CONTAINERS_PER_POD.toString() + " items");
  }
  const seen = new Set<string>();
  for (let i = 0; i < pod.containers.length; i++) {
    const c = pod.containers[i];
    const path = "spec.containers[" + i.toString() + "]";
    if (c.name.length == 0) return new PodRejection(index, pod.uid, path + ".name", "Required value");
    if (!isDns1123Label(c.name)) {
      return new PodRejection(index, pod.uid, path + ".name", invalid(c.name, LABEL_MESSAGE));
    }
    if (seen.has(c.name)) {
      return new PodRejection(index, pod.uid, path + ".name", 'Duplicate value: "' + c.name + '"');
    }
    seen.add(c.name);
    if (c.image.trim().length == 0) return new PodRejection(index, pod.uid, path + ".image", "Required value");
    for (let e = 0; e < c.env.length; e++) {
      const name = c.env[e].name;
      const envPath = path + ".env[" + e.toString() + "].name";
      if (name.length == 0) return new PodRejection(index, pod.uid, envPath, "Required value");
      if (name.includes("=")) {
        return new PodRejection(index, pod.uid, envPath, invalid(name, "a valid environment variable name must not contain '='"));
      }
    }
    const resources = resourcesProblem(c, path + ".");
    if (resources !== null) return new PodRejection(index, pod.uid, resources.field, resources.message);
  }
  return null;
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
  for (let r = 0; r < c.requests.length; r++) {
    const problem = checkQuantity(c.requests[r].quantity);
    if (problem.length > 0) return new FieldProblem(prefix + "resources.requests[" + c.requests[r].name + "]", problem);
  }
  for (let r = 0; r < c.limits.length; r++) {
    const problem = checkQuantity(c.limits[r].quantity);
    if (problem.length > 0) return new FieldProblem(prefix + "resources.limits[" + c.limits[r].name + "]", problem);
  }
  // A request may not exceed its limit; an extended resource's must equal it (the apiserver's
  // validateResourceRequirements, which the kubelet also runs on static pods). The quantities
  // are quoted as written, where the apiserver prints their canonical form.
  for (let r = 0; r < c.requests.length; r++) {
    const request = c.requests[r];
    for (let l = 0; l < c.limits.length; l++) {
      const limit = c.limits[l];
      if (limit.name != request.name) continue;
      const requested = parseQuantity(request.quantity).milliValue;
      const limited = parseQuantity(limit.quantity).milliValue;
      const overcommit = isOvercommitAllowed(request.name);
      if (!overcommit && requested != limited) {
        return new FieldProblem(prefix + "resources.requests", invalid(request.quantity, "must be equal to " + request.name + " limit of " + limit.quantity));
      }
      if (requested > limited) {
        return new FieldProblem(prefix + "resources.requests", invalid(request.quantity, "must be less than or equal to " + request.name + " limit of " + limit.quantity));
      }
    }
  }
  return null;
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
