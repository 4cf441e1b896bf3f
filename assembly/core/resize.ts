// In-place resize (KEP-1287, GA in 1.35): a running container whose requests or limits changed
// gets new cgroup values without a restart, unless its resizePolicy says RestartContainer for a
// changed resource. The pod cgroup is grown before the containers and shrunk after them. A
// resize the node can never hold is Infeasible; one that would cut memory below what the
// container uses now is Deferred until it fits. One runtime call per step, like SyncPod.
import { ContainerObservation, ContainerState, LinuxResources, PodSpec, SandboxObservation } from "./model";
import { AppliedResources, PodRecord } from "./pod-record";
import { WorkerContext } from "./context";
import { containerResources, podRequestBytes, podRequestMilli, podResources } from "./resources";
import { latestContainer } from "./status";

function cpuChanged(a: LinuxResources, b: LinuxResources): bool {
  return a.cpuShares != b.cpuShares || a.cpuQuotaUs != b.cpuQuotaUs || a.cpuPeriodUs != b.cpuPeriodUs;
}

function memoryChanged(a: LinuxResources, b: LinuxResources): bool {
  return a.memoryLimitBytes != b.memoryLimitBytes;
}

/// A limit of 0 is "none": larger than any number.
function largerLimit(a: i64, b: i64): i64 {
  if (a == 0 || b == 0) return 0;
  return a > b ? a : b;
}

function maxU64(a: u64, b: u64): u64 {
  return a > b ? a : b;
}

/// Per resource the larger of the two: what the pod cgroup holds while containers move.
function envelope(a: LinuxResources, b: LinuxResources): LinuxResources {
  const r = new LinuxResources();
  r.cpuShares = maxU64(a.cpuShares, b.cpuShares);
  r.cpuWeight = maxU64(a.cpuWeight, b.cpuWeight);
  r.cpuPeriodUs = b.cpuPeriodUs;
  r.cpuQuotaUs = largerLimit(a.cpuQuotaUs, b.cpuQuotaUs);
  r.memoryLimitBytes = largerLimit(a.memoryLimitBytes, b.memoryLimitBytes);
  return r;
}

function runningIn(rec: PodRecord, name: string, sandbox: SandboxObservation): ContainerObservation | null {
  const c = latestContainer(rec.containers, name, sandbox.id);
  return c !== null && c.state == ContainerState.Running ? c : null;
}

function setPending(rec: PodRecord, reason: string, message: string): void {
  if (rec.resizePendingReason != reason || rec.resizePendingMessage != message) rec.dirty = true;
  rec.resizePendingReason = reason;
  rec.resizePendingMessage = message;
  rec.resizeInProgress = false;
}

/// Why the node cannot take the pod's new requests at all, or "".
function infeasibility(spec: PodSpec, ctx: WorkerContext): string {
  const memory = podRequestBytes(spec, "memory");
  if (ctx.allocatableMemoryBytes > 0 && memory > ctx.allocatableMemoryBytes) {
    return "Node didn't have enough capacity: memory, requested: " + memory.toString() + ", capacity: " + ctx.allocatableMemoryBytes.toString();
  }
  const cpu = podRequestMilli(spec, "cpu");
  if (ctx.allocatableCpuMilli > 0 && cpu > ctx.allocatableCpuMilli) {
    return "Node didn't have enough capacity: cpu, requested: " + cpu.toString() + ", capacity: " + ctx.allocatableCpuMilli.toString();
  }
  return "";
}

