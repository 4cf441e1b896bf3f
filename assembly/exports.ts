// The component's entry: flat canonical-ABI shims for every export of wit/agent.wit, and their
// cabi_post_* functions. The build renames these AssemblyScript names to the WIT export names
// (build/exports.mjs holds the map). No logic lives here.
import { Agent } from "./core/agent";
import { AgentConfig, NodeConfig, NodeStats, PlannedAction, PodRejection, PodSpec, PodUsageIn, ActionResult, SignalObservation, VolumeUsage } from "./core/model";
import { POD_USAGE_SIZE, SIGNAL_OBSERVATION_SIZE, VOLUME_USAGE_SIZE, liftPodUsage, liftSignalObservation, liftVolumeUsage, lowerNodeStats, unpackNodeStats } from "./abi/node";
import {
  cabiRealloc,
  freeReturnArena,
  liftListParts,
  liftStringElement,
  liftStringParts,
  lowerList,
  lowerString,
  resetArgumentArena,
} from "./abi/memory";
import { PackedSnapshot } from "./core/packed";
import { POD_REJECTION_SIZE, POD_SPEC_SIZE, liftPodRejection, liftPodSpec, lowerPodRejection, lowerPodSpec } from "./abi/pod-spec";
import {
  ACTION_RESULT_SIZE,
  liftActionResult,
  liftSnapshotFlat,
  lowerActionResult,
  lowerSnapshot,
} from "./abi/observations";
import { PLANNED_ACTION_SIZE, liftPlannedAction, lowerPlannedAction } from "./abi/actions";
import { PROBE_RESULT_SIZE, liftProbeResult, lowerProbeResult } from "./abi/probes";
import { ProbeResult } from "./core/probe-types";
import { ShutdownGracePeriod } from "./core/node-shutdown";
import { BackOffCheckpoint } from "./core/backoff";
import { DeviceInfo } from "./core/hardware/device-manager";
import { DEVICE_SIZE, liftDevice, liftHardwareStateParts, lowerHardwareState } from "./abi/hardware";
import { liftHardwareConfig } from "./abi/hardware-config";
import { BACK_OFF_CHECKPOINT_SIZE, liftBackOffCheckpoint, lowerBackOffCheckpoint } from "./abi/back-offs";

export { cabiRealloc as cabi_realloc };

// @ts-ignore: decorator
@external("[export]nanolet:core/agent-api@0.1.0", "[resource-new]agent")
declare function agentResourceNew(rep: i32): i32;

/// Return area for results that do not fit one core value (largest: runtime-snapshot, 32 bytes).
const RETURN_AREA: usize = memory.data(32, 8);

/// Live agents by rep - 1; a dropped slot is null and reused.
const agents: Array<Agent | null> = [];

function agentOf(rep: i32): Agent {
  assert(rep > 0 && rep <= agents.length && agents[rep - 1] !== null, "agent: bad handle");
  return changetype<Agent>(agents[rep - 1]);
}

export function agentConstructor(
  nodeNamePtr: usize, nodeNameLen: u32, relistPeriodMs: u64, backoffInitialMs: u64, backoffMaxMs: u64,
  workerErrorBackoffMs: u64, maxPods: u32,
): i32 {
  const config = new AgentConfig();
  config.nodeName = liftStringParts(nodeNamePtr, nodeNameLen);
  resetArgumentArena();
  config.relistPeriodMs = relistPeriodMs;
  config.backoffInitialMs = backoffInitialMs;
  config.backoffMaxMs = backoffMaxMs;
  config.workerErrorBackoffMs = workerErrorBackoffMs;
  config.maxPods = maxPods;
  const agent = new Agent(config);
  let slot = agents.indexOf(null);
  if (slot < 0) {
    agents.push(agent);
    slot = agents.length - 1;
  } else {
    agents[slot] = agent;
  }
  return agentResourceNew(slot + 1);
}

export function agentDtor(rep: i32): void {
  agentOf(rep);
  agents[rep - 1] = null;
}

