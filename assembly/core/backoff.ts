// Per-key exponential back-off with the semantics of upstream client-go flowcontrol.Backoff, which
// the kubelet uses for crash loops and image pulls: the first failure is retried at once, then the
// wait doubles from `initialMs` up to `maxMs`; an event more than 2 x max after the last update
// starts over (a container that ran 10 minutes is considered stable).

class BackoffEntry {
  constructor(public durationMs: u64, public lastUpdateMs: u64) {}
}

/// One entry as a host checkpoints it (WIT `back-off-checkpoint`).
export class BackOffCheckpoint {
  constructor(public key: string, public durationMs: u64, public lastUpdateMs: u64) {}
}

export class Backoff {
  private entries: Map<string, BackoffEntry> = new Map();

  constructor(public initialMs: u64, public maxMs: u64) {}

  private hasExpired(eventTimeMs: u64, lastUpdateMs: u64): bool {
    return eventTimeMs > lastUpdateMs && eventTimeMs - lastUpdateMs > this.maxMs * 2;
  }

  /// Current wait for `key`, 0 if none.
  durationMs(key: string): u64 {
    return this.entries.has(key) ? this.entries.get(key).durationMs : 0;
  }

  /// True while `nowMs` is within the current wait counted from `eventTimeMs` (a container's
  /// finish time).
  isInBackOffSince(key: string, eventTimeMs: u64, nowMs: u64): bool {
    if (!this.entries.has(key)) return false;
    const entry = this.entries.get(key);
    if (this.hasExpired(eventTimeMs, entry.lastUpdateMs)) return false;
    return nowMs < eventTimeMs + entry.durationMs;
  }

  /// True while `nowMs` is within the current wait counted from the last `next`.
  isInBackOffSinceUpdate(key: string, nowMs: u64): bool {
    if (!this.entries.has(key)) return false;
    const entry = this.entries.get(key);
    if (this.hasExpired(nowMs, entry.lastUpdateMs)) return false;
    return nowMs < entry.lastUpdateMs + entry.durationMs;
  }

  /// End of the wait counted from the last `next`; 0 if there is no entry.
  waitEndsAtMs(key: string): u64 {
    if (!this.entries.has(key)) return 0;
    const entry = this.entries.get(key);
    return entry.lastUpdateMs + entry.durationMs;
  }

  /// Records a failure: starts or doubles the wait.
  next(key: string, eventTimeMs: u64, nowMs: u64): void {
    if (!this.entries.has(key) || this.hasExpired(eventTimeMs, this.entries.get(key).lastUpdateMs)) {
      this.entries.set(key, new BackoffEntry(this.initialMs, nowMs));
      return;
    }
    const entry = this.entries.get(key);
    const doubled = entry.durationMs * 2;
    entry.durationMs = doubled < this.maxMs ? doubled : this.maxMs;
    entry.lastUpdateMs = nowMs;
  }

  /// Sets `key`'s entry as a caller kept it (the pure `restart` interface holds no state).
  restore(key: string, durationMs: u64, lastUpdateMs: u64): void {
    this.entries.set(key, new BackoffEntry(durationMs, lastUpdateMs));
  }

  /// When `key`'s wait was last set or doubled; 0 if there is no entry.
  lastUpdateMs(key: string): u64 {
    return this.entries.has(key) ? this.entries.get(key).lastUpdateMs : 0;
  }

  reset(key: string): void {
    this.entries.delete(key);
  }

  /// The entries not expired at `nowMs`, sorted by key (a checkpoint that does not change
  /// reads the same).
  checkpoint(nowMs: u64): BackOffCheckpoint[] {
    const keys = this.entries.keys().sort();
    const out = new Array<BackOffCheckpoint>();
    for (let i = 0; i < keys.length; i++) {
      const entry = this.entries.get(keys[i]);
      if (!this.hasExpired(nowMs, entry.lastUpdateMs)) out.push(new BackOffCheckpoint(keys[i], entry.durationMs, entry.lastUpdateMs));
    }
    return out;
  }

  /// Takes back a checkpointed entry: ignored when its wait is 0, it is dated after `nowMs` (a
  /// clock that went back), it has expired, or the key is already held; a wait above the maximum
  /// (a smaller maximum configured since) is cut to it.
  restoreCheckpoint(entry: BackOffCheckpoint, nowMs: u64): void {
    if (entry.durationMs == 0 || entry.lastUpdateMs > nowMs || this.entries.has(entry.key)) return;
    if (this.hasExpired(nowMs, entry.lastUpdateMs)) return;
    const durationMs = entry.durationMs < this.maxMs ? entry.durationMs : this.maxMs;
    this.entries.set(entry.key, new BackoffEntry(durationMs, entry.lastUpdateMs));
  }

  /// Drops entries idle for more than 2 x max; keeps memory bounded on long runs.
  collect(nowMs: u64): void {
    const keys = this.entries.keys();
    for (let i = 0; i < keys.length; i++) {
      if (this.hasExpired(nowMs, this.entries.get(keys[i]).lastUpdateMs)) this.entries.delete(keys[i]);
    }
  }

  get size(): i32 {
    return this.entries.size;
  }
}
