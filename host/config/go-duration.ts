// Durations as the kubelet's configuration and flags write them: Go's time.ParseDuration grammar
// ("1m30s", "1.5h", "300ms", "0") and time.Duration.String() for /configz ("1m0s", "4h0m0s").
// Held as whole nanoseconds in a bigint, as Go holds them, so a "10ns" grace is not rounded to 0.

const UNIT_NS: Record<string, bigint> = {
  ns: 1n, us: 1_000n, "µs": 1_000n, "μs": 1_000n, ms: 1_000_000n, s: 1_000_000_000n, m: 60_000_000_000n, h: 3_600_000_000_000n,
};
const MAX_NS = (1n << 63n) - 1n;

/** Nanoseconds of a Go duration string, or an error text in Go's words. */
export function parseGoDuration(text: string): bigint | string {
  const invalid = `time: invalid duration "${text}"`;
  let rest = text;
  let sign = 1n;
  if (rest.startsWith("-") || rest.startsWith("+")) {
    if (rest[0] === "-") sign = -1n;
    rest = rest.slice(1);
  }
  if (rest === "0") return 0n;
  if (rest === "") return invalid;
  let total = 0n;
  while (rest !== "") {
    const m = /^(\d*)(?:\.(\d*))?([a-zµμ]*)/.exec(rest);
    if (!m || (m[1] === "" && (m[2] === undefined || m[2] === ""))) return invalid;
    const unit = m[3];
    if (unit === "") return `time: missing unit in duration "${text}"`;
    const scale = UNIT_NS[unit];
    if (scale === undefined) return `time: unknown unit "${unit}" in duration "${text}"`;
    const whole = BigInt(m[1] === "" ? "0" : m[1]);
    const fraction = m[2] ?? "";
    // The fraction's nanoseconds, truncated as Go truncates them.
    const fractionNs = fraction === "" ? 0n : (BigInt(fraction) * scale) / 10n ** BigInt(fraction.length);
    total += whole * scale + fractionNs;
    if (total > MAX_NS) return invalid;
    rest = rest.slice(m[0].length);
  }
  return sign * total;
}

/** Go's time.Duration.String(): "0s", "100ms", "1.5s", "1m0s", "4h0m0s". */
export function formatGoDuration(ns: bigint): string {
  if (ns === 0n) return "0s";
  const negative = ns < 0n;
  let n = negative ? -ns : ns;
  let text: string;
  if (n < 1_000_000_000n) {
    const [unit, scale] = n < 1_000n ? ["ns", 1n] : n < 1_000_000n ? ["µs", 1_000n] : ["ms", 1_000_000n];
    text = decimal(n, scale) + unit;
  } else {
    const hours = n / 3_600_000_000_000n;
    n -= hours * 3_600_000_000_000n;
    const minutes = n / 60_000_000_000n;
    n -= minutes * 60_000_000_000n;
    text = (hours > 0n ? `${hours}h` : "") + (hours > 0n || minutes > 0n ? `${minutes}m` : "") + decimal(n, 1_000_000_000n) + "s";
  }
  return negative ? "-" + text : text;
}

/** `value / scale` written with the fraction's trailing zeros dropped. */
function decimal(value: bigint, scale: bigint): string {
  const whole = value / scale;
  const fraction = value % scale;
  if (fraction === 0n) return String(whole);
  const digits = String(scale).length - 1;
  return `${whole}.${String(fraction).padStart(digits, "0").replace(/0+$/, "")}`;
}

/** Whole milliseconds of a duration, rounded up so that a positive duration never becomes 0. */
export function durationMs(ns: bigint): number {
  return Number((ns + 999_999n) / 1_000_000n);
}
