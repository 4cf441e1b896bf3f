// The eviction manager (pkg/kubelet/eviction/eviction_manager.go synchronize): from one stats
// pass it decides the thresholds met (keeping them until their minimum reclaim is regained),
// the node's pressure conditions (held for the transition period), and at most one pod to
// evict per interval, ranked as upstream ranks them for the signal most in need.
import { NodeConfig, NodeStats, SignalObservation } from "./model";
import { Threshold, ThresholdConfig, parseThresholdConfig } from "./eviction-config";
import {
  ConditionSeen,
  ObservedAt,
  conditionForSignal,
  nodeConditionsLastObservedAt,
  nodeConditionsObservedSince,
  thresholdPass,
  thresholdQuantity,
} from "./eviction-signals";
import { formatBinarySI, formatDecimalSI } from "./quantity-format";

/// Upstream immediateEvictionGracePeriodSeconds: a hard threshold's pod gets this grace (the
/// runtime then gives each container its minimum of 2 s).
export const IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS: i64 = 1;
/// Upstream podCleanupTimeout: the next eviction waits for the last evicted pod this long at most.
export const POD_CLEANUP_TIMEOUT_MS: u64 = 30_000;

/// The resource a signal reclaims, as upstream names it in messages and ranks pods by.
export function resourceOfSignal(signal: string): string {
  if (signal == "memory.available" || signal == "allocatableMemory.available") return "memory";
  if (signal == "pid.available") return "pids";
  if (signal.endsWith(".inodesFree")) return "inodes";
  return "ephemeral-storage";
}

function formatQuantity(resource: string, value: i64): string {
  return resource == "memory" || resource == "ephemeral-storage" ? formatBinarySI(value) : formatDecimalSI(value);
}

/// One pod as the manager sees it: what the agent knows of it that ranking needs.
export class EvictionCandidate {
  constructor(
    public uid: string,
    public priority: i32,
    public critical: bool,
    /// The pod's requests of memory and ephemeral storage in bytes (sum of its containers).
    public memoryRequestBytes: i64,
    public storageRequestBytes: i64,
    /// Per container: name, memory request as written (for the message) and bytes.
    public containerNames: string[],
    public containerMemoryRequests: string[],
    public containerMemoryRequestBytes: i64[],
    /// The pod's own termination grace period in seconds.
    public gracePeriodSeconds: i64,
  ) {}
}

export class EvictionDecision {
  /// The pod to evict, or empty.
  uid: string = "";
  message: string = "";
  gracePeriodSeconds: i64 = 0;
  signal: string = "";
}

export class EvictionManager {
  private config: ThresholdConfig = new ThresholdConfig();
  transitionPeriodMs: u64 = 300_000;
  maxPodGracePeriodSeconds: i64 = 0;
  intervalMs: u64 = 10_000;
  private firstObserved: ObservedAt[] = [];
  private conditionsSeen: ConditionSeen[] = [];
  /// The thresholds that drove the last decision (after grace periods): kept met until their
  /// minimum reclaim is regained.
  private lastMet: Threshold[] = [];
  /// The node's pressure conditions now, sorted.
  conditions: string[] = [];
  private lastEvictionAtMs: u64 = 0;
  private hasEvicted: bool = false;
  /// The last pod evicted; the next eviction waits until it is gone (or the cleanup timeout).
  evictingUid: string = "";

  /// Applies the eviction flags; returns upstream's error and changes nothing when bad.
  configure(node: NodeConfig): string {
    const parsed = parseThresholdConfig(node.evictionHard, node.evictionSoft, node.evictionSoftGracePeriod, node.evictionMinimumReclaim);
    if (parsed.error.length > 0) return parsed.error;
    this.config = parsed;
    this.transitionPeriodMs = node.evictionPressureTransitionPeriodMs;
    this.maxPodGracePeriodSeconds = node.evictionMaxPodGracePeriodSeconds;
    this.intervalMs = node.evictionIntervalMs;
    this.firstObserved = [];
    this.lastMet = [];
    return "";
  }

