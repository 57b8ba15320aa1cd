import type { Candle } from '../state/candles.js';

/** Numbers kept per rollup: t, o, h, l, c, mid, volume, trades, bid, ask, notional (NaN = none). */
const WIDTH = 11;

/**
 * Venue → market id → slot, for open rollups of several widths at once: persistence folds every
 * closed minute into its market's hour and day rollup together, so both have the same markets, and
 * one index serves both. At 108k markets each index's maps were 3.9 MiB of V8's large-object space
 * (their hash tables; heap snapshot of the service, branch `buf19`).
 */
export class RollupSlots {
  private readonly byVenue = new Map<string, Map<string, number>>();
  private used = 0;

  /** The market's slot, if any store took one for it. */
  find(venue: string, marketId: string): number | undefined {
    return this.byVenue.get(venue)?.get(marketId);
  }

  /** The market's slot, taken now if it has none. */
  take(venue: string, marketId: string): number {
    let byId = this.byVenue.get(venue);
    if (!byId) this.byVenue.set(venue, (byId = new Map()));
    let slot = byId.get(marketId);
    if (slot === undefined) byId.set(marketId, (slot = this.used++));
    return slot;
  }

  /** Markets with a slot. */
  get size(): number {
    return this.used;
  }
}

/**
 * The candle rollups being built (the open hour or day of each market), packed eleven numbers a
 * market in one Float64Array at the market's slot in `slots` (shared with the rollups of other
 * widths): no key string and no object per market, since every market with a closed minute keeps
 * one per resolution.
 */
export class OpenRollups {
  private data = new Float64Array(WIDTH * 1024);
  /** 1 at a slot this store holds a rollup for (another store sharing `slots` may have taken it). */
  private held = new Uint8Array(1024);
  private count = 0;

  constructor(private readonly slots = new RollupSlots()) {}

  /** The market's open rollup, as a new object (undefined before its first minute). */
  get(venue: string, marketId: string): Candle | undefined {
    const slot = this.slots.find(venue, marketId);
    if (slot === undefined || slot >= this.held.length || this.held[slot] === 0) return undefined;
    const d = this.data;
    const i = slot * WIDTH;
    return {
      venue,
      marketId,
      t: d[i]!,
      o: d[i + 1]!,
      h: d[i + 2]!,
      l: d[i + 3]!,
      c: d[i + 4]!,
      mid: orUndefined(d[i + 5]!),
      volume: d[i + 6]!,
      trades: d[i + 7]!,
      bid: orUndefined(d[i + 8]!),
      ask: orUndefined(d[i + 9]!),
      notional: orUndefined(d[i + 10]!),
    };
  }

  /** Keeps `r` as its market's open rollup. */
  set(r: Candle): void {
    const slot = this.slots.take(r.venue, r.marketId);
    if (slot >= this.held.length) {
      let n = this.held.length;
      while (slot >= n) n *= 2;
      const held = new Uint8Array(n);
      held.set(this.held);
      this.held = held;
      const data = new Float64Array(n * WIDTH);
      data.set(this.data);
      this.data = data;
    }
    if (this.held[slot] === 0) {
      this.held[slot] = 1;
      this.count++;
    }
    this.data.set([r.t, r.o, r.h, r.l, r.c, r.mid ?? NaN, r.volume, r.trades, r.bid ?? NaN, r.ask ?? NaN, r.notional ?? NaN], slot * WIDTH);
  }

  /** Markets with an open rollup. */
  get size(): number {
    return this.count;
  }
}

/** NaN (none) as undefined. */
function orUndefined(x: number): number | undefined {
  return Number.isNaN(x) ? undefined : x;
}
