// Export shim of wit/status.wit over the agent's own pod-phase code.
import { ContainerStatus, PodSpec } from "../core/model";
import { restartPolicyOf } from "../core/restart";
import { InitStatuses, podPhase } from "../core/status";
import { TerminatedState } from "../core/model";
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

// init-container-phase-spec { name @0, sidecar u8 @8 }: size 12, align 4.
const INIT_SPEC_SIZE: usize = 12;
// init-container-phase-state { name @0, state u8 @8, exit-code s32 @12, terminated-before u8 @16,
//   last-exit-code s32 @20, started u8 @24 }: size 28, align 4.
const INIT_STATE_SIZE: usize = 28;

function liftPhaseState(ptr: usize): PhaseState {
  return new PhaseState(liftString(ptr), liftCase(load<u8>(ptr, 8), 3, "container-status-state: bad case"), load<i32>(ptr, 12), load<u8>(ptr, 16) != 0);
}

class InitSpec {
  constructor(public name: string, public sidecar: bool) {}
}

function liftInitSpec(ptr: usize): InitSpec {
  return new InitSpec(liftString(ptr), load<u8>(ptr, 8) != 0);
}

class InitState extends PhaseState {
  lastExitCode: i32 = 0;
  started: bool = false;
}

function liftInitState(ptr: usize): InitState {
  const s = new InitState(liftString(ptr), liftCase(load<u8>(ptr, 8), 3, "container-status-state: bad case"), load<i32>(ptr, 12), load<u8>(ptr, 16) != 0);
  s.lastExitCode = load<i32>(ptr, 20);
  s.started = load<u8>(ptr, 24) != 0;
  return s;
}

export function statusPodPhaseOf(
  policyPtr: usize, policyLen: u32, initPtr: usize, initLen: u32, namesPtr: usize, namesLen: u32,
  initStatusesPtr: usize, initStatusesLen: u32, statusesPtr: usize, statusesLen: u32, podHasInitialized: i32, podIsTerminal: i32,
): usize {
  const spec = new PodSpec();
  spec.restartPolicy = liftStringParts(policyPtr, policyLen);
  const inits = liftListParts<InitSpec>(initPtr, initLen, INIT_SPEC_SIZE, liftInitSpec);
  const names = liftListParts<string>(namesPtr, namesLen, 8, liftStringElement);
  const givenInit = liftListParts<InitState>(initStatusesPtr, initStatusesLen, INIT_STATE_SIZE, liftInitState);
  const given = liftListParts<PhaseState>(statusesPtr, statusesLen, PHASE_STATE_SIZE, liftPhaseState);
  resetArgumentArena();
  const problem = phaseInputProblem(spec.restartPolicy, inits, names, givenInit, given);
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
  let init: InitStatuses | null = null;
  if (inits.length > 0) {
    const initStatuses: ContainerStatus[] = [];
    const initHas: bool[] = [];
    const sidecar: bool[] = [];
    for (let i = 0; i < inits.length; i++) {
      const status = new ContainerStatus();
      status.name = inits[i].name;
      let found = false;
      for (let j = 0; j < givenInit.length; j++) {
        const g = givenInit[j];
        if (g.name != inits[i].name) continue;
        found = true;
        status.state = g.state;
        status.exitCode = g.exitCode;
        status.started = g.started;
        if (g.terminatedBefore) {
          const last = new TerminatedState();
          last.exitCode = g.lastExitCode;
          status.lastState = last;
        }
      }
      initStatuses.push(status);
      initHas.push(found);
      sidecar.push(inits[i].sidecar);
    }
    init = new InitStatuses(initStatuses, initHas, sidecar, podHasInitialized != 0);
  }
  const phase = podPhase(statuses, hasStatus, stoppedBefore, restartPolicyOf(spec), podIsTerminal != 0, init);
  store<u8>(lowerOkTag(LIBRARY_RETURN_AREA), <u8>phase, 4);
  return LIBRARY_RETURN_AREA;
}

function phaseInputProblem(policy: string, inits: InitSpec[], names: string[], givenInit: InitState[], given: PhaseState[]): string {
  const policyProblem = restartPolicyProblem(policy);
  if (policyProblem.length > 0) return "spec.restartPolicy: " + policyProblem;
  if (names.length == 0) return "spec.containers: Required value";
  const seen = new Set<string>();
  for (let i = 0; i < names.length; i++) {
    const problem = uniqueNameProblem("spec.containers[" + i.toString() + "].name", names[i], seen);
    if (problem.length > 0) return problem;
  }
  // Init containers' names are unique across both lists (the apiserver's rule).
  const initSeen = new Set<string>();
  for (let i = 0; i < inits.length; i++) {
    const field = "spec.initContainers[" + i.toString() + "].name";
    if (seen.has(inits[i].name)) return field + ': Duplicate value: "' + inits[i].name + '"';
    const problem = uniqueNameProblem(field, inits[i].name, initSeen);
    if (problem.length > 0) return problem;
  }
  const reported = new Set<string>();
  for (let j = 0; j < given.length; j++) {
    const problem = referenceProblem("status.containerStatuses[" + j.toString() + "].name", given[j].name, seen, reported);
    if (problem.length > 0) return problem;
  }
  const initReported = new Set<string>();
  for (let j = 0; j < givenInit.length; j++) {
    const problem = referenceProblem("status.initContainerStatuses[" + j.toString() + "].name", givenInit[j].name, initSeen, initReported);
    if (problem.length > 0) return problem;
  }
  return "";
}
