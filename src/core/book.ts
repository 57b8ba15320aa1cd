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

/**
 * Free level slots a book's storage gets past its levels when it is (re)allocated, shared by its
 * two sides. Two, where a `number[]` per book had four: a move to a larger slot is now a free-list
 * pop and a copy of the levels, no allocation (bench/scale/book-levels.mjs: 21 bytes a book less,
 * and no slower per delta).
 */
const HEADROOM = 2;

/** Slots smaller than this many pairs go on a free list by size when a book gives them back. */
const FREE_CLASSES = 64;

/** The arrays of a pool that has handed out nothing yet (never written: they have no room). */
const NO_PRICES = new Uint16Array(0);
const NO_SIZES = new Float64Array(0);

/**
 * The level storage of many books (a BookStore's, a Kalshi mapper's): the prices of every book's
 * levels in one `Uint16Array` (integer units, 0..PAYOUT = 10,000: OrderBook checks them, the Kalshi
 * mapper parses them in range) and their sizes in one `Float64Array` (exact), a book's levels in a
 * slot of pairs `[off, off + cap)`. 10 bytes a level and no array per book, where a `number[]` of
 * pairs per book took 16 bytes a level and 48 of array headers (BENCHMARKS.md issue 34 `book20`).
 *
 * A book that outgrows its slot moves to a new one at the top; the old slot goes on a free list
 * by size (below FREE_CLASSES pairs, where nearly every book is), else it is a hole. When the top
 * reaches the end of the arrays, every book's levels are copied into new arrays that hold the
 * slots in use and a quarter more (holes and free lists dropped), so the arrays hold at most
 * 1.25× the most pairs ever in use, plus 8. The pool holds its books (a repack moves them): a
 * book its holder forgets must be `release`d first, and a holder that forgets all of its books
 * forgets their pool with them (the Kalshi mapper's reset).
 */
export class LevelPool {
  /** Prices and sizes by pair; new arrays after a repack (a book reads them again after a write that can move it). */
  p: Uint16Array = NO_PRICES;
  s: Float64Array = NO_SIZES;
  /** Pairs below `top` were handed out since the last repack; `used`: pairs in books' slots now. */
  top = 0;
  used = 0;
  /** Books with a slot, or with an empty one until the next repack lets them go. */
  readonly owners: BookLevels[] = [];
  /** Given-back slots by size in pairs: their first pairs. */
  readonly free: (number[] | undefined)[] = [];
  /** Repacks so far (for tests and benches). */
  repacks = 0;
}

/**
 * The levels of a book's two sides, in a slot of its LevelPool's arrays, ascending by price
 * through the whole slot: the bids in the first `nb` pairs (the best, highest, last), the asks in
 * the last `na` (the best, lowest, first), the free pairs between them. Sorted pairs with a binary
 * search were chosen over an array indexed by tick after bench/book.bench.ts: books hold tens of
 * levels, so a search plus a short shift beats a 10,001-slot ladder on memory at 100k books. Both
 * sides share one slot with their bests facing the free pairs: most changes land near the top of a
 * side, and an insert or delete shifts only the levels better than it. A slot keeps its size
 * between snapshots unless it is full (then the book moves to one with HEADROOM free pairs).
 */
export class BookLevels {
  /** First pair of the slot (-1: not among the pool's owners) and its pairs (0: no slot). */
  private off = -1;
  private cap = 0;
  private nb = 0;
  private na = 0;

  /** `pool`: where the levels live; a book alone gets a pool of its own. */
  constructor(protected readonly pool: LevelPool = new LevelPool()) {}

  /** Number of levels of the bids (`bid`) or the asks. */
  count(bid: boolean): number {
    return bid ? this.nb : this.na;
  }

  /** Price of level `i` of a side (best is 0); `i` must be below its count. */
  priceAt(bid: boolean, i: number): number {
    return this.pool.p[bid ? this.off + this.nb - 1 - i : this.off + this.cap - this.na + i]!;
  }

  /** Size of level `i` of a side (best is 0); `i` must be below its count. */
  sizeAt(bid: boolean, i: number): number {
    return this.pool.s[bid ? this.off + this.nb - 1 - i : this.off + this.cap - this.na + i]!;
  }

  /** Best price of a side, undefined when it is empty. */
  best(bid: boolean): number | undefined {
    return (bid ? this.nb : this.na) === 0 ? undefined : this.priceAt(bid, 0);
  }

  /** Size at the best price of a side, undefined when it is empty. */
  bestSize(bid: boolean): number | undefined {
    return (bid ? this.nb : this.na) === 0 ? undefined : this.sizeAt(bid, 0);
  }

  /** A side's levels best first, at most `depth`, each price complemented (100 − p) when `complement`. */
  levelsOf(bid: boolean, depth = Infinity, complement = false): Level[] {
    const n = Math.min(depth, bid ? this.nb : this.na);
    const out: Level[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const p = this.priceAt(bid, i);
      out[i] = [complement ? PAYOUT - p : p, this.sizeAt(bid, i)];
    }
    return out;
  }

