// Canonical-ABI lift/lower of what the host observes: sandbox and container observations, the
// runtime snapshot, and action results. See pod-spec.ts for the layout conventions.
import {
  ActionError,
  ActionResult,
  ContainerObservation,
  RuntimeSnapshot,
  SandboxObservation,
} from "../core/model";
import { liftListParts, liftString, liftStringElement, lowerList, lowerString, lowerStringElement } from "./memory";

// sandbox-observation { id @0, pod-uid @8, pod-name @16, pod-namespace @24, attempt u32 @32,
//   state u8 @36, created-at-ns s64 @40, termination-grace-period-seconds option<s64> @48 }: 64, align 8.
export const SANDBOX_OBSERVATION_SIZE: usize = 64;
// container-observation { id @0, sandbox-id @8, pod-uid @16, name @24, attempt u32 @32, state u8 @36,
//   image @40, spec-hash @48, exit-code s32 @56, reason @60, message @68, created-at-ns @80,
//   started-at-ns @88, finished-at-ns @96 }: 104, align 8.
export const CONTAINER_OBSERVATION_SIZE: usize = 104;
// runtime-snapshot { listed-at-ms u64 @0, sandboxes @8, containers @16, uninspected-pod-uids @24 }: 32.
export const RUNTIME_SNAPSHOT_SIZE: usize = 32;
// action-result { action-id u64 @0, outcome: result<string, action-error> @8 (tag u8, payload @+4;
//   action-error { kind u8 @0, grpc-code u32 @4, message @8 } is 16 bytes) }: 32, align 8.
export const ACTION_RESULT_SIZE: usize = 32;

export function liftSandboxObservation(ptr: usize): SandboxObservation {
  const sandbox = new SandboxObservation();
  sandbox.id = liftString(ptr);
  sandbox.podUid = liftString(ptr + 8);
  sandbox.podName = liftString(ptr + 16);
  sandbox.podNamespace = liftString(ptr + 24);
  sandbox.attempt = load<u32>(ptr + 32);
  sandbox.state = load<u8>(ptr + 36);
  sandbox.createdAtNs = load<i64>(ptr + 40);
  sandbox.hasGracePeriod = load<u8>(ptr + 48) != 0;
  sandbox.terminationGracePeriodSeconds = sandbox.hasGracePeriod ? load<i64>(ptr + 56) : 0;
  return sandbox;
}

export function lowerSandboxObservation(ptr: usize, sandbox: SandboxObservation): void {
  lowerString(ptr, sandbox.id);
  lowerString(ptr + 8, sandbox.podUid);
  lowerString(ptr + 16, sandbox.podName);
  lowerString(ptr + 24, sandbox.podNamespace);
  store<u32>(ptr + 32, sandbox.attempt);
  store<u8>(ptr + 36, <u8>(sandbox.state));
  store<i64>(ptr + 40, sandbox.createdAtNs);
  store<u8>(ptr + 48, <u8>(sandbox.hasGracePeriod ? 1 : 0));
  store<i64>(ptr + 56, sandbox.hasGracePeriod ? sandbox.terminationGracePeriodSeconds : 0);
}

export function liftContainerObservation(ptr: usize): ContainerObservation {
  const c = new ContainerObservation();
  c.id = liftString(ptr);
  c.sandboxId = liftString(ptr + 8);
  c.podUid = liftString(ptr + 16);
  c.name = liftString(ptr + 24);
  c.attempt = load<u32>(ptr + 32);
  c.state = load<u8>(ptr + 36);
  c.image = liftString(ptr + 40);
  c.specHash = liftString(ptr + 48);
  c.exitCode = load<i32>(ptr + 56);
  c.reason = liftString(ptr + 60);
  c.message = liftString(ptr + 68);
  c.createdAtNs = load<i64>(ptr + 80);
  c.startedAtNs = load<i64>(ptr + 88);
  c.finishedAtNs = load<i64>(ptr + 96);
  return c;
}

export function lowerContainerObservation(ptr: usize, c: ContainerObservation): void {
  lowerString(ptr, c.id);
  lowerString(ptr + 8, c.sandboxId);
  lowerString(ptr + 16, c.podUid);
  lowerString(ptr + 24, c.name);
  store<u32>(ptr + 32, c.attempt);
  store<u8>(ptr + 36, <u8>(c.state));
  lowerString(ptr + 40, c.image);
  lowerString(ptr + 48, c.specHash);
  store<i32>(ptr + 56, c.exitCode);
  lowerString(ptr + 60, c.reason);
  lowerString(ptr + 68, c.message);
  store<i64>(ptr + 80, c.createdAtNs);
  store<i64>(ptr + 88, c.startedAtNs);
  store<i64>(ptr + 96, c.finishedAtNs);
}

/// Lifts a snapshot passed as flat parameters (a record of four fields flattens to seven values).
export function liftSnapshotFlat(
  listedAtMs: u64,
  sandboxesPtr: usize,
  sandboxesLen: u32,
  containersPtr: usize,
  containersLen: u32,
  uninspectedPtr: usize,
  uninspectedLen: u32,
): RuntimeSnapshot {
  const snapshot = new RuntimeSnapshot();
  snapshot.listedAtMs = listedAtMs;
  snapshot.sandboxes = liftListParts<SandboxObservation>(
    sandboxesPtr, sandboxesLen, SANDBOX_OBSERVATION_SIZE, liftSandboxObservation);
  snapshot.containers = liftListParts<ContainerObservation>(
    containersPtr, containersLen, CONTAINER_OBSERVATION_SIZE, liftContainerObservation);
  snapshot.uninspectedPodUids = liftListParts<string>(uninspectedPtr, uninspectedLen, 8, liftStringElement);
  return snapshot;
}

export function lowerSnapshot(ptr: usize, snapshot: RuntimeSnapshot): void {
  store<u64>(ptr, snapshot.listedAtMs);
  lowerList<SandboxObservation>(ptr + 8, snapshot.sandboxes, SANDBOX_OBSERVATION_SIZE, lowerSandboxObservation);
  lowerList<ContainerObservation>(
    ptr + 16, snapshot.containers, CONTAINER_OBSERVATION_SIZE, lowerContainerObservation);
  lowerList<string>(ptr + 24, snapshot.uninspectedPodUids, 8, lowerStringElement);
}

export function liftActionResult(ptr: usize): ActionResult {
  const result = new ActionResult();
  result.actionId = load<u64>(ptr);
  if (load<u8>(ptr + 8) == 0) {
    result.createdId = liftString(ptr + 12);
  } else {
    result.error = new ActionError(load<u8>(ptr + 12), load<u32>(ptr + 16), liftString(ptr + 20));
  }
  return result;
}

export function lowerActionResult(ptr: usize, result: ActionResult): void {
  store<u64>(ptr, result.actionId);
  const error = result.error;
  if (error === null) {
    store<u8>(ptr + 8, 0);
    lowerString(ptr + 12, result.createdId);
  } else {
    store<u8>(ptr + 8, 1);
    store<u8>(ptr + 12, <u8>(error.kind));
    store<u32>(ptr + 16, error.grpcCode);
    lowerString(ptr + 20, error.message);
  }
}
