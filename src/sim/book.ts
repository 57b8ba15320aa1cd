import type { BookSideName, Level } from '../core/types.js';

/** Books per chunk of the pool. */
const CHUNK = 4096;

/**
 * The simulator's books (SYNTHETIC DATA): every listing's levels in Int32Array chunks, a fixed slot
 * per listing, and its time of last change in Float64Array chunks. The world keeps a book per
 * listing for its whole life, up to a million listings, and an OrderBook (four growable arrays)
 * costs about four times a slot; chunks grow the pool without copying it (a doubling array left
 * its old copies to the collector and half its last one unused). The levels the world makes are
 * integer units, at most `depth` a side (it never quotes deeper).
 */
export class SimBookPool {
  /** Per slot: bid count, ask count, bid prices, bid sizes, ask prices, ask sizes (`depth` each). */
  private readonly data: Int32Array[] = [];
  /** Per slot: time of the last change, ms (a number field per book would be a heap box each). */
  private readonly times: Float64Array[] = [];
  readonly stride: number;
  private slots = 0;

  constructor(readonly depth: number) {
    this.stride = 2 + 4 * depth;
  }

  /** How many books were made. */
  get size(): number {
    return this.slots;
  }

  /** A new empty book. */
  book(): SimBook {
    const slot = this.slots++;
    if (slot % CHUNK === 0) {
      this.data.push(new Int32Array(CHUNK * this.stride));
      this.times.push(new Float64Array(CHUNK));
    }
    return new SimBook(this, slot);
  }

  /** The chunk of levels that holds `slot`. */
  levelsOf(slot: number): Int32Array {
    return this.data[Math.floor(slot / CHUNK)]!;
  }

  /** Where `slot` starts in its chunk of levels. */
  baseOf(slot: number): number {
    return (slot % CHUNK) * this.stride;
  }

  /** The time of the last change of `slot`'s book, ms. */
  timeOf(slot: number): number {
    return this.times[Math.floor(slot / CHUNK)]![slot % CHUNK]!;
  }

  setTime(slot: number, ms: number): void {
    this.times[Math.floor(slot / CHUNK)]![slot % CHUNK] = ms;
  }
}

/** A listing's YES-perspective book: the read side of OrderBook that the protocol servers use. */
export class SimBook {
  constructor(
    private readonly pool: SimBookPool,
    /** The book's index in its pool, in the order made (the world keys its per-listing arrays by it). */
    readonly slot: number,
  ) {}

  /** Time of the last change, ms (0 before the first). */
  get timestamp(): number {
    return this.pool.timeOf(this.slot);
  }

  set timestamp(ms: number) {
    this.pool.setTime(this.slot, ms);
  }

  /** YES bids, best (highest) first. A view made per call: hold it for a loop, not across changes. */
  get bids(): SimBookSide {
    return new SimBookSide(this.pool.levelsOf(this.slot), this.pool.baseOf(this.slot), 0, this.pool.depth);
  }

  /** YES asks, best (lowest) first. */
  get asks(): SimBookSide {
    return new SimBookSide(this.pool.levelsOf(this.slot), this.pool.baseOf(this.slot), 1, this.pool.depth);
  }

  /** Replaces the book. */
  snapshot(bids: readonly Level[], asks: readonly Level[], timestamp: number): void {
    const d = this.pool.levelsOf(this.slot);
    const base = this.pool.baseOf(this.slot);
    d[base] = 0;
    d[base + 1] = 0;
    for (const [p, s] of bids) this.bids.set(p, s);
    for (const [p, s] of asks) this.asks.set(p, s);
    this.timestamp = timestamp;
  }

  /** Applies absolute changes (size 0 deletes). */
  apply(changes: readonly (readonly [BookSideName, number, number])[], timestamp: number): void {
    for (const [side, p, s] of changes) (side === 'bid' ? this.bids : this.asks).set(p, s);
    this.timestamp = timestamp;
  }
}

/** One side of a SimBook, as a view over its slot. */
export class SimBookSide {
  private readonly count: number;
  private readonly at: number;
  private readonly descending: boolean;

  constructor(
    private readonly d: Int32Array,
    base: number,
    side: 0 | 1,
    private readonly depth: number,
  ) {
    this.count = base + side;
    this.at = base + 2 + side * 2 * depth;
    this.descending = side === 0;
  }

  get length(): number {
    return this.d[this.count]!;
  }

  /** The prices, best first (a copy). */
  get prices(): number[] {
    return Array.from(this.d.subarray(this.at, this.at + this.length));
  }

  /** The sizes, best first (a copy). */
  get sizes(): number[] {
    const z = this.at + this.depth;
    return Array.from(this.d.subarray(z, z + this.length));
  }

  best(): number | undefined {
    return this.length > 0 ? this.d[this.at] : undefined;
  }

  bestSize(): number | undefined {
    return this.length > 0 ? this.d[this.at + this.depth] : undefined;
  }

  /** Size at `price`, 0 when absent. */
  get(price: number): number {
    const i = this.find(price);
    const d = this.d;
    return i < this.length && d[this.at + i] === price ? d[this.at + this.depth + i]! : 0;
  }

  /** Levels best first, at most `depth`. */
  levels(depth = Infinity): Level[] {
    const d = this.d;
    const n = Math.min(depth, this.length);
    const out: Level[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = [d[this.at + i]!, d[this.at + this.depth + i]!];
    return out;
  }

  /** Sets the absolute size at `price`; 0 deletes. */
  set(price: number, size: number): void {
    const d = this.d;
    const p = this.at;
    const z = this.at + this.depth;
    const n = this.length;
    const i = this.find(price);
    if (i < n && d[p + i] === price) {
      if (size !== 0) {
        d[z + i] = size;
        return;
      }
      d.copyWithin(p + i, p + i + 1, p + n);
      d.copyWithin(z + i, z + i + 1, z + n);
      d[this.count] = n - 1;
    } else if (size !== 0) {
      if (n === this.depth) throw new Error(`simulator book deeper than ${this.depth} levels`);
      d.copyWithin(p + i + 1, p + i, p + n);
      d.copyWithin(z + i + 1, z + i, z + n);
      d[p + i] = price;
      d[z + i] = size;
      d[this.count] = n + 1;
    }
  }

  private find(price: number): number {
    const d = this.d;
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const q = d[this.at + mid]!;
      if (this.descending ? q > price : q < price) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
