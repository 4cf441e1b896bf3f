// Kubernetes quantity strings ("250m", "64Mi", "1.5", "1e3", "1Ei") parsed as resource.Quantity
// parses them (apimachinery's parseQuantityString and suffix table), to a value scaled by 1000
// ("milli-units") rounded up like Quantity.MilliValue(). Arithmetic is integer: a decimal such as
// "0.1" is exact. Values beyond i64 milli-units saturate (the apiserver accepts "1Ei" and larger;
// the core only compares such values), and errors carry the apiserver's words.

export class ParsedQuantity {
  constructor(public milliValue: i64 = 0, public error: string = "") {}
  get ok(): bool {
    return this.error.length == 0;
  }
}

export const QUANTITY_FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
export const QUANTITY_SUFFIX_ERROR = "unable to parse quantity's suffix";

const MAX_MILLI: u64 = <u64>i64.MAX_VALUE;
/// Digits of a mantissa kept exactly (10^18 < 2^63).
const MAX_DIGITS = 18;

function isDigit(c: i32): bool {
  return c >= 48 && c <= 57;
}

function isSuffixChar(c: i32): bool {
  // "eEinumkKMGTP"
  return c == 101 || c == 69 || c == 105 || c == 110 || c == 117 || c == 109 || c == 107 || c == 75 || c == 77 || c == 71 || c == 84 || c == 80;
}

/// Base-10 exponent of a decimal SI suffix, or i32.MIN_VALUE if it is not one.
function decimalExponent(suffix: string): i32 {
  if (suffix == "") return 0;
  if (suffix == "n") return -9;
  if (suffix == "u") return -6;
  if (suffix == "m") return -3;
  if (suffix == "k") return 3;
  if (suffix == "M") return 6;
  if (suffix == "G") return 9;
  if (suffix == "T") return 12;
  if (suffix == "P") return 15;
  if (suffix == "E") return 18;
  return i32.MIN_VALUE;
}

/// Base-2 exponent of a binary SI suffix, or -1.
function binaryExponent(suffix: string): i32 {
  if (suffix == "Ki") return 10;
  if (suffix == "Mi") return 20;
  if (suffix == "Gi") return 30;
  if (suffix == "Ti") return 40;
  if (suffix == "Pi") return 50;
  if (suffix == "Ei") return 60;
  return -1;
}

/// `e<int>` or `E<int>`: the exponent, or i32.MIN_VALUE when the suffix is not one (as
/// strconv.ParseInt refuses it).
function exponentSuffix(suffix: string): i32 {
  if (suffix.length < 2) return i32.MIN_VALUE;
  const first = suffix.charCodeAt(0);
  if (first != 101 && first != 69) return i32.MIN_VALUE;
  let i = 1;
  let negative = false;
  if (suffix.charCodeAt(1) == 43 || suffix.charCodeAt(1) == 45) {
    negative = suffix.charCodeAt(1) == 45;
    i = 2;
  }
  if (i >= suffix.length) return i32.MIN_VALUE;
  let value: i64 = 0;
  for (; i < suffix.length; i++) {
    const c = suffix.charCodeAt(i);
    if (!isDigit(c)) return i32.MIN_VALUE;
    value = value * 10 + (c - 48);
    if (value > 1000000) value = 1000000; // beyond any scale that matters; saturate
  }
  return <i32>(negative ? -value : value);
}

function pow10(n: i32): u64 {
  let v: u64 = 1;
  for (let i = 0; i < n; i++) v *= 10;
  return v;
}

/// a * b, or MAX_MILLI + 1 when it would pass MAX_MILLI.
function mulSat(a: u64, b: u64): u64 {
  if (a == 0 || b == 0) return 0;
  if (a > MAX_MILLI / b) return MAX_MILLI + 1;
  return a * b;
}