  get thresholds(): Threshold[] {
    return this.config.thresholds;
  }

  /// Takes one stats pass's signals: updates `conditions` and returns the threshold to act on
  /// now, or null (none met past its grace period, or an eviction too recent). `previousGone`
  /// says whether the last evicted pod has finished. Cheap: the pods are looked at only when
  /// a threshold is returned.
  observe(nowMs: u64, signals: SignalObservation[], previousGone: bool): Threshold | null {
    const now = <i64>nowMs;
    const pass = thresholdPass(this.config.thresholds, this.lastMet, this.firstObserved, signals, now);
    this.firstObserved = pass.firstObserved;
    this.conditionsSeen = nodeConditionsLastObservedAt(pass.met, this.conditionsSeen, now);
    this.conditions = nodeConditionsObservedSince(this.conditionsSeen, <i64>this.transitionPeriodMs, now);
    const due = pass.due;
    this.lastMet = due;
    if (due.length == 0) return null;
    if (this.hasEvicted && nowMs < this.lastEvictionAtMs + this.intervalMs) return null; // one per interval
    if (this.hasEvicted && !previousGone && nowMs < this.lastEvictionAtMs + POD_CLEANUP_TIMEOUT_MS) return null;
    return mostUrgent(due);
  }

  /// Evicts `pod` for `threshold`: its grace period and upstream's message; the next eviction
  /// waits for it (and for the interval).
  decide(nowMs: u64, threshold: Threshold, stats: NodeStats, pod: EvictionCandidate): EvictionDecision {
    const decision = new EvictionDecision();
    const resource = resourceOfSignal(threshold.signal);
    decision.uid = pod.uid;
    decision.signal = threshold.signal;
    decision.gracePeriodSeconds = IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS;
    if (!threshold.isHard) {
      decision.gracePeriodSeconds = this.maxPodGracePeriodSeconds;
      if (pod.gracePeriodSeconds < decision.gracePeriodSeconds) decision.gracePeriodSeconds = pod.gracePeriodSeconds;
    }
    decision.message = evictionMessage(resource, threshold, stats, pod);
    this.lastEvictionAtMs = nowMs;
    this.hasEvicted = true;
    this.evictingUid = pod.uid;
    return decision;
  }
}

/// Memory signals first (upstream byEvictionPriority), otherwise in configuration order.
function mostUrgent(due: Threshold[]): Threshold {
  for (let i = 0; i < due.length; i++) {
    if (due[i].signal == "memory.available" || due[i].signal == "allocatableMemory.available") return due[i];
  }
  return due[0];
}

function signalObservation(signals: SignalObservation[], signal: string): SignalObservation | null {
  for (let i = 0; i < signals.length; i++) if (signals[i].signal == signal) return signals[i];
  return null;
}

/// Upstream evictionMessage: the resource, the threshold and what was available, and each
/// container using more memory than it requested.
function evictionMessage(resource: string, threshold: Threshold, stats: NodeStats, pod: EvictionCandidate): string {
  let message = "The node was low on resource: " + resource + ". ";
  const observed = signalObservation(stats.signals, threshold.signal);
  if (observed !== null) {
    message += "Threshold quantity: " + formatQuantity(resource, thresholdQuantity(threshold.value, observed.capacity)) +
      ", available: " + formatQuantity(resource, observed.available) + ". ";
  }
  if (resource != "memory") return message;
  const u = stats.usageOf(pod.uid);
  if (u === null) return message;
  const containers = u.usages();
  for (let i = 0; i < pod.containerNames.length; i++) {
    for (let j = 0; j < containers.length; j++) {
      if (containers[j].name != pod.containerNames[i]) continue;
      const used = containers[j].memoryWorkingSetBytes;
      if (used > pod.containerMemoryRequestBytes[i]) {
        message += "Container " + pod.containerNames[i] + " was using " + formatBinarySI(used) + ", request is " +
          pod.containerMemoryRequests[i] + ", has larger consumption of memory. ";
      }
    }
  }
  return message;
}

export { conditionForSignal };
