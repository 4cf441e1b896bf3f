// Export shims of wit/eviction.wit over the agent's own threshold parsing, threshold pass and
// ranking code. The interface holds no state: the previous pass comes back in as an argument.
import { SignalObservation, PodSpec, PodUsageIn } from "../core/model";
import { Threshold, ThresholdValue, isEvictionSignal, parseThresholdConfig } from "../core/eviction-config";
import { ObservedAt, thresholdPass } from "../core/eviction-signals";
import { resourceOfSignal } from "../core/eviction-manager";
import { PodUsage, rankForPidPressure, rankForUsagePressure } from "../core/eviction-rank";
import { BY_MEMORY, BY_PIDS, rankingKind } from "../core/rank-table";
import { isCriticalPod, podRequestBytes } from "../core/resources";
import { allocReturn, liftListParts, liftStringElement, liftStringParts, lowerString, resetArgumentArena } from "../abi/memory";
import { POD_USAGE_SIZE, SIGNAL_OBSERVATION_SIZE, liftPodUsage, liftSignalObservation } from "../abi/node";
import {
  LIBRARY_RETURN_AREA, MET_THRESHOLD_SIZE, POD_RESOURCES_SIZE, THRESHOLD_SIZE,
  liftPodResources, liftThreshold, lowerError, lowerOkList, lowerThreshold,
} from "../abi/library-types";
import { podResourcesProblem, referenceProblem, uniqueNameProblem } from "./checks";

const RANKED_POD_SIZE: usize = 12;

export function evictionParseThresholds(
  hardPtr: usize, hardLen: u32, softPtr: usize, softLen: u32, gracePtr: usize, graceLen: u32, reclaimPtr: usize, reclaimLen: u32,
  enforcePtr: usize, enforceLen: u32,
): usize {
  const hard = liftStringParts(hardPtr, hardLen);
  const soft = liftStringParts(softPtr, softLen);
  const grace = liftStringParts(gracePtr, graceLen);
  const reclaim = liftStringParts(reclaimPtr, reclaimLen);
  const enforce = liftListParts<string>(enforcePtr, enforceLen, 8, liftStringElement);
  resetArgumentArena();
  const config = parseThresholdConfig(hard, soft, grace, reclaim, enforce);
  if (config.error.length > 0) return lowerError(LIBRARY_RETURN_AREA, 4, config.error);
  const n = config.thresholds.length;
  const list = allocReturn(<usize>n * THRESHOLD_SIZE);
  for (let i = 0; i < n; i++) lowerThreshold(list + <usize>i * THRESHOLD_SIZE, config.thresholds[i]);
  return lowerOkList(LIBRARY_RETURN_AREA, list, n);
}

class MetIn {
  constructor(public threshold: Threshold, public firstObservedMs: i64, public gracePeriodMet: bool) {}
}

function liftMetThreshold(ptr: usize): MetIn {
  return new MetIn(liftThreshold(ptr), load<i64>(ptr, 56), load<u8>(ptr, 64) != 0);
}

function liftThresholdElement(ptr: usize): Threshold {
  return liftThreshold(ptr);
}

function sameValue(a: ThresholdValue, b: ThresholdValue): bool {
  return a.isPercentage == b.isPercentage && (a.isPercentage ? a.fraction == b.fraction : a.quantity == b.quantity);
}

/// The same threshold as the caller passed before (the core matches thresholds by identity).
function sameThreshold(a: Threshold, b: Threshold): bool {
  if (a.signal != b.signal || a.gracePeriodMs != b.gracePeriodMs || !sameValue(a.value, b.value)) return false;
  if (a.hasMinReclaim != b.hasMinReclaim) return false;
  return !a.hasMinReclaim || sameValue(a.minReclaim, b.minReclaim);
}

export function evictionThresholdsMet(
  thresholdsPtr: usize, thresholdsLen: u32, observationsPtr: usize, observationsLen: u32, previousPtr: usize, previousLen: u32, nowMs: u64,
): usize {
  const thresholds = liftListParts<Threshold>(thresholdsPtr, thresholdsLen, THRESHOLD_SIZE, liftThresholdElement);
  const observations = liftListParts<SignalObservation>(observationsPtr, observationsLen, SIGNAL_OBSERVATION_SIZE, liftSignalObservation);
  const previous = liftListParts<MetIn>(previousPtr, previousLen, MET_THRESHOLD_SIZE, liftMetThreshold);
  resetArgumentArena();
  const problem = metInputProblem(thresholds, observations);
  if (problem.length > 0) return lowerError(LIBRARY_RETURN_AREA, 4, problem);
  // Rebuild the previous pass's state over this call's threshold objects.
  const firstObserved: ObservedAt[] = [];
  const lastDue: Threshold[] = [];
  for (let i = 0; i < previous.length; i++) {
    for (let j = 0; j < thresholds.length; j++) {
      if (!sameThreshold(thresholds[j], previous[i].threshold)) continue;
      firstObserved.push(new ObservedAt(thresholds[j], previous[i].firstObservedMs));
      if (previous[i].gracePeriodMet) lastDue.push(thresholds[j]);
      break;
    }
  }
  const pass = thresholdPass(thresholds, lastDue, firstObserved, observations, <i64>nowMs);
  // In the order of `thresholds`.
  const out: ObservedAt[] = [];
  for (let j = 0; j < thresholds.length; j++) {
    for (let i = 0; i < pass.firstObserved.length; i++) if (pass.firstObserved[i].threshold === thresholds[j]) out.push(pass.firstObserved[i]);
  }
  const n = out.length;
  const list = allocReturn(<usize>n * MET_THRESHOLD_SIZE);
  for (let i = 0; i < n; i++) {
    const at = list + <usize>i * MET_THRESHOLD_SIZE;
    lowerThreshold(at, out[i].threshold);
    store<i64>(at, out[i].firstMs, 56);
    store<u8>(at, pass.due.includes(out[i].threshold) ? 1 : 0, 64);
    memory.fill(at + 65, 0, 7);
  }
  return lowerOkList(LIBRARY_RETURN_AREA, list, n);
}

