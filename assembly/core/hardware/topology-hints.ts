// The topology manager's merge: each hint provider (CPU, memory, devices) says on which NUMA node
// sets a container's resources could be placed (a hint: mask and preferred); the manager crosses
// every provider's hints, ANDs each combination, and keeps the best by upstream's rules. The policy
// decides what is admitted: best-effort everything, restricted only a preferred merge,
// single-numa-node only a preferred merge on one NUMA node.
import { isNarrower, maskCount } from "./numa-mask";

export const POLICY_NONE = "none";
export const POLICY_BEST_EFFORT = "best-effort";
export const POLICY_RESTRICTED = "restricted";
export const POLICY_SINGLE_NUMA_NODE = "single-numa-node";

/// Upstream's cap on the hints combined: beyond it admission would take too long.
const MAX_PERMUTATIONS: i32 = 100000;

/// A NUMA affinity: `mask` 0 means any node (upstream's nil affinity).
export class TopologyHint {
  constructor(public mask: u64 = 0, public preferred: bool = false) {}
}

/// One resource's hints from one provider. `noPreference` is upstream's nil list (anywhere is
/// fine); an empty `hints` list with `noPreference` false means it cannot be placed at all.
export class ResourceHints {
  hints: TopologyHint[] = [];
  constructor(public resource: string = "", public noPreference: bool = true) {}
}

export class MergeResult {
  constructor(public hint: TopologyHint = new TopologyHint(), public admit: bool = true) {}
}

/// upstream's filterProvidersHints: a resource without preference becomes one preferred any-node
/// hint, a resource that cannot be placed one non-preferred any-node hint.
function providerLists(all: ResourceHints[]): TopologyHint[][] {
  const out = new Array<TopologyHint[]>();
  for (let i = 0; i < all.length; i++) {
    const r = all[i];
    if (r.noPreference) out.push([new TopologyHint(0, true)]);
    else if (r.hints.length == 0) out.push([new TopologyHint(0, false)]);
    else out.push(r.hints);
  }
  if (out.length == 0) out.push([new TopologyHint(0, true)]);
  return out;
}

/// Only preferred hints on one node (or anywhere), as upstream's single-numa-node filter keeps.
function singleNodeOnly(lists: TopologyHint[][]): TopologyHint[][] {
  const out = new Array<TopologyHint[]>();
  for (let i = 0; i < lists.length; i++) {
    const kept = new Array<TopologyHint>();
    for (let j = 0; j < lists[i].length; j++) {
      const h = lists[i][j];
      if (h.preferred && (h.mask == 0 || maskCount(h.mask) == 1)) kept.push(h);
    }
    out.push(kept);
  }
  return out;
}

/// The widest of the narrowest hints of each provider: non-preferred merges aim at that size.
function bestNonPreferredCount(lists: TopologyHint[][]): i32 {
  let best: i32 = 0;
  for (let i = 0; i < lists.length; i++) {
    let narrowest: u64 = 0;
    for (let j = 0; j < lists[i].length; j++) {
      const m = lists[i][j].mask;
      if (m == 0) continue;
      if (narrowest == 0 || isNarrower(m, narrowest)) narrowest = m;
    }
    if (narrowest != 0 && maskCount(narrowest) > best) best = maskCount(narrowest);
  }
  return best;
}

function fitter(current: TopologyHint, candidate: TopologyHint): TopologyHint {
  if (candidate.mask == current.mask) return current;
  return isNarrower(candidate.mask, current.mask) ? candidate : current;
}

/// upstream's HintMerger.compare.
function compare(current: TopologyHint | null, candidate: TopologyHint, target: i32): TopologyHint | null {
  if (maskCount(candidate.mask) == 0) return current;
  if (current === null) return candidate;
  const cur = changetype<TopologyHint>(current);
  if (!cur.preferred && candidate.preferred) return candidate;
  if (cur.preferred && !candidate.preferred) return cur;
  if (cur.preferred && candidate.preferred) return fitter(cur, candidate);
  const c = maskCount(cur.mask), n = maskCount(candidate.mask);
  if (c > target) return fitter(cur, candidate);
  if (c == target) return n != target ? cur : fitter(cur, candidate);
  if (n > target) return cur;
  if (n == target) return candidate;
  if (n > c) return candidate;
  if (n < c) return cur;
  return fitter(cur, candidate);
}

/// Merges the providers' hints over the machine's NUMA nodes (`defaultMask`) under `policy`.
export function mergeHints(policy: string, defaultMask: u64, providers: ResourceHints[]): MergeResult {
  if (policy == POLICY_NONE || policy.length == 0) return new MergeResult(new TopologyHint(0, true), true);
  let lists = providerLists(providers);
  if (policy == POLICY_SINGLE_NUMA_NODE) lists = singleNodeOnly(lists);
  const target = bestNonPreferredCount(lists);
  let best: TopologyHint | null = null;
  // Walk every combination (one hint per list) like an odometer.
  const at = new Array<i32>(lists.length);
  for (let i = 0; i < lists.length; i++) if (lists[i].length == 0) return finish(policy, defaultMask, null);
  let walked: i32 = 0;
  while (walked < MAX_PERMUTATIONS) {
    walked++;
    best = compare(best, mergeOne(defaultMask, lists, at), target);
    let k = lists.length - 1;
    while (k >= 0) {
      at[k]++;
      if (at[k] < lists[k].length) break;
      at[k] = 0;
      k--;
    }
    if (k < 0) break;
  }
  return finish(policy, defaultMask, best);
}

function finish(policy: string, defaultMask: u64, best: TopologyHint | null): MergeResult {
  let hint = best === null ? new TopologyHint(defaultMask, false) : changetype<TopologyHint>(best);
  if (policy == POLICY_SINGLE_NUMA_NODE && hint.mask == defaultMask) hint = new TopologyHint(0, hint.preferred);
  const admit = policy == POLICY_BEST_EFFORT ? true : hint.preferred;
  return new MergeResult(hint, admit);
}

/// upstream's mergePermutation: AND of the masks (any-node hints count as every node); preferred
/// only if every hint is and every set mask is the same.
function mergeOne(defaultMask: u64, lists: TopologyHint[][], at: i32[]): TopologyHint {
  let preferred = true;
  let mask = defaultMask;
  let firstMask: u64 = 0;
  for (let i = 0; i < lists.length; i++) {
    const h = lists[i][at[i]];
    if (h.mask != 0) {
      if (firstMask == 0) firstMask = h.mask;
      else if (h.mask != firstMask) preferred = false;
      mask &= h.mask;
    }
    if (!h.preferred) preferred = false;
  }
  return new TopologyHint(mask, preferred);
}
