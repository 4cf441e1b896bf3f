// Canonical ABI layout of WIT `back-off-checkpoint`: key (string: ptr, len) at 0, duration-ms
// (u64) at 8, last-update-ms (u64) at 16; size 24, alignment 8.
import { BackOffCheckpoint } from "../core/backoff";
import { liftString, lowerString } from "./memory";

export const BACK_OFF_CHECKPOINT_SIZE: usize = 24;

export function liftBackOffCheckpoint(ptr: usize): BackOffCheckpoint {
  return new BackOffCheckpoint(liftString(ptr), load<u64>(ptr + 8), load<u64>(ptr + 16));
}

export function lowerBackOffCheckpoint(ptr: usize, entry: BackOffCheckpoint): void {
  lowerString(ptr, entry.key);
  store<u64>(ptr + 8, entry.durationMs);
  store<u64>(ptr + 16, entry.lastUpdateMs);
}
