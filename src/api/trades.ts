import type { Database, Key } from 'lmdb';
import { z } from 'zod';
import { type Api } from '../access/api.js';
import { p } from '../access/params.js';
import { toCents } from '../core/price.js';
import { errorReply, type Reply } from '../server/http.js';
import type { StoredTrade } from '../state/trades.js';
import { decodeCursor, type ApiContext } from './context.js';
import {
  compareKeys,
  passesFilters,
  TradePage,
  TradePages,
  type KnownTrade,
  type PageRow,
  type PageScope,
  type TimeKey,
  type TradeRows,
} from './trade-pages.js';
import { count, ErrorFields, time, Trade } from '../views/schemas.js';

/** The 200 body of /trades. */
export const TradesPage = z.object({
  trades: z.array(Trade),
  pagination: z.object({
    limit: count('page size requested'),
    count: count('trades on this page'),
    pagination_key: z.string().nullable().describe('pass back for the next page; null on the last page'),
    has_more: z.boolean(),
  }),
  next_cursor: z.string().nullable().describe('= pagination.pagination_key: pass it as pagination_key or cursor; null on the last page'),
  _meta: z.object({
    data_available_from: time('oldest trade served (retention boundary)'),
    start_time: z.number().int().describe('window start served, unix seconds'),
    end_time: z.number().int().describe('window end served, unix seconds'),
    default_window_applied: z.boolean().describe('an unfiltered request without start_time got the default window'),
  }),
});

/** The 422 body of a window before the hot window (strict mode). */
export const OutsideHotWindow = z.object({
  ...ErrorFields,
  error_code: z.literal('history_outside_hot_window'),
  data_available_from: time('start of the hot window'),
  historical_data: z.string().describe('where older trades are served, or why they are not'),
});

/** The unified trade record (spec 2.9). */
export function tradeJson(slug: string, t: StoredTrade): z.output<typeof Trade> {
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
    // Spec 2.9 types the addresses as strings: "" where the venue names no wallet (venue_a never does).
    maker_addr: t.maker ?? '',
    taker_addr: t.taker ?? '',
    executed_at: new Date(t.timestamp).toISOString(),
    timestamp: Math.floor(t.timestamp / 1000),
  };
}

/**
 * GET /trades (spec 4.16): the unified per-trade feed of the venues whose registry entry has the
 * `trades` capability, ordered by trade time across venues (newest first by default, ties by
 * arrival sequence) from the [timestamp, seq] index beside the trade log. Keyset pagination on
 * that pair: a page never shifts while trades arrive, late ones included (a trade a polled venue
 * delivers late lands in its time place, ahead of or behind the key). The pagination key carries
 * the window it was issued for.
 */
