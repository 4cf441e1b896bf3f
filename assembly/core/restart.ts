// Restart policy decisions (upstream kubecontainer.ShouldContainerBeRestarted and
// shouldRestartOnFailure) and the crash-loop back-off key.
import { ContainerObservation, ContainerState, PodSpec } from "./model";

export const enum RestartPolicy {
  Always = 0,
  OnFailure = 1,
  Never = 2,
}

/// Parses a validated policy; empty means the Kubernetes default, Always.
export function restartPolicyOf(pod: PodSpec): RestartPolicy {
  if (pod.restartPolicy == "Never") return RestartPolicy.Never;
  if (pod.restartPolicy == "OnFailure") return RestartPolicy.OnFailure;
  return RestartPolicy.Always;
}

/// Whether a pod whose sandbox died may get a new one (upstream: policy is not Never).
export function shouldRestartOnFailure(policy: RestartPolicy): bool {
  return policy != RestartPolicy.Never;
}

/// Whether the container whose newest instance is `latest` (null: never created) should be
/// (re)created, as upstream decides it: never for a deleted pod; a running one no; a created or
/// unknown one yes. (The pod worker meets created and unknown instances in its own sandbox
/// first: it starts a created one and stops an unknown one.)
export function shouldContainerBeRestarted(latest: ContainerObservation | null, policy: RestartPolicy, podDeleted: bool = false): bool {
  if (podDeleted) return false;
  if (latest === null) return true;
  if (latest.state == ContainerState.Running) return false;
  if (latest.state != ContainerState.Exited) return true; // created or unknown: upstream recreates it
  if (policy == RestartPolicy.Never) return false;
  if (policy == RestartPolicy.OnFailure) return latest.exitCode != 0;
  return true;
}

/// The same for an init container (upstream computeInitContainerActions): one that succeeded is
/// done; one that failed runs again unless the pod's policy is Never (then the pod fails). A
/// sidecar is kept running: `shouldContainerBeRestarted` with policy Always.
export function shouldInitContainerBeRestarted(latest: ContainerObservation | null, policy: RestartPolicy, podDeleted: bool = false): bool {
  if (podDeleted) return false;
  if (latest === null) return true;
  if (latest.state == ContainerState.Running) return false;
  if (latest.state != ContainerState.Exited) return true;
  if (latest.exitCode == 0) return false;
  return policy != RestartPolicy.Never;
}

/// Back-off key: one per pod, container and container spec, so a changed spec starts afresh.
export function crashLoopKey(podUid: string, containerName: string, specHash: string): string {
  return podUid + "/" + containerName + "/" + specHash;
}

export function imagePullKey(podUid: string, image: string): string {
  return "image/" + podUid + "/" + image;
}
