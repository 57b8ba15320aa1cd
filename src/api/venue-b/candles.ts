import { z } from 'zod';
import type { Api } from '../../access/api.js';
import { p } from '../../access/params.js';
import { errorReply, jsonReply } from '../../server/http.js';
import { MINUTE } from '../../state/candles.js';
import { rollup } from '../history.js';
import { isReply, MAX_POINTS, type VenueB } from './shared.js';

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
    pathParams: { condition_id: 'condition id (0x + 64 hex)' },
    query: z.object({
      interval: p.enum(CANDLE_INTERVALS, { default: '0', description: 'minutes; 0 = auto' }),
      start_ts: p.unixSeconds({ description: 'unix seconds, default end_ts − 24 h' }),
      end_ts: p.unixSeconds({ description: 'unix seconds, default now' }),
    }),
    responseDescription: '{condition_id, interval, candlesticks: [{t, o, h, l, c, v: null}]}',
    handler: (c) => {
      const r = b.resolveCondition(c.path_['condition_id']!);
      if (isReply(r)) return r;
      const w = b.window(c.query, Date.now());
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
      return jsonReply({
        condition_id: r.conditionId,
        interval: minutesPer,
        start_ts: Math.floor(w.from / 1000),
        end_ts: Math.floor(w.to / 1000),
        candlesticks: out,
      });
    },
  });
}
