/**
 * A small seeded PRNG (mulberry32): the simulator must produce the same world, ids and walk for
 * the same seed, so that a restart lines up with what was persisted and tests are repeatable.
 */
const HEX = '0123456789abcdef';

export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0 || 0x9e3779b9;
  }
  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  /** Approximately normal(0, 1) (sum of uniforms; cheap and bounded). */
  normal(): number {
    return this.next() + this.next() + this.next() + this.next() - 2;
  }
  /** `n` lowercase hex digits, as one flat string (a `+=` loop leaves a rope of `n` nodes in V8). */
  hex(n: number): string {
    const c = new Array<number>(n);
    for (let i = 0; i < n; i++) c[i] = HEX.charCodeAt(Math.floor(this.next() * 16));
    return String.fromCharCode(...c);
  }
  /** `n` decimal digits without a leading zero, as one flat string. */
  digits(n: number): string {
    const c = new Array<number>(n);
    c[0] = 48 + this.int(1, 9);
    for (let i = 1; i < n; i++) c[i] = 48 + this.int(0, 9);
    return String.fromCharCode(...c);
  }
  /** Fisher-Yates shuffle of a copy. */
  shuffle<T>(xs: readonly T[]): T[] {
    const a = xs.slice();
    for (let i = a.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [a[i], a[j]] = [a[j]!, a[i]!];
    }
    return a;
  }
}

/**
 * `n` digits determined by `key` alone (FNV-1a of the key seeds an Rng): an id that several
 * listings derive alike, such as the venue market both teams' outcomes of a game belong to.
 */
export function digitsOf(key: string, n: number): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return new Rng(h >>> 0).digits(n);
}
