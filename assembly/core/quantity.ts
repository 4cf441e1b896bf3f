// Kubernetes quantity strings ("250m", "64Mi", "1.5", "1e3") parsed to integers.
// Only what the core needs so far: a value scaled by 1000 ("milli-units"), rounded up like
// Quantity.MilliValue(), or an error message.

export class ParsedQuantity {
  constructor(public milliValue: i64 = 0, public error: string = "") {}
  get ok(): bool {
    return this.error.length == 0;
  }
}

const MAX_MILLI: f64 = 9.2e18;

function suffixMultiplier(suffix: string): f64 {
  if (suffix == "") return 1;
  if (suffix == "m") return 1e-3;
  if (suffix == "k") return 1e3;
  if (suffix == "M") return 1e6;
  if (suffix == "G") return 1e9;
  if (suffix == "T") return 1e12;
  if (suffix == "P") return 1e15;
  if (suffix == "E") return 1e18;
  if (suffix == "Ki") return 1024.0;
  if (suffix == "Mi") return 1048576.0;
  if (suffix == "Gi") return 1073741824.0;
  if (suffix == "Ti") return 1099511627776.0;
  if (suffix == "Pi") return 1125899906842624.0;
  if (suffix == "Ei") return 1152921504606846976.0;
  return -1;
}

function isDigit(c: i32): bool {
  return c >= 48 && c <= 57;
}

/// Parses a quantity; the error message matches the apiserver's wording.
export function parseQuantity(text: string): ParsedQuantity {
  const bad = new ParsedQuantity(0, "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  let i = 0;
  const n = text.length;
  if (n == 0) return bad;
  let sign: f64 = 1;
  if (text.charCodeAt(0) == 43 || text.charCodeAt(0) == 45) {
    if (text.charCodeAt(0) == 45) sign = -1;
    i++;
  }
  const numberStart = i;
  let seenDot = false;
  let digits = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (isDigit(c)) digits++;
    else if (c == 46 && !seenDot) seenDot = true;
    else break;
    i++;
  }
  if (digits == 0) return bad;
  const mantissa = parseFloat(text.substring(numberStart, i));
  let multiplier: f64 = 1;
  const rest = text.substring(i);
  if (rest.length > 0 && (rest.charCodeAt(0) == 101 || rest.charCodeAt(0) == 69) && rest.length > 1) {
    // Decimal exponent: e3, E-2.
    let j = 1;
    if (rest.charCodeAt(j) == 43 || rest.charCodeAt(j) == 45) j++;
    if (j >= rest.length) return bad;
    for (let k = j; k < rest.length; k++) if (!isDigit(rest.charCodeAt(k))) return bad;
    multiplier = Math.pow(10, parseFloat(rest.substring(1)));
  } else {
    multiplier = suffixMultiplier(rest);
    if (multiplier < 0) return bad;
  }
  const milli = sign * mantissa * multiplier * 1000;
  if (milli > MAX_MILLI || milli < -MAX_MILLI) return new ParsedQuantity(0, "quantity is too large");
  return new ParsedQuantity(<i64>Math.ceil(milli));
}
