// Input checks of the pure interfaces: Kubernetes-shaped inputs arrive unvalidated, and a bad one
// must come back as an error naming its field, never as a wrong answer.
import { PodSpec } from "../core/model";
import { resourcesProblem } from "../core/validation";

/// `path: Required value` for an empty name, `path: Duplicate value` for one already in `seen`;
/// otherwise adds it to `seen` and returns empty.
export function uniqueNameProblem(path: string, name: string, seen: Set<string>): string {
  if (name.length == 0) return path + ": Required value";
  if (seen.has(name)) return path + ': Duplicate value: "' + name + '"';
  seen.add(name);
  return "";
}

/// As `uniqueNameProblem` for a name that must also be one of `known` (`path: Not found`).
export function referenceProblem(path: string, name: string, known: Set<string>, seen: Set<string>): string {
  if (!known.has(name)) return path + ': Not found: "' + name + '"';
  return uniqueNameProblem(path, name, seen);
}

/// The first problem of a pod's resources, as `field: message`, or empty. `prefix` leads every
/// path (`spec.` for one pod, `pods[2].spec.` in a list).
export function podResourcesProblem(pod: PodSpec, prefix: string): string {
  if (pod.containers.length == 0) return prefix + "containers: Required value";
  const seen = new Set<string>();
  for (let i = 0; i < pod.containers.length; i++) {
    const c = pod.containers[i];
    const path = prefix + "containers[" + i.toString() + "]";
    const nameProblem = uniqueNameProblem(path + ".name", c.name, seen);
    if (nameProblem.length > 0) return nameProblem;
    const problem = resourcesProblem(c, path + ".");
    if (problem !== null) return problem.field + ": " + problem.message;
  }
  return "";
}
