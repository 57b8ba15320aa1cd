import { z } from 'zod';
import { typedReply, type Api } from '../../access/api.js';
import { p } from '../../access/params.js';
import { errorReply } from '../../server/http.js';
import { MINUTE } from '../../state/candles.js';
import { rollup } from '../history.js';
import { isReply, MAX_POINTS, NOT_FOUND, PATH, type VenueB } from './shared.js';
import { cents } from '../../views/schemas.js';

/** The 200 body of /<venue_b>/candlesticks/{condition_id}. */
export const Candlesticks = z.object({
  condition_id: z.string(),
  interval: z.number().int().describe('minutes per candle (the one chosen when interval=0)'),
  start_ts: z.number().int().describe('unix seconds'),
  end_ts: z.number().int().describe('unix seconds'),
  candlesticks: z.array(
    z.object({
      t: z.number().int().describe('bucket start, unix seconds'),
      o: cents('open (YES)'),
      h: cents('high'),
      l: cents('low'),
      c: cents('close'),
      v: z.null().describe('null at market level: see volume-chart'),
    }),
  ),
});

const CANDLE_INTERVALS = ['0', '1', '5', '15', '60', '1440'] as const;
/** Auto interval (candlesticks interval=0): the finest that keeps a range under this many candles. */
const AUTO_TARGET = 1_000;

/** 4.18: /<slug>/candlesticks/{condition_id}, YES-normalized OHLC of a market, v null. */
export function registerCandlesticks(api: Api, b: VenueB): void {
  api.route({
    path: `/${b.slug}/candlesticks/:condition_id`,
    summary: `Market-level OHLC of a ${b.slug} market, normalized to the YES side (cents); v is null`,
    description: `interval in minutes: 1, 5, 15, 60, 1440, or 0 (default) = auto, the finest that keeps the range under ${AUTO_TARGET} candles. Range default: the last 24 hours. Empty buckets after the first observation carry the previous close. v is null at market level: use /${b.slug}/volume-chart.`,
    tags: b.tags,
    pathParams: { condition_id: PATH.condition_id },
    query: z.object({
      interval: p.enum(CANDLE_INTERVALS, { default: '0', description: 'minutes; 0 = auto' }),
      start_ts: p.unixSeconds({ description: `unix seconds, default end_ts − 24 h; before end_ts, at most ${MAX_POINTS} candles of the interval` }),
      end_ts: p.unixSeconds({ description: 'unix seconds, default now' }),
    }),
    response: Candlesticks,
    errors: { 404: NOT_FOUND },
    handler: (c) => {
      const r = b.resolveCondition(c.path_['condition_id']!);
      if (isReply(r)) return r;
      const w = b.window(c.query, b.ctx.clock.now());
      if (isReply(w)) return w;
      let minutesPer = Number(c.query.interval);
      if (minutesPer === 0) minutesPer = [1, 5, 15, 60, 1440].find((m) => (w.to - w.from) / (m * MINUTE) <= AUTO_TARGET) ?? 1440;
      const width = minutesPer * MINUTE;
      if ((w.to - w.from) / width > MAX_POINTS)
        return errorReply(
          400,
          'validation.time_range',
          `invalid parameters "start_ts"/"end_ts": more than ${MAX_POINTS} candles of ${minutesPer} minutes; narrow the range or use a wider interval`,
        );
      const from = w.from - (w.from % width);
      const out = rollup(b.minutes(r.marketId, from, w.to), width, from, w.to).map((k) => ({ t: k.t, o: k.open, h: k.high, l: k.low, c: k.close, v: null }));
      return typedReply(Candlesticks, {
        condition_id: r.conditionId,
        interval: minutesPer,
        start_ts: Math.floor(w.from / 1000),
        end_ts: Math.floor(w.to / 1000),
        candlesticks: out,
      });
    },
  });
}
