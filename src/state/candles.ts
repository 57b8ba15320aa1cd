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

/**
 * A caller's slot for a market's open candle (a state book keeps its market's): the store's slot
 * number, valid while no open candle was closed since it was taken.
 */
export interface HeldCandle {
  candleSlot: number;
  candleOf: object | undefined;
  candleEpoch: number;
}

/** Numbers kept per open candle: t, o, h, l, c, mid, volume, trades, bid, ask, notional (NaN: bid or ask absent). */
const WIDTH = 11;
const [T, O, H, L, C, MID, VOL, TRADES, BID, ASK, NOTIONAL] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10] as const;

/**
 * Builds one-minute candles from price observations (trades, last-price and mid changes). A
 * bucket closes when a later observation arrives or `flush(now)` passes its end; closed candles
 * go out on `closed$` (persistence appends them). Minutes with nothing observed produce no candle;
 * readers carry the previous close forward.
 *
 * The open candles are packed eleven numbers a market in one Float64Array, found through venue →
 * market id → slot maps, with no object per open candle: at 108k markets ~89k candles were open,
 * 235 B each as objects (thirteen fields, seven of them boxed doubles: a field that once held a
 * fraction boxes every candle's), against 104 B a slot here (88 of numbers, two ids). A candle
 * object is made when one closes or is read (`current`, `openCandles`): a value, which later
 * observations do not change.
 */
export class CandleStore {
  /** venue → market → slot of its open candle (nested: no key strings built on the hot path). */
  private readonly open = new Map<VenueLabel, Map<string, number>>();
  private data = new Float64Array(WIDTH * 1024);
  /** Each slot's venue and market id (undefined: free). */
  private venues: (VenueLabel | undefined)[] = [];
  private ids: (string | undefined)[] = [];
  /** Slots freed by a flush, reused before new ones. */
  private readonly free: number[] = [];
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

  /** The market's open candle, as a value (undefined when none is open). */
  current(venue: VenueLabel, marketId: string): Candle | undefined {
    const slot = this.open.get(venue)?.get(marketId);
    return slot === undefined ? undefined : this.candle(slot);
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
    let s = held !== undefined && held.candleOf === this && held.candleEpoch === this.closes ? held.candleSlot : -1;
    if (s < 0 || this.ids[s] !== marketId || this.venues[s] !== venue) s = this.open.get(venue)?.get(marketId) ?? -1;
    const d = this.data;
    if (s >= 0 && d[s * WIDTH + T] !== t) {
      if (t < d[s * WIDTH + T]!) return; // late observation for a closed bucket: dropped, buckets are append-only
      // The bucket rolled: the closed candle goes out, and the market's next one opens in the same slot.
      this.closes++;
      this.closed$.next(this.candle(s));
      this.start(s, t, price, mid, bid, ask);
    } else if (s < 0) {
      s = this.slot(venue, marketId);
      this.start(s, t, price, mid, bid, ask);
    } else {
      const i = s * WIDTH;
      if (price > d[i + H]!) d[i + H] = price;
      if (price < d[i + L]!) d[i + L] = price;
      d[i + C] = price;
      d[i + MID] = mid ?? price;
      d[i + BID] = bid ?? NaN;
      d[i + ASK] = ask ?? NaN;
    }
    if (volume > 0) {
      const i = s * WIDTH;
      d[i + VOL] = d[i + VOL]! + volume;
      d[i + TRADES] = d[i + TRADES]! + 1;
      d[i + NOTIONAL] = d[i + NOTIONAL]! + notional;
    }
    if (held !== undefined) {
      held.candleSlot = s;
      held.candleOf = this;
      held.candleEpoch = this.closes;
    }
  }

  /**
   * Closes every bucket that ended before `now` (called once a second and at shutdown), or the first
   * `limit` of them: true when that left some to close (the next call closes the next ones; a
   * market's candle is the same whichever call closes it, or the observation that rolls it first).
   */
  flush(now: number, all = false, limit = Infinity): boolean {
    if (!all && this.oldest + MINUTE > now) return false;
    let oldest = Infinity;
    let left = limit;
    const d = this.data;
    for (const v of this.open.values())
      for (const [marketId, s] of v) {
        const t = d[s * WIDTH + T]!;
        if (all || t + MINUTE <= now) {
          // `oldest` stays where it was: the next call walks again.
          if (left-- === 0) return true;
          v.delete(marketId);
          this.closes++;
          const c = this.candle(s);
          this.venues[s] = undefined;
          this.ids[s] = undefined;
          this.free.push(s);
          this.closed$.next(c);
        } else if (t < oldest) oldest = t;
      }
    this.oldest = oldest;
    return false;
  }

  *openCandles(): IterableIterator<Candle> {
    for (const v of this.open.values()) for (const s of v.values()) yield this.candle(s);
  }

  /** Opens slot `s`'s candle at minute `t` with its first observation. */
  private start(s: number, t: number, price: number, mid: number | undefined, bid: number | undefined, ask: number | undefined): void {
    const d = this.data;
    const i = s * WIDTH;
    d[i + T] = t;
    d[i + O] = d[i + H] = d[i + L] = d[i + C] = price;
    d[i + MID] = mid ?? price;
    d[i + VOL] = d[i + TRADES] = d[i + NOTIONAL] = 0;
    d[i + BID] = bid ?? NaN;
    d[i + ASK] = ask ?? NaN;
    if (t < this.oldest) this.oldest = t;
  }

  /** A slot for the market's new open candle, filed under it. */
  private slot(venue: VenueLabel, marketId: string): number {
    let s = this.free.pop();
    if (s === undefined) {
      s = this.ids.length;
      if ((s + 1) * WIDTH > this.data.length) {
        const grown = new Float64Array(this.data.length * 2);
        grown.set(this.data);
        this.data = grown;
      }
    }
    this.venues[s] = venue;
    this.ids[s] = marketId;
    let v = this.open.get(venue);
    if (v === undefined) this.open.set(venue, (v = new Map()));
    v.set(marketId, s);
    return s;
  }

  /** Slot `s`'s candle as an object (bid and ask undefined where absent, as observed). */
  private candle(s: number): Candle {
    const d = this.data;
    const i = s * WIDTH;
    return {
      venue: this.venues[s]!,
      marketId: this.ids[s]!,
      t: d[i + T]!,
      o: d[i + O]!,
      h: d[i + H]!,
      l: d[i + L]!,
      c: d[i + C]!,
      mid: d[i + MID]!,
      volume: d[i + VOL]!,
      trades: d[i + TRADES]!,
      bid: orUndefined(d[i + BID]!),
      ask: orUndefined(d[i + ASK]!),
      notional: d[i + NOTIONAL]!,
    };
  }
}

/** NaN (absent) as undefined. */
function orUndefined(x: number): number | undefined {
  return Number.isNaN(x) ? undefined : x;
}
