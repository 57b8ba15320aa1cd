import { z } from 'zod';
import type { Api } from '../../access/api.js';
import { p } from '../../access/params.js';
import { errorReply } from '../../server/http.js';
import type { Outcome, TokenVolume } from '../../signals/wallets.js';
import { MINUTE } from '../../state/candles.js';
import { isReply, MAX_POINTS, NOT_FOUND, PATH, roundShares, usd, volumeJson, volumeShape, VolumeMeta, type VenueB } from './shared.js';

const outcome = z.enum(['yes', 'no']);

/** The 200 body of /<venue_b>/volume/{token_id}. */
export const TokenVolumeBody = z.object({ token_id: z.string(), condition_id: z.string().describe('market id'), outcome, ...volumeShape, _meta: VolumeMeta });

/** The 200 body of /<venue_b>/volume-chart/{token_id}. */
export const VolumeChart = z.object({
  token_id: z.string(),
  condition_id: z.string().describe('market id'),
  outcome,
  interval: z.number().int().describe('minutes per point'),
  points: z.array(z.object({ t: z.number().describe('bucket start, unix seconds'), ...volumeShape })),
  _meta: VolumeMeta,
});

/** The 200 body of /<venue_b>/condition-volume/{condition_id}. */
export const ConditionVolume = z.object({
  condition_id: z.string(),
  ...volumeShape,
  tokens: z.array(z.object({ token_id: z.string().nullable().describe('null when the catalog does not know it'), outcome, ...volumeShape })),
  _meta: VolumeMeta,
});

const CHART_INTERVALS = ['1', '5', '15', '60', '1440'] as const;
const timeQuery = {
  start_ts: p.unixSeconds({ description: 'unix seconds, default end_ts − 24 h' }),
  end_ts: p.unixSeconds({ description: 'unix seconds, default now' }),
};

/** 4.19 volume: /<slug>/volume/{token_id}, /<slug>/volume-chart/{token_id}, /<slug>/condition-volume/{condition_id}. */
export function registerVolume(api: Api, b: VenueB): void {
  registerTokenVolume(api, b);
  registerVolumeChart(api, b);
  registerConditionVolume(api, b);
}

function registerTokenVolume(api: Api, b: VenueB): void {
  api.route({
    path: `/${b.slug}/volume/:token_id`,
    summary: `GET /${b.slug}/volume/{token_id}: shares and USD traded in one outcome token over a window (default the last 24 hours)`,
    description: 'Minute resolution. Cached up to 20 s; _meta carries the materialization watermark (newest trade included), refreshed_at and lag_seconds.',
    tags: b.tags,
    pathParams: { token_id: PATH.token_id },
    query: z.object(timeQuery),
    response: TokenVolumeBody,
    errors: { 404: NOT_FOUND },
    handler: (c) => {
      const r = b.resolveToken(c.path_['token_id']!);
      if (isReply(r)) return r;
      return b.cached(c, (now) => {
        const w = b.window(c.query, now);
        if (isReply(w)) return w;
        const s = b.sumVolume(b.ledger.tokenVolume(b.label, r.token), w.from, w.to);
        return { token_id: r.token, condition_id: r.marketId, outcome: r.outcome, ...volumeJson(s), _meta: b.volumeMeta(now, w) };
      });
    },
  });
}

function registerVolumeChart(api: Api, b: VenueB): void {
  api.route({
    path: `/${b.slug}/volume-chart/:token_id`,
    summary: `GET /${b.slug}/volume-chart/{token_id}: volume of one outcome token per interval (default the last 24 hours)`,
    description: `interval in minutes: 1, 5, 15, 60 (default), 1440; at most ${MAX_POINTS} points. Buckets without trades are 0. Cached up to 20 s; _meta as /${b.slug}/volume.`,
    tags: b.tags,
    pathParams: { token_id: PATH.token_id },
    query: z.object({ interval: p.enum(CHART_INTERVALS, { default: '60', description: 'minutes' }), ...timeQuery }),
    response: VolumeChart,
    errors: { 404: NOT_FOUND },
    handler: (c) => {
      const r = b.resolveToken(c.path_['token_id']!);
      if (isReply(r)) return r;
      return b.cached(c, (now) => {
        const w = b.window(c.query, now);
        if (isReply(w)) return w;
        const width = Number(c.query.interval) * MINUTE;
        if ((w.to - w.from) / width > MAX_POINTS)
          return errorReply(
            400,
            'validation.time_range',
            `invalid parameters "start_ts"/"end_ts": more than ${MAX_POINTS} points of ${c.query.interval} minutes`,
          );
        const start = w.from - (w.from % width);
        const points = chart(b.ledger.tokenVolume(b.label, r.token), start, w.to, width);
        return {
          token_id: r.token,
          condition_id: r.marketId,
          outcome: r.outcome,
          interval: Number(c.query.interval),
          points: points.map((pt) => ({ t: pt.t, volume: roundShares(pt.shares), volume_usd: usd(pt.notional), trades: pt.trades })),
          _meta: b.volumeMeta(now, w),
        };
      });
    },
  });
}

/** A token's volume per bucket of `width` ms from `start` to `to`; buckets without trades are 0. */
function chart(tv: TokenVolume | undefined, start: number, to: number, width: number): { t: number; shares: number; notional: number; trades: number }[] {
  const n = Math.ceil((to - start) / width);
  const points = Array.from({ length: n }, (_, i) => ({ t: (start + i * width) / 1000, shares: 0, notional: 0, trades: 0 }));
  if (tv)
    for (const [m, bucket] of tv.buckets) {
      if (m < start || m >= to) continue;
      const pt = points[Math.floor((m - start) / width)]!;
      pt.shares += bucket.shares;
      pt.notional += bucket.notional;
      pt.trades += bucket.trades;
    }
  return points;
}

function registerConditionVolume(api: Api, b: VenueB): void {
  api.route({
    path: `/${b.slug}/condition-volume/:condition_id`,
    summary: `GET /${b.slug}/condition-volume/{condition_id}: volume of a market over a window (default the last 24 hours), total and per outcome token`,
    description: 'Minute resolution. Cached up to 20 s; _meta carries watermark, refreshed_at and lag_seconds.',
    tags: b.tags,
    pathParams: { condition_id: PATH.condition_id },
    query: z.object(timeQuery),
    response: ConditionVolume,
    errors: { 404: NOT_FOUND },
    handler: (c) => {
      const r = b.resolveCondition(c.path_['condition_id']!);
      if (isReply(r)) return r;
      return b.cached(c, (now) => {
        const w = b.window(c.query, now);
        if (isReply(w)) return w;
        const byOutcome = new Map<Outcome, TokenVolume | undefined>([
          ['yes', undefined],
          ['no', undefined],
        ]);
        for (const tv of b.ledger.marketVolumes(b.label, r.marketId)) byOutcome.set(tv.outcome, tv);
        const total = { shares: 0, notional: 0, trades: 0 };
        const tokens = [...byOutcome].map(([o, tv]) => {
          const s = b.sumVolume(tv, w.from, w.to);
          total.shares += s.shares;
          total.notional += s.notional;
          total.trades += s.trades;
          return { token_id: tv?.token ?? b.tokenOf(r.market, o), outcome: o, ...volumeJson(s) };
        });
        total.shares = roundShares(total.shares);
        return { condition_id: r.conditionId, ...volumeJson(total), tokens, _meta: b.volumeMeta(now, w) };
      });
    },
  });
}
