import { z } from 'zod';
import type { Api } from '../access/api.js';
import { p } from '../access/params.js';
import { toCents } from '../core/price.js';
import { HISTORY_STABLE_MS } from '../persist/store.js';
import { errorReply } from '../server/http.js';
import { MINUTE, type Candle } from '../state/candles.js';
import type { ApiContext } from './context.js';
import { cents, centsOrNull, numOrNull, platform, time } from '../views/schemas.js';
import { cents as centsOf } from '../views/market.js';

export const INTERVALS = { '1m': MINUTE, '5m': 5 * MINUTE, '15m': 15 * MINUTE, '1h': 60 * MINUTE, '1d': 1440 * MINUTE } as const;
export type Interval = keyof typeof INTERVALS;
/** Default look-back per interval when `from` is omitted. */
const DEFAULT_SPAN: Record<Interval, number> = { '1m': 86_400_000, '5m': 3 * 86_400_000, '15m': 7 * 86_400_000, '1h': 30 * 86_400_000, '1d': 365 * 86_400_000 };
const MAX_CANDLES = 10_000;

/** The 200 body of /prices/history. */
export const PriceHistory = z.object({
  platform,
  market_id: z.string(),
  interval: z.enum(['1m', '5m', '15m', '1h', '1d']),
  from: time('start of the range served'),
  to: time('end of the range served'),
  candles: z
    .array(
      z.object({
        t: z.number().int().describe('bucket start, unix seconds'),
        open: cents('first price of the bucket'),
        high: cents('highest price'),
        low: cents('lowest price'),
        close: cents('last price'),
        volume: z.number().describe('contracts traded within the bucket'),
        mid: cents('last mid of the bucket; the close when the book was empty'),
        timestamp: time('= t, ISO 8601 (the name clients of the hosted API read)'),
        yes_bid: centsOrNull('best YES bid at the bucket’s last observation; null when that side was empty or the candle predates it'),
        yes_ask: centsOrNull('best YES ask at the bucket’s last observation; null when that side was empty or the candle predates it'),
        dollar_volume: numOrNull('USD traded within the bucket (each trade’s price × size); null for candles stored before it was kept'),
      }),
    )
    .describe(`oldest first, at most ${MAX_CANDLES}`),
});

export interface OutCandle {
  /** Bucket start, unix seconds. */
  t: number;
  open: number;
  high: number;
  low: number;
  close: number;
  /** Contracts traded within the bucket. */
  volume: number;
  /** Last mid of the bucket; the close when the book was empty (spec 2.6). */
  mid: number;
  /** = t, ISO 8601. */
  timestamp: string;
  /** YES bid and ask at the bucket's last observation, cents; null when unknown. */
  yes_bid: number | null;
  yes_ask: number | null;
  /** USD traded within the bucket; null when no minute of it recorded it (stored before it was kept). */
  dollar_volume: number | null;
}

/** Units × shares as USD, to the cent. */
const usd = (n: number): number => Math.round(n / 100) / 100;

/**
 * Rolls one-minute candles (oldest first) up into `width`-ms buckets. Buckets with no minute after
 * the first observed one carry the previous close (volume 0), so a chart has no holes and a settled
 * market stays at its settlement price rather than dropping to 50. Stateful so that a range can be
 * rolled up in two pieces (cached closed buckets, then the live tail) with the same result as one.
 */
export class Rollup {
  readonly out: OutCandle[] = [];
  private cur: OutCandle | undefined;
  private curT = -1;
  private lastClose: number | undefined;
  private lastMid: number | undefined;
  private lastBid: number | null = null;
  private lastAsk: number | null = null;
  /** The open bucket's money traded, units × shares (undefined: none of its minutes recorded it). */
  private notional: number | undefined;

  constructor(private readonly width: number) {}

  /** Continues after `prev` rolled up everything before its `finish(end)`. */
  static after(prev: Rollup): Rollup {
    const r = new Rollup(prev.width);
    r.curT = prev.curT;
    r.lastClose = prev.lastClose;
    r.lastMid = prev.lastMid;
    r.lastBid = prev.lastBid;
    r.lastAsk = prev.lastAsk;
    return r;
  }