  /** Size at `price` on a side, 0 when absent. */
  sizeOf(bid: boolean, price: number): number {
    const p = this.pool.p;
    const hi = bid ? this.off + this.nb : this.off + this.cap;
    const k = find(p, bid ? this.off : hi - this.na, hi, price);
    return k < hi && p[k] === price ? this.pool.s[k]! : 0;
  }

  /** Sets the absolute size at `price` on a side; 0 deletes. */
  put(bid: boolean, price: number, size: number): void {
    if (bid) this.putBid(price, size);
    else this.putAsk(price, size);
  }

  /** Removes every level of a side (the slot stays: the next snapshot refits it). */
  drop(bid: boolean): void {
    if (bid) this.nb = 0;
    else this.na = 0;
  }

  /** Removes every level and gives the slot back to the pool: what a holder does before it forgets the book. */
  release(): void {
    this.fill([], []);
  }

  /**
   * Replaces both sides with `bids` and `asks` (best first; levels of size 0 skipped), in a slot
   * of exactly their levels plus `headroom` free ones (the slot shrunk in place or moved to a
   * larger one; none at all for no levels). Levels not strictly sorted best first (or repeated)
   * go in one by one, the last size of a price winning.
   */
  fill(bids: readonly (readonly [number, number])[], asks: readonly (readonly [number, number])[], headroom = HEADROOM): void {
    const nb = positive(bids);
    const na = positive(asks);
    const pairs = nb + na === 0 ? 0 : nb + na + headroom;
    this.nb = 0;
    this.na = 0;
    if (pairs > this.cap) {
      const at = this.take(pairs);
      this.give(this.off, this.cap);
      this.off = at;
      this.cap = pairs;
    } else if (pairs < this.cap) {
      this.give(this.off + pairs, this.cap - pairs);
      this.cap = pairs;
    }
    this.fillSide(true, bids, nb);
    this.fillSide(false, asks, na);
  }

  private fillSide(bid: boolean, levels: readonly (readonly [number, number])[], n: number): void {
    const p = this.pool.p;
    const z = this.pool.s;
    // Pair of the best level and the step to the next worse one.
    let at = bid ? this.off + n - 1 : this.off + this.cap - n;
    const step = bid ? -1 : 1;
    let last = bid ? Infinity : -Infinity;
    for (let i = 0; i < levels.length; i++) {
      const [q, s] = levels[i]!;
      if (!(s > 0)) continue;
      if (bid ? q >= last : q <= last) {
        this.drop(bid);
        for (const [r, y] of levels) if (y > 0) this.put(bid, r, y);
        return;
      }
      last = q;
      p[at] = q;
      z[at] = s;
      at += step;
      if (bid) this.nb++;
      else this.na++;
    }
  }

  private putBid(price: number, size: number): void {
    const pool = this.pool;
    const n = this.nb;
    let o = this.off;
    let p = pool.p;
    let k = find(p, o, o + n, price);
    if (k < o + n && p[k] === price) {
      const z = pool.s;
      if (size !== 0) z[k] = size;
      else {
        for (const end = o + n - 1; k < end; k++) {
          p[k] = p[k + 1]!;
          z[k] = z[k + 1]!;
        }
        this.nb = n - 1;
      }
    } else if (size !== 0) {
      if (n + this.na === this.cap) {
        k -= o;
        this.grow();
        o = this.off;
        k += o;
        p = pool.p;
      }
      const z = pool.s;
      for (let j = o + n; j > k; j--) {
        p[j] = p[j - 1]!;
        z[j] = z[j - 1]!;
      }
      p[k] = price;
      z[k] = size;
      this.nb = n + 1;
    }
  }

  private putAsk(price: number, size: number): void {
    const pool = this.pool;
    const n = this.na;
    let end = this.off + this.cap;
    let p = pool.p;
    let k = find(p, end - n, end, price);
    if (k < end && p[k] === price) {
      const z = pool.s;
      if (size !== 0) z[k] = size;
      else {
        // The better asks, [end - n, k), move one pair up over it.
        for (const from = end - n; k > from; k--) {
          p[k] = p[k - 1]!;
          z[k] = z[k - 1]!;
        }
        this.na = n - 1;
      }
    } else if (size !== 0) {
      if (this.nb + n === this.cap) {
        k -= end;
        this.grow();
        end = this.off + this.cap;
        k += end;
        p = pool.p;
      }
      // The new level goes just before pair k: the better asks, [end - n, k), move one pair down.
      const z = pool.s;
      for (let j = end - n - 1; j < k - 1; j++) {
        p[j] = p[j + 1]!;
        z[j] = z[j + 1]!;
      }
      p[k - 1] = price;
      z[k - 1] = size;
      this.na = n + 1;
    }
  }

