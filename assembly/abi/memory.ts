// Canonical-ABI memory primitives: allocation for the host (cabi_realloc), strings (UTF-16, as the
// component is embedded with stringEncoding "utf16"), lists, and the arena of lowered results that
// the matching cabi_post_* function frees.

/// What cabi_realloc returns for a zero-size request: a valid, never-freed address.
const EMPTY_SENTINEL: usize = memory.data(16, 16);

/// Allocations made while lowering the current return value; freed by `freeReturnArena`.
const returnArena: usize[] = [];

export function cabiRealloc(oldPtr: usize, oldSizeBytes: usize, align: usize, newSizeBytes: usize): usize {
  // heap.alloc aligns to 16 bytes, which covers every alignment the canonical ABI asks for.
  assert(align <= 16, "cabi_realloc: alignment above 16");
  if (newSizeBytes == 0) return EMPTY_SENTINEL;
  if (oldPtr == 0 || oldPtr == EMPTY_SENTINEL || oldSizeBytes == 0) return heap.alloc(newSizeBytes);
  return heap.realloc(oldPtr, newSizeBytes);
}

/// Frees a buffer the host allocated for an argument, once it has been lifted.
export function freeArgument(ptr: usize, sizeBytes: usize): void {
  if (sizeBytes == 0 || ptr == 0 || ptr == EMPTY_SENTINEL) return;
  heap.free(ptr);
}

/// Allocates memory for a return value; it stays valid until the post-return call.
export function allocReturn(sizeBytes: usize): usize {
  if (sizeBytes == 0) return EMPTY_SENTINEL;
  const ptr = heap.alloc(sizeBytes);
  returnArena.push(ptr);
  return ptr;
}

export function freeReturnArena(): void {
  for (let i = 0, n = returnArena.length; i < n; i++) heap.free(unchecked(returnArena[i]));
  returnArena.length = 0;
}

/// Lifts the string whose (pointer, length in code units) pair is stored at `at`.
export function liftString(at: usize): string {
  return liftStringParts(load<u32>(at), load<u32>(at, 4));
}

export function liftStringParts(ptr: usize, lengthUnits: u32): string {
  const sizeBytes = <usize>lengthUnits << 1;
  if (sizeBytes == 0) return "";
  const text = String.UTF16.decodeUnsafe(ptr, sizeBytes);
  freeArgument(ptr, sizeBytes);
  return text;
}

/// Lowers `text` and stores its (pointer, length in code units) pair at `at`.
export function lowerString(at: usize, text: string): void {
  const sizeBytes = <usize>text.length << 1;
  const ptr = allocReturn(sizeBytes);
  memory.copy(ptr, changetype<usize>(text), sizeBytes);
  store<u32>(at, <u32>ptr);
  store<u32>(at, <u32>text.length, 4);
}

/// Lifts the list whose (pointer, length) pair is stored at `at`.
export function liftList<T>(at: usize, elementSizeBytes: usize, liftElement: (ptr: usize) => T): T[] {
  return liftListParts<T>(load<u32>(at), load<u32>(at, 4), elementSizeBytes, liftElement);
}

export function liftListParts<T>(
  ptr: usize,
  length: u32,
  elementSizeBytes: usize,
  liftElement: (ptr: usize) => T,
): T[] {
  const items = new Array<T>(<i32>length);
  for (let i: u32 = 0; i < length; i++) {
    unchecked((items[i] = liftElement(ptr + <usize>i * elementSizeBytes)));
  }
  freeArgument(ptr, <usize>length * elementSizeBytes);
  return items;
}

/// Lowers `items` and stores the list's (pointer, length) pair at `at`.
export function lowerList<T>(
  at: usize,
  items: T[],
  elementSizeBytes: usize,
  lowerElement: (ptr: usize, item: T) => void,
): void {
  const n = items.length;
  const ptr = allocReturn(<usize>n * elementSizeBytes);
  for (let i = 0; i < n; i++) lowerElement(ptr + <usize>i * elementSizeBytes, unchecked(items[i]));
  store<u32>(at, <u32>ptr);
  store<u32>(at, <u32>n, 4);
}

export function liftStringElement(ptr: usize): string {
  return liftString(ptr);
}

export function lowerStringElement(ptr: usize, text: string): void {
  lowerString(ptr, text);
}