  /** Adds minutes in [from, to), oldest first. */
  addAll(minutes: readonly Candle[], from: number, to: number): this {
    for (const c of minutes) if (c.t >= from && c.t < to) this.add(c);
    return this;
  }

  add(c: Candle): void {
    const w = this.width;
    const b = c.t - (((c.t % w) + w) % w);
    let cur = this.cur;
    if (b !== this.curT || !cur) {
      if (cur) this.push(cur);
      if (this.curT >= 0) this.fillTo(b);
      cur = this.cur = {
        t: b / 1000,
        open: toCents(c.o),
        high: toCents(c.h),
        low: toCents(c.l),
        close: toCents(c.c),
        volume: c.volume,
        mid: toCents(c.mid ?? c.c),
        timestamp: new Date(b).toISOString(),
        yes_bid: centsOf(c.bid),
        yes_ask: centsOf(c.ask),
        dollar_volume: null,
      };
      this.notional = c.notional;
      this.curT = b;
    } else {
      cur.high = Math.max(cur.high, toCents(c.h));
      cur.low = Math.min(cur.low, toCents(c.l));
      cur.close = toCents(c.c);
      cur.volume += c.volume;
      cur.mid = toCents(c.mid ?? c.c);
      cur.yes_bid = centsOf(c.bid);
      cur.yes_ask = centsOf(c.ask);
      if (c.notional !== undefined) this.notional = (this.notional ?? 0) + c.notional;
    }
    this.lastClose = cur.close;
    this.lastMid = cur.mid;
    this.lastBid = cur.yes_bid;
    this.lastAsk = cur.yes_ask;
  }

  /** Emits a bucket, its money traded in USD. */
  private push(c: OutCandle): void {
    c.dollar_volume = this.notional === undefined ? null : usd(this.notional);
    this.out.push(c);
  }

  /** Emits the open bucket and carries the close through every bucket starting before `to`. */
  finish(to: number): OutCandle[] {
    const w = this.width;
    if (this.cur) this.push(this.cur);
    this.cur = undefined;
    if (this.curT >= 0) {
      const end = to - (((to % w) + w) % w);
      this.fillTo(end + (to % w === 0 ? 0 : w));
    }
    return this.out;
  }

  /** Empty buckets after the last one, up to (not including) bucket `t`. */
  private fillTo(t: number): void {
    const c = this.lastClose;
    if (c === undefined) return;
    for (let b = this.curT + this.width; b < t; b += this.width) {
      this.out.push({
        t: b / 1000,
        open: c,
        high: c,
        low: c,
        close: c,
        volume: 0,
        mid: this.lastMid ?? c,
        timestamp: new Date(b).toISOString(),
        yes_bid: this.lastBid,
        yes_ask: this.lastAsk,
        dollar_volume: 0,
      });
      this.curT = b;
    }
  }
}

/** Rolls one-minute candles (oldest first) in [from, to) up into `width`-ms buckets (see Rollup). */
export function rollup(minutes: readonly Candle[], width: number, from: number, to: number): OutCandle[] {
  return new Rollup(width).addAll(minutes, from, to).finish(to);
}

/** The serialized closed buckets of one (market, interval, from, stable end, history epoch). */
interface ClosedPrefix {
  /** The buckets' JSON, comma-separated, UTF-8 (copied into each body, never re-encoded). */
  readonly json: Buffer;
  readonly roll: Rollup;
}

/**
 * Serialized closed buckets, LRU by bytes. Buckets ending before the stable horizon never change
 * (Persistence.historyEpoch is bumped when one does), so the year of hourly candles a dashboard asks
 * for is read from LMDB and stringified once per hour instead of once per request.
 */
class PrefixCache {
  private readonly map = new Map<string, ClosedPrefix>();
  private bytes = 0;
  constructor(private readonly maxBytes: number) {}

  get(key: string): ClosedPrefix | undefined {
    const v = this.map.get(key);
    if (v) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }

