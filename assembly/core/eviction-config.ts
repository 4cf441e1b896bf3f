// Eviction thresholds from kubelet-style flag strings (pkg/kubelet/eviction/helpers.go
// ParseThresholdConfig): `--eviction-hard=memory.available<100Mi,nodefs.available<10%`,
// `--eviction-soft` alike, `--eviction-soft-grace-period=memory.available=1m30s` and
// `--eviction-minimum-reclaim=nodefs.available=500Mi`. Errors carry upstream's words.
import { parseQuantity } from "./quantity";

/// Every signal upstream accepts, in the order the core reports them.
export const EVICTION_SIGNALS: string[] = [
  "memory.available",
  "allocatableMemory.available",
  "nodefs.available",
  "nodefs.inodesFree",
  "imagefs.available",
  "imagefs.inodesFree",
  "containerfs.available",
  "containerfs.inodesFree",
  "pid.available",
];

export function isEvictionSignal(signal: string): bool {
  return EVICTION_SIGNALS.includes(signal);
}

/// A quantity (bytes, inodes or pids) or a fraction of capacity (0.1 for 10%).
export class ThresholdValue {
  constructor(
    public isPercentage: bool = false,
    public fraction: f32 = 0,
    public quantity: i64 = 0,
  ) {}
}

export class Threshold {
  signal: string = "";
  value: ThresholdValue = new ThresholdValue();
  /// 0 for a hard threshold.
  gracePeriodMs: i64 = 0;
  hasMinReclaim: bool = false;
  minReclaim: ThresholdValue = new ThresholdValue();
  get isHard(): bool {
    return this.gracePeriodMs == 0;
  }
}

export class ThresholdConfig {
  thresholds: Threshold[] = [];
  /// Empty when the configuration is valid.
  error: string = "";
}

class Pair {
  constructor(public key: string, public value: string) {}
}

/// Splits `k<v,k<v` (or `k=v,...`) into pairs, later keys replacing earlier ones (a flag map).
function splitPairs(text: string, separator: string, into: Pair[]): string {
  if (text.trim().length == 0) return "";
  const items = text.split(",");
  for (let i = 0; i < items.length; i++) {
    const item = items[i].trim();
    if (item.length == 0) continue;
    const at = item.indexOf(separator);
    if (at <= 0) return "malformed pair, expect string" + separator + "string";
    const key = item.substring(0, at).trim();
    const value = item.substring(at + 1).trim();
    let replaced = false;
    for (let j = 0; j < into.length; j++) {
      if (into[j].key == key) {
        into[j].value = value;
        replaced = true;
      }
    }
    if (!replaced) into.push(new Pair(key, value));
  }
  return "";
}

/// strconv.ParseFloat of the text before `%`, as a fraction; NaN when Go's decimal grammar
/// refuses it (`10..5`, `5-5`, `1.2.3`: a prefix that reads as a number is not enough).
function parsePercentage(text: string): f64 {
  const number = text.substring(0, text.length - 1);
  const n = number.length;
  let i = 0;
  if (i < n && (number.charCodeAt(i) == 43 || number.charCodeAt(i) == 45)) i++;
  let digits = 0;
  while (i < n && isAsciiDigit(number.charCodeAt(i))) {
    i++;
    digits++;
  }
  if (i < n && number.charCodeAt(i) == 46) {
    i++;
    while (i < n && isAsciiDigit(number.charCodeAt(i))) {
      i++;
      digits++;
    }
  }
  if (digits == 0) return NaN;
  if (i < n && (number.charCodeAt(i) == 101 || number.charCodeAt(i) == 69)) {
    i++;
    if (i < n && (number.charCodeAt(i) == 43 || number.charCodeAt(i) == 45)) i++;
    let exponentDigits = 0;
    while (i < n && isAsciiDigit(number.charCodeAt(i))) {
      i++;
      exponentDigits++;
    }
    if (exponentDigits == 0) return NaN;
  }
  if (i != n) return NaN;
  return parseFloat(number) / 100;
}

function isAsciiDigit(c: i32): bool {
  return c >= 48 && c <= 57;
}

function bytesOf(milli: i64): i64 {
  return milli / 1000 + (milli % 1000 > 0 ? 1 : 0);
}

