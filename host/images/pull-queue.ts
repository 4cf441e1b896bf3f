// Image pulls one at a time (serializeImagePulls, upstream's default: a slow uplink is not split
// between layers of different images) or up to a limit (maxParallelImagePulls). Pulls wait in
// arrival order; waiting is counted in the Pulled event's "including waiting".

export class PullQueue {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  /** Runs `pull` once fewer than `limit` pulls run. */
  async run<T>(pull: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    try {
      return await pull();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  /** Pulls running and waiting now. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }
}
