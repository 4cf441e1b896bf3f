// CPU sets as the kernel writes them (`0-3,8`): sorted, unique CPU ids, with the few set operations
// the CPU manager needs. Kept as plain sorted arrays: a node has at most a few hundred CPUs.

/// The largest CPU id accepted from a cpuset text, so that `0-4294967295` cannot allocate the heap away.
export const MAX_CPU_ID: i32 = 8191;

/// A cpuset's ids, sorted and unique, or null with `parseError` set.
export let parseError: string = "";

/// Parses `0-3,8` into sorted unique ids; null (and `parseError`) when malformed.
export function parseCpuSet(text: string): i32[] | null {
  const out = new Array<i32>();
  if (text.trim().length == 0) return out;
  const parts = text.split(",");
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i].trim();
    const dash = part.indexOf("-");
    const first = readId(dash < 0 ? part : part.substring(0, dash));
    const last = dash < 0 ? first : readId(part.substring(dash + 1));
    if (first < 0 || last < 0 || last < first) {
      parseError = "invalid cpuset \"" + (text.length > 64 ? text.substring(0, 64) : text) + "\"";
      return null;
    }
    for (let id = first; id <= last; id++) out.push(id);
  }
  return normalize(out);
}

function readId(text: string): i32 {
  if (text.length == 0 || text.length > 5) return -1;
  let value: i32 = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return -1;
    value = value * 10 + (c - 48);
  }
  return value > MAX_CPU_ID ? -1 : value;
}

/// Sorted and without repeats.
export function normalize(ids: i32[]): i32[] {
  const sorted = ids.slice(0);
  sorted.sort((a: i32, b: i32): i32 => a - b);
  const out = new Array<i32>();
  for (let i = 0; i < sorted.length; i++) if (out.length == 0 || out[out.length - 1] != sorted[i]) out.push(sorted[i]);
  return out;
}

/// The kernel's text of sorted ids: runs as `a-b`, joined by commas (`0-3,8`); "" when empty.
export function formatCpuSet(ids: i32[]): string {
  let out = "";
  let i = 0;
  while (i < ids.length) {
    let j = i;
    while (j + 1 < ids.length && ids[j + 1] == ids[j] + 1) j++;
    if (out.length > 0) out += ",";
    out += j == i ? ids[i].toString() : ids[i].toString() + "-" + ids[j].toString();
    i = j + 1;
  }
  return out;
}

export function contains(ids: i32[], id: i32): bool {
  return ids.indexOf(id) >= 0;
}

export function union(a: i32[], b: i32[]): i32[] {
  return normalize(a.concat(b));
}

export function difference(a: i32[], b: i32[]): i32[] {
  const out = new Array<i32>();
  for (let i = 0; i < a.length; i++) if (!contains(b, a[i])) out.push(a[i]);
  return out;
}

export function intersection(a: i32[], b: i32[]): i32[] {
  const out = new Array<i32>();
  for (let i = 0; i < a.length; i++) if (contains(b, a[i])) out.push(a[i]);
  return out;
}

export function sameSet(a: i32[], b: i32[]): bool {
  if (a.length != b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] != b[i]) return false;
  return true;
}
