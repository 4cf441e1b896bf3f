// Which pod to evict first under pressure (pkg/kubelet/eviction/helpers.go rank*Pressure):
// memory and disk: pods without stats first, then pods using more than they requested, then
// lower priority, then the largest usage above request; PID: lower priority, then the most
// processes (pods without stats first). Upstream's sort is not stable; here equal pods keep the
// order of their uids, so the choice never depends on arrival order.

/// What ranking needs of one pod: its priority, its request and its usage of the resource.
export class PodUsage {
  constructor(
    public uid: string = "",
    public priority: i32 = 0,
    public hasStats: bool = true,
    /// Bytes (memory, ephemeral storage) or processes.
    public usage: i64 = 0,
    /// The pod's request of the resource (sum of its containers), 0 if none.
    public request: i64 = 0,
  ) {}
}

function cmpBool(a: bool, b: bool): i32 {
  if (a == b) return 0;
  return a ? -1 : 1; // true first
}

function cmpUid(a: PodUsage, b: PodUsage): i32 {
  return a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0;
}

/// Memory or disk order: exceeds request, then priority (lower first), then usage above request;
/// 0 when only the uids can tell the two apart.
export function compareUsageKeys(a: PodUsage, b: PodUsage): i32 {
  if (!a.hasStats || !b.hasStats) return cmpBool(!a.hasStats, !b.hasStats);
  const c = cmpBool(a.usage > a.request, b.usage > b.request);
  if (c != 0) return c;
  if (a.priority != b.priority) return a.priority < b.priority ? -1 : 1;
  const aAbove = a.usage - a.request;
  const bAbove = b.usage - b.request;
  if (aAbove != bAbove) return aAbove > bAbove ? -1 : 1;
  return 0;
}

/// PID order: priority (lower first), then more processes first; 0 when only the uids differ.
export function comparePidKeys(a: PodUsage, b: PodUsage): i32 {
  if (a.priority != b.priority) return a.priority < b.priority ? -1 : 1;
  if (!a.hasStats || !b.hasStats) return cmpBool(!a.hasStats, !b.hasStats);
  if (a.usage != b.usage) return a.usage > b.usage ? -1 : 1;
  return 0;
}

export function compareForUsagePressure(a: PodUsage, b: PodUsage): i32 {
  const c = compareUsageKeys(a, b);
  return c != 0 ? c : cmpUid(a, b);
}

export function compareForPidPressure(a: PodUsage, b: PodUsage): i32 {
  const c = comparePidKeys(a, b);
  return c != 0 ? c : cmpUid(a, b);
}

/// The pods in eviction order for memory or disk pressure (a new array).
export function rankForUsagePressure(pods: PodUsage[]): PodUsage[] {
  const out = pods.slice(0);
  out.sort(compareForUsagePressure);
  return out;
}

/// The pods in eviction order for PID pressure (a new array).
export function rankForPidPressure(pods: PodUsage[]): PodUsage[] {
  const out = pods.slice(0);
  out.sort(compareForPidPressure);
  return out;
}
