// The simulator's only source of randomness: a seeded sfc32 generator. Each concern draws from
// its own stream, forked by name, so that adding a draw in one place (say, a new fault) does not
// shift the choices made everywhere else for the same seed.

/** 32-bit FNV-1a of a string, used to derive stream seeds from names. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /** `seed` is any integer (taken modulo 2^32); `stream` names an independent sequence. */
  constructor(readonly seed: number, readonly stream = "") {
    this.a = seed >>> 0;
    this.b = fnv1a(stream);
    this.c = 0x9e3779b9;
    this.d = 1;
    for (let i = 0; i < 16; i++) this.nextU32(); // mix the seed in before the first draw
  }

  /** A new generator for `name`, independent of this one's draws so far. */
  fork(name: string): Prng {
    return new Prng(this.seed, this.stream ? `${this.stream}/${name}` : name);
  }

  nextU32(): number {
    // sfc32 (Chris Doty-Humphrey's small fast counting generator).
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** Uniform in [0, 1). */
  float(): number {
    return this.nextU32() / 4294967296;
  }

  /** Uniform integer in [low, high]. */
  int(low: number, high: number): number {
    return low + Math.floor(this.float() * (high - low + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return p > 0 && this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)];
  }

  /** A copy of `items` in an order drawn from this stream (Fisher-Yates). */
  shuffled<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [out[i], out[j]] = [out[j], out[i]];
    }
    return out;
  }

  /** 64 lowercase hex digits, like a containerd ID. */
  hexId(): string {
    let out = "";
    for (let i = 0; i < 8; i++) out += this.nextU32().toString(16).padStart(8, "0");
    return out;
  }
}
