import { z } from 'zod';
import type { Api } from '../access/api.js';
import { p } from '../access/params.js';
import { toCents } from '../core/price.js';
import { errorReply, jsonReply, type Reply } from '../server/http.js';
import type { StoredTrade } from '../state/trades.js';
import { decodeCursor, encodeCursor, type ApiContext } from './context.js';

/** Trades may arrive out of time order by this much (polled venues): scans stop this far past a bound. */
const SLACK_MS = 10 * 60_000;

/** The unified trade record (spec 2.9). */
export function tradeJson(slug: string, t: StoredTrade): Record<string, unknown> {
  const price = toCents(t.price);
  return {
    platform: slug,
    trade_id: t.tradeId,
    market_id: t.marketId,
    token_id: t.instrument ?? t.marketId,
    side: t.side ?? null,
    taker_side: t.takerSide ?? null,
    price,
    shares: t.size,
    amount_usd: Math.round(price * t.size) / 100,
    maker_addr: t.maker ?? null,
    taker_addr: t.taker ?? null,
    executed_at: new Date(t.timestamp).toISOString(),
    timestamp: Math.floor(t.timestamp / 1000),
  };
}

/**
 * GET /trades (spec 4.16): the unified per-trade feed of the venues whose registry entry has the
 * `trades` capability. Newest first by default; keyset pagination on our arrival sequence, so a
 * page never shifts while trades arrive. The pagination key carries the window it was issued for.
 */
export function registerTrades(api: Api, ctx: ApiContext): void {
  const tradeVenues = ctx.venues.enabled.filter((v) => v.capabilities.trades);
  const tradeSlugs = tradeVenues.map((v) => v.slug);
  const walletVenue = ctx.venues.withCapability('walletData');
  const cfg = ctx.config.api;
  const retentionMs = cfg.tradesRetentionDays * 86_400_000;
  const trades = ctx.persistence.db('trades');

  /** The retention boundary: the older of what we keep and what we still hold. */
  const availableFrom = (now: number): number => {
    let oldest = now;
    for (const { value } of trades.getRange({ limit: 1 })) oldest = (value as StoredTrade).timestamp;
    return Math.max(now - retentionMs, Math.min(oldest, now));
  };

  // Prune past the retention boundary once an hour (and at start).
  const prune = (): void => {
    const cutoff = Date.now() - retentionMs;
    let n = 0;
    for (const { key, value } of trades.getRange()) {
      if ((value as StoredTrade).timestamp >= cutoff || n >= 100_000) break;
      void trades.remove(key);
      n++;
    }
  };
  prune();
  setInterval(prune, 3_600_000).unref();

  api.route({
    path: '/trades',
    summary: `Unified per-trade feed (${tradeSlugs.join(', ')})`,
    tags: ['trades'],
    query: z.object({
      platform: p.enum(tradeSlugs, { description: 'default: all trade venues' }),
      market_id: p.string({ max: 300, description: 'condition id or ticker' }),
      token_id: p.string({ max: 200, description: `outcome token id (${walletVenue?.slug ?? 'wallet venue'} only)` }),
      wallet: p.string({ max: 100, description: `maker or taker address (${walletVenue?.slug ?? 'wallet venue'} only)` }),
      start_time: p.unixSeconds({ description: 'unix seconds; clamped up to the start of available data' }),
      end_time: p.unixSeconds({ description: 'unix seconds, default now' }),
      min_total: p.number({ min: 0, description: 'minimum notional USD' }),
      limit: p.int({ min: 1, max: 500, default: 100 }),
      order: p.enum(['asc', 'desc'] as const, { default: 'desc' }),
      pagination_key: p.string({ max: 2000 }),
      cursor: p.string({ max: 2000, description: 'next_cursor of the previous page: the same token as pagination_key' }),
    }),
    responseDescription:
      '{trades: Trade[], pagination: {limit, count, pagination_key, has_more}, next_cursor (= pagination.pagination_key: pass it as pagination_key or cursor; null on the last page), _meta: {data_available_from, start_time?, end_time?, default_window_applied?}}',
    handler: (c) => {
      const q = { ...c.query, pagination_key: c.query.pagination_key ?? c.query.cursor };
      if (c.query.cursor !== undefined && q.pagination_key !== c.query.cursor)
        return errorReply(400, 'validation.invalid_pagination_key', 'invalid parameters: pagination_key and cursor are two different tokens (give one)');
      const now = Date.now();
      const from = availableFrom(now);
      const w = tradeWindow(q, now, from, cfg);
      if ('status' in w) return w;
      const labels = new Set((q.platform ? tradeVenues.filter((v) => v.slug === q.platform) : tradeVenues).map((v) => v.label));
      if ((q.token_id !== undefined || q.wallet !== undefined) && walletVenue) {
        for (const l of [...labels]) if (l !== walletVenue.label) labels.delete(l);
      }
      const page = scanTrades(ctx, q, w, labels);
      const key = page.hasMore ? encodeCursor({ s: page.lastSeq, a: w.startMs, b: w.endMs, o: q.order }) : null;
      return jsonReply({
        trades: page.out,
        pagination: { limit: q.limit, count: page.out.length, pagination_key: key, has_more: page.hasMore },
        next_cursor: key,
        _meta: {
          data_available_from: new Date(from).toISOString(),
          start_time: Math.floor(w.startMs / 1000),
          end_time: Math.floor(w.endMs / 1000),
          default_window_applied: w.defaultWindow,
        },
      });
    },
  });
}