/// Queues the next resize call for `rec`; false when nothing is to be done now.
export function resizeStep(rec: PodRecord, ctx: WorkerContext, sandbox: SandboxObservation): bool {
  const spec = rec.spec!;
  let anyChanged = false;
  for (let i = 0; i < spec.containers.length; i++) {
    const container = spec.containers[i];
    const running = runningIn(rec, container.name, sandbox);
    if (running === null) continue;
    const desired = containerResources(spec, rec.qos, container, ctx.memoryCapacityBytes);
    if (!rec.applied.has(running.id)) {
      // Created before this agent knew it (an agent restart): take it as created with this spec.
      rec.applied.set(running.id, new AppliedResources(desired, container.requests, container.limits));
      continue;
    }
    const applied = rec.applied.get(running.id);
    if (applied.values.equals(desired)) {
      // Values unchanged (say, a request moved within the same shares): the lists still follow.
      applied.requests = container.requests;
      applied.limits = container.limits;
      continue;
    }
    anyChanged = true;
    if ((cpuChanged(applied.values, desired) && container.restartOnResize.includes("cpu")) ||
      (memoryChanged(applied.values, desired) && container.restartOnResize.includes("memory"))) {
      rec.restartForResize.set(container.name, running.id);
      ctx.stopContainer(rec, running.id, container.name, "Container " + container.name + " resize requires a restart");
      return true;
    }
  }
  const podDesired = podResources(spec);
  const podApplied = rec.podApplied;
  if (podApplied === null) rec.podApplied = podDesired;
  const podChanged = podApplied !== null && !podApplied.equals(podDesired);
  if (!anyChanged && !podChanged) {
    if (rec.resizePendingReason.length > 0 || rec.resizeInProgress) rec.dirty = true;
    setPending(rec, "", "");
    acceptAllocation(rec, spec);
    return false;
  }
  const infeasible = infeasibility(spec, ctx);
  if (infeasible.length > 0) {
    setPending(rec, "Infeasible", infeasible);
    return false;
  }
  // Memory limits below what a container uses now would be refused by cgroup v1 or OOM-kill
  // under v2: wait until usage is below the new limit.
  const usage = ctx.usageOf(rec.uid);
  if (usage !== null) {
    for (let i = 0; i < spec.containers.length; i++) {
      const container = spec.containers[i];
      const running = runningIn(rec, container.name, sandbox);
      if (running === null || !rec.applied.has(running.id)) continue;
      const desired = containerResources(spec, rec.qos, container, ctx.memoryCapacityBytes);
      if (desired.memoryLimitBytes == 0) continue;
      const usages = usage.usages();
      for (let j = 0; j < usages.length; j++) {
        const used = usages[j];
        if (used.name == container.name && used.memoryWorkingSetBytes > desired.memoryLimitBytes) {
          setPending(rec, "Deferred", "container " + container.name + " uses " + used.memoryWorkingSetBytes.toString() +
            " bytes of memory, more than the new limit of " + desired.memoryLimitBytes.toString());
          return false;
        }
      }
    }
  }
  if (rec.resizePendingReason.length > 0 || !rec.resizeInProgress) rec.dirty = true;
  rec.resizePendingReason = "";
  rec.resizePendingMessage = "";
  rec.resizeInProgress = true;
  acceptAllocation(rec, spec);
  // Grow the pod cgroup first: per resource, the larger of old and new.
  if (podApplied !== null && podChanged) {
    const grown = envelope(podApplied, podDesired);
    if (!grown.equals(podApplied)) {
      ctx.updatePodCgroup(rec, grown);
      return true;
    }
  }
  for (let i = 0; i < spec.containers.length; i++) {
    const container = spec.containers[i];
    const running = runningIn(rec, container.name, sandbox);
    if (running === null || !rec.applied.has(running.id)) continue;
    const desired = containerResources(spec, rec.qos, container, ctx.memoryCapacityBytes);
    if (rec.applied.get(running.id).values.equals(desired)) continue;
    ctx.updateContainerResources(rec, running.id, container.name, desired, container.requests, container.limits);
    return true;
  }
  // Then shrink it to the new values.
  if (podChanged) {
    ctx.updatePodCgroup(rec, podDesired);
    return true;
  }
  return false;
}

/// The spec's requests become the allocated ones (`allocatedResources`).
export function acceptAllocation(rec: PodRecord, spec: PodSpec): void {
  for (let i = 0; i < spec.containers.length; i++) rec.allocated.set(spec.containers[i].name, spec.containers[i].requests);
}