/// Parses one `signal<value` statement; null (and no error) for the ignored 0% and 100%.
function parseStatement(signal: string, text: string, out: ThresholdConfig): Threshold | null {
  if (!isEvictionSignal(signal)) {
    out.error = "unsupported eviction signal " + signal;
    return null;
  }
  const t = new Threshold();
  t.signal = signal;
  if (text.endsWith("%")) {
    if (text == "0%" || text == "100%") return null;
    const fraction = parsePercentage(text);
    if (isNaN(fraction)) {
      out.error = 'strconv.ParseFloat: parsing "' + text.substring(0, text.length - 1) + '": invalid syntax';
      return null;
    }
    if (fraction < 0) {
      out.error = "eviction percentage threshold " + signal + " must be >= 0%: " + text;
      return null;
    }
    if (fraction > 1) {
      out.error = "eviction percentage threshold " + signal + " must be <= 100%: " + text;
      return null;
    }
    t.value = new ThresholdValue(true, <f32>fraction, 0);
    return t;
  }
  const q = parseQuantity(text);
  if (!q.ok) {
    out.error = q.error;
    return null;
  }
  if (q.milliValue <= 0) {
    out.error = "eviction threshold " + signal + " must be positive: " + text;
    return null;
  }
  t.value = new ThresholdValue(false, 0, bytesOf(q.milliValue));
  return t;
}

/// Go's time.ParseDuration for the units a grace period uses; -1 with `error` set when bad.
export function parseGoDurationMs(text: string, error: string[]): i64 {
  let i = 0;
  const n = text.length;
  let negative = false;
  if (n > 0 && (text.charCodeAt(0) == 45 || text.charCodeAt(0) == 43)) {
    negative = text.charCodeAt(0) == 45;
    i++;
  }
  if (i >= n) {
    error.push('time: invalid duration "' + text + '"');
    return -1;
  }
  if (text.substring(i) == "0") return 0;
  // Exact nanoseconds, as Go keeps them; whole milliseconds rounded up at the end, so that a
  // positive grace under 1 ms (`10ns`) stays positive and a soft threshold stays soft (and
  // `elapsed >= grace` over whole milliseconds is what Go's comparison in nanoseconds says).
  let totalNs: i64 = 0;
  while (i < n) {
    const start = i;
    while (i < n && isAsciiDigit(text.charCodeAt(i))) i++;
    const whole = text.substring(start, i);
    let fraction = "";
    if (i < n && text.charCodeAt(i) == 46) {
      i++;
      const fractionStart = i;
      while (i < n && isAsciiDigit(text.charCodeAt(i))) i++;
      fraction = text.substring(fractionStart, i);
    }
    if (whole.length == 0 && fraction.length == 0) {
      error.push('time: invalid duration "' + text + '"');
      return -1;
    }
    const unitStart = i;
    while (i < n && !(isAsciiDigit(text.charCodeAt(i)) || text.charCodeAt(i) == 46)) i++;
    const unit = text.substring(unitStart, i);
    let unitNs: i64 = 0;
    if (unit == "ns") unitNs = 1;
    else if (unit == "us" || unit == "µs" || unit == "μs") unitNs = 1_000;
    else if (unit == "ms") unitNs = 1_000_000;
    else if (unit == "s") unitNs = 1_000_000_000;
    else if (unit == "m") unitNs = 60_000_000_000;
    else if (unit == "h") unitNs = 3_600_000_000_000;
    else {
      error.push(unit.length == 0 ? 'time: missing unit in duration "' + text + '"' : 'time: unknown unit "' + unit + '" in duration "' + text + '"');
      return -1;
    }
    // Go refuses a duration past 2^63 ns (about 292 years).
    const wholeValue = whole.length == 0 ? 0 : I64.parseInt(whole);
    if (whole.length > 18 || wholeValue > i64.MAX_VALUE / unitNs) {
      error.push('time: invalid duration "' + text + '"');
      return -1;
    }
    totalNs += wholeValue * unitNs;
    if (fraction.length > 0) {
      let scale: f64 = 1;
      for (let k = 0; k < fraction.length && k < 18; k++) scale *= 10;
      const digits = fraction.length > 18 ? fraction.substring(0, 18) : fraction;
      totalNs += <i64>(<f64>I64.parseInt(digits) * (<f64>unitNs / scale));
    }
  }
  const ms = totalNs / 1_000_000 + (totalNs % 1_000_000 > 0 ? 1 : 0);
  return negative ? -ms : ms;
}

