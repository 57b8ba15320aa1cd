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

/** Free level slots a book's storage gets past its levels when it is (re)allocated, shared by its two sides. */
const HEADROOM = 4;

/** The storage of a book that has none yet: never written, as it has no free slot. */
const NONE: number[] = [];

/**
 * The levels of a book's two sides in one number array of `[price, size]` pairs, ascending by
 * price through the whole array: the bids in the first `nb` pairs (the best, highest, last), the
 * asks in the last `na` (the best, lowest, first), the free pairs between them. Sorted pairs with
 * a binary search were chosen over an array indexed by tick after bench/book.bench.ts: books hold
 * tens of levels, so a search plus a short shift beats a 10,001-slot ladder on memory at 100k
 * books. One array per book, both bests facing the free slots: most changes land near the top of
 * a side, and an insert or delete shifts only the levels better than it. The array never changes
 * length between snapshots unless it is full (then it moves to one with HEADROOM free pairs):
 * levels are shifted in place, since `splice` makes V8 left-trim or regrow the store.
 */
export class BookLevels {
  private lv: number[] = NONE;
  private nb = 0;
  private na = 0;
  /** Bumped on every write to the bids (`gb`) or the asks (`ga`): a reader's copy of a side stands while its count does. */
  private gb = 0;
  private ga = 0;

  /** The write count of a side (see `gb`). */
  gen(bid: boolean): number {
    return bid ? this.gb : this.ga;
  }

  /** Number of levels of the bids (`bid`) or the asks. */
  count(bid: boolean): number {
    return bid ? this.nb : this.na;
  }

  /** Price of level `i` of a side (best is 0); `i` must be below its count. */
  priceAt(bid: boolean, i: number): number {
    return this.lv[bid ? 2 * (this.nb - 1 - i) : this.lv.length - 2 * (this.na - i)]!;
  }

  /** Size of level `i` of a side (best is 0); `i` must be below its count. */
  sizeAt(bid: boolean, i: number): number {
    return this.lv[bid ? 2 * (this.nb - 1 - i) + 1 : this.lv.length - 2 * (this.na - i) + 1]!;
  }

  /** Size at `price` on a side, 0 when absent. */
  sizeOf(bid: boolean, price: number): number {
    const lo = bid ? 0 : (this.lv.length >> 1) - this.na;
    const hi = bid ? this.nb : this.lv.length >> 1;
    const k = this.find(lo, hi, price);
    return k < hi && this.lv[2 * k] === price ? this.lv[2 * k + 1]! : 0;
  }

  /** Sets the absolute size at `price` on a side; 0 deletes. */
  put(bid: boolean, price: number, size: number): void {
    if (bid) {
      this.gb++;
      this.putBid(price, size);
    } else {
      this.ga++;
      this.putAsk(price, size);
    }
  }

  /** Removes every level of a side (the room stays: the next snapshot refits it). */
  drop(bid: boolean): void {
    if (bid) {
      this.gb++;
      this.nb = 0;
    } else {
      this.ga++;
      this.na = 0;
    }
  }

  /**
   * Replaces both sides with `bids` and `asks` (best first; levels of size 0 skipped), in an array
   * with room for exactly their levels plus `headroom` free ones unless the current one has that
   * room already (no array at all for no levels). Levels not strictly sorted best first (or
   * repeated) go in one by one, the last size of a price winning.
   */
  fill(bids: readonly (readonly [number, number])[], asks: readonly (readonly [number, number])[], headroom = HEADROOM): void {
    const nb = positive(bids);
    const na = positive(asks);
    const pairs = nb + na === 0 ? 0 : nb + na + headroom;
    if (2 * pairs !== this.lv.length) this.lv = pairs === 0 ? NONE : new Array<number>(2 * pairs);
    this.nb = 0;
    this.na = 0;
    this.gb++;
    this.ga++;
    this.fillSide(true, bids, nb);
    this.fillSide(false, asks, na);
  }

  private fillSide(bid: boolean, levels: readonly (readonly [number, number])[], n: number): void {
    const lv = this.lv;
    // Slot of the best level and the step to the next worse one.
    let at = bid ? 2 * (n - 1) : lv.length - 2 * n;
    const step = bid ? -2 : 2;
    let last = bid ? Infinity : -Infinity;
    for (let i = 0; i < levels.length; i++) {
      const [p, s] = levels[i]!;
      if (!(s > 0)) continue;
      if (bid ? p >= last : p <= last) {
        this.drop(bid);
        for (const [q, z] of levels) if (z > 0) this.put(bid, q, z);
        return;
      }
      last = p;
      lv[at] = p;
      lv[at + 1] = s;
      at += step;
      if (bid) this.nb++;
      else this.na++;
    }
  }

  private putBid(price: number, size: number): void {
    const n = this.nb;
    let lv = this.lv;
    const k = this.find(0, n, price);
    if (k < n && lv[2 * k] === price) {
      if (size !== 0) lv[2 * k + 1] = size;
      else {
        for (let s = 2 * k, end = 2 * (n - 1); s < end; s++) lv[s] = lv[s + 2]!;
        this.nb = n - 1;
      }
    } else if (size !== 0) {
      if (n + this.na === lv.length >> 1) lv = this.grow();
      for (let s = 2 * n + 1; s >= 2 * k + 2; s--) lv[s] = lv[s - 2]!;
      lv[2 * k] = price;
      lv[2 * k + 1] = size;
      this.nb = n + 1;
    }
  }

