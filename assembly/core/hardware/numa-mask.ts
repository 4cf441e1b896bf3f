// NUMA affinity masks as the topology manager uses them: one bit per NUMA node id (< 64), with
// upstream's ordering of masks (fewer nodes first, then the lower value).

export function maskCount(mask: u64): i32 {
  return <i32>popcnt(mask);
}

/// Upstream's IsNarrowerThan: fewer NUMA nodes, or as many and a lower value.
export function isNarrower(mask: u64, other: u64): bool {
  const a = maskCount(mask), b = maskCount(other);
  return a == b ? mask < other : a < b;
}

export function maskOf(ids: i32[]): u64 {
  let mask: u64 = 0;
  for (let i = 0; i < ids.length; i++) if (ids[i] >= 0 && ids[i] < 64) mask |= (<u64>1) << <u64>ids[i];
  return mask;
}

export function maskBits(mask: u64): i32[] {
  const out = new Array<i32>();
  for (let i = 0; i < 64; i++) if ((mask >> <u64>i) & 1) out.push(i);
  return out;
}

/// Every non-empty mask over `nodes`, as upstream's IterateBitMasks walks them: all masks of one
/// node, then of two, ... each size in lexicographic order of the node list.
export function allMasks(nodes: i32[]): u64[] {
  const out = new Array<u64>();
  for (let size = 1; size <= nodes.length; size++) combine(nodes, size, 0, 0, out);
  return out;
}

function combine(nodes: i32[], left: i32, start: i32, acc: u64, out: u64[]): void {
  if (left == 0) {
    out.push(acc);
    return;
  }
  for (let i = start; i <= nodes.length - left; i++) combine(nodes, left - 1, i + 1, acc | ((<u64>1) << <u64>nodes[i]), out);
}

/// The text of a mask as upstream logs a NUMA affinity (`01` style is not used; node ids joined).
export function formatMask(mask: u64): string {
  const bits = maskBits(mask);
  let out = "";
  for (let i = 0; i < bits.length; i++) out += (i > 0 ? "," : "") + bits[i].toString();
  return out;
}
