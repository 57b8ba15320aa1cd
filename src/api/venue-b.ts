import { z } from 'zod';
import type { Api } from '../access/api.js';
import { p } from '../access/params.js';
import type { VenueConfig } from '../config/schema.js';
import { PAYOUT, toCents } from '../core/price.js';
import type { Reply } from '../server/http.js';
import { errorReply, jsonReply } from '../server/http.js';
import { currentYesPrice, wilsonLow, type Outcome, type PositionRecord, type TokenVolume, type WalletLedger, type WalletRecord } from '../signals/wallets.js';
import { MINUTE, type Candle } from '../state/candles.js';
import type { MarketRecord } from '../state/catalog.js';
import type { StoredTrade } from '../state/trades.js';
import { apiMarketId } from '../venues/protocol.js';
import { decodeCursor, encodeCursor, type ApiContext } from './context.js';
import { rollup } from './history.js';
import { tradeJson } from './trades.js';

/** Outcome token ids are uint256 in decimal. */
const TOKEN_RE = /^\d{1,78}$/;
/** Condition ids are 32 bytes in 0x-hex. */
const CONDITION_RE = /^0x[0-9a-fA-F]{64}$/;
/** Wallets (proxy wallets) are 20-byte 0x-hex addresses. */
const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Volume-class responses may be reused this long (spec 4.19, 8). */
const CACHE_MS = 20_000;
const CANDLE_INTERVALS = ['0', '1', '5', '15', '60', '1440'] as const;
const CHART_INTERVALS = ['1', '5', '15', '60', '1440'] as const;
const MAX_POINTS = 10_000;
/** Auto interval (candlesticks interval=0): the finest that keeps a range under this many candles. */
const AUTO_TARGET = 1_000;
const TOP_N = 20;
const WINDOWS = { '15m': 15 * MINUTE, '1h': HOUR, '6h': 6 * HOUR, '24h': DAY } as const;

const usd = (unitsTimesShares: number): number => Math.round(unitsTimesShares / 100) / 100;
const iso = (ms: number | undefined): string | null => (ms === undefined || ms === 0 ? null : new Date(ms).toISOString());
const bad = (name: string, message: string): Reply => errorReply(400, `validation.invalid_${name}`, `invalid parameter "${name}": ${message}`);

/** A small response cache: entries live `CACHE_MS`, at most `max` of them. */
class TtlCache {
  private readonly m = new Map<string, { at: number; body: Record<string, unknown> }>();
  constructor(private readonly max = 2_000) {}
  get(k: string, now: number): { at: number; body: Record<string, unknown> } | undefined {
    const e = this.m.get(k);
    if (e && now - e.at < CACHE_MS) return e;
    if (e) this.m.delete(k);
    return undefined;
  }
  set(k: string, now: number, body: Record<string, unknown>): void {
    if (this.m.size >= this.max) this.m.delete(this.m.keys().next().value!);
    this.m.set(k, { at: now, body });
  }
}

/**
 * venue_b endpoints (spec 4.17–4.19, 2.10) at `/<slug>/…`, where slug is the registry venue with
 * the `walletData` capability (a renamed slug renames every path). Paths of 4.19, which the spec
 * leaves to us, are documented in each route's summary:
 *
 *   /<slug>/market-price/{token_id}            4.17 price of a token now or at a time
 *   /<slug>/candlesticks/{condition_id}        4.18 YES-normalized OHLC, v null
 *   /<slug>/volume/{token_id}                  token volume over a window (default last 24 h)
 *   /<slug>/volume-chart/{token_id}            token volume per interval (default last 24 h)
 *   /<slug>/condition-volume/{condition_id}    market volume, per outcome token
 *   /<slug>/open-interest/{condition_id}       venue open interest + what tracked wallets hold
 *   /<slug>/leaderboard                        wallets ranked by PnL, volume or hit rate
 *   /<slug>/top-holders/{condition_id}         top 20 holders per outcome, offset pagination
 *   /<slug>/smart-activity                     markets smart wallets are entering (warming first)
 *   /<slug>/wallets/{address}                  identity and record of a wallet
 *   /<slug>/wallets/{address}/positions        its positions
 *   /<slug>/wallets/{address}/activity         its latest trades
 *
 * Volume, volume chart, condition volume and open interest responses are cached for up to 20 s
 * and carry `_meta` {watermark (newest trade materialized), refreshed_at (when this response was
 * computed), lag_seconds (refreshed_at − watermark: grows when the feed is behind or the market is
 * quiet), cached}. Top holders and the leaderboard are cached for 20 s too (refreshed_at, cached).
 * Wallet data is what the wallet ledger saw on trades since it started (`_meta.tracked_since`).
 */
