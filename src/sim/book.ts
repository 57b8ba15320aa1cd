import type { BookSideName, Level } from '../core/types.js';

/**
 * The simulator's books (SYNTHETIC DATA): every listing's levels in one Int32Array, a fixed slot
 * per listing, and its time of last change in a Float64Array. The world keeps a book per listing
 * for its whole life, up to a million listings, and an OrderBook (four growable arrays) costs
 * about four times a slot. The levels the world makes are integer units, at most `depth` a side
 * (it never quotes deeper).
 */
export class SimBookPool {
  /** Per slot: bid count, ask count, bid prices, bid sizes, ask prices, ask sizes (`depth` each). */
  data: Int32Array;
  /** Per slot: time of the last change, ms (a number field per book would be a heap box each). */
  times: Float64Array;
  readonly stride: number;
  private slots = 0;

  constructor(readonly depth: number) {
    this.stride = 2 + 4 * depth;
    this.data = new Int32Array(this.stride * 64);
    this.times = new Float64Array(64);
  }

  /** How many books were made. */
  get size(): number {
    return this.slots;
  }

  /** A new empty book. */
  book(): SimBook {
    const slot = this.slots++;
    if (slot >= this.times.length) this.resize(this.times.length * 2);
    return new SimBook(this, slot);
  }

  /** Gives back the room the doubling left unused, once the world has made its books. */
  trim(): void {
    if (this.slots < this.times.length) this.resize(Math.max(1, this.slots));
  }

  private resize(slots: number): void {
    const data = new Int32Array(slots * this.stride);
    data.set(this.data.subarray(0, Math.min(this.data.length, data.length)));
    const times = new Float64Array(slots);
    times.set(this.times.subarray(0, Math.min(this.times.length, slots)));
    this.data = data;
    this.times = times;
  }
}

/** A listing's YES-perspective book: the read side of OrderBook that the protocol servers use. */
export class SimBook {
  constructor(
    private readonly pool: SimBookPool,
    /** The book's index in its pool, in the order made (the world keys its per-listing arrays by it). */
    readonly slot: number,
  ) {}

  /** Where the slot starts in the pool's data. */
  private get base(): number {
    return this.slot * this.pool.stride;
  }

  /** Time of the last change, ms (0 before the first). */
  get timestamp(): number {
    return this.pool.times[this.slot]!;
  }

  set timestamp(ms: number) {
    this.pool.times[this.slot] = ms;
  }

  /** YES bids, best (highest) first. A view made per call: hold it for a loop, not across changes. */
  get bids(): SimBookSide {
    return new SimBookSide(this.pool, this.base, 0);
  }

  /** YES asks, best (lowest) first. */
  get asks(): SimBookSide {
    return new SimBookSide(this.pool, this.base, 1);
  }

  /** Replaces the book. */
  snapshot(bids: readonly Level[], asks: readonly Level[], timestamp: number): void {
    const d = this.pool.data;
    d[this.base] = 0;
    d[this.base + 1] = 0;
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
    private readonly pool: SimBookPool,
    base: number,
    side: 0 | 1,
  ) {
    this.count = base + side;
    this.at = base + 2 + side * 2 * pool.depth;
    this.descending = side === 0;
  }

  get length(): number {
    return this.pool.data[this.count]!;
  }

  /** The prices, best first (a copy). */
  get prices(): number[] {
    return Array.from(this.pool.data.subarray(this.at, this.at + this.length));
  }

  /** The sizes, best first (a copy). */
  get sizes(): number[] {
    const z = this.at + this.pool.depth;
    return Array.from(this.pool.data.subarray(z, z + this.length));
  }

  best(): number | undefined {
    return this.length > 0 ? this.pool.data[this.at] : undefined;
  }

  bestSize(): number | undefined {
    return this.length > 0 ? this.pool.data[this.at + this.pool.depth] : undefined;
  }

  /** Size at `price`, 0 when absent. */
  get(price: number): number {
    const i = this.find(price);
    const d = this.pool.data;
    return i < this.length && d[this.at + i] === price ? d[this.at + this.pool.depth + i]! : 0;
  }

  /** Levels best first, at most `depth`. */
  levels(depth = Infinity): Level[] {
    const d = this.pool.data;
    const n = Math.min(depth, this.length);
    const out: Level[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = [d[this.at + i]!, d[this.at + this.pool.depth + i]!];
    return out;
  }

  /** Sets the absolute size at `price`; 0 deletes. */
  set(price: number, size: number): void {
    const d = this.pool.data;
    const p = this.at;
    const z = this.at + this.pool.depth;
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
      if (n === this.pool.depth) throw new Error(`simulator book deeper than ${this.pool.depth} levels`);
      d.copyWithin(p + i + 1, p + i, p + n);
      d.copyWithin(z + i + 1, z + i, z + n);
      d[p + i] = price;
      d[z + i] = size;
      d[this.count] = n + 1;
    }
  }

  private find(price: number): number {
    const d = this.pool.data;
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
