// Comparing text in linear memory without making strings of it.

/// True when the `length` UTF-16 code units at `a` and at `b` are the same. Eight bytes at a time
/// with unaligned loads (packed text is 2-byte aligned only; the standard memory.compare falls
/// back to bytes then).
export function unitsEqual(a: usize, b: usize, length: u32): bool {
  const end = a + (<usize>length << 1);
  for (; a + 8 <= end; a += 8, b += 8) if (load<u64>(a) != load<u64>(b)) return false;
  for (; a < end; a += 2, b += 2) if (load<u16>(a) != load<u16>(b)) return false;
  return true;
}

/// True when the `length` bytes at `a` and at `b` are the same, eight at a time (unaligned).
export function bytesEqual(a: usize, b: usize, length: u32): bool {
  const end = a + <usize>length;
  for (; a + 8 <= end; a += 8, b += 8) if (load<u64>(a) != load<u64>(b)) return false;
  for (; a < end; a++, b++) if (load<u8>(a) != load<u8>(b)) return false;
  return true;
}

/// True when the `length` UTF-8 bytes at `bytes` read as `text` (as String.UTF8.decodeUnsafe
/// reads them).
export function utf8Equals(text: string, bytes: usize, length: u32): bool {
  return utf8EqualsUnits(changetype<usize>(text), <u32>text.length, bytes, length);
}

/// True when the `length` UTF-8 bytes at `bytes` read as the `units` UTF-16 code units at `s`.
/// Text that is ASCII on both sides, nearly all of it, is compared byte against code unit;
/// anything else is decoded and compared.
export function utf8EqualsUnits(s: usize, units: u32, bytes: usize, length: u32): bool {
  // A code unit takes at least one byte (a malformed byte reads as one unit).
  if (units > length) return false;
  if (units == length) {
    let i: usize = 0;
    // Four bytes at a time, widened to four code units (IDs are 64 bytes, and this runs for
    // every string of every pod that changed).
    for (; i + 4 <= <usize>length; i += 4) {
      const four = <u64>load<u32>(bytes + i);
      if ((four & 0x80808080) != 0) return decodedEquals(s, units, bytes, length);
      const widened = (four & 0xff) | ((four & 0xff00) << 8) | ((four & 0xff0000) << 16) | ((four & 0xff000000) << 24);
      if (widened != load<u64>(s + (i << 1))) return false;
    }
    for (; i < <usize>length; i++) {
      const b = <u32>load<u8>(bytes + i);
      if (b >= 0x80) return decodedEquals(s, units, bytes, length);
      if (b != <u32>load<u16>(s + (i << 1))) return false;
    }
    return true;
  }
  // Fewer units than bytes: only non-ASCII text can match.
  return decodedEquals(s, units, bytes, length);
}

function decodedEquals(s: usize, units: u32, bytes: usize, length: u32): bool {
  const decoded = String.UTF8.decodeUnsafe(bytes, <usize>length);
  return <u32>decoded.length == units && unitsEqual(changetype<usize>(decoded), s, units);
}