  private putAsk(price: number, size: number): void {
    const n = this.na;
    let lv = this.lv;
    let from = (lv.length >> 1) - n;
    let k = this.find(from, from + n, price);
    if (k < from + n && lv[2 * k] === price) {
      if (size !== 0) lv[2 * k + 1] = size;
      else {
        for (let s = 2 * k + 1, end = 2 * from + 2; s >= end; s--) lv[s] = lv[s - 2]!;
        this.na = n - 1;
      }
    } else if (size !== 0) {
      if (this.nb + n === lv.length >> 1) {
        const before = lv.length >> 1;
        lv = this.grow();
        from += (lv.length >> 1) - before;
        k += (lv.length >> 1) - before;
      }
      // The new level goes just before pair k: the better asks, [from, k), move one pair down.
      for (let s = 2 * from - 2, end = 2 * k - 2; s < end; s++) lv[s] = lv[s + 2]!;
      lv[2 * k - 2] = price;
      lv[2 * k - 1] = size;
      this.na = n + 1;
    }
  }

  /** In pairs [lo, hi) (ascending by price), the first whose price is `price` or above. */
  private find(lo: number, hi: number, price: number): number {
    const lv = this.lv;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (lv[2 * mid]! < price) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Moves both sides to a new array with one more level slot and HEADROOM free; returns it. */
  private grow(): number[] {
    const old = this.lv;
    const lv = new Array<number>(2 * (this.nb + this.na + 1 + HEADROOM));
    for (let s = 0; s < 2 * this.nb; s++) lv[s] = old[s]!;
    for (let s = 1; s <= 2 * this.na; s++) lv[lv.length - s] = old[old.length - s]!;
    this.lv = lv;
    return lv;
  }
}

/**
 * One side of an L2 book, best first: a view of the bids or the asks of a BookLevels (its book's,
 * or one of its own for a side alone).
 */
export class BookSide {
  /**
   * What a writer of this side's text keeps for it (src/ws/booktext.ts: the text as last written and
   * the write count it stands for), on the side so that finding it is a field read, not a lookup.
   */
  text: object | undefined = undefined;

  /** true for bids (descending), false for asks (ascending); a side alone gets storage of its own. */
  constructor(
    readonly descending: boolean,
    private readonly of: BookLevels = new BookLevels(),
  ) {}

  /** Number of levels. */
  get length(): number {
    return this.of.count(this.descending);
  }

  /** Bumped on every change of this side: what was read of it stands while this does. */
  get gen(): number {
    return this.of.gen(this.descending);
  }

  /** Price of the level at `i` (best is 0); `i` must be below `length`. */
  price(i: number): number {
    return this.of.priceAt(this.descending, i);
  }

  /** Size of the level at `i` (best is 0); `i` must be below `length`. */
  size(i: number): number {
    return this.of.sizeAt(this.descending, i);
  }

  /** Sets the absolute size at `price`; 0 deletes. */
  set(price: number, size: number): void {
    this.of.put(this.descending, price, size);
  }

  /** Size at `price`, 0 when absent. */
  get(price: number): number {
    return this.of.sizeOf(this.descending, price);
  }

  /** Removes every level. */
  clear(): void {
    this.of.drop(this.descending);
  }

  best(): number | undefined {
    return this.of.count(this.descending) === 0 ? undefined : this.of.priceAt(this.descending, 0);
  }

  bestSize(): number | undefined {
    return this.of.count(this.descending) === 0 ? undefined : this.of.sizeAt(this.descending, 0);
  }

  /** Levels best first, at most `depth`. */
  levels(depth = Infinity): Level[] {
    const n = Math.min(depth, this.length);
    const out: Level[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = [this.price(i), this.size(i)];
    return out;
  }
}

/**
 * The one book contract (STYLE.md rule 4): absolute L2 levels, size 0 deletes, a snapshot
 * replaces, deltas before the first snapshot are refused, a reset clears until the next snapshot.
 * YES perspective of its instrument: bids are YES bids, asks YES asks. Change it through
 * `snapshot`, `apply` and `reset` only: the BookLevels methods it inherits write without checks.
 */
export class OrderBook extends BookLevels {
  readonly bids = new BookSide(true, this);
  readonly asks = new BookSide(false, this);
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
    super();
  }

  /** Replaces the book. Throws BookIntegrityError (book untouched) on a bad level. */
  snapshot(bids: readonly Level[], asks: readonly Level[], timestamp: number): void {
    for (const l of bids) this.check(l[0], l[1]);
    for (const l of asks) this.check(l[0], l[1]);
    this.fill(bids, asks);
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
      this.put(c[0] === 'bid', c[1], c[2]);
    }
    this.version++;
    this.timestamp = timestamp;
  }

  /** Forgets everything until the next snapshot (disconnect, sequence gap). */
  reset(): void {
    this.drop(true);
    this.drop(false);
    this.ready = false;
    this.version++;
  }

  private check(price: number, size: number): void {
    if (!Number.isInteger(price) || price < 0 || price > PAYOUT) throw new BookIntegrityError(this.instrument, 'price_out_of_range', String(price));
    if (!(size >= 0) || !Number.isFinite(size)) throw new BookIntegrityError(this.instrument, 'negative_size', `${size} at ${price}`);
  }
}

/** Levels with a size above zero (what a snapshot keeps). */
function positive(levels: readonly (readonly [number, number])[]): number {
  let n = 0;
  for (let i = 0; i < levels.length; i++) if (levels[i]![1] > 0) n++;
  return n;
}