export function agentHandlePods(rep: i32, nowMs: u64, podsPtr: usize, podsLen: u32): usize {
  const pods = liftListParts<PodSpec>(podsPtr, podsLen, POD_SPEC_SIZE, liftPodSpec);
  resetArgumentArena();
  const rejections = agentOf(rep).handlePods(nowMs, pods);
  lowerList<PodRejection>(RETURN_AREA, rejections, POD_REJECTION_SIZE, lowerPodRejection);
  return RETURN_AREA;
}

export function agentHandleRelist(
  rep: i32, nowMs: u64, listedAtMs: u64, sandboxesPtr: usize, sandboxesLen: u32, containersPtr: usize,
  containersLen: u32, uninspectedPtr: usize, uninspectedLen: u32,
): void {
  const snapshot = liftSnapshotFlat(
    listedAtMs, sandboxesPtr, sandboxesLen, containersPtr, containersLen, uninspectedPtr, uninspectedLen);
  resetArgumentArena();
  agentOf(rep).handleRelist(nowMs, snapshot);
}

export function agentHandleRelistPacked(
  rep: i32, nowMs: u64, listedAtMs: u64, textPtr: usize, textBytes: u32, sandboxesPtr: usize, sandboxWords: u32,
  sandboxNumbersPtr: usize, sandboxNumbers: u32, containersPtr: usize, containerWords: u32,
  containerNumbersPtr: usize, containerNumbers: u32, uninspectedPtr: usize, uninspectedLen: u32,
): void {
  // Read in place: the lists stay in the argument arena until the end of this call.
  const snapshot = new PackedSnapshot();
  snapshot.listedAtMs = listedAtMs;
  snapshot.textPtr = textPtr;
  snapshot.textBytes = textBytes;
  snapshot.sandboxesPtr = sandboxesPtr;
  snapshot.sandboxNumbersPtr = sandboxNumbersPtr;
  snapshot.containersPtr = containersPtr;
  snapshot.containerNumbersPtr = containerNumbersPtr;
  snapshot.uninspectedPodUids = liftListParts<string>(uninspectedPtr, uninspectedLen, 8, liftStringElement);
  snapshot.validate(sandboxWords, sandboxNumbers, containerWords, containerNumbers);
  agentOf(rep).handlePackedRelist(nowMs, snapshot);
  resetArgumentArena();
}

export function agentConfigureNode(
  rep: i32, memoryCapacityBytes: u64, allocatableMemoryBytes: u64, allocatableCpuMilli: u64,
  hardPtr: usize, hardLen: u32, softPtr: usize, softLen: u32, softGracePtr: usize, softGraceLen: u32,
  minReclaimPtr: usize, minReclaimLen: u32, transitionPeriodMs: u64, maxPodGracePeriodSeconds: i64, intervalMs: u64,
): usize {
  const config = new NodeConfig();
  config.memoryCapacityBytes = memoryCapacityBytes;
  config.allocatableMemoryBytes = allocatableMemoryBytes;
  config.allocatableCpuMilli = allocatableCpuMilli;
  config.evictionHard = liftStringParts(hardPtr, hardLen);
  config.evictionSoft = liftStringParts(softPtr, softLen);
  config.evictionSoftGracePeriod = liftStringParts(softGracePtr, softGraceLen);
  config.evictionMinimumReclaim = liftStringParts(minReclaimPtr, minReclaimLen);
  config.evictionPressureTransitionPeriodMs = transitionPeriodMs;
  config.evictionMaxPodGracePeriodSeconds = maxPodGracePeriodSeconds;
  config.evictionIntervalMs = intervalMs;
  resetArgumentArena();
  return lowerUnitResult(agentOf(rep).configureNode(config));
}

export function agentHandleNodeStats(rep: i32, nowMs: u64, signalsPtr: usize, signalsLen: u32, podsPtr: usize, podsLen: u32, volumesPtr: usize, volumesLen: u32): void {
  const stats = liftNodeStatsParts(signalsPtr, signalsLen, podsPtr, podsLen, volumesPtr, volumesLen);
  resetArgumentArena();
  agentOf(rep).handleNodeStats(nowMs, stats);
}