export function registerVenueB(api: Api, ctx: ApiContext, ledger: WalletLedger): void {
  const found = ctx.venues.withCapability('walletData');
  if (!found) return;
  const v: VenueConfig = found;
  const label = v.label;
  const slug = v.slug;
  const state = ctx.state;
  const tags = [slug];
  const cache = new TtlCache();

  // token id → market and outcome, from the catalog (authoritative), rebuilt when it changes.
  let tokenIndex = new Map<string, { marketId: string; outcome: Outcome }>();
  let tokenIndexVersion = -1;
  const tokenInfo = (token: string): { marketId: string; outcome: Outcome; market: MarketRecord | undefined } | undefined => {
    if (state.catalog.version !== tokenIndexVersion) {
      tokenIndex = new Map();
      for (const m of state.catalog.venue(label).values()) {
        if (m.yesInstrument) tokenIndex.set(m.yesInstrument, { marketId: m.marketId, outcome: 'yes' });
        if (m.noInstrument) tokenIndex.set(m.noInstrument, { marketId: m.marketId, outcome: 'no' });
      }
      tokenIndexVersion = state.catalog.version;
    }
    const hit = tokenIndex.get(token) ?? ledger.token(label, token);
    return hit ? { ...hit, market: state.catalog.get(label, hit.marketId) } : undefined;
  };
  const tokenOf = (m: MarketRecord | undefined, o: Outcome): string | null => (o === 'yes' ? m?.yesInstrument : m?.noInstrument) ?? null;

  /** Validates a token path parameter and resolves it (400 malformed, 404 unknown). */
  const resolveToken = (raw: string): { token: string; marketId: string; outcome: Outcome; market: MarketRecord | undefined } | Reply => {
    if (!TOKEN_RE.test(raw)) return bad('token_id', `must be a ${slug} outcome token id (a decimal integer of up to 78 digits), got "${clip(raw)}"`);
    const t = tokenInfo(raw);
    if (!t) return errorReply(404, 'not_found', `unknown ${slug} token id "${clip(raw)}"`);
    return { token: raw, ...t };
  };
  /** Validates a condition id path parameter and resolves its market (400 malformed, 404 unknown). */
  const resolveCondition = (raw: string): { conditionId: string; marketId: string; market: MarketRecord | undefined } | Reply => {
    if (!CONDITION_RE.test(raw)) return bad('condition_id', `must be a ${slug} condition id (0x followed by 64 hex digits), got "${clip(raw)}"`);
    const marketId = apiMarketId(v, raw);
    const market = state.catalog.get(label, marketId) ?? state.catalog.get(label, apiMarketId(v, raw.toLowerCase()));
    if (!market && ledger.marketVolumes(label, marketId).length === 0) return errorReply(404, 'not_found', `unknown ${slug} condition id "${clip(raw)}"`);
    return { conditionId: raw, marketId: market?.marketId ?? marketId, market };
  };
  const resolveWallet = (raw: string): WalletRecord | Reply => {
    if (!ADDRESS_RE.test(raw)) return bad('address', `must be a wallet address (0x followed by 40 hex digits), got "${clip(raw)}"`);
    const w = ledger.wallet(raw);
    if (!w) return errorReply(404, 'not_found', `no ${slug} trades seen for wallet ${raw.toLowerCase()}`);
    return w;
  };
  const isReply = (x: unknown): x is Reply => typeof x === 'object' && x !== null && 'status' in x && 'body' in x;

  /** Time window of volume routes: default the last 24 h (spec 4.19); 400 when inverted. */
  const window = (q: { start_ts?: number | undefined; end_ts?: number | undefined }, now: number): { from: number; to: number; defaulted: boolean } | Reply => {
    const to = q.end_ts ?? now;
    const from = q.start_ts ?? to - DAY;
    if (from >= to) return errorReply(400, 'validation.time_range', 'invalid parameters "start_ts"/"end_ts": start_ts must be before end_ts');
    return { from, to, defaulted: q.start_ts === undefined };
  };
  const volumeMeta = (now: number, from: number, to: number, defaulted: boolean): Record<string, unknown> => {
    const wm = ledger.watermark.get(label);
    const availableFrom = ledger.volumeFrom(now);
    return {
      watermark: iso(wm),
      refreshed_at: new Date(now).toISOString(),
      lag_seconds: wm === undefined ? null : Math.max(0, Math.round((now - wm) / 1000)),
      cached: false,
      cache_ttl_seconds: CACHE_MS / 1000,
      data_available_from: new Date(availableFrom).toISOString(),
      start_ts: Math.floor(from / 1000),
      end_ts: Math.floor(to / 1000),
      default_window_applied: defaulted,
      ...(from < availableFrom ? { start_clamped: true } : {}),
    };
  };
  /** Serves `key` from the cache (marking it cached, with its age) or computes and stores it. */
  const cached = (key: string, compute: (now: number) => Record<string, unknown> | Reply): Reply => {
    const now = Date.now();
    const hit = cache.get(key, now);
    if (hit) {
      const meta = (hit.body['_meta'] ?? {}) as Record<string, unknown>;
      return jsonReply({ ...hit.body, _meta: { ...meta, cached: true, age_seconds: Math.round((now - hit.at) / 1000) } });
    }
    const body = compute(now);
    if (isReply(body)) return body;
    cache.set(key, now, body);
    return jsonReply(body);
  };
  const sumVolume = (tv: TokenVolume | undefined, from: number, to: number): { shares: number; notional: number; trades: number } => {
    const out = { shares: 0, notional: 0, trades: 0 };
    if (!tv) return out;
    for (const [m, b] of tv.buckets) {
      if (m < from - (from % MINUTE) || m >= to) continue;
      out.shares += b.shares;
      out.notional += b.notional;
      out.trades += b.trades;
    }
    out.shares = Math.round(out.shares * 1e6) / 1e6;
    return out;
  };
  const volumeJson = (s: { shares: number; notional: number; trades: number }): Record<string, unknown> => ({
    volume: s.shares,
    volume_usd: usd(s.notional),
    trades: s.trades,
  });
  const cacheKey = (c: { path: string; rawQuery: string }): string => `${c.path}?${c.rawQuery.replace(/(^|&)api_key=[^&]*/g, '')}`;

  /** The YES price of a market now: settlement, book mid, last trade. */
  const yesNow = (marketId: string) => currentYesPrice(state, label, marketId);

  // ---- 4.17 -------------------------------------------------------------------------------------

  api.route({
    path: `/${slug}/market-price/:token_id`,
    summary: `Price of a ${slug} outcome token (cents), now or at a time`,
    description:
      'Without timestamp: the current price (settlement once settled, else the mid of the book when the spread is at most 20¢, else the last trade); _meta.source says which. With timestamp (unix seconds): the closest price within ±1 hour from the one-minute candles (a minute opens at its start and closes at its end); 404 when none is that close. NO tokens are priced 100 − YES.',
    tags,
    pathParams: { token_id: 'outcome token id (decimal)' },
    query: z.object({ timestamp: p.unixSeconds({ description: 'unix seconds; omitted = current price' }) }),
    responseDescription: '{token_id, timestamp, price, _meta: {source, market_id, outcome}}',
    handler: (c) => {
      const r = resolveToken(c.path_['token_id']!);
      if (isReply(r)) return r;
      const now = Date.now();
      const side = (yes: number): number => toCents(r.outcome === 'yes' ? yes : PAYOUT - yes);
      const ts = c.query.timestamp;
      if (ts === undefined) {
        const y = yesNow(r.marketId);
        if (!y) return errorReply(404, 'not_found', `no current price for token ${r.token}`);
        return jsonReply({
          token_id: r.token,
          timestamp: Math.floor(now / 1000),
          price: side(y.price),
          _meta: { source: y.source, market_id: r.marketId, outcome: r.outcome },
        });
      }
      if (ts > now + HOUR) return bad('timestamp', 'is more than an hour in the future');
      const candles = minutes(r.marketId, ts - HOUR - MINUTE, ts + HOUR + 1);
      let best: { at: number; price: number } | undefined;
      const consider = (at: number, price: number): void => {
        if (Math.abs(at - ts) > HOUR) return;
        if (!best || Math.abs(at - ts) < Math.abs(best.at - ts) || (Math.abs(at - ts) === Math.abs(best.at - ts) && at < best.at)) best = { at, price };
      };
      for (const k of candles) {
        consider(k.t, k.o);
        consider(k.t + MINUTE, k.c);
      }
      if (!best) return errorReply(404, 'not_found', `no price for token ${r.token} within an hour of ${new Date(ts).toISOString()}`);
      return jsonReply({
        token_id: r.token,
        timestamp: Math.floor(best.at / 1000),
        price: side(best.price),
        _meta: { source: 'candles_1m', market_id: r.marketId, outcome: r.outcome, requested_timestamp: Math.floor(ts / 1000) },
      });
    },
  });

  /** One-minute candles of a market in [from, to): persisted ones plus the open one. */
  function minutes(marketId: string, from: number, to: number): Candle[] {
    const out = ctx.persistence.candles(label, marketId, from, to);
    const open = state.candles.current(label, marketId);
    if (open && open.t >= from && open.t < to && (out.length === 0 || out[out.length - 1]!.t < open.t)) out.push(open);
    return out;
  }

  // ---- 4.18 -------------------------------------------------------------------------------------

  api.route({
    path: `/${slug}/candlesticks/:condition_id`,
    summary: `Market-level OHLC of a ${slug} market, normalized to the YES side (cents); v is null`,
    description: `interval in minutes: 1, 5, 15, 60, 1440, or 0 (default) = auto, the finest that keeps the range under ${AUTO_TARGET} candles. Range default: the last 24 hours. Empty buckets after the first observation carry the previous close. v is null at market level: use /${slug}/volume-chart.`,
    tags,
    pathParams: { condition_id: 'condition id (0x + 64 hex)' },
    query: z.object({
      interval: p.enum(CANDLE_INTERVALS, { default: '0', description: 'minutes; 0 = auto' }),
      start_ts: p.unixSeconds({ description: 'unix seconds, default end_ts − 24 h' }),
      end_ts: p.unixSeconds({ description: 'unix seconds, default now' }),
    }),
    responseDescription: '{condition_id, interval, candlesticks: [{t, o, h, l, c, v: null}]}',
    handler: (c) => {
      const r = resolveCondition(c.path_['condition_id']!);
      if (isReply(r)) return r;
      const w = window(c.query, Date.now());
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
      const out = rollup(minutes(r.marketId, from, w.to), width, from, w.to).map((k) => ({ t: k.t, o: k.open, h: k.high, l: k.low, c: k.close, v: null }));
      return jsonReply({
        condition_id: r.conditionId,
        interval: minutesPer,
        start_ts: Math.floor(w.from / 1000),
        end_ts: Math.floor(w.to / 1000),
        candlesticks: out,
      });
    },
  });

  // ---- 4.19 volume ------------------------------------------------------------------------------

  const timeQuery = {
    start_ts: p.unixSeconds({ description: 'unix seconds, default end_ts − 24 h' }),
    end_ts: p.unixSeconds({ description: 'unix seconds, default now' }),
  };

  api.route({
    path: `/${slug}/volume/:token_id`,
    summary: `GET /${slug}/volume/{token_id}: shares and USD traded in one outcome token over a window (default the last 24 hours)`,
    description: 'Minute resolution. Cached up to 20 s; _meta carries the materialization watermark (newest trade included), refreshed_at and lag_seconds.',
    tags,
    pathParams: { token_id: 'outcome token id (decimal)' },
    query: z.object(timeQuery),
    responseDescription:
      '{token_id, condition_id, outcome, volume, volume_usd, trades, _meta: {watermark, refreshed_at, lag_seconds, cached, data_available_from, start_ts, end_ts, default_window_applied}}',
    handler: (c) => {
      const r = resolveToken(c.path_['token_id']!);
      if (isReply(r)) return r;
      return cached(cacheKey(c), (now) => {
        const w = window(c.query, now);
        if (isReply(w)) return w;
        const s = sumVolume(ledger.tokenVolume(label, r.token), w.from, w.to);
        return { token_id: r.token, condition_id: r.marketId, outcome: r.outcome, ...volumeJson(s), _meta: volumeMeta(now, w.from, w.to, w.defaulted) };
      });
    },
  });

  api.route({
    path: `/${slug}/volume-chart/:token_id`,
    summary: `GET /${slug}/volume-chart/{token_id}: volume of one outcome token per interval (default the last 24 hours)`,
    description: `interval in minutes: 1, 5, 15, 60 (default), 1440; at most ${MAX_POINTS} points. Buckets without trades are 0. Cached up to 20 s; _meta as /${slug}/volume.`,
    tags,
    pathParams: { token_id: 'outcome token id (decimal)' },
    query: z.object({ interval: p.enum(CHART_INTERVALS, { default: '60', description: 'minutes' }), ...timeQuery }),
    responseDescription: '{token_id, interval, points: [{t, volume, volume_usd, trades}], _meta}',
    handler: (c) => {
      const r = resolveToken(c.path_['token_id']!);
      if (isReply(r)) return r;
      return cached(cacheKey(c), (now) => {
        const w = window(c.query, now);
        if (isReply(w)) return w;
        const width = Number(c.query.interval) * MINUTE;
        if ((w.to - w.from) / width > MAX_POINTS)
          return errorReply(
            400,
            'validation.time_range',
            `invalid parameters "start_ts"/"end_ts": more than ${MAX_POINTS} points of ${c.query.interval} minutes`,
          );
        const start = w.from - (w.from % width);
        const n = Math.ceil((w.to - start) / width);
        const points = Array.from({ length: n }, (_, i) => ({ t: (start + i * width) / 1000, shares: 0, notional: 0, trades: 0 }));
        const tv = ledger.tokenVolume(label, r.token);
        if (tv)
          for (const [m, b] of tv.buckets) {
            if (m < start || m >= w.to) continue;
            const pt = points[Math.floor((m - start) / width)]!;
            pt.shares += b.shares;
            pt.notional += b.notional;
            pt.trades += b.trades;
          }
        return {
          token_id: r.token,
          condition_id: r.marketId,
          outcome: r.outcome,
          interval: Number(c.query.interval),
          points: points.map((pt) => ({ t: pt.t, volume: Math.round(pt.shares * 1e6) / 1e6, volume_usd: usd(pt.notional), trades: pt.trades })),
          _meta: volumeMeta(now, w.from, w.to, w.defaulted),
        };
      });
    },
  });

  api.route({
    path: `/${slug}/condition-volume/:condition_id`,
    summary: `GET /${slug}/condition-volume/{condition_id}: volume of a market over a window (default the last 24 hours), total and per outcome token`,
    description: 'Minute resolution. Cached up to 20 s; _meta carries watermark, refreshed_at and lag_seconds.',
    tags,
    pathParams: { condition_id: 'condition id (0x + 64 hex)' },
    query: z.object(timeQuery),
    responseDescription: '{condition_id, volume, volume_usd, trades, tokens: [{token_id, outcome, volume, volume_usd, trades}], _meta}',
    handler: (c) => {
      const r = resolveCondition(c.path_['condition_id']!);
      if (isReply(r)) return r;
      return cached(cacheKey(c), (now) => {
        const w = window(c.query, now);
        if (isReply(w)) return w;
        const byOutcome = new Map<Outcome, TokenVolume | undefined>([
          ['yes', undefined],
          ['no', undefined],
        ]);
        for (const tv of ledger.marketVolumes(label, r.marketId)) byOutcome.set(tv.outcome, tv);
        const total = { shares: 0, notional: 0, trades: 0 };
        const tokens = [...byOutcome].map(([o, tv]) => {
          const s = sumVolume(tv, w.from, w.to);
          total.shares += s.shares;
          total.notional += s.notional;
          total.trades += s.trades;
          return { token_id: tv?.token ?? tokenOf(r.market, o), outcome: o, ...volumeJson(s) };
        });
        total.shares = Math.round(total.shares * 1e6) / 1e6;
        return { condition_id: r.conditionId, ...volumeJson(total), tokens, _meta: volumeMeta(now, w.from, w.to, w.defaulted) };
      });
    },
  });

  // ---- 4.19 open interest, holders, leaderboard -------------------------------------------------

  /** Open positions of tracked wallets in a market, per outcome, largest first. */
  const holdings = (marketId: string): Record<Outcome, { w: WalletRecord; p: PositionRecord }[]> => {
    const out: Record<Outcome, { w: WalletRecord; p: PositionRecord }[]> = { yes: [], no: [] };
    for (const w of ledger.holdersOf(label, marketId))
      for (const o of ['yes', 'no'] as const) {
        const pos = ledger.positionOf(w, label, marketId, o);
        if (pos && pos.shares > 0) out[o].push({ w, p: pos });
      }
    for (const o of ['yes', 'no'] as const) out[o].sort((a, b) => b.p.shares - a.p.shares || (a.w.address < b.w.address ? -1 : 1));
    return out;
  };
  const venueOpenInterest = (m: MarketRecord | undefined, marketId: string): number | null =>
    state.quotes.get(label, marketId)?.openInterest ?? m?.openInterest ?? null;
  const sumShares = (xs: { p: PositionRecord }[]): number => Math.round(xs.reduce((a, x) => a + x.p.shares, 0) * 1e6) / 1e6;

  api.route({
    path: `/${slug}/open-interest/:condition_id`,
    summary: `GET /${slug}/open-interest/{condition_id}: open interest of a market (venue figure) and what tracked wallets hold per outcome`,
    description:
      "open_interest is the venue-reported figure (shares) when the venue publishes one, else null; tracked holdings are the wallet ledger's open positions (wallets seen on trades since _meta.tracked_since). Cached up to 20 s.",
    tags,
    pathParams: { condition_id: 'condition id (0x + 64 hex)' },
    responseDescription: '{condition_id, open_interest, source, tracked: [{token_id, outcome, shares, holders}], _meta}',
    handler: (c) => {
      const r = resolveCondition(c.path_['condition_id']!);
      if (isReply(r)) return r;
      return cached(cacheKey(c), (now) => {
        const h = holdings(r.marketId);
        const oi = venueOpenInterest(r.market, r.marketId);
        const wm = ledger.watermark.get(label);
        return {
          condition_id: r.conditionId,
          open_interest: oi,
          source: oi === null ? null : 'venue',
          tracked: (['yes', 'no'] as const).map((o) => ({
            token_id: tokenOf(r.market, o) ?? h[o][0]?.p.token ?? null,
            outcome: o,
            shares: sumShares(h[o]),
            holders: h[o].length,
          })),
          _meta: {
            watermark: iso(wm),
            refreshed_at: new Date(now).toISOString(),
            lag_seconds: wm === undefined ? null : Math.max(0, Math.round((now - wm) / 1000)),
            cached: false,
            tracked_since: iso(ledger.firstTradeAt),
          },
        };
      });
    },
  });

  api.route({
    path: `/${slug}/top-holders/:condition_id`,
    summary: `GET /${slug}/top-holders/{condition_id}: the top ${TOP_N} holders of each outcome, offset pagination`,
    description: `Each outcome lists up to ${TOP_N} holders by shares (offset + limit within the top ${TOP_N}). _meta.coverage says how much of the market the tracked wallets cover: holders and shares tracked per outcome, the venue open interest when known and the share of it covered. Wallets that bought before tracked_since are not covered. Cached up to 20 s.`,
    tags,
    pathParams: { condition_id: 'condition id (0x + 64 hex)' },
    query: z.object({ limit: p.int({ min: 1, max: TOP_N, default: TOP_N }), offset: p.int({ min: 0, max: TOP_N - 1, default: 0 }) }),
    responseDescription:
      '{condition_id, outcomes: [{outcome, token_id, holders: [{rank, wallet, shares, avg_price, cost_usd, value_usd}], has_more}], pagination: {offset, limit}, _meta: {coverage}}',
    handler: (c) => {
      const r = resolveCondition(c.path_['condition_id']!);
      if (isReply(r)) return r;
      const { limit, offset } = c.query as { limit: number; offset: number };
      return cached(cacheKey(c), (now) => {
        const h = holdings(r.marketId);
        const y = yesNow(r.marketId);
        const oi = venueOpenInterest(r.market, r.marketId);
        const outcomes = (['yes', 'no'] as const).map((o) => {
          const top = h[o].slice(0, TOP_N);
          const px = y === undefined ? undefined : o === 'yes' ? y.price : PAYOUT - y.price;
          return {
            outcome: o,
            token_id: tokenOf(r.market, o) ?? top[0]?.p.token ?? null,
            holders: top.slice(offset, offset + limit).map((x, i) => ({
              rank: offset + i + 1,
              wallet: x.w.address,
              shares: x.p.shares,
              avg_price: toCents(Math.round(x.p.cost / x.p.shares)),
              cost_usd: usd(x.p.cost),
              value_usd: px === undefined ? null : usd(px * x.p.shares),
            })),
            has_more: offset + limit < top.length,
          };
        });
        const tracked = (o: Outcome): number => sumShares(h[o]);
        return {
          condition_id: r.conditionId,
          outcomes,
          pagination: { offset, limit, top_n: TOP_N },
          _meta: {
            coverage: {
              top_n: TOP_N,
              holders_tracked: { yes: h.yes.length, no: h.no.length },
              shares_tracked: { yes: tracked('yes'), no: tracked('no') },
              venue_open_interest: oi,
              share_of_open_interest: oi ? { yes: Math.round((tracked('yes') / oi) * 1000) / 1000, no: Math.round((tracked('no') / oi) * 1000) / 1000 } : null,
              tracked_since: iso(ledger.firstTradeAt),
            },
            refreshed_at: new Date(now).toISOString(),
            cached: false,
          },
        };
      });
    },
  });

  api.route({
    path: `/${slug}/leaderboard`,
    summary: `GET /${slug}/leaderboard: wallets ranked by PnL (realized + marked to market), realized PnL, volume or hit rate; offset pagination`,
    description: `hit_rate ranks by the lower 95% bound of the share of good entries (so a wallet with few entries does not top it by luck). min_entries filters on scored entries. Cached up to 20 s.`,
    tags,
    query: z.object({
      sort: p.enum(['pnl', 'realized_pnl', 'volume', 'hit_rate'] as const, { default: 'pnl' }),
      limit: p.int({ min: 1, max: 100, default: 20 }),
      offset: p.int({ min: 0, max: 10_000, default: 0 }),
      min_entries: p.int({ min: 0, max: 100_000, default: 0, description: 'minimum scored entries' }),
    }),
    responseDescription:
      '{leaderboard: [{rank, wallet, pnl_usd, realized_pnl_usd, unrealized_pnl_usd, volume_usd, trades, markets_traded, scored_entries, hit_rate, hit_rate_lower_bound, first_seen, last_seen}], pagination: {offset, limit, count, total, has_more}, _meta}',
    handler: (c) => {
      const q = c.query as { sort: LeaderSort; limit: number; offset: number; min_entries: number };
      const now = Date.now();
      // The ranking (one pass over every wallet's positions) is built once per sort and
      // min_entries for 20 s; pages are slices of it, so walking the offsets costs one build.
      const key = `${q.sort}|${q.min_entries}`;
      let board = boards.get(key);
      if (!board || now - board.at >= CACHE_MS) {
        board = { at: now, rows: rank(q.sort, q.min_entries) };
        boards.set(key, board);
      }
      const rows = board.rows;
      const page = rows.slice(q.offset, q.offset + q.limit);
      return jsonReply({
        leaderboard: page.map((x, i) => ({
          rank: q.offset + i + 1,
          wallet: x.w.address,
          pnl_usd: usd(x.realized + x.unrealized),
          realized_pnl_usd: usd(x.realized),
          unrealized_pnl_usd: usd(x.unrealized),
          volume_usd: usd(x.volume),
          trades: x.w.trades,
          markets_traded: x.w.markets.size + (x.w.marketsEvicted ?? 0),
          scored_entries: x.w.entries.scored,
          hit_rate: x.w.entries.scored ? Math.round((x.w.entries.good / x.w.entries.scored) * 1000) / 1000 : null,
          hit_rate_lower_bound: Math.round(x.lb * 1000) / 1000,
          first_seen: iso(x.w.firstSeen),
          last_seen: iso(x.w.lastSeen),
        })),
        pagination: { offset: q.offset, limit: q.limit, count: page.length, total: rows.length, has_more: q.offset + page.length < rows.length },
        _meta: {
          sort: q.sort,
          refreshed_at: new Date(board.at).toISOString(),
          cached: board.at !== now,
          tracked_since: iso(ledger.firstTradeAt),
          tracked_wallets: ledger.walletCount,
        },
      });
    },
  });

  type LeaderSort = 'pnl' | 'realized_pnl' | 'volume' | 'hit_rate';
  type LeaderRow = { w: WalletRecord; realized: number; unrealized: number; volume: number; lb: number };
  const boards = new Map<string, { at: number; rows: LeaderRow[] }>();
  /** Every wallet with a position on this venue, ranked; PnL marks open positions at the current price. */
  function rank(sort: LeaderSort, minEntries: number): LeaderRow[] {
    const prices = new Map<string, number | undefined>();
    const priceOf = (marketId: string): number | undefined => {
      if (!prices.has(marketId)) prices.set(marketId, yesNow(marketId)?.price);
      return prices.get(marketId);
    };
    const rows: LeaderRow[] = [];
    for (const w of ledger.allWallets()) {
      if (w.entries.scored < minEntries) continue;
      let unrealized = 0;
      let realized = 0;
      let any = false;
      for (const pos of w.positions.values()) {
        if (pos.venue !== label) continue;
        any = true;
        realized += pos.realized;
        if (pos.shares > 0) {
          const y = priceOf(pos.marketId);
          if (y !== undefined) unrealized += (pos.outcome === 'yes' ? y : PAYOUT - y) * pos.shares - pos.cost;
        }
      }
      if (any) rows.push({ w, realized, unrealized, volume: w.volume, lb: wilsonLow(w.entries.good, w.entries.scored) });
    }
    const key = (x: LeaderRow): number =>
      sort === 'pnl' ? x.realized + x.unrealized : sort === 'realized_pnl' ? x.realized : sort === 'volume' ? x.volume : x.lb;
    rows.sort((a, b) => key(b) - key(a) || (a.w.address < b.w.address ? -1 : 1));
    return rows;
  }

  // ---- 4.19 Smart Activity ----------------------------------------------------------------------

  api.route({
    path: `/${slug}/smart-activity`,
    summary: `GET /${slug}/smart-activity: markets that smart wallets are entering, ranked by distinct smart wallets then USD`,
    description:
      'A smart wallet has at least the smart-money minimum of scored entries with a good-entry rate whose lower 95% bound passes the threshold (see /alerts/smart-money). While the ledger has scored too few entries to tell smart wallets apart, _meta.warming is true and the response has no ranking: an empty list then does not mean no activity; retry with backoff (_meta.retry_after_seconds).',
    tags,
    query: z.object({ window: p.enum(Object.keys(WINDOWS) as (keyof typeof WINDOWS)[], { default: '1h' }), limit: p.int({ min: 1, max: 100, default: 20 }) }),
    responseDescription:
      '{markets: [{rank, market_id, title, smart_wallets, entries, amount_usd, yes: {wallets, shares, amount_usd}, no: {…}, direction, last_entry_at}], _meta: {warming, window, scored_entries, as_of}}',
    handler: (c) => {
      const now = Date.now();
      const base = { window: c.query.window, scored_entries: ledger.scoredTotal, as_of: new Date(now).toISOString() };
      if (ledger.warming())
        return jsonReply({
          markets: [],
          _meta: {
            warming: true,
            ...base,
            needed_scored_entries: ledger.options.warmMinScored,
            retry_after_seconds: Math.max(5, Math.round(ledger.horizonMs / 1000 / 4)),
          },
        });
      type Side = { wallets: Set<string>; shares: number; notional: number };
      const agg = new Map<string, { yes: Side; no: Side; entries: number; last: number }>();
      for (const f of ledger.smartFlow(now - WINDOWS[c.query.window!])) {
        if (f.venue !== label) continue;
        let a = agg.get(f.marketId);
        if (!a)
          agg.set(
            f.marketId,
            (a = { yes: { wallets: new Set(), shares: 0, notional: 0 }, no: { wallets: new Set(), shares: 0, notional: 0 }, entries: 0, last: 0 }),
          );
        const s = a[f.outcome];
        s.wallets.add(f.wallet);
        s.shares += f.size;
        s.notional += f.notional;
        a.entries++;
        if (f.timestamp > a.last) a.last = f.timestamp;
      }
      const rows = [...agg].map(([marketId, a]) => ({
        marketId,
        a,
        wallets: new Set([...a.yes.wallets, ...a.no.wallets]).size,
        notional: a.yes.notional + a.no.notional,
      }));
      rows.sort((x, y) => y.wallets - x.wallets || y.notional - x.notional || (x.marketId < y.marketId ? -1 : 1));
      const side = (s: Side) => ({ wallets: s.wallets.size, shares: Math.round(s.shares * 1e6) / 1e6, amount_usd: usd(s.notional) });
      return jsonReply({
        markets: rows.slice(0, c.query.limit).map((x, i) => ({
          rank: i + 1,
          market_id: x.marketId,
          title: state.catalog.get(label, x.marketId)?.title ?? null,
          smart_wallets: x.wallets,
          entries: x.a.entries,
          amount_usd: usd(x.notional),
          yes: side(x.a.yes),
          no: side(x.a.no),
          direction: x.a.yes.notional > 2 * x.a.no.notional ? 'yes' : x.a.no.notional > 2 * x.a.yes.notional ? 'no' : 'mixed',
          last_entry_at: iso(x.a.last),
        })),
        _meta: { warming: false, ...base, markets_with_activity: rows.length },
      });
    },
  });

  // ---- 4.19 wallets -----------------------------------------------------------------------------

  const entryJson = (w: WalletRecord): Record<string, unknown> => {
    const e = w.entries;
    return {
      made: e.made,
      scored: e.scored,
      good: e.good,
      bad: e.bad,
      neutral: e.scored - e.good - e.bad,
      hit_rate: e.scored ? Math.round((e.good / e.scored) * 1000) / 1000 : null,
      hit_rate_lower_bound: Math.round(wilsonLow(e.good, e.scored) * 1000) / 1000,
      avg_move_cents: e.scored ? Math.round(e.moveSum / e.scored) / 100 : null,
    };
  };

  api.route({
    path: `/${slug}/wallets/:address`,
    summary: `GET /${slug}/wallets/{address}: identity and record of a wallet (first/last seen, volume, PnL, scored entries, labels)`,
    description:
      'labels: smart_money (passes the smart-money test), fade (reliably wrong). name and pseudonym: the latest public profile the venue showed on one of the wallet\'s trades; null when it never showed one (maker-only wallets, anonymous traders).',
    tags,
    pathParams: { address: 'wallet address (0x + 40 hex), case-insensitive' },
    responseDescription:
      '{wallet: {address, name, pseudonym, labels, first_seen, last_seen, trades, taker_trades, maker_trades, volume_usd, markets_traded, open_positions, realized_pnl_usd, entries}, _meta}',
    handler: (c) => {
      const w = resolveWallet(c.path_['address']!);
      if (isReply(w)) return w;
      const labels = [...(ledger.isSmart(w) ? ['smart_money'] : []), ...(ledger.isFade(w) ? ['fade'] : [])];
      let open = 0;
      for (const pos of w.positions.values()) if (pos.shares > 0) open++;
      return jsonReply({
        wallet: {
          address: w.address,
          name: w.name ?? null,
          pseudonym: w.pseudonym ?? null,
          labels,
          first_seen: iso(w.firstSeen),
          last_seen: iso(w.lastSeen),
          trades: w.trades,
          taker_trades: w.takerTrades,
          maker_trades: w.makerTrades,
          volume_usd: usd(w.volume),
          markets_traded: w.markets.size + (w.marketsEvicted ?? 0),
          open_positions: open,
          realized_pnl_usd: usd(w.realized),
          entries: entryJson(w),
        },
        _meta: { tracked_since: iso(ledger.firstTradeAt), horizon_seconds: Math.round(ledger.horizonMs / 1000), good_move_cents: ledger.goodMove / 100 },
      });
    },
  });

  api.route({
    path: `/${slug}/wallets/:address/positions`,
    summary: `GET /${slug}/wallets/{address}/positions: a wallet's positions (shares, average price, cost, current value, PnL); offset pagination`,
    description: 'status: open (default; shares held), closed (sold out or settled), all. Largest cost first for open positions, most recent first otherwise.',
    tags,
    pathParams: { address: 'wallet address (0x + 40 hex)' },
    query: z.object({
      status: p.enum(['open', 'closed', 'all'] as const, { default: 'open' }),
      limit: p.int({ min: 1, max: 500, default: 100 }),
      offset: p.int({ min: 0, max: 100_000, default: 0 }),
    }),
    responseDescription:
      '{wallet, positions: [{market_id, title, token_id, outcome, status, shares, avg_price, cost_usd, current_price, value_usd, unrealized_pnl_usd, realized_pnl_usd, opened_at, updated_at, settled_at, payout}], pagination: {offset, limit, count, total, has_more}}',
    handler: (c) => {
      const w = resolveWallet(c.path_['address']!);
      if (isReply(w)) return w;
      const q = c.query as { status: 'open' | 'closed' | 'all'; limit: number; offset: number };
      const all = [...w.positions.values()].filter((x) => x.venue === label && (q.status === 'all' || (q.status === 'open') === x.shares > 0));
      all.sort(
        (a, b) =>
          (q.status === 'open' ? b.cost - a.cost : b.updatedAt - a.updatedAt) ||
          (a.marketId < b.marketId ? -1 : a.marketId > b.marketId ? 1 : a.outcome < b.outcome ? -1 : 1),
      );
      const page = all.slice(q.offset, q.offset + q.limit).map((x) => {
        const m = state.catalog.get(label, x.marketId);
        const y = x.shares > 0 ? yesNow(x.marketId) : undefined;
        const px = y === undefined ? undefined : x.outcome === 'yes' ? y.price : PAYOUT - y.price;
        return {
          market_id: x.marketId,
          title: m?.title ?? null,
          token_id: x.token ?? tokenOf(m, x.outcome),
          outcome: x.outcome,
          status: x.settledAt !== undefined ? 'settled' : x.shares > 0 ? 'open' : 'closed',
          shares: x.shares,
          avg_price: x.shares > 0 ? toCents(Math.round(x.cost / x.shares)) : null,
          cost_usd: usd(x.cost),
          current_price: px === undefined ? null : toCents(px),
          value_usd: px === undefined ? null : usd(px * x.shares),
          unrealized_pnl_usd: px === undefined ? null : usd(px * x.shares - x.cost),
          realized_pnl_usd: usd(x.realized),
          bought: x.bought,
          sold: x.sold,
          opened_at: iso(x.openedAt),
          updated_at: iso(x.updatedAt),
          settled_at: iso(x.settledAt),
          payout: x.payout === undefined ? null : toCents(x.payout),
        };
      });
      return jsonReply({
        wallet: w.address,
        positions: page,
        pagination: { offset: q.offset, limit: q.limit, count: page.length, total: all.length, has_more: q.offset + page.length < all.length },
      });
    },
  });

  const tradesDb = ctx.persistence.db('trades');
  api.route({
    path: `/${slug}/wallets/:address/activity`,
    summary: `GET /${slug}/wallets/{address}/activity: a wallet's latest trades, newest first (cursor pagination)`,
    description: `Trades in the unified record of /trades plus role (taker or maker). The ledger indexes each wallet's latest ${ledger.options.recentTrades} trades; older ones are in /trades?wallet=.`,
    tags,
    pathParams: { address: 'wallet address (0x + 40 hex)' },
    query: z.object({ limit: p.int({ min: 1, max: 100, default: 50 }), cursor: p.string({ max: 2000 }) }),
    responseDescription: '{wallet, activity: [Trade & {role}], pagination: {limit, count, cursor, has_more}, _meta: {indexed}}',
    handler: (c) => {
      const w = resolveWallet(c.path_['address']!);
      if (isReply(w)) return w;
      let before = Number.MAX_SAFE_INTEGER;
      if (c.query.cursor !== undefined) {
        const k = decodeCursor(c.query.cursor);
        if (!k || typeof k['s'] !== 'number') return errorReply(400, 'validation.invalid_cursor', 'invalid parameter "cursor": not a cursor this API issued');
        before = k['s'];
      }
      const out: Record<string, unknown>[] = [];
      let last = 0;
      let more = false;
      for (let i = w.recent.length - 1; i >= 0; i--) {
        const seq = w.recent[i]!;
        if (seq >= before) continue;
        const t = tradesDb.get(seq) as StoredTrade | undefined;
        if (!t || t.venue !== label) continue;
        if (out.length === c.query.limit) {
          more = true;
          break;
        }
        out.push({ ...tradeJson(slug, t), role: t.taker?.toLowerCase() === w.address ? 'taker' : 'maker' });
        last = seq;
      }
      return jsonReply({
        wallet: w.address,
        activity: out,
        pagination: { limit: c.query.limit, count: out.length, cursor: more ? encodeCursor({ s: last }) : null, has_more: more },
        _meta: { indexed: w.recent.length },
      });
    },
  });
}

function clip(s: string): string {
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}
