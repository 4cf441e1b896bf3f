// Export shim of wit/status.wit over the agent's own pod-phase code.
import { ContainerStatus, PodSpec } from "../core/model";
import { restartPolicyOf } from "../core/restart";
import { podPhase } from "../core/status";
import { restartPolicyProblem } from "../core/validation";
import { liftListParts, liftString, liftStringElement, liftStringParts, resetArgumentArena } from "../abi/memory";
import { LIBRARY_RETURN_AREA, liftCase, lowerError, lowerOkTag } from "../abi/library-types";
import { referenceProblem, uniqueNameProblem } from "./checks";

// container-phase-state { name @0, state u8 @8, exit-code s32 @12, terminated-before u8 @16 }:
// size 20, align 4.
const PHASE_STATE_SIZE: usize = 20;

class PhaseState {
  constructor(public name: string, public state: i32, public exitCode: i32, public terminatedBefore: bool) {}
}

function liftPhaseState(ptr: usize): PhaseState {
  return new PhaseState(liftString(ptr), liftCase(load<u8>(ptr, 8), 3, "container-status-state: bad case"), load<i32>(ptr, 12), load<u8>(ptr, 16) != 0);
}

export function statusPodPhaseOf(
  policyPtr: usize, policyLen: u32, namesPtr: usize, namesLen: u32, statusesPtr: usize, statusesLen: u32, podIsTerminal: i32,
): usize {
  const spec = new PodSpec();
  spec.restartPolicy = liftStringParts(policyPtr, policyLen);
  const names = liftListParts<string>(namesPtr, namesLen, 8, liftStringElement);
  const given = liftListParts<PhaseState>(statusesPtr, statusesLen, PHASE_STATE_SIZE, liftPhaseState);
  resetArgumentArena();
  const problem = phaseInputProblem(spec.restartPolicy, names, given);
  if (problem.length > 0) return lowerError(LIBRARY_RETURN_AREA, 4, problem);
  const statuses: ContainerStatus[] = [];
  const hasStatus: bool[] = [];
  const stoppedBefore: bool[] = [];
  for (let i = 0; i < names.length; i++) {
    const status = new ContainerStatus();
    status.name = names[i];
    let found = false;
    let before = false;
    for (let j = 0; j < given.length; j++) {
      if (given[j].name != names[i]) continue;
      found = true;
      status.state = given[j].state;
      status.exitCode = given[j].exitCode;
      before = given[j].terminatedBefore;
    }
    statuses.push(status);
    hasStatus.push(found);
    stoppedBefore.push(before);
  }
  const phase = podPhase(statuses, hasStatus, stoppedBefore, restartPolicyOf(spec), podIsTerminal != 0);
  store<u8>(lowerOkTag(LIBRARY_RETURN_AREA), <u8>phase, 4);
  return LIBRARY_RETURN_AREA;
}

function phaseInputProblem(policy: string, names: string[], given: PhaseState[]): string {
  const policyProblem = restartPolicyProblem(policy);
  if (policyProblem.length > 0) return "spec.restartPolicy: " + policyProblem;
  if (names.length == 0) return "spec.containers: Required value";
  const seen = new Set<string>();
  for (let i = 0; i < names.length; i++) {
    const problem = uniqueNameProblem("spec.containers[" + i.toString() + "].name", names[i], seen);
    if (problem.length > 0) return problem;
  }
  const reported = new Set<string>();
  for (let j = 0; j < given.length; j++) {
    const problem = referenceProblem("status.containerStatuses[" + j.toString() + "].name", given[j].name, seen, reported);
    if (problem.length > 0) return problem;
  }
  return "";
}