/** The /trades query as the handler reads it. */
interface TradesQuery {
  readonly market_id?: string | undefined;
  readonly token_id?: string | undefined;
  readonly wallet?: string | undefined;
  readonly start_time?: number | undefined;
  readonly end_time?: number | undefined;
  readonly min_total?: number | undefined;
  readonly limit?: number | undefined;
  readonly order?: 'asc' | 'desc' | undefined;
  readonly pagination_key?: string | undefined;
}

/** The time window of a /trades request (ms) and where a pagination key resumes. */
interface TradeWindow {
  readonly startMs: number;
  readonly endMs: number;
  readonly afterSeq: number | undefined;
  readonly defaultWindow: boolean;
}

/**
 * The window of a request: the pagination key's when it carries one, else start_time/end_time;
 * an unfiltered request without start_time gets the default window; a start before the hot window
 * is clamped to it, or refused (422) in strict mode.
 */
function tradeWindow(q: TradesQuery, now: number, from: number, cfg: ApiContext['config']['api']): TradeWindow | Reply {
  let startMs = q.start_time;
  let endMs = q.end_time ?? now;
  let afterSeq: number | undefined;
  if (q.pagination_key !== undefined) {
    const k = decodeCursor(q.pagination_key);
    if (!k || typeof k['s'] !== 'number' || typeof k['a'] !== 'number' || typeof k['b'] !== 'number' || (k['o'] !== 'asc' && k['o'] !== 'desc'))
      return errorReply(400, 'validation.invalid_pagination_key', 'invalid parameter "pagination_key": not a key this API issued');
    if (k['o'] !== q.order) return errorReply(400, 'validation.invalid_pagination_key', 'invalid parameter "pagination_key": issued for the other order');
    afterSeq = k['s'];
    startMs = k['a'];
    endMs = k['b'];
    if (cfg.tradesStrictHotWindow && startMs < from) return outside(from, cfg.historicalDataUrl);
  }
  if (startMs !== undefined && endMs < startMs) return errorReply(400, 'validation.time_range', 'invalid parameters: end_time must not be before start_time');
  const filtered = q.market_id !== undefined || q.token_id !== undefined || q.wallet !== undefined;
  let defaultWindow = false;
  if (startMs === undefined) {
    if (filtered) startMs = from;
    else {
      startMs = Math.max(from, endMs - cfg.tradesDefaultWindowHours * 3_600_000);
      defaultWindow = true;
    }
  } else if (startMs < from) {
    if (cfg.tradesStrictHotWindow) return outside(from, cfg.historicalDataUrl);
    startMs = from;
  }
  return { startMs, endMs, afterSeq, defaultWindow };
}

/** One page of trades of the venues `labels` in the window, in the request's order, filtered. */
function scanTrades(
  ctx: ApiContext,
  q: TradesQuery,
  w: TradeWindow,
  labels: ReadonlySet<string>,
): { out: Record<string, unknown>[]; lastSeq: number; hasMore: boolean } {
  const wallet = q.wallet?.toLowerCase();
  const desc = q.order === 'desc';
  const { startMs, endMs, afterSeq } = w;
  const out: Record<string, unknown>[] = [];
  let lastSeq = 0;
  let hasMore = false;
  const range = desc
    ? { reverse: true, ...(afterSeq !== undefined ? { start: afterSeq - 1 } : {}) }
    : { ...(afterSeq !== undefined ? { start: afterSeq + 1 } : {}) };
  for (const { value } of ctx.persistence.db('trades').getRange(range)) {
    const t = value as StoredTrade;
    if (desc ? t.timestamp < startMs - SLACK_MS : t.timestamp > endMs + SLACK_MS) break;
    if (t.timestamp < startMs || t.timestamp > endMs) continue;
    if (!labels.has(t.venue)) continue;
    if (q.market_id !== undefined && t.marketId !== q.market_id) continue;
    if (q.token_id !== undefined && t.instrument !== q.token_id) continue;
    if (wallet !== undefined && t.maker?.toLowerCase() !== wallet && t.taker?.toLowerCase() !== wallet) continue;
    const json = tradeJson(ctx.venues.slugOf(t.venue), t);
    if (q.min_total !== undefined && (json['amount_usd'] as number) < q.min_total) continue;
    if (out.length === q.limit) {
      hasMore = true;
      break;
    }
    out.push(json);
    lastSeq = t.seq;
  }
  return { out, lastSeq, hasMore };
}

/** The 422 of a start before the hot window, pointing at where older trades are served. */
function outside(from: number, historical: string | null): Reply {
  return errorReply(422, 'history_outside_hot_window', `start_time is before the hot window, which begins at ${new Date(from).toISOString()}`, {
    error_code: 'history_outside_hot_window',
    data_available_from: new Date(from).toISOString(),
    historical_data: historical ?? 'not configured: older trades are not served by this instance',
  });
}
