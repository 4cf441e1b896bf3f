// Export shims of wit/probe.wit over the agent's own probe worker (core/probe-worker.ts) and its
// schedule (core/probe-manager.ts). The caller keeps the worker between calls; each call rebuilds
// a ProbeWorker from it, steps it, and hands the state back.
import { ContainerStatus } from "../core/model";
import { Probe, ProbeType } from "../core/probe-types";
import { ProbeWorker } from "../core/probe-worker";
import { firstTickAtMs, nextTickAfter } from "../core/probe-manager";
import { liftString, liftStringParts, lowerString, resetArgumentArena } from "../abi/memory";
import { LIBRARY_RETURN_AREA, liftCase, lowerError, lowerOkTag } from "../abi/library-types";

// probe-worker-state { container-id @0, result u8 @8, last-result u8 @9, result-run s32 @12,
//   on-hold u8 @16 }: size 20, align 4.
// probed-container { container-id @0, state u8 @8, started-at-ns s64 @16, started u8 @24 }:
//   size 32, align 8; as option<probed-container>: tag @0, payload @8, size 40.
// tick's parameters (17 flat values, more than 16: passed as a pointer to this tuple):
//   type u8 @0, initial-delay-seconds s32 @4, worker @8, container option @32, pod u8 @72,
//   never-restart u8 @73, now-ms u64 @80; size 88.
// tick-outcome / recorded-outcome { worker @0, u8 @20, u8 @21 }: size 24; in result<_, string>
//   the payload starts at 4.

const PROBE_RESULTS: u32 = 4;
const POD_RUNNING = 0;
const POD_STOPPING = 1;
const POD_FINISHED = 2;

function workerOf(type: i32, containerId: string, result: i32, lastResult: i32, resultRun: i32, onHold: bool, probe: Probe): ProbeWorker {
  const worker = new ProbeWorker("", type, probe);
  worker.containerId = containerId;
  worker.state = result;
  worker.lastResult = lastResult;
  worker.resultRun = resultRun;
  worker.onHold = onHold;
  return worker;
}

function liftWorker(ptr: usize, type: i32, probe: Probe): ProbeWorker {
  return workerOf(
    type,
    liftString(ptr),
    liftCase(load<u8>(ptr, 8), PROBE_RESULTS, "probe-result: bad case"),
    liftCase(load<u8>(ptr, 9), PROBE_RESULTS, "probe-result: bad case"),
    load<i32>(ptr, 12),
    load<u8>(ptr, 16) != 0,
    probe,
  );
}

/// Lowers `worker` and two flags as the ok payload of a result in the return area.
function lowerOutcome(worker: ProbeWorker, first: bool, second: bool): usize {
  const at = lowerOkTag(LIBRARY_RETURN_AREA) + 4;
  lowerString(at, worker.containerId);
  store<u8>(at, <u8>worker.state, 8);
  store<u8>(at, <u8>worker.lastResult, 9);
  store<i32>(at, worker.resultRun, 12);
  store<u8>(at, worker.onHold ? 1 : 0, 16);
  store<u8>(at, first ? 1 : 0, 20);
  store<u8>(at, second ? 1 : 0, 21);
  return LIBRARY_RETURN_AREA;
}

export function probeTick(params: usize): usize {
  const type = liftCase(load<u8>(params), 3, "probe-type: bad case");
  const probe = new Probe();
  probe.initialDelaySeconds = load<i32>(params, 4);
  const worker = liftWorker(params + 8, type, probe);
  let status: ContainerStatus | null = null;
  if (liftCase(load<u8>(params, 32), 2, "option: bad case") == 1) {
    status = new ContainerStatus();
    status.containerId = liftString(params + 40);
    status.state = liftCase(load<u8>(params, 48), 3, "container-status-state: bad case");
    status.startedAtNs = load<i64>(params, 56);
    status.started = load<u8>(params, 64) != 0;
  }
  const pod = liftCase(load<u8>(params, 72), 3, "pod-probe-context: bad case");
  const neverRestart = load<u8>(params, 73) != 0;
  const nowMs = load<u64>(params, 80);
  resetArgumentArena();
  if (probe.initialDelaySeconds < 0) {
    return lowerError(LIBRARY_RETURN_AREA, 4, "initial-delay-seconds: Invalid value: " + probe.initialDelaySeconds.toString() + ": must be greater than or equal to 0");
  }
  const changed: bool[] = [false];
  const decision = worker.tick(status, pod == POD_FINISHED, pod == POD_STOPPING, neverRestart, nowMs, changed);
  const area = lowerOutcome(worker, false, changed[0]);
  // tick-outcome's fields after the worker: decision @20, result-changed @21.
  store<u8>(area + 4, <u8>decision, 20);
  return area;
}

