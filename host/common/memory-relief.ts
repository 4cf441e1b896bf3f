// Keeps a burst of parsing from growing the heap for good. V8 keeps the heap pages a burst grew
// into, fragmented: 10,000 refused manifests left an agent at 280 MiB RSS, from 70 MiB, with
// about 11 MiB of live objects. So parsing counts what it costs, and past a budget of garbage a
// full collection runs at once, before the heap grows; a last one runs when the burst is over so
// that the pages it used go back to the system. Normal manifests (a few KiB) never reach it.
import v8 from "node:v8";
import vm from "node:vm";

/** Estimated garbage between two collections during a burst (parsing costs ~100 bytes per byte). */
export const RELIEF_BUDGET_BYTES = 16 * 1024 * 1024;
/** Quiet time after the last noted burst: the scan's pods reach the core and the logs first. */
const QUIET_MS = 2_000;
const QUIET_COLLECTIONS = 3;

let collect: (() => void) | undefined;
try {
  // `gc` without a command-line flag: exposed for this process, taken from a fresh context.
  v8.setFlagsFromString("--expose-gc");
  collect = vm.runInNewContext("gc") as () => void;
} catch {
  collect = undefined;
}

let pendingBytes = 0;
let timer: NodeJS.Timeout | undefined;
let collections = 0;

/** Collections run so far (the control socket's /debug/memory shows it). */
export function reliefCollections(): number {
  return collections;
}

function collectNow(): void {
  pendingBytes = 0;
  collections++;
  collect?.();
}

/** Counts `bytes` of garbage just made; collects now past the budget, and once more when quiet. */
export function noteAllocation(bytes: number): void {
  if (!collect) return;
  pendingBytes += bytes;
  if (pendingBytes >= RELIEF_BUDGET_BYTES) collectNow();
  clearTimeout(timer);
  timer = setTimeout(() => {
    timer = undefined;
    // A full collection compacts only the most fragmented pages; V8's own memory reducer runs a
    // few in a row for that reason, and so does this one, once, when the burst is over.
    for (let i = 0; i < QUIET_COLLECTIONS; i++) collectNow();
  }, QUIET_MS);
  timer.unref();
}
