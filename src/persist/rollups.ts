import type { Candle } from '../state/candles.js';

/** Numbers kept per rollup: t, o, h, l, c, mid, volume, trades, bid, ask, notional (NaN = none). */
const WIDTH = 11;

/**
 * The candle rollups being built (the open hour or day of each market), packed eight numbers a
 * market in one Float64Array and found through venue → market id maps: no key string and no
 * object per market, since every market with a closed minute keeps one per resolution.
 */
export class OpenRollups {
  private readonly slots = new Map<string, Map<string, number>>();
  private data = new Float64Array(WIDTH * 1024);
  private used = 0;

  /** The market's open rollup, as a new object (undefined before its first minute). */
  get(venue: string, marketId: string): Candle | undefined {
    const slot = this.slots.get(venue)?.get(marketId);
    if (slot === undefined) return undefined;
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
    let byId = this.slots.get(r.venue);
    if (!byId) this.slots.set(r.venue, (byId = new Map()));
    let slot = byId.get(r.marketId);
    if (slot === undefined) {
      slot = this.used++;
      byId.set(r.marketId, slot);
      if (this.used * WIDTH > this.data.length) {
        const grown = new Float64Array(this.data.length * 2);
        grown.set(this.data);
        this.data = grown;
      }
    }
    this.data.set([r.t, r.o, r.h, r.l, r.c, r.mid ?? NaN, r.volume, r.trades, r.bid ?? NaN, r.ask ?? NaN, r.notional ?? NaN], slot * WIDTH);
  }

  /** Markets with an open rollup. */
  get size(): number {
    return this.used;
  }
}

/** NaN (none) as undefined. */
function orUndefined(x: number): number | undefined {
  return Number.isNaN(x) ? undefined : x;
}