  set(key: string, v: ClosedPrefix): void {
    if (v.json.length > this.maxBytes / 4) return;
    const old = this.map.get(key);
    if (old) {
      this.map.delete(key);
      this.bytes -= old.json.length;
    }
    this.map.set(key, v);
    this.bytes += v.json.length;
    for (const [k, old] of this.map) {
      if (this.bytes <= this.maxBytes) break;
      this.map.delete(k);
      this.bytes -= old.json.length;
    }
  }
}

/**
 * What a /prices/history body was built from, besides its query: the same inputs answer the same
 * candles. Persisted candles change only with an LMDB commit, the open minute in place (its fields
 * are compared), and the range's edges only when `to`, `now` or `from` cross a bucket.
 */
interface Served {
  readonly start: number;
  readonly stable: number;
  readonly epoch: number;
  readonly commits: number;
  /** ceil(to / 1 min): which stored buckets (whole minutes) lie before `to`. */
  readonly toMinute: number;
  /** ceil(min(to, now + 1) / width): the bucket up to which closes carry forward. */
  readonly fillEnd: number;
  readonly openFields: string;
  from: number;
  to: number;
  /** The body: the head (platform … to), then the candles from `headLength` on. */
  body: Buffer;
  headLength: number;
}

/** The open candle's fields that a body shows (it is mutated in place). */
/** Every field of the open candle: the store hands out a new object on each read, so this, not its identity, tells whether it changed. */
const openFields = (c: Candle | undefined): string =>
  c ? `${c.t},${c.o},${c.h},${c.l},${c.c},${c.mid},${c.volume},${c.trades},${c.bid},${c.ask},${c.notional}` : '';

/** The head of a body, up to the candles array's opening bracket, as UTF-8. */
function headOf(slug: string, marketId: string, interval: Interval, from: number, to: number): Buffer {
  const head = JSON.stringify({ platform: slug, market_id: marketId, interval, from: new Date(from).toISOString(), to: new Date(to).toISOString() });
  return Buffer.from(head.slice(0, -1) + ',"candles":[');
}

