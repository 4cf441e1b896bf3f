// A short fingerprint of a trace, the same in Node.js and the browser: the report page shows
// whether its re-run produced the very trace of the recorded run.

/** FNV-1a (64-bit) over the UTF-16 code units of the lines, each ended by a newline; hex. */
export function traceDigest(lines: string[]): string {
  let hash = 0xcbf29ce484222325n;
  const prime = 0x100000001b3n;
  const mask = 0xffffffffffffffffn;
  for (const line of lines) {
    for (let i = 0; i <= line.length; i++) {
      hash ^= BigInt(i < line.length ? line.charCodeAt(i) : 10);
      hash = (hash * prime) & mask;
    }
  }
  return hash.toString(16).padStart(16, "0");
}
