// Input checks of the pure interfaces: Kubernetes-shaped inputs arrive unvalidated, and a bad one
// must come back as an error naming its field, never as a wrong answer.
import { PodSpec } from "../core/model";
import { resourcesProblem } from "../core/validation";

/// The first problem of a pod's resources, as `field: message`, or empty. `prefix` leads every
/// path (`spec.` for one pod, `pods[2].spec.` in a list).
export function podResourcesProblem(pod: PodSpec, prefix: string): string {
  if (pod.containers.length == 0) return prefix + "containers: Required value";
  const seen = new Set<string>();
  for (let i = 0; i < pod.containers.length; i++) {
    const c = pod.containers[i];
    const path = prefix + "containers[" + i.toString() + "]";
    if (c.name.length == 0) return path + ".name: Required value";
    if (seen.has(c.name)) return path + '.name: Duplicate value: "' + c.name + '"';
    seen.add(c.name);
    const problem = resourcesProblem(c, path + ".");
    if (problem !== null) return problem.field + ": " + problem.message;
  }
  return "";
}