/** GET /prices/history (spec 4.8, 2.6). */
export function registerHistory(api: Api, ctx: ApiContext): void {
  const cache = new PrefixCache(64 * 1024 * 1024);
  // Bodies by parsed query (the access layer keeps one object per distinct query string).
  const served = new WeakMap<object, Served>();
  api.route({
    path: '/prices/history',
    summary: 'OHLC candles of one market (cents)',
    description: `Candles {t (bucket start, unix seconds), open, high, low, close, volume (traded within the bucket), mid, timestamp (= t, ISO 8601), yes_bid and yes_ask (at the bucket's last observation), dollar_volume (USD traded within the bucket)}. Built from one-minute candles, which are kept for ${ctx.config.persistence.minuteCandleRetentionDays} days (1m, 5m and 15m start there; 1h and 1d are kept for good); empty buckets after the first observation carry the previous close. At most ${MAX_CANDLES} candles: a range (to − from) longer than ${MAX_CANDLES} intervals is a 400 (validation.time_range), as is from not before to.`,
    tags: ['prices'],
    query: z.object({
      platform: p.enum(ctx.venues.slugs(), { required: true }),
      market_id: p.string({ required: true, max: 300, description: 'platform-native id; for venue_a the full market ticker' }),
      interval: p.enum(Object.keys(INTERVALS) as Interval[], { default: '1h' }),
      from: p.isoTime({
        description: `ISO 8601; default depends on interval (1m: 1 day … 1d: 1 year); must be before to, and (to − from) at most ${MAX_CANDLES} intervals`,
      }),
      to: p.isoTime({ description: 'ISO 8601, default now' }),
    }),
    response: PriceHistory,
    errors: { 404: 'No such market and no stored candles (code not_found)' },
    handler: (c) => {
      const q = c.query;
      const v = ctx.venues.bySlug.get(q.platform!)!;
      const interval = q.interval!;
      const width = INTERVALS[interval];
      const now = ctx.clock.now();
      const to = q.to ?? now;
      const from = q.from ?? to - DEFAULT_SPAN[interval];
      if (from >= to) return errorReply(400, 'validation.time_range', 'invalid parameters "from"/"to": from must be before to');
      if ((to - from) / width > MAX_CANDLES)
        return errorReply(
          400,
          'validation.time_range',
          `invalid parameters "from"/"to": more than ${MAX_CANDLES} ${interval} candles; narrow the range or use a wider interval`,
        );
      const marketId = q.market_id!;
      const start = from - (from % width);
      // [start, stable) holds closed buckets only: served from the cache of serialized buckets.
      const stableBound = Math.min(to, now - HISTORY_STABLE_MS);
      const stable = Math.max(start, stableBound - (stableBound % width));
      const open = ctx.state.candles.current(v.label, marketId);
      const toMinute = Math.ceil(to / MINUTE);
      const fillEnd = Math.ceil(Math.min(to, now + 1) / width);
      const commits = ctx.commits();
      const hit = served.get(q);
      if (
        hit &&
        hit.commits === commits &&
        hit.start === start &&
        hit.stable === stable &&
        hit.epoch === ctx.persistence.historyEpoch &&
        hit.toMinute === toMinute &&
        hit.fillEnd === fillEnd &&
        hit.openFields === openFields(open)
      ) {
        if (hit.from !== from || hit.to !== to) {
          const head = headOf(v.slug, marketId, interval, from, to);
          hit.body = Buffer.concat([head, hit.body.subarray(hit.headLength)]);
          hit.headLength = head.length;
          hit.from = from;
          hit.to = to;
        }
        return { status: 200, body: hit.body };
      }
      const known = ctx.state.catalog.get(v.label, marketId);
      // 1h and 1d read the stored rollups; shorter intervals roll up one-minute candles.
      const resolution = interval === '1h' || interval === '1d' ? interval : '1m';
      let prefix: ClosedPrefix | undefined;
      if (stable - start >= 16 * width) {
        const key = `${v.label}\u0000${marketId}\u0000${interval}\u0000${start}\u0000${stable}\u0000${ctx.persistence.historyEpoch}`;
        prefix = cache.get(key);
        if (!prefix) {
          const roll = new Rollup(width).addAll(ctx.persistence.candles(v.label, marketId, start, stable, resolution), start, stable);
          const out = roll.finish(stable);
          let json = '';
          for (let i = 0; i < out.length; i++) json += (i ? ',' : '') + JSON.stringify(out[i]);
          prefix = { json: Buffer.from(json), roll: Rollup.after(roll) }; // the state only, not the emitted buckets
          cache.set(key, prefix);
        }
      }
      const tailFrom = prefix ? stable : start;
      const minutes = ctx.persistence.candles(v.label, marketId, tailFrom, to, resolution);
      if (open && open.t >= tailFrom && open.t < to && (minutes.length === 0 || minutes[minutes.length - 1]!.t < open.t)) minutes.push(open);
      if (!known && minutes.length === 0 && !prefix?.json.length) return errorReply(404, 'not_found', `no ${v.slug} market "${marketId}"`);
      // Closes carry forward up to the bucket holding now, never into the future: a `to` after now
      // gets the candles there are, not made-up ones.
      const tail = (prefix ? Rollup.after(prefix.roll) : new Rollup(width)).addAll(minutes, tailFrom, to).finish(Math.min(to, now + 1));
      let rest = '';
      let sep = prefix?.json.length ? ',' : '';
      for (const k of tail) {
        rest += sep + JSON.stringify(k);
        sep = ',';
      }
      const headBuf = headOf(v.slug, marketId, interval, from, to);
      const tailBuf = Buffer.from(rest + ']}');
      const body = prefix ? Buffer.concat([headBuf, prefix.json, tailBuf]) : Buffer.concat([headBuf, tailBuf]);
      const epoch = ctx.persistence.historyEpoch;
      served.set(q, { start, stable, epoch, commits, toMinute, fillEnd, openFields: openFields(open), from, to, body, headLength: headBuf.length });
      return { status: 200, body };
    },
  });
}
