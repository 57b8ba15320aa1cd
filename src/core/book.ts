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

/** Free level slots a side gets past its levels when its storage is (re)allocated. */
const HEADROOM = 4;

/** The storage of a side that has none yet: never written, as its room is 0. */
const NONE: number[] = [];

/**
 * One side of an L2 book: its levels sorted best first, as `[price, size]` pairs in one number
 * array that an OrderBook's two sides share (bids' slots first, then asks'). Sorted pairs with a
 * binary search were chosen over an array indexed by tick after bench/book.bench.ts: books hold
 * tens of levels, so a search plus a short shift beats a 10,001-slot ladder on memory at 100k
 * books and keeps "best" at index 0. One array per book rather than a price and a size array per
 * side: one array object and store header per book instead of four, at 100k+ books. The array is
 * sized by the side, a few slots past its levels, and never changes length: levels are shifted in
 * place, since `splice` at the front (where most changes land) makes V8 left-trim the store and
 * the next insert allocate a new one, promoted megabytes a second into the old generation.
 */
export class BookSide {
  /** The pairs, shared with `peer`: this side's run from `off`, `cap` levels long. */
  private lv: number[] = NONE;
  private off = 0;
  private n = 0;
  private cap = 0;
  /** The other side of the same book, whose slots share `lv`; undefined for a side alone. */
  private peer: BookSide | undefined = undefined;

  /** true for bids (descending), false for asks (ascending). */
  constructor(readonly descending: boolean) {}

  /** Makes `bids` and `asks` share one storage array, bids' run first. */
  static pair(bids: BookSide, asks: BookSide): void {
    bids.peer = asks;
    asks.peer = bids;
  }

  /** Number of levels. */
  get length(): number {
    return this.n;
  }

  /** Price of the level at `i` (best is 0); `i` must be below `length`. */
  price(i: number): number {
    return this.lv[this.off + 2 * i]!;
  }

  /** Size of the level at `i` (best is 0); `i` must be below `length`. */
  size(i: number): number {
    return this.lv[this.off + 2 * i + 1]!;
  }

  /**
   * Gives this side room for exactly `levels` + HEADROOM levels, keeping its peer's room (and
   * levels), unless it has that room already. A snapshot calls it before filling the side.
   */
  reserve(levels: number): void {
    const cap = levels === 0 ? 0 : levels + HEADROOM;
    if (cap !== this.cap) BookSide.relocate(this, cap, this.peer?.cap ?? 0);
  }

  /** Index of the level where `price` is or would be inserted. */
  private find(price: number): number {
    const p = this.lv;
    const o = this.off;
    let lo = 0;
    let hi = this.n;
    if (this.descending) {
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (p[o + 2 * mid]! > price) lo = mid + 1;
        else hi = mid;
      }
    } else {
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (p[o + 2 * mid]! < price) lo = mid + 1;
        else hi = mid;
      }
    }
    return lo;
  }

  /** Sets the absolute size at `price`; 0 deletes. */
  set(price: number, size: number): void {
    const i = this.find(price);
    const n = this.n;
    let p = this.lv;
    let at = this.off + 2 * i;
    if (i < n && p[at] === price) {
      if (size !== 0) {
        p[at + 1] = size;
        return;
      }
      for (const end = this.off + 2 * (n - 1); at < end; at += 2) {
        p[at] = p[at + 2]!;
        p[at + 1] = p[at + 3]!;
      }
      this.n = n - 1;
    } else if (size !== 0) {
      if (n >= this.cap) {
        BookSide.relocate(this, n + 1 + HEADROOM, this.peer?.cap ?? 0);
        p = this.lv;
        at = this.off + 2 * i;
      }
      for (let k = this.off + 2 * n; k > at; k -= 2) {
        p[k] = p[k - 2]!;
        p[k + 1] = p[k - 1]!;
      }
      p[at] = price;
      p[at + 1] = size;
      this.n = n + 1;
    }
  }

  /** Size at `price`, 0 when absent. */
  get(price: number): number {
    const i = this.find(price);
    const at = this.off + 2 * i;
    return i < this.n && this.lv[at] === price ? this.lv[at + 1]! : 0;
  }

  /** Removes every level (the room stays: the next snapshot refits it). */
  clear(): void {
    this.n = 0;
  }

  best(): number | undefined {
    return this.n === 0 ? undefined : this.lv[this.off];
  }

  bestSize(): number | undefined {
    return this.n === 0 ? undefined : this.lv[this.off + 1];
  }

  /** Levels best first, at most `depth`. */
  levels(depth = Infinity): Level[] {
    const n = Math.min(depth, this.n);
    const out: Level[] = new Array(n);
    for (let i = 0, at = this.off; i < n; i++, at += 2) out[i] = [this.lv[at]!, this.lv[at + 1]!];
    return out;
  }

  /**
   * Gives `bids` and `asks` (a pair) room for exactly their level counts plus HEADROOM each, in
   * one new array, unless they have that room already. A snapshot calls it after clearing both.
   */
  static fit(bids: BookSide, asks: BookSide, nb: number, na: number): void {
    const cb = nb === 0 ? 0 : nb + HEADROOM;
    const ca = na === 0 ? 0 : na + HEADROOM;
    if (cb !== bids.cap || ca !== asks.cap) BookSide.relocate(bids, cb, ca);
  }

  /**
   * Moves `side` (room for `cap` levels) and its peer (room for `peerCap`) to a new array, bids'
   * run first, keeping their levels; no array at all when neither has room.
   */
  private static relocate(side: BookSide, cap: number, peerCap: number): void {
    const other = side.peer;
    const [first, c1, second, c2] = other !== undefined && !side.descending ? [other, peerCap, side, cap] : [side, cap, other, peerCap];
    const lv = c1 + c2 === 0 ? NONE : new Array<number>(2 * (c1 + c2));
    first.moveTo(lv, 0, c1);
    second?.moveTo(lv, 2 * c1, c2);
  }

  /** Copies this side's levels (at most `cap`) to `lv` from `off`, and makes that its storage. */
  private moveTo(lv: number[], off: number, cap: number): void {
    const n = Math.min(this.n, cap);
    for (let k = 0; k < 2 * n; k++) lv[off + k] = this.lv[this.off + k]!;
    this.lv = lv;
    this.off = off;
    this.cap = cap;
    this.n = n;
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

  constructor(readonly instrument: string) {
    BookSide.pair(this.bids, this.asks);
  }

  /** Replaces the book. Throws BookIntegrityError (book untouched) on a bad level. */
  snapshot(bids: readonly Level[], asks: readonly Level[], timestamp: number): void {
    for (const l of bids) this.check(l[0], l[1]);
    for (const l of asks) this.check(l[0], l[1]);
    this.bids.clear();
    this.asks.clear();
    BookSide.fit(this.bids, this.asks, positive(bids), positive(asks));
    for (const [p, s] of bids) if (s > 0) this.bids.set(p, s);
    for (const [p, s] of asks) if (s > 0) this.asks.set(p, s);
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

/** Levels with a size above zero (what a snapshot keeps). */
function positive(levels: readonly Level[]): number {
  let n = 0;
  for (let i = 0; i < levels.length; i++) if (levels[i]![1] > 0) n++;
  return n;
}