export function agentHandleNodeStatsPacked(
  rep: i32, nowMs: u64, signalsPtr: usize, signalsLen: u32, textPtr: usize, textBytes: u32, podsPtr: usize, podValues: u32,
  containersPtr: usize, containerValues: u32, volumesPtr: usize, volumesLen: u32,
): void {
  // Read in place: the lists stay in the argument arena until the end of this call.
  const stats = unpackNodeStats(textPtr, textBytes, podsPtr, podValues, containersPtr, containerValues);
  stats.signals = liftListParts<SignalObservation>(signalsPtr, signalsLen, SIGNAL_OBSERVATION_SIZE, liftSignalObservation);
  stats.volumes = liftListParts<VolumeUsage>(volumesPtr, volumesLen, VOLUME_USAGE_SIZE, liftVolumeUsage);
  resetArgumentArena();
  agentOf(rep).handleNodeStats(nowMs, stats);
}

function liftNodeStatsParts(signalsPtr: usize, signalsLen: u32, podsPtr: usize, podsLen: u32, volumesPtr: usize, volumesLen: u32): NodeStats {
  const stats = new NodeStats();
  stats.signals = liftListParts<SignalObservation>(signalsPtr, signalsLen, SIGNAL_OBSERVATION_SIZE, liftSignalObservation);
  stats.pods = liftListParts<PodUsageIn>(podsPtr, podsLen, POD_USAGE_SIZE, liftPodUsage);
  stats.volumes = liftListParts<VolumeUsage>(volumesPtr, volumesLen, VOLUME_USAGE_SIZE, liftVolumeUsage);
  return stats;
}

export function agentHandleActionResults(rep: i32, nowMs: u64, resultsPtr: usize, resultsLen: u32): void {
  const results = liftListParts<ActionResult>(resultsPtr, resultsLen, ACTION_RESULT_SIZE, liftActionResult);
  resetArgumentArena();
  agentOf(rep).handleActionResults(nowMs, results);
}

export function agentHandleProbeResults(rep: i32, nowMs: u64, resultsPtr: usize, resultsLen: u32): void {
  const results = liftListParts<ProbeResult>(resultsPtr, resultsLen, PROBE_RESULT_SIZE, liftProbeResult);
  resetArgumentArena();
  agentOf(rep).handleProbeResults(nowMs, results);
}

export function agentPollActions(rep: i32, nowMs: u64): usize {
  const actions = agentOf(rep).pollActions(nowMs);
  lowerList<PlannedAction>(RETURN_AREA, actions, PLANNED_ACTION_SIZE, lowerPlannedAction);
  return RETURN_AREA;
}

export function agentPollDeadline(rep: i32): usize {
  return lowerDeadline(agentOf(rep).pollDeadline());
}

export function agentBackOffs(rep: i32, nowMs: u64): usize {
  const entries = agentOf(rep).backOffs(nowMs);
  lowerList<BackOffCheckpoint>(RETURN_AREA, entries, BACK_OFF_CHECKPOINT_SIZE, lowerBackOffCheckpoint);
  return RETURN_AREA;
}

export function agentHandleRuntimeEvent(rep: i32, nowMs: u64): void {
  agentOf(rep).handleRuntimeEvent(nowMs);
}

export function agentHandleEventStream(rep: i32, nowMs: u64, streaming: bool): void {
  agentOf(rep).handleEventStream(nowMs, streaming);
}

// shutdown-grace-period { priority s32 @0, grace-period-seconds s64 @8 }: 16, align 8.
const SHUTDOWN_GRACE_PERIOD_SIZE: usize = 16;

function liftShutdownGracePeriod(ptr: usize): ShutdownGracePeriod {
  return new ShutdownGracePeriod(load<i32>(ptr), load<i64>(ptr + 8));
}

export function agentConfigureNodeShutdown(rep: i32, gracePeriodSeconds: i64, criticalPodsSeconds: i64, groupsPtr: usize, groupsLen: u32): u64 {
  const groups = liftListParts<ShutdownGracePeriod>(groupsPtr, groupsLen, SHUTDOWN_GRACE_PERIOD_SIZE, liftShutdownGracePeriod);
  resetArgumentArena();
  return agentOf(rep).configureNodeShutdown(gracePeriodSeconds, criticalPodsSeconds, groups);
}

export function agentHandleNodeShutdown(rep: i32, nowMs: u64, shuttingDown: bool): void {
  agentOf(rep).handleNodeShutdown(nowMs, shuttingDown);
}

