// Canonical-ABI memory primitives: allocation for the host (cabi_realloc), strings (UTF-16, as the
// component is embedded with stringEncoding "utf16"), lists, and the arena of lowered results that
// the matching cabi_post_* function frees.

/// What cabi_realloc returns for a zero-size request: a valid, never-freed address.
const EMPTY_SENTINEL: usize = memory.data(16, 16);

/// Allocations made while lowering the current return value; freed by `freeReturnArena`.
const returnArena: usize[] = [];

// Arguments arrive in memory the host asks for with cabi_realloc, string by string and list by
// list: tens of thousands of small blocks for one relist. They are only read while lifting, so
// they come from a bump arena that is reset after every call instead of the general allocator.
const ARGUMENT_CHUNK_BYTES: usize = 64 * 1024;
const argumentChunks: usize[] = [];
let argumentTop: usize = 0;
let argumentEnd: usize = 0;
let argumentBytesThisCall: usize = 0;

function argumentAlloc(sizeBytes: usize, align: usize): usize {
  let ptr = (argumentTop + align - 1) & ~(align - 1);
  if (ptr + sizeBytes > argumentEnd) {
    const chunkBytes = sizeBytes + align > ARGUMENT_CHUNK_BYTES ? sizeBytes + align : ARGUMENT_CHUNK_BYTES;
    const chunk = heap.alloc(chunkBytes);
    argumentChunks.push(chunk);
    argumentEnd = chunk + chunkBytes;
    ptr = (chunk + align - 1) & ~(align - 1);
  }
  argumentTop = ptr + sizeBytes;
  argumentBytesThisCall += sizeBytes;
  return ptr;
}

/// Called at the end of every export: the arguments have been lifted into managed objects.
/// Keeps one chunk, sized to what this call needed, so steady-state calls allocate nothing.
export function resetArgumentArena(): void {
  const n = argumentChunks.length;
  if (n == 0) return;
  if (n > 1) {
    for (let i = 0; i < n; i++) heap.free(unchecked(argumentChunks[i]));
    argumentChunks.length = 0;
    const chunkBytes = argumentBytesThisCall * 2 > ARGUMENT_CHUNK_BYTES ? argumentBytesThisCall * 2 : ARGUMENT_CHUNK_BYTES;
    const chunk = heap.alloc(chunkBytes);
    argumentChunks.push(chunk);
    argumentEnd = chunk + chunkBytes;
  }
  argumentTop = unchecked(argumentChunks[0]);
  argumentBytesThisCall = 0;
}

export function cabiRealloc(oldPtr: usize, oldSizeBytes: usize, align: usize, newSizeBytes: usize): usize {
  assert(align <= 16 && popcnt(align) == 1, "cabi_realloc: bad alignment");
  if (newSizeBytes == 0) return EMPTY_SENTINEL;
  const ptr = argumentAlloc(newSizeBytes, align);
  if (oldPtr != 0 && oldPtr != EMPTY_SENTINEL && oldSizeBytes > 0) {
    memory.copy(ptr, oldPtr, oldSizeBytes < newSizeBytes ? oldSizeBytes : newSizeBytes);
  }
  return ptr;
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
  return String.UTF16.decodeUnsafe(ptr, sizeBytes);
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
