import type { BookSideName, Level } from './types.js';
import { PAYOUT } from './price.js';

/** A book update that would make the book wrong; the book is left unchanged and must resync. */
export class BookIntegrityError extends Error {
  constructor(
    readonly instrument: string,
    readonly reason: 'price_out_of_range' | 'negative_size' | 'not_ready' | 'crossed',
    detail: string,
  ) {
    super(`book ${instrument}: ${reason} (${detail})`);
    this.name = 'BookIntegrityError';
  }
}

/** Free slots a side's arrays get past its levels when they are (re)allocated. */
const HEADROOM = 4;

/**
 * An array of `src`'s first `n` values (n > 0) with room for `cap`: V8 keeps the store of
 * `new Array(cap)` when the length drops to n, unless n is 0 or under half of it.
 */
function sized(src: readonly number[], n: number, cap: number): number[] {
  const a = new Array<number>(cap);
  for (let i = 0; i < n; i++) a[i] = src[i]!;
  a.length = n;
  return a;
}

/**
 * One side of an L2 book: parallel sorted arrays of prices (integer units) and sizes, best first.
 * Chosen over an array indexed by tick after bench/book.bench.ts: books hold tens of levels, so a
 * binary search plus a short splice beats a 10_001-slot ladder on memory (100k books) and keeps
 * "best" at index 0. The side sizes its arrays itself, a few slots past its levels: grown by
 * `push`, V8 would add half again and 16 slots, most of them never used by a book of ten levels.
 */
export class BookSide {
  /** Best first. The side may replace the arrays when it grows: read them through the side. */
  prices: number[] = [];
  sizes: number[] = [];
  /** Slots this side allocated in `prices` and `sizes`; 0 while V8 sized them (empty, or grown by a first push). */
  private cap = 0;
  /** true for bids (descending), false for asks (ascending). */
  constructor(readonly descending: boolean) {}

  /** Reallocates the arrays to the levels there are plus HEADROOM (after a snapshot). */
  trim(): void {
    const n = this.prices.length;
    if (n === 0 || this.cap === n + HEADROOM) return;
    this.resize(n + HEADROOM);
  }

  private resize(cap: number): void {
    const n = this.prices.length;
    this.cap = cap;
    this.prices = sized(this.prices, n, cap);
    this.sizes = sized(this.sizes, n, cap);
  }

  get length(): number {
    return this.prices.length;
  }

  /** Index where `price` is or would be inserted. */
  private find(price: number): number {
    const p = this.prices;
    let lo = 0;
    let hi = p.length;
    if (this.descending) {
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (p[mid]! > price) lo = mid + 1;
        else hi = mid;
      }
    } else {
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (p[mid]! < price) lo = mid + 1;
        else hi = mid;
      }
    }
    return lo;
  }

  /**
   * Sets the absolute size at `price`; 0 deletes. Levels are shifted in place and the arrays grow
   * with push and shrink with pop: `splice` at the front (where most changes land) makes V8
   * left-trim the backing store, so the next insert allocates a new one, which the long-lived
   * book keeps alive past a scavenge: at 10,000 changes/s that promoted megabytes a second into
   * the old generation and its mark-compact pauses showed up in the WebSocket p99.
   */
  set(price: number, size: number): void {
    let p = this.prices;
    let z = this.sizes;
    const i = this.find(price);
    const n = p.length;
    if (i < n && p[i] === price) {
      if (size !== 0) {
        z[i] = size;
        return;
      }
      for (let k = i; k < n - 1; k++) {
        p[k] = p[k + 1]!;
        z[k] = z[k + 1]!;
      }
      p.pop();
      z.pop();
      if (n === 1) this.cap = 0; // length 0 released the store
    } else if (size !== 0) {
      if (n > 0 && n >= this.cap) {
        this.resize(n + 1 + HEADROOM);
        p = this.prices;
        z = this.sizes;
      }
      p.push(price);
      z.push(size);
      for (let k = n; k > i; k--) {
        p[k] = p[k - 1]!;
        z[k] = z[k - 1]!;
      }
      p[i] = price;
      z[i] = size;
    }
  }

  /** Size at `price`, 0 when absent. */
  get(price: number): number {
    const i = this.find(price);
    return i < this.prices.length && this.prices[i] === price ? this.sizes[i]! : 0;
  }

  /** Removes every level (the arrays' store is released: length 0 drops it). */
  clear(): void {
    this.prices.length = 0;
    this.sizes.length = 0;
    this.cap = 0;
  }

  best(): number | undefined {
    return this.prices[0];
  }

  bestSize(): number | undefined {
    return this.sizes[0];
  }

  /** Levels best first, at most `depth`. */
  levels(depth = Infinity): Level[] {
    const n = Math.min(depth, this.prices.length);
    const out: Level[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = [this.prices[i]!, this.sizes[i]!];
    return out;
  }
}

/**
 * The one book contract (STYLE.md rule 4): absolute L2 levels, size 0 deletes, a snapshot
 * replaces, deltas before the first snapshot are refused, a reset clears until the next snapshot.
 * YES perspective of its instrument: bids are YES bids, asks YES asks.
 */
export class OrderBook {
  readonly bids = new BookSide(true);
  readonly asks = new BookSide(false);
  /** false until the first snapshot, and again after reset(). */
  ready = false;
  /** Bumped on every applied change, so consumers can cache what they derive from the book. */
  version = 0;
  /** Venue time of the last applied change, ms. */
  timestamp = 0;
  /**
   * Which side of its market this book is: the YES book, or the NO book read as its complement.
   * The state's BookStore keeps it from the catalog's instruments, so the hot path reads it here.
   */
  role: 'yes' | 'no' = 'yes';

  constructor(readonly instrument: string) {}

  /** Replaces the book. Throws BookIntegrityError (book untouched) on a bad level. */
  snapshot(bids: readonly Level[], asks: readonly Level[], timestamp: number): void {
    for (const l of bids) this.check(l[0], l[1]);
    for (const l of asks) this.check(l[0], l[1]);
    this.bids.clear();
    this.asks.clear();
    for (const [p, s] of bids) if (s > 0) this.bids.set(p, s);
    for (const [p, s] of asks) if (s > 0) this.asks.set(p, s);
    this.bids.trim();
    this.asks.trim();
    this.ready = true;
    this.version++;
    this.timestamp = timestamp;
  }

  /**
   * Applies absolute changes. All-or-nothing: every change is checked before any is applied.
   * Throws BookIntegrityError when the book is not ready or a change is invalid.
   */
  apply(changes: readonly (readonly [BookSideName, number, number])[], timestamp: number): void {
    if (!this.ready) throw new BookIntegrityError(this.instrument, 'not_ready', 'delta before snapshot');
    for (let i = 0; i < changes.length; i++) this.check(changes[i]![1], changes[i]![2]);
    for (let i = 0; i < changes.length; i++) {
      const c = changes[i]!;
      (c[0] === 'bid' ? this.bids : this.asks).set(c[1], c[2]);
    }
    this.version++;
    this.timestamp = timestamp;
  }

  /** Forgets everything until the next snapshot (disconnect, sequence gap). */
  reset(): void {
    this.bids.clear();
    this.asks.clear();
    this.ready = false;
    this.version++;
  }

  private check(price: number, size: number): void {
    if (!Number.isInteger(price) || price < 0 || price > PAYOUT) throw new BookIntegrityError(this.instrument, 'price_out_of_range', String(price));
    if (!(size >= 0) || !Number.isFinite(size)) throw new BookIntegrityError(this.instrument, 'negative_size', `${size} at ${price}`);
  }
}