export function agentNodeShuttingDown(rep: i32): bool {
  return agentOf(rep).nodeShuttingDown;
}

export function agentRestoreBackOffs(rep: i32, nowMs: u64, entriesPtr: usize, entriesLen: u32): void {
  const entries = liftListParts<BackOffCheckpoint>(entriesPtr, entriesLen, BACK_OFF_CHECKPOINT_SIZE, liftBackOffCheckpoint);
  resetArgumentArena();
  agentOf(rep).restoreBackOffs(nowMs, entries);
}

export function agentConfigureHardware(
  rep: i32, cpusPtr: usize, cpusLen: u32, numaPtr: usize, numaLen: u32, cpuPolicy: i32, reservedPtr: usize, reservedLen: u32,
  reservedCount: u32, fullPcpusOnly: i32, reconcilePeriodMs: u64, memoryPolicy: i32, reservedMemoryPtr: usize,
  reservedMemoryLen: u32, topologyPolicy: i32, topologyScope: i32,
): usize {
  const config = liftHardwareConfig(cpusPtr, cpusLen, numaPtr, numaLen, cpuPolicy, reservedPtr, reservedLen, reservedCount,
    fullPcpusOnly, reconcilePeriodMs, memoryPolicy, reservedMemoryPtr, reservedMemoryLen, topologyPolicy, topologyScope);
  resetArgumentArena();
  return lowerUnitResult(agentOf(rep).configureHardware(config));
}

export function agentHandleDevices(rep: i32, nowMs: u64, resourcePtr: usize, resourceLen: u32, devicesPtr: usize, devicesLen: u32): void {
  const resource = liftStringParts(resourcePtr, resourceLen);
  const devices = liftListParts<DeviceInfo>(devicesPtr, devicesLen, DEVICE_SIZE, liftDevice);
  resetArgumentArena();
  agentOf(rep).handleDevices(nowMs, resource, devices);
}

export function agentRestoreHardware(
  rep: i32, defaultPtr: usize, defaultLen: u32, cpusPtr: usize, cpusLen: u32, devicesPtr: usize, devicesLen: u32, memoryPtr: usize, memoryLen: u32,
): void {
  const state = liftHardwareStateParts(cpusPtr, cpusLen, devicesPtr, devicesLen, memoryPtr, memoryLen);
  resetArgumentArena();
  agentOf(rep).hardware.restore(state.cpus, state.devices, state.memory);
}

export function agentHardwareState(rep: i32): usize {
  const hardware = agentOf(rep).hardware;
  lowerHardwareState(RETURN_AREA, hardware.cpu.defaultSet, hardware.cpu.assignments, hardware.devices.assignments, hardware.memory.assignments);
  return RETURN_AREA;
}

/// result<_, string>: tag u8 @0 (0 ok, 1 err), the error string @4.
function lowerUnitResult(error: string): usize {
  store<u8>(RETURN_AREA, error.length == 0 ? 0 : 1);
  if (error.length == 0) {
    store<u32>(RETURN_AREA, 0, 4);
    store<u32>(RETURN_AREA, 0, 8);
  } else {
    lowerString(RETURN_AREA + 4, error);
  }
  return RETURN_AREA;
}

function lowerDeadline(deadlineMs: u64): usize {
  // u64.MAX_VALUE is the core's "no deadline", the WIT's none.
  store<u8>(RETURN_AREA, deadlineMs == u64.MAX_VALUE ? 0 : 1);
  store<u64>(RETURN_AREA, deadlineMs == u64.MAX_VALUE ? 0 : deadlineMs, 8);
  return RETURN_AREA;
}

/// Shared post-return: every lowered result lives in the return arena.
export function postReturn(retptr: usize): void {
  freeReturnArena();
}

// abi-check: echoes, no logic.

export function echoPods(ptr: usize, len: u32): usize {
  const pods = liftListParts<PodSpec>(ptr, len, POD_SPEC_SIZE, liftPodSpec);
  resetArgumentArena();
  lowerList<PodSpec>(RETURN_AREA, pods, POD_SPEC_SIZE, lowerPodSpec);
  return RETURN_AREA;
}