export function registerTrades(api: Api, ctx: ApiContext): void {
  const tradeVenues = ctx.venues.enabled.filter((v) => v.capabilities.trades);
  const tradeSlugs = tradeVenues.map((v) => v.slug);
  const walletVenue = ctx.venues.withCapability('walletData');
  const cfg = ctx.config.api;
  const retentionMs = cfg.tradesRetentionDays * 86_400_000;
  const trades = ctx.persistence.db('trades');
  const byTime = ctx.persistence.db('tradesByTime');

  /** The retention boundary: the older of what we keep and what we still hold. */
  const availableFrom = (now: number): number => {
    let oldest = now;
    for (const key of byTime.getKeys({ limit: 1 })) oldest = timeKey(key)[0];
    return Math.max(now - retentionMs, Math.min(oldest, now));
  };

  // Trades past the retention boundary are pruned by the persistence flow (pipelines/persistence.ts), on the engine's clock.
  const pages = new TradePages(MAX_CACHED_PAGES);
  ctx.tradePages = pages;
  // The log is read again only after a write to it or its index settled (Persistence.tradeLogSettled): the trades committed since, and the first key of the index.
  let logAt = -1;
  let seenSeq = -1;
  let first: TimeKey | undefined;

  /** Hands the pages the trades committed since the last look; a moved first key (a prune, an older trade) empties them. */
  const follow = (): void => {
    let head: TimeKey | undefined;
    for (const key of byTime.getKeys({ limit: 1 })) head = timeKey(key);
    if (seenSeq < 0 || head?.[0] !== first?.[0] || head?.[1] !== first?.[1]) {
      first = head;
      seenSeq = 0;
      for (const key of trades.getKeys({ limit: 1, reverse: true })) seenSeq = key as number;
      return pages.clear();
    }
    const fresh: KnownTrade[] = [];
    for (const { key, value } of trades.getRange({ start: seenSeq + 1 })) {
      seenSeq = key as number;
      const t = value as StoredTrade;
      const k: TimeKey = [t.timestamp, t.seq];
      // A trade whose index entry was not written (dropped while the disk was full) is not listed.
      if (byTime.doesExist(k as unknown as Key)) fresh.push(pages.rows.add(k, t, tradeJson(ctx.venues.slugOf(t.venue), t)));
    }
    if (fresh.length > 0) pages.commit(fresh);
  };

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
    responseDescription: 'Trades newest first by default; next_cursor = pagination.pagination_key (pass it as pagination_key or cursor; null on the last page)',
    response: TradesPage,
    errors: {
      422: {
        description: 'start_time before the hot window while the instance serves it strictly (code history_outside_hot_window)',
        schema: OutsideHotWindow,
      },
    },
    handler: (c) => {
      // "Now" is the end of the current second, so a page is a function of the query, that second
      // and the committed log: a page is kept for the second, and takes the trades committed into it.
      const now = Math.floor(ctx.clock.now() / 1000) * 1000 + 999;
      if (ctx.persistence.tradeLogSettled !== logAt) {
        logAt = ctx.persistence.tradeLogSettled;
        follow();
      }
      const hit = pages.get(c.query, now);
      if (hit) return hit.reply;
      const q = { ...c.query, pagination_key: c.query.pagination_key ?? c.query.cursor };
      if (c.query.cursor !== undefined && q.pagination_key !== c.query.cursor)
        return errorReply(400, 'validation.invalid_pagination_key', 'invalid parameters: pagination_key and cursor are two different tokens (give one)');
      const page = tradesPage(q, now);
      if ('status' in page) return page;
      pages.put(c.query, page);
      return page.reply;
    },
  });

  /** The page of one /trades query at `now`, or the error reply. */
  function tradesPage(q: TradesQuery & { readonly platform?: string | undefined }, now: number): TradePage | Reply {
    const from = availableFrom(now);
    const w = tradeWindow(q, now, from, cfg, trades);
    if ('status' in w) return w;
    const labels = new Set((q.platform ? tradeVenues.filter((v) => v.slug === q.platform) : tradeVenues).map((v) => v.label));
    if ((q.token_id !== undefined || q.wallet !== undefined) && walletVenue) {
      for (const l of [...labels]) if (l !== walletVenue.label) labels.delete(l);
    }
    const scope: PageScope = {
      labels,
      marketId: q.market_id,
      tokenId: q.token_id,
      wallet: q.wallet?.toLowerCase(),
      minTotal: q.min_total,
      desc: q.order === 'desc',
      limit: q.limit!,
      startMs: w.startMs,
      endMs: w.endMs,
      after: w.after,
    };
    const page = scanTrades(ctx, scope, pages.rows);
    return new TradePage(scope, page.rows, page.hasMore, {
      data_available_from: new Date(from).toISOString(),
      start_time: Math.floor(w.startMs / 1000),
      end_time: Math.floor(w.endMs / 1000),
      default_window_applied: w.defaultWindow,
    });
  }
}

/** Most /trades pages kept for the current second. */
const MAX_CACHED_PAGES = 1000;

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

/** An index key as written by Persistence.appendTrade. */
function timeKey(k: Key): TimeKey {
  return k as unknown as TimeKey;
}

/** The time window of a /trades request (ms) and where a pagination key resumes (exclusive). */
interface TradeWindow {
  readonly startMs: number;
  readonly endMs: number;
  readonly after: TimeKey | undefined;
  readonly defaultWindow: boolean;
}

/**
 * The window of a request: the pagination key's when it carries one, else start_time/end_time;
 * an unfiltered request without start_time gets the default window; a start before the hot window
 * is clamped to it, or refused (422) in strict mode.
 */