function valueProblem(value: ThresholdValue, path: string): string {
  if (value.isPercentage) {
    if (!(value.fraction > 0 && value.fraction <= 1)) return path + ": Invalid value: " + value.fraction.toString() + ": must be above 0 and at most 1";
  } else if (value.quantity < 0) {
    return path + ": Invalid value: " + value.quantity.toString() + ": must be greater than or equal to 0";
  }
  return "";
}

function metInputProblem(thresholds: Threshold[], observations: SignalObservation[]): string {
  for (let i = 0; i < thresholds.length; i++) {
    const t = thresholds[i];
    const path = "thresholds[" + i.toString() + "]";
    if (!isEvictionSignal(t.signal)) return path + ".signal: unsupported eviction signal " + t.signal;
    let problem = valueProblem(t.value, path + ".value");
    if (problem.length == 0 && t.hasMinReclaim) problem = valueProblem(t.minReclaim, path + ".min-reclaim");
    if (problem.length > 0) return problem;
  }
  for (let i = 0; i < observations.length; i++) {
    const o = observations[i];
    const path = "observations[" + i.toString() + "]";
    if (!isEvictionSignal(o.signal)) return path + ".signal: unsupported eviction signal " + o.signal;
    if (o.capacity < 0) return path + ".capacity: Invalid value: " + o.capacity.toString() + ": must be greater than or equal to 0";
  }
  return "";
}

function liftPodUsageElement(ptr: usize): PodUsageIn {
  return liftPodUsage(ptr);
}

function liftPodResourcesElement(ptr: usize): PodSpec {
  return liftPodResources(ptr);
}

export function evictionRankPods(signalPtr: usize, signalLen: u32, podsPtr: usize, podsLen: u32, usagePtr: usize, usageLen: u32): usize {
  const signal = liftStringParts(signalPtr, signalLen);
  const pods = liftListParts<PodSpec>(podsPtr, podsLen, POD_RESOURCES_SIZE, liftPodResourcesElement);
  const usage = liftListParts<PodUsageIn>(usagePtr, usageLen, POD_USAGE_SIZE, liftPodUsageElement);
  resetArgumentArena();
  const problem = rankInputProblem(signal, pods, usage);
  if (problem.length > 0) return lowerError(LIBRARY_RETURN_AREA, 4, problem);
  const kind = rankingKind(resourceOfSignal(signal));
  const byUid = new Map<string, PodUsageIn>();
  for (let i = 0; i < usage.length; i++) byUid.set(usage[i].uid, usage[i]);
  const ranked: PodUsage[] = [];
  for (let i = 0; i < pods.length; i++) {
    const pod = pods[i];
    const hasStats = byUid.has(pod.uid);
    let used: i64 = 0;
    if (hasStats) {
      const u = byUid.get(pod.uid);
      used = kind == BY_MEMORY ? u.memoryWorkingSetBytes : kind == BY_PIDS ? u.processCount : u.ephemeralStorageBytes;
    }
    const request = kind == BY_MEMORY ? podRequestBytes(pod, "memory") : kind == BY_PIDS ? 0 : podRequestBytes(pod, "ephemeral-storage");
    ranked.push(new PodUsage(pod.uid, pod.priority, hasStats, used, request));
  }
  const order = kind == BY_PIDS ? rankForPidPressure(ranked) : rankForUsagePressure(ranked);
  const critical = new Set<string>();
  for (let i = 0; i < pods.length; i++) if (isCriticalPod(pods[i])) critical.add(pods[i].uid);
  // ranked-pod { uid @0, critical u8 @8 }: size 12, align 4.
  const n = order.length;
  const list = allocReturn(<usize>n * RANKED_POD_SIZE);
  for (let i = 0; i < n; i++) {
    const at = list + <usize>i * RANKED_POD_SIZE;
    lowerString(at, order[i].uid);
    store<u32>(at, critical.has(order[i].uid) ? 1 : 0, 8);
  }
  return lowerOkList(LIBRARY_RETURN_AREA, list, n);
}

function rankInputProblem(signal: string, pods: PodSpec[], usage: PodUsageIn[]): string {
  if (!isEvictionSignal(signal)) return "unsupported eviction signal " + signal;
  const uids = new Set<string>();
  for (let i = 0; i < pods.length; i++) {
    const path = "pods[" + i.toString() + "]";
    let problem = uniqueNameProblem(path + ".metadata.uid", pods[i].uid, uids);
    if (problem.length == 0) problem = podResourcesProblem(pods[i], path + ".spec.");
    if (problem.length > 0) return problem;
  }
  const measured = new Set<string>();
  for (let i = 0; i < usage.length; i++) {
    const problem = referenceProblem("usage[" + i.toString() + "].uid", usage[i].uid, uids, measured);
    if (problem.length > 0) return problem;
  }
  return "";
}
