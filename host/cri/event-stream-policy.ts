// How long a runtime's CRI event stream is trusted (no gRPC here: the simulator, which runs in a
// browser too, follows the same rule).

/**
 * Upstream's eventedPlegMaxStreamRetries: CRI event streams that may fail (a break, or a failed
 * reopening) before the stream is given up for good and relists return to their period.
 */
export const MAX_CRI_STREAM_FAILURES = 5;
