import { Subject } from 'rxjs';
import type { VenueLabel } from '../core/types.js';

export const MINUTE = 60_000;

/** A one-minute candle of a market's YES price, integer units. */
export interface Candle {
  readonly venue: VenueLabel;
  readonly marketId: string;
  /** Bucket start, ms since epoch (a whole minute). */
  readonly t: number;
  o: number;
  h: number;
  l: number;
  c: number;
  /** Last YES mid in the bucket; the close when the book was empty (spec 2.6). */
  mid: number | undefined;
  /** Contracts traded within this bucket (not cumulative, spec 2.6). */
  volume: number;
  trades: number;
  /** Best YES bid and ask at the bucket's last observation (undefined: that side was empty, or a candle stored before they were kept). */
  bid?: number | undefined;
  ask?: number | undefined;
  /** Money traded within the bucket, units × shares (each trade's own price × size); undefined in candles stored before it was kept. */
  notional?: number | undefined;
}

/** A caller's slot for a market's open candle (a state book keeps its market's), valid while no open candle was closed since it was taken. */
export interface HeldCandle {
  candle: Candle | undefined;
  candleOf: object | undefined;
  candleEpoch: number;
}

/**
 * Builds one-minute candles from price observations (trades, last-price and mid changes). A
 * bucket closes when a later observation arrives or `flush(now)` passes its end; closed candles
 * go out on `closed$` (persistence appends them). Minutes with nothing observed produce no candle;
 * readers carry the previous close forward.
 */
export class CandleStore {
  /** venue → market → open candle (nested: no key strings built on the hot path). */
  private readonly open = new Map<VenueLabel, Map<string, Candle>>();
  readonly closed$ = new Subject<Candle>();
  /** Bumped whenever an open candle is closed: a HeldCandle taken before is looked up again. */
  private closes = 0;
  /**
   * No open candle starts before this minute: the once-a-second `flush` walks the open candles only
   * once one of them can have ended (once a minute, not every second: at 108k markets each walk
   * visited every market's candle and closed none in 59 of 60).
   */
  private oldest = Infinity;

  /**
   * `keep` false: observations are ignored (no candle is opened or closed). For a state nobody reads
   * candles from: the history index's thread, where every market's open candle was 15 MiB at 108k.
   */
  constructor(private readonly keep = true) {}

  current(venue: VenueLabel, marketId: string): Candle | undefined {
    return this.open.get(venue)?.get(marketId);
  }

  /**
   * Records a price (units) at `ts`, with traded `volume` (0 for a quote change), the current
   * mid (undefined when either side of the book is empty), the current YES `bid` and `ask`, and
   * the money a trade moved (`notional`, units × shares: its own price × size). `held`: the
   * caller's slot for the market's open candle, read instead of the lookup while it stands.
   */
  observe(
    venue: VenueLabel,
    marketId: string,
    price: number,
    mid: number | undefined,
    volume: number,
    ts: number,
    bid?: number,
    ask?: number,
    notional = 0,
    held?: HeldCandle,
  ): void {
    if (!this.keep) return;
    const t = ts - (ts % MINUTE);
    let c = held !== undefined && held.candleOf === this && held.candleEpoch === this.closes ? held.candle : undefined;
    if (c === undefined || c.marketId !== marketId || c.venue !== venue) c = this.open.get(venue)?.get(marketId);
    if (c && c.t !== t) {
      if (t < c.t) return; // late observation for a closed bucket: dropped, buckets are append-only
      this.closes++;
      this.closed$.next(c);
      c = undefined;
    }
    if (!c) {
      let v = this.open.get(venue);
      if (v === undefined) this.open.set(venue, (v = new Map()));
      c = { venue, marketId, t, o: price, h: price, l: price, c: price, mid: mid ?? price, volume: 0, trades: 0, bid, ask, notional: 0 };
      v.set(marketId, c);
      if (t < this.oldest) this.oldest = t;
    } else {
      if (price > c.h) c.h = price;
      if (price < c.l) c.l = price;
      c.c = price;
      c.mid = mid ?? price;
      c.bid = bid;
      c.ask = ask;
    }
    if (volume > 0) {
      c.volume += volume;
      c.trades++;
      c.notional = (c.notional ?? 0) + notional;
    }
    if (held !== undefined) {
      held.candle = c;
      held.candleOf = this;
      held.candleEpoch = this.closes;
    }
  }

  /** Closes every bucket that ended before `now` (called once a second and at shutdown). */
  flush(now: number, all = false): void {
    if (!all && this.oldest + MINUTE > now) return;
    let oldest = Infinity;
    for (const v of this.open.values())
      for (const c of v.values()) {
        if (all || c.t + MINUTE <= now) {
          v.delete(c.marketId);
          this.closes++;
          this.closed$.next(c);
        } else if (c.t < oldest) oldest = c.t;
      }
    this.oldest = oldest;
  }

  *openCandles(): IterableIterator<Candle> {
    for (const v of this.open.values()) yield* v.values();
  }
}