/// ceil(n * 10^p * 2^b), saturating past MAX_MILLI; `inexact` says n was cut (round up).
function scale(n: u64, p: i32, b: i32, inexact: bool): u64 {
  if (n == 0) return inexact ? 1 : 0;
  let v = n;
  for (let i = 0; i < b; i++) {
    v = mulSat(v, 2);
    if (v > MAX_MILLI) return v;
  }
  if (p >= 0) {
    for (let i = 0; i < p; i++) {
      v = mulSat(v, 10);
      if (v > MAX_MILLI) return v;
    }
    return inexact ? v + 1 : v;
  }
  if (-p > MAX_DIGITS + 19) return 1; // smaller than a milli-unit, but not zero: rounds up to 1
  let q = v;
  let remainder = inexact;
  for (let i = 0; i < -p; i++) {
    if (q % 10 != 0) remainder = true;
    q /= 10;
  }
  return remainder ? q + 1 : q;
}

/// Parses a quantity; the error message matches the apiserver's wording.
export function parseQuantity(text: string): ParsedQuantity {
  const n = text.length;
  if (n == 0) return new ParsedQuantity(0, QUANTITY_FORMAT_ERROR);
  let pos = 0;
  let negative = false;
  const first = text.charCodeAt(0);
  if (first == 45 || first == 43) {
    negative = first == 45;
    pos++;
  }
  while (pos < n && text.charCodeAt(pos) == 48) pos++; // leading zeros
  const numStart = pos;
  while (pos < n && isDigit(text.charCodeAt(pos))) pos++;
  const num = text.substring(numStart, pos);
  let denom = "";
  if (pos < n && text.charCodeAt(pos) == 46) {
    pos++;
    const denomStart = pos;
    while (pos < n && isDigit(text.charCodeAt(pos))) pos++;
    denom = text.substring(denomStart, pos);
  }
  // The suffix: letters from the suffix alphabet, an optional sign, digits; nothing after.
  const suffixStart = pos;
  while (pos < n && isSuffixChar(text.charCodeAt(pos))) pos++;
  if (pos < n && (text.charCodeAt(pos) == 43 || text.charCodeAt(pos) == 45)) pos++;
  while (pos < n && isDigit(text.charCodeAt(pos))) pos++;
  if (pos < n) return new ParsedQuantity(0, QUANTITY_FORMAT_ERROR);
  const suffix = text.substring(suffixStart);

  let p10 = decimalExponent(suffix);
  let p2 = 0;
  if (p10 == i32.MIN_VALUE) {
    const b = binaryExponent(suffix);
    if (b >= 0) {
      p10 = 0;
      p2 = b;
    } else {
      p10 = exponentSuffix(suffix);
      if (p10 == i32.MIN_VALUE) return new ParsedQuantity(0, QUANTITY_SUFFIX_ERROR);
    }
  }
  // Trailing zeros of the fraction change nothing; past 18 digits the mantissa is cut and
  // rounded up (the value is then either saturated or within a hair of exact).
  let fraction = denom;
  while (fraction.length > 0 && fraction.charCodeAt(fraction.length - 1) == 48) fraction = fraction.substring(0, fraction.length - 1);
  if (num.length > MAX_DIGITS) {
    // At least 10^18 units: past any i64 milli-value, whatever the suffix but a tiny exponent.
    const shift = num.length - MAX_DIGITS;
    return finish(negative, scale(parseDigits(num.substring(0, MAX_DIGITS)), p10 + 3 + shift, p2, true));
  }
  let inexact = false;
  const room = MAX_DIGITS - num.length;
  if (fraction.length > room) {
    inexact = true;
    fraction = fraction.substring(0, room);
  }
  const mantissa = parseDigits(num + fraction);
  return finish(negative, scale(mantissa, p10 + 3 - fraction.length, p2, inexact));
}

function parseDigits(digits: string): u64 {
  let v: u64 = 0;
  for (let i = 0; i < digits.length; i++) v = v * 10 + <u64>(digits.charCodeAt(i) - 48);
  return v;
}

function finish(negative: bool, magnitude: u64): ParsedQuantity {
  const m: i64 = magnitude > MAX_MILLI ? i64.MAX_VALUE : <i64>magnitude;
  return new ParsedQuantity(negative ? -m : m);
}
