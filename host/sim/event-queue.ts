// The simulator's agenda: events ordered by virtual time, then by the order they were scheduled,
// so that two events at the same millisecond always run in the same order.

export interface SimEvent {
  atMs: number;
  seq: number;
  run: () => void | Promise<void>;
  /** Shown in traces and failure reports. */
  label: string;
}

export class EventQueue {
  private heap: SimEvent[] = [];
  private nextSeq = 0;

  push(atMs: number, label: string, run: SimEvent["run"]): SimEvent {
    const event = { atMs, seq: this.nextSeq++, run, label };
    const heap = this.heap;
    heap.push(event);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i], heap[parent])) break;
      [heap[i], heap[parent]] = [heap[parent], heap[i]];
      i = parent;
    }
    return event;
  }

  peekMs(): number | undefined {
    return this.heap[0]?.atMs;
  }

  pop(): SimEvent | undefined {
    const heap = this.heap;
    if (heap.length === 0) return undefined;
    const top = heap[0];
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && before(heap[l], heap[m])) m = l;
        if (r < heap.length && before(heap[r], heap[m])) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m], heap[i]];
        i = m;
      }
    }
    return top;
  }

  /** Moves every pending event `deltaMs` later (the node was suspended). */
  shift(deltaMs: number): void {
    for (const e of this.heap) e.atMs += deltaMs; // order is unchanged, so the heap stays valid
  }
}

function before(a: SimEvent, b: SimEvent): boolean {
  return a.atMs < b.atMs || (a.atMs === b.atMs && a.seq < b.seq);
}