/// The thresholds of a kubelet configuration, or the first error in it.
/// `enforceNodeAllocatable` is the kubelet's `--enforce-node-allocatable`: with `pods` in it,
/// every hard `memory.available` threshold gets an `allocatableMemory.available` twin (upstream
/// addAllocatableThresholds), after the others.
export function parseThresholdConfig(
  hard: string, soft: string, softGracePeriods: string, minimumReclaims: string, enforceNodeAllocatable: string[] = [],
): ThresholdConfig {
  const out = new ThresholdConfig();
  const hardPairs: Pair[] = [];
  const softPairs: Pair[] = [];
  const gracePairs: Pair[] = [];
  const reclaimPairs: Pair[] = [];
  let problem = splitPairs(hard, "<", hardPairs);
  if (problem.length == 0) problem = splitPairs(soft, "<", softPairs);
  if (problem.length == 0) problem = splitPairs(softGracePeriods, "=", gracePairs);
  if (problem.length == 0) problem = splitPairs(minimumReclaims, "=", reclaimPairs);
  if (problem.length > 0) {
    out.error = problem;
    return out;
  }
  const hardThresholds: Threshold[] = [];
  for (let i = 0; i < hardPairs.length; i++) {
    const t = parseStatement(hardPairs[i].key, hardPairs[i].value, out);
    if (out.error.length > 0) return out;
    if (t !== null) hardThresholds.push(t);
  }
  const softThresholds: Threshold[] = [];
  for (let i = 0; i < softPairs.length; i++) {
    const t = parseStatement(softPairs[i].key, softPairs[i].value, out);
    if (out.error.length > 0) return out;
    if (t !== null) softThresholds.push(t);
  }
  const graceSignals: string[] = [];
  const graceMs: i64[] = [];
  for (let i = 0; i < gracePairs.length; i++) {
    const signal = gracePairs[i].key;
    if (!isEvictionSignal(signal)) {
      out.error = "unsupported eviction signal " + signal;
      return out;
    }
    const errors: string[] = [];
    const ms = parseGoDurationMs(gracePairs[i].value, errors);
    if (errors.length > 0) {
      out.error = errors[0];
      return out;
    }
    if (ms < 0) {
      out.error = "invalid eviction grace period specified: " + gracePairs[i].value + ", must be a positive value";
      return out;
    }
    graceSignals.push(signal);
    graceMs.push(ms);
  }
  for (let i = 0; i < softThresholds.length; i++) {
    const at = graceSignals.indexOf(softThresholds[i].signal);
    if (at < 0) {
      out.error = "grace period must be specified for the soft eviction threshold " + softThresholds[i].signal;
      return out;
    }
    softThresholds[i].gracePeriodMs = graceMs[at];
  }
  const all = hardThresholds.concat(softThresholds);
  for (let i = 0; i < reclaimPairs.length; i++) {
    const signal = reclaimPairs[i].key;
    const text = reclaimPairs[i].value;
    if (!isEvictionSignal(signal)) {
      out.error = "unsupported eviction signal " + signal;
      return out;
    }
    let value: ThresholdValue;
    if (text.endsWith("%")) {
      const fraction = parsePercentage(text);
      if (isNaN(fraction)) {
        out.error = 'strconv.ParseFloat: parsing "' + text.substring(0, text.length - 1) + '": invalid syntax';
        return out;
      }
      if (fraction <= 0) {
        out.error = "eviction percentage minimum reclaim " + signal + " must be positive: " + text;
        return out;
      }
      value = new ThresholdValue(true, <f32>fraction, 0);
    } else {
      const q = parseQuantity(text);
      if (!q.ok) {
        out.error = q.error;
        return out;
      }
      if (q.milliValue < 0) {
        out.error = "negative eviction minimum reclaim specified for " + signal;
        return out;
      }
      value = new ThresholdValue(false, 0, bytesOf(q.milliValue));
    }
    for (let j = 0; j < all.length; j++) {
      if (all[j].signal == signal) {
        all[j].hasMinReclaim = true;
        all[j].minReclaim = value;
      }
    }
  }
  if (enforceNodeAllocatable.includes("pods")) {
    const n = all.length;
    for (let i = 0; i < n; i++) {
      const t = all[i];
      if (t.signal != "memory.available" || !t.isHard) continue;
      const twin = new Threshold();
      twin.signal = "allocatableMemory.available";
      twin.value = t.value;
      twin.hasMinReclaim = t.hasMinReclaim;
      twin.minReclaim = t.minReclaim;
      all.push(twin);
    }
  }
  out.thresholds = all;
  return out;
}
