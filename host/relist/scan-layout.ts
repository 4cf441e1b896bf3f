// The rows the relist's scanners write (list-scanning.ts, list-scanning-fast.ts): per listed
// object a fixed number of 32-bit words, strings as (start, length) in the answer's bytes.

/** A row's start word of a string that the answer did not carry (a label or annotation). */
export const ABSENT = 0xffffffff;

/** Word 0 and 1 of every row: the object's own message range (start, end) in the answer. */
export const ROW_MESSAGE = 0;

// Sandbox rows: 18 words.
export const SANDBOX_ROW = 18;
export const SR_MESSAGE = ROW_MESSAGE;
/** Strings: start and length words each. */
export const SR_ID = 2;
export const SR_NAME = 4;
export const SR_UID = 6;
export const SR_NAMESPACE = 8;
export const SR_ATTEMPT = 10;
/** 1 ready, 0 not ready. */
export const SR_READY = 11;
/** created_at: low and high 32 bits. */
export const SR_CREATED = 12;
/** The pod UID label's value (start ABSENT: no such label). */
export const SR_UID_LABEL = 14;
/** The grace period annotation's value (start ABSENT: no such annotation). */
export const SR_GRACE = 16;

// Container rows: 18 words.
export const CONTAINER_ROW = 18;
export const CR_MESSAGE = ROW_MESSAGE;
export const CR_ID = 2;
export const CR_SANDBOX_ID = 4;
export const CR_NAME = 6;
export const CR_IMAGE = 8;
/** The pod UID label's value (length 0 when absent: the relist lists "" then). */
export const CR_UID_LABEL = 10;
/** The spec hash annotation's value (length 0 when absent). */
export const CR_SPEC_HASH = 12;
export const CR_ATTEMPT = 14;
/** CRI ContainerState: 0 created, 1 running, 2 exited, 3 unknown (anything else reads as 3). */
export const CR_STATE = 15;
export const CR_CREATED = 16;