function tradeWindow(q: TradesQuery, now: number, from: number, cfg: ApiContext['config']['api'], trades: Database): TradeWindow | Reply {
  let startMs = q.start_time;
  let endMs = q.end_time ?? now;
  let after: TimeKey | undefined;
  if (q.pagination_key !== undefined) {
    const k = decodeCursor(q.pagination_key);
    const t = k?.['t'] ?? keyTime(trades, k?.['s']);
    if (
      !k ||
      typeof t !== 'number' ||
      typeof k['s'] !== 'number' ||
      typeof k['a'] !== 'number' ||
      typeof k['b'] !== 'number' ||
      (k['o'] !== 'asc' && k['o'] !== 'desc')
    )
      return errorReply(400, 'validation.invalid_pagination_key', 'invalid parameter "pagination_key": not a key this API issued');
    if (k['o'] !== q.order) return errorReply(400, 'validation.invalid_pagination_key', 'invalid parameter "pagination_key": issued for the other order');
    after = [t, k['s']];
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
  return { startMs, endMs, after, defaultWindow };
}

/**
 * The trade time of a key issued before keys carried it (`s` alone, the arrival sequence):
 * looked up in the log, so a client paging across an upgrade carries on.
 */
function keyTime(trades: Database, seq: unknown): number | undefined {
  if (typeof seq !== 'number') return undefined;
  return (trades.get(seq) as StoredTrade | undefined)?.timestamp;
}

/**
 * One page of trades in the scope's order: its rows (index key and JSON bytes) and whether more
 * follow. A trade a page listed lately is taken from `known` with its row; another is read from
 * the log, and kept there once it is listed: a filtered scan passes over many that it does not
 * list, and keeping those would hold a window's worth of trades.
 */
function scanTrades(ctx: ApiContext, s: PageScope, known: TradeRows): { rows: PageRow[]; hasMore: boolean } {
  const trades = ctx.persistence.db('trades');
  const rows: PageRow[] = [];
  let hasMore = false;
  for (const key of ctx.persistence.db('tradesByTime').getKeys(timeRange(s, s.desc))) {
    const k = timeKey(key);
    if ((s.after && compareKeys(k, s.after) === 0) || k[0] < s.startMs || k[0] > s.endMs) continue;
    const kept = known.get(k[1]);
    let stored: StoredTrade | undefined;
    let record: z.output<typeof Trade> | undefined;
    if (kept !== undefined) {
      if (!passesFilters(s, kept.trade) || (s.minTotal !== undefined && kept.amountUsd < s.minTotal)) continue;
    } else {
      stored = trades.get(k[1]) as StoredTrade | undefined;
      if (!stored || !passesFilters(s, stored)) continue;
      record = tradeJson(ctx.venues.slugOf(stored.venue), stored);
      if (s.minTotal !== undefined && record.amount_usd < s.minTotal) continue;
    }
    if (rows.length === s.limit) {
      hasMore = true;
      break;
    }
    rows.push((kept ?? known.add(k, stored!, record!)).row);
  }
  return { rows, hasMore };
}

/**
 * The index range of a window, from the pagination key when there is one. Bounds are inclusive in
 * time: a one-element key [ms] sorts before every [ms, seq]. The key itself is skipped by the scan.
 */
function timeRange(w: Pick<TradeWindow, 'after' | 'startMs' | 'endMs'>, desc: boolean): { start: number[]; end: number[]; reverse: boolean } {
  if (desc) return { start: w.after ? [...w.after] : [w.endMs + 1], end: [w.startMs], reverse: true };
  return { start: w.after ? [...w.after] : [w.startMs], end: [w.endMs + 1], reverse: false };
}

/** The 422 of a start before the hot window, pointing at where older trades are served. */
function outside(from: number, historical: string | null): Reply {
  return errorReply(422, 'history_outside_hot_window', `start_time is before the hot window, which begins at ${new Date(from).toISOString()}`, {
    error_code: 'history_outside_hot_window',
    data_available_from: new Date(from).toISOString(),
    historical_data: historical ?? 'not configured: older trades are not served by this instance',
  });
}
