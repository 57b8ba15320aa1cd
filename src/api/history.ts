import { z } from 'zod';
import type { Api } from '../access/api.js';
import { p } from '../access/params.js';
import { toCents } from '../core/price.js';
import { errorReply, jsonReply } from '../server/http.js';
import { MINUTE, type Candle } from '../state/candles.js';
import type { ApiContext } from './context.js';

export const INTERVALS = { '1m': MINUTE, '5m': 5 * MINUTE, '15m': 15 * MINUTE, '1h': 60 * MINUTE, '1d': 1440 * MINUTE } as const;
export type Interval = keyof typeof INTERVALS;
/** Default look-back per interval when `from` is omitted. */
const DEFAULT_SPAN: Record<Interval, number> = { '1m': 86_400_000, '5m': 3 * 86_400_000, '15m': 7 * 86_400_000, '1h': 30 * 86_400_000, '1d': 365 * 86_400_000 };
const MAX_CANDLES = 10_000;

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
}

/**
 * Rolls one-minute candles (oldest first) up into `width`-ms buckets in [from, to). Buckets with no
 * minute after the first observed one carry the previous close (volume 0), so a chart has no holes
 * and a settled market stays at its settlement price rather than dropping to 50.
 */
export function rollup(minutes: readonly Candle[], width: number, from: number, to: number): OutCandle[] {
  const out: OutCandle[] = [];
  let cur: OutCandle | undefined;
  let curT = -1;
  let lastClose: number | undefined;
  let lastMid: number | undefined;
  const push = (): void => {
    if (cur) out.push(cur);
  };
  const fillTo = (t: number): void => {
    // empty buckets between the last one and bucket t
    if (lastClose === undefined) return;
    for (let b = curT + width; b < t; b += width)
      out.push({ t: b / 1000, open: lastClose, high: lastClose, low: lastClose, close: lastClose, volume: 0, mid: lastMid ?? lastClose });
  };
  for (const c of minutes) {
    if (c.t < from || c.t >= to) continue;
    const b = c.t - (((c.t % width) + width) % width);
    if (b !== curT) {
      push();
      if (curT >= 0) fillTo(b);
      cur = { t: b / 1000, open: toCents(c.o), high: toCents(c.h), low: toCents(c.l), close: toCents(c.c), volume: c.volume, mid: toCents(c.mid ?? c.c) };
      curT = b;
    } else if (cur) {
      cur.high = Math.max(cur.high, toCents(c.h));
      cur.low = Math.min(cur.low, toCents(c.l));
      cur.close = toCents(c.c);
      cur.volume += c.volume;
      cur.mid = toCents(c.mid ?? c.c);
    }
    lastClose = cur!.close;
    lastMid = cur!.mid;
  }
  push();
  if (curT >= 0) {
    const end = to - (((to % width) + width) % width);
    fillTo(end + (to % width === 0 ? 0 : width));
  }
  return out;
}

/** GET /prices/history (spec 4.8, 2.6). */
export function registerHistory(api: Api, ctx: ApiContext): void {
  api.route({
    path: '/prices/history',
    summary: 'OHLC candles of one market (cents)',
    description:
      'Candles {t (bucket start, unix seconds), open, high, low, close, volume (traded within the bucket), mid}. Built from one-minute candles; empty buckets after the first observation carry the previous close.',
    tags: ['prices'],
    query: z.object({
      platform: p.enum(ctx.venues.slugs(), { required: true }),
      market_id: p.string({ required: true, max: 300, description: 'platform-native id; for venue_a the full market ticker' }),
      interval: p.enum(Object.keys(INTERVALS) as Interval[], { default: '1h' }),
      from: p.isoTime({ description: 'ISO 8601; default depends on interval (1m: 1 day … 1d: 1 year)' }),
      to: p.isoTime({ description: 'ISO 8601, default now' }),
    }),
    handler: (c) => {
      const q = c.query;
      const v = ctx.venues.bySlug.get(q.platform!)!;
      const interval = q.interval!;
      const width = INTERVALS[interval];
      const now = Date.now();
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
      const known = ctx.state.catalog.get(v.label, marketId);
      // 1h and 1d read the stored rollups; shorter intervals roll up one-minute candles.
      const resolution = interval === '1h' || interval === '1d' ? interval : '1m';
      const minutes = ctx.persistence.candles(v.label, marketId, from - (from % width), to, resolution);
      const open = ctx.state.candles.current(v.label, marketId);
      if (open && open.t >= from && open.t < to && (minutes.length === 0 || minutes[minutes.length - 1]!.t < open.t)) minutes.push(open);
      if (!known && minutes.length === 0) return errorReply(404, 'not_found', `no ${v.slug} market "${marketId}"`);
      return jsonReply({
        platform: v.slug,
        market_id: marketId,
        interval,
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
        candles: rollup(minutes, width, from - (from % width), to),
      });
    },
  });
}