  /** Moves both sides to a new slot with one more pair and HEADROOM free. */
  private grow(): void {
    const cap = this.nb + this.na + 1 + HEADROOM;
    const at = this.take(cap); // may repack, which moves this book's levels (off) too
    const p = this.pool.p;
    const z = this.pool.s;
    const o = this.off;
    for (let i = 0; i < this.nb; i++) {
      p[at + i] = p[o + i]!;
      z[at + i] = z[o + i]!;
    }
    for (let i = 1; i <= this.na; i++) {
      p[at + cap - i] = p[o + this.cap - i]!;
      z[at + cap - i] = z[o + this.cap - i]!;
    }
    this.give(o, this.cap);
    this.off = at;
    this.cap = cap;
  }

  /** A free slot of `cap` pairs for this book (which becomes one of the pool's owners): its first pair. */
  private take(cap: number): number {
    const pool = this.pool;
    const f = cap < FREE_CLASSES ? pool.free[cap] : undefined;
    let at: number;
    if (f !== undefined && f.length > 0) at = f.pop()!;
    else {
      if (pool.top + cap > pool.p.length) BookLevels.repack(pool, cap);
      at = pool.top;
      pool.top += cap;
    }
    if (this.off < 0) {
      pool.owners.push(this);
      this.off = at; // a slot of 0 pairs there until the caller sets it
    }
    pool.used += cap;
    return at;
  }

  /** Gives the slot of `cap` pairs at `at` back to the pool. */
  private give(at: number, cap: number): void {
    if (cap === 0) return;
    const pool = this.pool;
    pool.used -= cap;
    if (cap < FREE_CLASSES) (pool.free[cap] ??= []).push(at);
  }

  /**
   * Copies every book's levels into new arrays with room for the slots in use, `need` pairs more
   * and a quarter of both free; books with no slot leave the owners.
   */
  private static repack(pool: LevelPool, need: number): void {
    const pairs = pool.used + need;
    const p = new Uint16Array(pairs + (pairs >> 2) + 8);
    const z = new Float64Array(p.length);
    const op = pool.p;
    const oz = pool.s;
    const owners = pool.owners;
    let top = 0;
    let kept = 0;
    for (let i = 0; i < owners.length; i++) {
      const b = owners[i]!;
      if (b.cap === 0) {
        b.off = -1;
        continue;
      }
      owners[kept++] = b;
      const o = b.off;
      for (let j = 0; j < b.nb; j++) {
        p[top + j] = op[o + j]!;
        z[top + j] = oz[o + j]!;
      }
      for (let j = 1; j <= b.na; j++) {
        p[top + b.cap - j] = op[o + b.cap - j]!;
        z[top + b.cap - j] = oz[o + b.cap - j]!;
      }
      b.off = top;
      top += b.cap;
    }
    owners.length = kept;
    pool.free.length = 0;
    pool.p = p;
    pool.s = z;
    pool.top = top;
    pool.repacks++;
  }
}

/** In pairs [lo, hi) of `p` (ascending), the first whose price is `price` or above. */
function find(p: Uint16Array, lo: number, hi: number, price: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (p[mid]! < price) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * One side of an L2 book, best first: a view of the bids or the asks of a BookLevels (its book's,
 * or one of its own for a side alone). A book keeps no views: `OrderBook.bids` and `.asks` make one
 * per read (two views a book were 104 B of its 470, BENCHMARKS.md issue 34 `side21`), for the
 * readers that are not on a hot path; those read the book with a side argument (`priceAt(bid, i)`).
 */
export class BookSide {
  /** true for bids (descending), false for asks (ascending); a side alone gets storage of its own. */
  constructor(
    readonly descending: boolean,
    /** The levels it is a view of. */
    readonly of: BookLevels = new BookLevels(),
  ) {}

  /** Number of levels. */
  get length(): number {
    return this.of.count(this.descending);
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
    return this.of.best(this.descending);
  }

  bestSize(): number | undefined {
    return this.of.bestSize(this.descending);
  }

  /** Levels best first, at most `depth`. */
  levels(depth = Infinity): Level[] {
    return this.of.levelsOf(this.descending, depth);
  }
}

/**
 * The one book contract (STYLE.md rule 4): absolute L2 levels, size 0 deletes, a snapshot
 * replaces, deltas before the first snapshot are refused, a reset clears until the next snapshot.
 * YES perspective of its instrument: bids are YES bids, asks YES asks. Change it through
 * `snapshot`, `apply` and `reset` only: the BookLevels methods it inherits write without checks.
 */
export class OrderBook extends BookLevels {
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
  /** `pool`: where its levels live (a BookStore's); a book alone gets a pool of its own. */
  constructor(
    readonly instrument: string,
    pool?: LevelPool,
  ) {
    super(pool);
  }

  /** The bids, best (highest) first: a view made per read (hold it for a loop; the hot paths read the book itself). */
  get bids(): BookSide {
    return new BookSide(true, this);
  }

  /** The asks, best (lowest) first: a view made per read. */
  get asks(): BookSide {
    return new BookSide(false, this);
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
