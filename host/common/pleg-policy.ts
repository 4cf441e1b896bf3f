// How the PLEG is judged and how long a runtime's event stream is trusted: upstream's numbers,
// in a module without gRPC (the simulator, which also runs in a browser, follows them too).

/**
 * Upstream's eventedPlegMaxStreamRetries: CRI event streams that may fail (a break, or a failed
 * reopening) before the stream is given up for good and relists return to their period.
 */
export const MAX_CRI_STREAM_FAILURES = 5;

/** Upstream's relistThreshold: a PLEG whose last relist is older is unhealthy (node NotReady). */
export const PLEG_UNHEALTHY_AFTER_MS = 3 * 60_000;

/** Upstream's eventedPlegRelistThreshold: the same while runtime events drive the relists (one every 5 min). */
export const EVENTED_PLEG_UNHEALTHY_AFTER_MS = 10 * 60_000;
