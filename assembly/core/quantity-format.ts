// resource.Quantity's canonical text for whole numbers, as upstream prints quantities in
// eviction messages: BinarySI for bytes (`100Mi`, `1536`), DecimalSI for counts (`5k`).

const BINARY_SUFFIXES: string[] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
const DECIMAL_SUFFIXES: string[] = ["", "k", "M", "G", "T", "P", "E"];

function format(value: i64, base: i64, suffixes: string[]): string {
  if (value == 0) return "0";
  const negative = value < 0;
  let n = negative ? -value : value;
  let i = 0;
  while (i < suffixes.length - 1 && n % base == 0) {
    n /= base;
    i++;
  }
  return (negative ? "-" : "") + n.toString() + suffixes[i];
}

/// Bytes as a BinarySI quantity: the largest power-of-1024 suffix that keeps a whole number.
export function formatBinarySI(bytes: i64): string {
  return format(bytes, 1024, BINARY_SUFFIXES);
}

/// A count as a DecimalSI quantity: the largest power-of-1000 suffix that keeps a whole number.
export function formatDecimalSI(count: i64): string {
  return format(count, 1000, DECIMAL_SUFFIXES);
}
