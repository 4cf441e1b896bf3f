// Export shims of wit/restart.wit over the agent's own restart and back-off code.
import { ContainerObservation, PodSpec } from "../core/model";
import { Backoff } from "../core/backoff";
import { RestartPolicy, restartPolicyOf, shouldContainerBeRestarted, shouldInitContainerBeRestarted } from "../core/restart";
import { restartPolicyProblem } from "../core/validation";
import { liftStringParts, resetArgumentArena } from "../abi/memory";
import { LIBRARY_RETURN_AREA, liftCase, lowerError, lowerOkTag } from "../abi/library-types";

/// The one key the stateless back-off functions use.
const KEY = "container";

/// container-kind: regular 0, init 1, sidecar 2.
const KIND_INIT = 1;
const KIND_SIDECAR = 2;

export function restartShouldRestart(kindValue: i32, policyPtr: usize, policyLen: u32, podDeleted: i32, latestTag: i32, state: i32, exitCode: i32): usize {
  const kind = liftCase(<u32>kindValue, 3, "container-kind: bad case");
  const spec = new PodSpec();
  spec.restartPolicy = liftStringParts(policyPtr, policyLen);
  resetArgumentArena();
  let latest: ContainerObservation | null = null;
  if (liftCase(<u32>latestTag, 2, "option: bad case") == 1) {
    latest = new ContainerObservation();
    latest.state = liftCase(<u32>state, 4, "container-state: bad case");
    latest.exitCode = exitCode;
  }
  const problem = restartPolicyProblem(spec.restartPolicy);
  if (problem.length > 0) return lowerError(LIBRARY_RETURN_AREA, 4, "restartPolicy: " + problem);
  const policy = restartPolicyOf(spec);
  const deleted = podDeleted != 0;
  let restart: bool;
  if (kind == KIND_INIT) restart = shouldInitContainerBeRestarted(latest, policy, deleted);
  else if (kind == KIND_SIDECAR) restart = shouldContainerBeRestarted(latest, RestartPolicy.Always, deleted);
  else restart = shouldContainerBeRestarted(latest, policy, deleted);
  store<u8>(lowerOkTag(LIBRARY_RETURN_AREA), restart ? 1 : 0, 4);
  return LIBRARY_RETURN_AREA;
}

export function restartBackOffStep(
  previousTag: i32, durationMs: u64, lastUpdateMs: u64, eventTimeMs: u64, nowMs: u64, initialMs: u64, maxMs: u64,
): usize {
  if (initialMs == 0) return lowerError(LIBRARY_RETURN_AREA, 8, "initial-ms: Invalid value: 0: must be greater than 0");
  if (initialMs > maxMs) {
    return lowerError(LIBRARY_RETURN_AREA, 8,
      "initial-ms: Invalid value: " + initialMs.toString() + ": must be less than or equal to max-ms (" + maxMs.toString() + ")");
  }
  const hasPrevious = liftCase(<u32>previousTag, 2, "option: bad case") == 1;
  if (hasPrevious && durationMs > maxMs) return lowerError(LIBRARY_RETURN_AREA, 8, waitAboveMax("previous.duration-ms", durationMs, maxMs));
  const backoff = new Backoff(initialMs, maxMs);
  if (hasPrevious) backoff.restore(KEY, durationMs, lastUpdateMs);
  backoff.next(KEY, eventTimeMs, nowMs);
  const at = lowerOkTag(LIBRARY_RETURN_AREA) + 8;
  store<u64>(at, backoff.durationMs(KEY));
  store<u64>(at, backoff.lastUpdateMs(KEY), 8);
  return LIBRARY_RETURN_AREA;
}

export function restartInBackOff(durationMs: u64, lastUpdateMs: u64, eventTimeMs: u64, nowMs: u64, maxMs: u64): usize {
  if (maxMs == 0) return lowerError(LIBRARY_RETURN_AREA, 4, "max-ms: Invalid value: 0: must be greater than 0");
  if (durationMs > maxMs) return lowerError(LIBRARY_RETURN_AREA, 4, waitAboveMax("entry.duration-ms", durationMs, maxMs));
  const backoff = new Backoff(durationMs, maxMs);
  backoff.restore(KEY, durationMs, lastUpdateMs);
  store<u8>(lowerOkTag(LIBRARY_RETURN_AREA), backoff.isInBackOffSince(KEY, eventTimeMs, nowMs) ? 1 : 0, 4);
  return LIBRARY_RETURN_AREA;
}

function waitAboveMax(field: string, durationMs: u64, maxMs: u64): string {
  return field + ": Invalid value: " + durationMs.toString() + ": must be less than or equal to max-ms (" + maxMs.toString() + ")";
}
