// Upstream's eviction ranking for memory pressure written again in plain TypeScript, apart from
// the core: the simulator's invariants check the core's choice against it, and the benchmark
// measures the core against it. Order: pods without stats first; then pods using more than
// they request; then lower priority; then the larger usage above request; ties by uid (the
// core's rule, where upstream's unstable sort leaves ties to chance).

export interface RankedPod {
  uid: string;
  priority: number;
  hasStats: boolean;
  usageBytes: number;
  requestBytes: number;
}

const SCALE: Record<string, number> = { "": 1, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12, m: 1e-3 };

/** A memory quantity in bytes (rounded up, as resource.Quantity.Value()); NaN if unreadable. */
export function quantityBytes(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T|m)?$/.exec(text.trim());
  return m ? Math.ceil(Number(m[1]) * SCALE[m[2] ?? ""]) : NaN;
}

export function compareMemoryPressure(a: RankedPod, b: RankedPod): number {
  if (a.hasStats !== b.hasStats) return a.hasStats ? 1 : -1;
  if (a.hasStats) {
    const aOver = a.usageBytes > a.requestBytes;
    const bOver = b.usageBytes > b.requestBytes;
    if (aOver !== bOver) return aOver ? -1 : 1;
    if (a.priority !== b.priority) return a.priority < b.priority ? -1 : 1;
    const aAbove = a.usageBytes - a.requestBytes;
    const bAbove = b.usageBytes - b.requestBytes;
    if (aAbove !== bAbove) return aAbove > bAbove ? -1 : 1;
  }
  return a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0;
}

/** The pods in eviction order for memory pressure (a new array). */
export function rankMemoryPressure(pods: RankedPod[]): RankedPod[] {
  return [...pods].sort(compareMemoryPressure);
}
