// Bytes of a manifest file -> text, or a problem that says what the file is instead. YAML allows
// UTF-8 and UTF-16 (with a byte-order mark); anything else (gzip, binary, bad UTF-8) is named.

export type TextResult = { ok: true; text: string } | { ok: false; message: string };

const utf8 = new TextDecoder("utf-8", { fatal: true });

function hex(byte: number): string {
  return "0x" + byte.toString(16).padStart(2, "0");
}

/** Decodes a manifest's bytes; refuses what is not text, saying what it looks like. */
export function decodeManifest(bytes: Uint8Array): TextResult {
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
    return { ok: false, message: "not a manifest: the file is gzip-compressed; write it as plain YAML or JSON" };
  }
  if (bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))) {
    const littleEndian = bytes[0] === 0xff;
    try {
      return { ok: true, text: new TextDecoder(littleEndian ? "utf-16le" : "utf-16be", { fatal: true }).decode(bytes.subarray(2)) };
    } catch {
      return { ok: false, message: `not a manifest: the file starts with a UTF-16 ${littleEndian ? "LE" : "BE"} byte-order mark but is not valid UTF-16` };
    }
  }
  const nul = bytes.indexOf(0);
  if (nul >= 0) return { ok: false, message: `not a manifest: the file is binary (a NUL byte at offset ${nul})` };
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { ok: false, message: `not a manifest: the file is not UTF-8 text (byte ${hex(bytes[firstBadUtf8(bytes)] ?? 0)} at offset ${firstBadUtf8(bytes)})` };
  }
  // A UTF-8 byte-order mark is allowed and means nothing.
  return { ok: true, text: text.charCodeAt(0) === 0xfeff ? text.slice(1) : text };
}

/** Offset of the first byte that does not start or continue a valid UTF-8 sequence. */
function firstBadUtf8(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i];
    const n = b < 0x80 ? 1 : b >= 0xc2 && b < 0xe0 ? 2 : b >= 0xe0 && b < 0xf0 ? 3 : b >= 0xf0 && b < 0xf5 ? 4 : 0;
    if (n === 0 || i + n > bytes.length) return i;
    try {
      utf8.decode(bytes.subarray(i, i + n));
    } catch {
      return i;
    }
    i += n;
  }
  return 0;
}

/**
 * The deepest nesting of flow collections (`[`, `{`) in YAML or JSON text, skipping quoted
 * strings and comments, with the line where it first passes `limit`. Block collections nest by
 * indentation, which the file's size bounds; flow collections nest one byte a level, which is how
 * a small file overflows the parser's stack.
 */
export function flowDepthOver(text: string, limit: number): { line: number } | undefined {
  let depth = 0;
  let line = 1;
  let quote = 0; // 0, or the quote character's code
  let atLineStartOrSpace = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) {
      line++;
      atLineStartOrSpace = true;
      continue;
    }
    if (quote !== 0) {
      if (quote === 34 && c === 92) i++; // a backslash escape inside "..."
      else if (c === quote) {
        if (quote === 39 && text.charCodeAt(i + 1) === 39) i++; // '' inside '...'
        else quote = 0;
      }
      continue;
    }
    if (c === 35 && atLineStartOrSpace) {
      // A comment runs to the end of the line.
      while (i + 1 < text.length && text.charCodeAt(i + 1) !== 10) i++;
      continue;
    }
    // A quote opens a string only where a scalar may start (`it's` is a plain scalar).
    if ((c === 34 || c === 39) && atLineStartOrSpace) quote = c;
    else if (c === 91 || c === 123) {
      depth++;
      if (depth > limit) return { line };
    } else if (c === 93 || c === 125) depth = Math.max(0, depth - 1);
    atLineStartOrSpace = c === 32 || c === 9 || c === 44 || c === 91 || c === 123 || c === 58 || c === 45;
  }
  return undefined;
}
