// Pod conditions (upstream status/generate.go and kubelet_pods.go generateAPIPodStatus): which
// conditions a pod has, in upstream's order, and when each last changed.
import { ContainerStatus, ContainerStatusState, PodCondition, PodConditionType, PodPhase, ReadinessGate } from "./model";
import { InitStatuses } from "./status";

const CONTAINERS_NOT_READY = "ContainersNotReady";
const POD_COMPLETED = "PodCompleted";
const POD_FAILED = "PodFailed";

/// ContainersReady: every sidecar and every container ready; a Succeeded pod's is false with
/// PodCompleted, a Failed pod's with PodFailed (its containers may still be stopping).
function containersReady(statuses: ContainerStatus[], phase: i32, init: InitStatuses | null): PodCondition {
  const condition = new PodCondition(PodConditionType.ContainersReady);
  const unready: string[] = [];
  if (init !== null) {
    for (let i = 0; i < init.statuses.length; i++) if (init.sidecar[i] && !init.statuses[i].ready) unready.push(init.statuses[i].name);
  }
  for (let i = 0; i < statuses.length; i++) if (!statuses[i].ready) unready.push(statuses[i].name);
  if (phase == PodPhase.Succeeded) {
    condition.reason = POD_COMPLETED;
    return condition;
  }
  if (phase == PodPhase.Failed) {
    condition.reason = POD_FAILED;
    return condition;
  }
  if (unready.length > 0) {
    condition.reason = CONTAINERS_NOT_READY;
    condition.message = "containers with unready status: [" + unready.join(" ") + "]";
    return condition;
  }
  condition.status = true;
  return condition;
}

/// Initialized (upstream GeneratePodInitializedCondition): every init container succeeded and
/// every sidecar started; true for good once a regular container ran; PodCompleted when the pod
/// Succeeded.
function initialized(statuses: ContainerStatus[], phase: i32, init: InitStatuses | null): PodCondition {
  if (phase == PodPhase.Succeeded) return new PodCondition(PodConditionType.Initialized, true, POD_COMPLETED);
  if (init === null) return new PodCondition(PodConditionType.Initialized, true);
  for (let i = 0; i < statuses.length; i++) {
    const s = statuses[i];
    if (s.state != ContainerStatusState.Waiting || s.lastState !== null) return new PodCondition(PodConditionType.Initialized, true);
  }
  const incomplete: string[] = [];
  for (let i = 0; i < init.statuses.length; i++) {
    const s = init.statuses[i];
    if (init.sidecar[i]) {
      if (!s.started) incomplete.push(s.name);
    } else if (s.state != ContainerStatusState.Terminated || s.exitCode != 0) {
      incomplete.push(s.name);
    }
  }
  if (incomplete.length == 0) return new PodCondition(PodConditionType.Initialized, true);
  return new PodCondition(PodConditionType.Initialized, false, "ContainersNotInitialized", "containers with incomplete status: [" + incomplete.join(" ") + "]");
}

/// Ready once the containers are: false while a readiness gate's condition is missing or not True.
function readyByGates(gates: ReadinessGate[]): PodCondition {
  const unready: string[] = [];
  for (let i = 0; i < gates.length; i++) {
    const gate = gates[i];
    if (gate.status.length == 0) {
      unready.push('corresponding condition of pod readiness gate "' + gate.conditionType + '" does not exist.');
    } else if (gate.status != "True") {
      unready.push('the status of pod readiness gate "' + gate.conditionType + '" is not "True", but ' + gate.status);
    }
  }
  if (unready.length == 0) return new PodCondition(PodConditionType.Ready, true);
  return new PodCondition(PodConditionType.Ready, false, "ReadinessGatesNotReady", unready.join(", "));
}

/// The pod's conditions, transition times carried over from `previous` where the status did
/// not change.
export function podConditions(
  statuses: ContainerStatus[],
  phase: i32,
  sandboxReady: bool,
  previous: PodCondition[],
  nowMs: u64,
  gates: ReadinessGate[] = [],
  init: InitStatuses | null = null,
): PodCondition[] {
  const ready = containersReady(statuses, phase, init);
  const podReady = ready.status ? readyByGates(gates) : new PodCondition(PodConditionType.Ready, false, ready.reason, ready.message);
  const out: PodCondition[] = [
    new PodCondition(PodConditionType.PodReadyToStartContainers, sandboxReady),
    initialized(statuses, phase, init),
    podReady,
    ready,
    new PodCondition(PodConditionType.PodScheduled, true),
  ];
  for (let i = 0; i < out.length; i++) {
    const c = out[i];
    c.lastTransitionMs = nowMs;
    for (let j = 0; j < previous.length; j++) {
      const p = previous[j];
      if (p.conditionType == c.conditionType && p.status == c.status) c.lastTransitionMs = p.lastTransitionMs;
    }
  }
  return out;
}

export function sameConditions(a: PodCondition[], b: PodCondition[]): bool {
  if (a.length != b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x.conditionType != y.conditionType || x.status != y.status || x.reason != y.reason || x.message != y.message) return false;
  }
  return true;
}