export function probeRecordOutcome(
  typeValue: i32, successThreshold: i32, failureThreshold: i32,
  idPtr: usize, idLen: u32, result: i32, lastResult: i32, resultRun: i32, onHold: i32,
  containerIdPtr: usize, containerIdLen: u32, outcomeValue: i32,
): usize {
  const type = liftCase(<u32>typeValue, 3, "probe-type: bad case");
  const probe = new Probe();
  probe.successThreshold = successThreshold;
  probe.failureThreshold = failureThreshold;
  const worker = workerOf(
    type, liftStringParts(idPtr, idLen),
    liftCase(<u32>result, PROBE_RESULTS, "probe-result: bad case"), liftCase(<u32>lastResult, PROBE_RESULTS, "probe-result: bad case"),
    resultRun, onHold != 0, probe,
  );
  const containerId = liftStringParts(containerIdPtr, containerIdLen);
  const outcome = liftCase(<u32>outcomeValue, 5, "probe-outcome: bad case");
  resetArgumentArena();
  if (successThreshold < 1) return lowerError(LIBRARY_RETURN_AREA, 4, "success-threshold: Invalid value: " + successThreshold.toString() + ": must be greater than 0");
  if (type != ProbeType.Readiness && successThreshold != 1) {
    return lowerError(LIBRARY_RETURN_AREA, 4, "success-threshold: Invalid value: " + successThreshold.toString() + ": must be 1");
  }
  if (failureThreshold < 1) return lowerError(LIBRARY_RETURN_AREA, 4, "failure-threshold: Invalid value: " + failureThreshold.toString() + ": must be greater than 0");
  const wasOnHold = worker.onHold;
  const changed = worker.record(containerId, outcome);
  // A liveness or startup failure that crossed its threshold puts the worker on hold: the kill.
  return lowerOutcome(worker, changed, worker.onHold && !wasOnHold);
}

function periodProblem(periodSeconds: i32): string {
  return periodSeconds < 1 ? "period-seconds: Invalid value: " + periodSeconds.toString() + ": must be greater than 0" : "";
}

export function probeFirstTickAt(
  uidPtr: usize, uidLen: u32, namePtr: usize, nameLen: u32, typeValue: i32, periodSeconds: i32, agentStartedMs: u64, nowMs: u64,
): usize {
  const uid = liftStringParts(uidPtr, uidLen);
  const name = liftStringParts(namePtr, nameLen);
  const type = liftCase(<u32>typeValue, 3, "probe-type: bad case");
  resetArgumentArena();
  const problem = periodProblem(periodSeconds);
  if (problem.length > 0) return lowerError(LIBRARY_RETURN_AREA, 8, problem);
  store<u64>(lowerOkTag(LIBRARY_RETURN_AREA), firstTickAtMs(uid, name, type, <u64>periodSeconds * 1000, agentStartedMs, nowMs), 8);
  return LIBRARY_RETURN_AREA;
}

export function probeNextTickAt(lastTickMs: u64, periodSeconds: i32, nowMs: u64): usize {
  const problem = periodProblem(periodSeconds);
  if (problem.length > 0) return lowerError(LIBRARY_RETURN_AREA, 8, problem);
  store<u64>(lowerOkTag(LIBRARY_RETURN_AREA), nextTickAfter(lastTickMs, <u64>periodSeconds * 1000, nowMs), 8);
  return LIBRARY_RETURN_AREA;
}
