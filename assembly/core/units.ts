// Comparing UTF-16 text in linear memory without making strings of it.

/// True when the `length` UTF-16 code units at `a` and at `b` are the same. Eight bytes at a time
/// with unaligned loads (packed text is 2-byte aligned only; the standard memory.compare falls
/// back to bytes then).
export function unitsEqual(a: usize, b: usize, length: u32): bool {
  const end = a + (<usize>length << 1);
  for (; a + 8 <= end; a += 8, b += 8) if (load<u64>(a) != load<u64>(b)) return false;
  for (; a < end; a += 2, b += 2) if (load<u16>(a) != load<u16>(b)) return false;
  return true;
}
