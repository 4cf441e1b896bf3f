// Which thresholds are met and for how long (pkg/kubelet/eviction/helpers.go thresholdsMet,
// thresholdsFirstObservedAt, thresholdsMetGracePeriod, nodeConditions*): pure functions of the
// observations and the clock the caller passes in.
import { Threshold, ThresholdValue } from "./eviction-config";

import { SignalObservation } from "./model";
export { SignalObservation };

/// The node condition a signal's pressure sets.
export function conditionForSignal(signal: string): string {
  if (signal == "memory.available" || signal == "allocatableMemory.available") return "MemoryPressure";
  if (signal == "pid.available") return "PIDPressure";
  return "DiskPressure";
}

/// A threshold value in units of the signal (a percentage of the capacity, rounded down).
export function thresholdQuantity(value: ThresholdValue, capacity: i64): i64 {
  if (!value.isPercentage) return value.quantity;
  return <i64>(<f64>capacity * <f64>value.fraction);
}

function observationOf(observations: SignalObservation[], signal: string): SignalObservation | null {
  for (let i = 0; i < observations.length; i++) if (observations[i].signal == signal) return observations[i];
  return null;
}

/// The thresholds whose signal is below them. With `enforceMinReclaim`, a threshold stays met
/// until the signal is above it by its minimum reclaim (upstream: once pressure was seen).
export function thresholdsMet(thresholds: Threshold[], observations: SignalObservation[], enforceMinReclaim: bool): Threshold[] {
  const out: Threshold[] = [];
  for (let i = 0; i < thresholds.length; i++) {
    const t = thresholds[i];
    const observed = observationOf(observations, t.signal);
    if (observed === null) continue;
    let quantity = thresholdQuantity(t.value, observed.capacity);
    if (enforceMinReclaim && t.hasMinReclaim) quantity += thresholdQuantity(t.minReclaim, observed.capacity);
    if (quantity > observed.available) out.push(t);
  }
  return out;
}

/// When each met threshold was first seen met: kept from `previous`, else now.
export class ObservedAt {
  constructor(public threshold: Threshold, public firstMs: i64) {}
}

export function thresholdsFirstObservedAt(met: Threshold[], previous: ObservedAt[], nowMs: i64): ObservedAt[] {
  const out: ObservedAt[] = [];
  for (let i = 0; i < met.length; i++) {
    let firstMs = nowMs;
    for (let j = 0; j < previous.length; j++) if (previous[j].threshold === met[i]) firstMs = previous[j].firstMs;
    out.push(new ObservedAt(met[i], firstMs));
  }
  return out;
}

/// The met thresholds whose grace period has passed (a hard threshold's is zero).
export function thresholdsMetGracePeriod(observedAt: ObservedAt[], nowMs: i64): Threshold[] {
  const out: Threshold[] = [];
  for (let i = 0; i < observedAt.length; i++) {
    if (nowMs - observedAt[i].firstMs >= observedAt[i].threshold.gracePeriodMs) out.push(observedAt[i].threshold);
  }
  return out;
}

/// One pass of threshold bookkeeping (upstream synchronize): what is met now, since when, and
/// what has met its grace period.
export class ThresholdPass {
  met: Threshold[] = [];
  firstObserved: ObservedAt[] = [];
  /// The met thresholds past their grace period: the ones to act on.
  due: Threshold[] = [];
}

/// `lastDue` is the previous pass's `due` and `firstObserved` its `firstObserved`; thresholds are
/// matched by identity, so both must hold objects of `thresholds`.
export function thresholdPass(
  thresholds: Threshold[], lastDue: Threshold[], firstObserved: ObservedAt[], signals: SignalObservation[], nowMs: i64,
): ThresholdPass {
  const pass = new ThresholdPass();
  const met = thresholdsMet(thresholds, signals, false);
  if (lastDue.length > 0) {
    // Pressure already acted on stays until the signal is above the threshold plus its
    // minimum reclaim (upstream mergeThresholds of thresholdsNotYetResolved).
    const unresolved = thresholdsMet(lastDue, signals, true);
    for (let i = 0; i < unresolved.length; i++) if (!met.includes(unresolved[i])) met.push(unresolved[i]);
  }
  pass.met = met;
  pass.firstObserved = thresholdsFirstObservedAt(met, firstObserved, nowMs);
  pass.due = thresholdsMetGracePeriod(pass.firstObserved, nowMs);
  return pass;
}

/// A pressure condition with the last time its threshold was met.
export class ConditionSeen {
  constructor(public condition: string, public lastMs: i64) {}
}

/// Records the conditions of the met thresholds as seen now, keeping older sightings.
export function nodeConditionsLastObservedAt(met: Threshold[], previous: ConditionSeen[], nowMs: i64): ConditionSeen[] {
  const out: ConditionSeen[] = [];
  for (let i = 0; i < previous.length; i++) out.push(new ConditionSeen(previous[i].condition, previous[i].lastMs));
  for (let i = 0; i < met.length; i++) {
    const condition = conditionForSignal(met[i].signal);
    let found = false;
    for (let j = 0; j < out.length; j++) {
      if (out[j].condition == condition) {
        out[j].lastMs = nowMs;
        found = true;
      }
    }
    if (!found) out.push(new ConditionSeen(condition, nowMs));
  }
  return out;
}

/// The conditions still reported: seen within the pressure transition period (upstream 5 min),
/// so that a node does not flap in and out of pressure.
export function nodeConditionsObservedSince(seen: ConditionSeen[], periodMs: i64, nowMs: i64): string[] {
  const out: string[] = [];
  for (let i = 0; i < seen.length; i++) if (nowMs - seen[i].lastMs < periodMs) out.push(seen[i].condition);
  out.sort();
  return out;
}