export function echoRejections(ptr: usize, len: u32): usize {
  const items = liftListParts<PodRejection>(ptr, len, POD_REJECTION_SIZE, liftPodRejection);
  resetArgumentArena();
  lowerList<PodRejection>(RETURN_AREA, items, POD_REJECTION_SIZE, lowerPodRejection);
  return RETURN_AREA;
}

export function echoSnapshot(
  listedAtMs: u64, sandboxesPtr: usize, sandboxesLen: u32, containersPtr: usize, containersLen: u32,
  uninspectedPtr: usize, uninspectedLen: u32,
): usize {
  const snapshot = liftSnapshotFlat(
    listedAtMs, sandboxesPtr, sandboxesLen, containersPtr, containersLen, uninspectedPtr, uninspectedLen);
  resetArgumentArena();
  lowerSnapshot(RETURN_AREA, snapshot);
  return RETURN_AREA;
}

export function echoResults(ptr: usize, len: u32): usize {
  const items = liftListParts<ActionResult>(ptr, len, ACTION_RESULT_SIZE, liftActionResult);
  resetArgumentArena();
  lowerList<ActionResult>(RETURN_AREA, items, ACTION_RESULT_SIZE, lowerActionResult);
  return RETURN_AREA;
}

export function echoActions(ptr: usize, len: u32): usize {
  const items = liftListParts<PlannedAction>(ptr, len, PLANNED_ACTION_SIZE, liftPlannedAction);
  resetArgumentArena();
  lowerList<PlannedAction>(RETURN_AREA, items, PLANNED_ACTION_SIZE, lowerPlannedAction);
  return RETURN_AREA;
}

export function echoNodeStats(signalsPtr: usize, signalsLen: u32, podsPtr: usize, podsLen: u32, volumesPtr: usize, volumesLen: u32): usize {
  const stats = liftNodeStatsParts(signalsPtr, signalsLen, podsPtr, podsLen, volumesPtr, volumesLen);
  resetArgumentArena();
  lowerNodeStats(RETURN_AREA, stats);
  return RETURN_AREA;
}

export function echoProbeResults(ptr: usize, len: u32): usize {
  const items = liftListParts<ProbeResult>(ptr, len, PROBE_RESULT_SIZE, liftProbeResult);
  resetArgumentArena();
  lowerList<ProbeResult>(RETURN_AREA, items, PROBE_RESULT_SIZE, lowerProbeResult);
  return RETURN_AREA;
}

export function echoDeadline(isSome: i32, deadlineMs: u64): usize {
  store<u8>(RETURN_AREA, isSome != 0 ? 1 : 0);
  store<u64>(RETURN_AREA, isSome != 0 ? deadlineMs : 0, 8);
  return RETURN_AREA;
}

// @ts-ignore: decorator
@external("nanolet:core/diagnostics@0.1.0", "report-trap")
declare function reportTrap(
  messagePtr: usize, messageLen: u32, filePtr: usize, fileLen: u32, line: u32, column: u32): void;

/// The abort handler (asc --use abort=...): a broken invariant traps after telling the host why.
/// AssemblyScript strings are UTF-16 in memory, which is the component's string encoding.
export function coreAbort(message: usize, fileName: usize, line: u32, column: u32): void {
  const messageLen = message != 0 ? <u32>changetype<string>(message).length : 0;
  const fileLen = fileName != 0 ? <u32>changetype<string>(fileName).length : 0;
  reportTrap(message, messageLen, fileName, fileLen, line, column);
  unreachable();
}

// The pure interfaces (wit/pleg.wit ... restart.wit): thin shims over the agent's own code.
export { plegRelistEvents } from "./library/pleg";
export { evictionParseThresholds, evictionThresholdsMet, evictionRankPods } from "./library/eviction";
export { qosPodQosClass, qosOomScoreAdjust } from "./library/qos";
export { imageGcPlan } from "./library/image-gc";
export { cgroupsContainerCgroup, cgroupsPodCgroup, cgroupsPodCgroupParent } from "./library/cgroups";
export { statusPodPhaseOf } from "./library/status";
export { restartShouldRestart, restartBackOffStep, restartInBackOff } from "./library/restart";
export { hardwareTakeCpus, hardwareMergeHints } from "./library/hardware";
export { probeTick, probeRecordOutcome, probeFirstTickAt, probeNextTickAt } from "./library/probe";
