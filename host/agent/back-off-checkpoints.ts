// The crash-loop back-off kept across agent restarts and core traps: written after each relist
// when it changed, given back to every new core instance.
import type { BackOffEntry } from "../core/core.js";
import type { CheckpointStore } from "../checkpoint/checkpoint-store.js";
import type { WithCore } from "./pod-feed.js";

/** The name of the crash-loop back-off checkpoint in its store. */
const BACK_OFF_CHECKPOINT = "crash-loop-back-off";

function isBackOffEntry(e: unknown): e is BackOffEntry {
  const entry = e as BackOffEntry;
  return typeof entry?.key === "string" && Number.isSafeInteger(entry.durationMs) && entry.durationMs >= 0 && Number.isSafeInteger(entry.lastUpdateMs) && entry.lastUpdateMs >= 0;
}

export class BackOffCheckpoints {
  /** The last back-off checkpoint written (or read at start). */
  private saved: BackOffEntry[] = [];

  constructor(
    private store: CheckpointStore | undefined,
    private withCore: WithCore,
    private nowMs: () => number,
  ) {}

  /** Reads the checkpoint an earlier agent wrote (entries that do not check out are dropped). */
  load(): void {
    const saved = this.store?.read(BACK_OFF_CHECKPOINT);
    if (Array.isArray(saved)) this.saved = saved.filter(isBackOffEntry);
  }

  /** Gives the checkpointed back-off to a new core (at start, or after a trap). */
  restore(): void {
    if (this.saved.length === 0) return;
    this.withCore((core) => core.restoreBackOffs?.(this.nowMs(), this.saved));
  }

  /** Writes the core's back-off when it changed (the store skips an unchanged one). */
  save(): void {
    if (!this.store) return;
    const entries = this.withCore((core) => core.backOffs?.(this.nowMs()));
    if (!entries) return;
    this.saved = entries;
    this.store.write(BACK_OFF_CHECKPOINT, entries);
  }
}
