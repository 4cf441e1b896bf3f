// A bounded cache whose entries expire: the webhook answers of the kubelet API (TokenReview,
// SubjectAccessReview). At most `maxEntries`; the oldest entry goes first when it is full.

export class TtlCache<V> {
  private entries = new Map<string, { value: V; expiresAtMs: number }>();

  constructor(
    private ttlMs: number,
    private maxEntries: number,
  ) {}

  get(key: string, nowMs: number): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expiresAtMs <= nowMs) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V, nowMs: number, ttlMs = this.ttlMs): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, expiresAtMs: nowMs + ttlMs });
  }

  get size(): number {
    return this.entries.size;
  }
}
