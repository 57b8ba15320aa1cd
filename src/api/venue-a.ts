import { z } from 'zod';
import type { Api } from '../access/api.js';
import { p } from '../access/params.js';
import type { VenueConfig } from '../config/schema.js';
import { errorReply, jsonReply } from '../server/http.js';
import type { MarketRecord } from '../state/catalog.js';
import { decodeCursor, encodeCursor, type ApiContext } from './context.js';
import { cents, nativeId, noCents } from '../views/market.js';

/** Request status vocabulary → our statuses (spec 3: unopened, open, closed, settled). */
const STATUS_FILTER: Record<string, readonly string[]> = {
  unopened: ['initialized'],
  open: ['active'],
  closed: ['closed'],
  settled: ['determined', 'finalized'],
};
const MAX_SCAN_PAGES = 10;
/** Delta watermarks step back this far so that a market recorded in the same instant is not missed. */
const SAFETY_MS = 2_000;

interface Series {
  ticker: string;
  title: string | null;
  category: string | null;
  tags: readonly string[];
  frequency: string | null;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * The venue_a catalog (spec 4.20–4.22, record 2.11), at paths named by the slug of the registry
 * venue with the `catalog` capability: /<slug>/markets, /<slug>/markets/{ticker}, /<slug>/series.
 */
export function registerVenueA(api: Api, ctx: ApiContext): void {
  const found = ctx.venues.withCapability('catalog');
  if (!found) return;
  const v: VenueConfig = found;
  const label = v.label;
  const state = ctx.state;

  /**
   * The market's series is in the series catalog (its title came from it): only then does the
   * record carry category and tags, and only then can a category filter select it (spec 2.11). An
   * event-level category alone does not count.
   */
  const inSeriesCatalog = (m: MarketRecord): boolean => m.seriesId !== undefined && m.seriesTitle !== undefined && m.category !== undefined;

  const seriesIndex = (): Map<string, Series> => {
    const out = new Map<string, Series>();
    for (const m of state.catalog.venue(label).values()) {
      if (!inSeriesCatalog(m) || out.has(m.seriesId!)) continue;
      out.set(m.seriesId!, {
        ticker: m.seriesId!,
        title: m.seriesTitle ?? null,
        category: m.category!,
        tags: m.tags ?? [],
        frequency: str(m.extra?.['frequency']) ?? null,
      });
    }
    return out;
  };
  const categories = (): string[] => [...new Set([...seriesIndex().values()].map((s) => s.category!))].sort();
  const checkCategory = (c: string | undefined): string | undefined | { error: string } => {
    if (c === undefined) return undefined;
    const all = categories();
    const hit = all.find((x) => x.toLowerCase() === c.toLowerCase());
    return hit ?? { error: `invalid parameter "category": "${c}" is not a category; accepted: ${all.join(', ') || '(none known yet)'}` };
  };

  const record = (m: MarketRecord, withRules: boolean): Record<string, unknown> => {
    const q = state.quotes.get(label, m.marketId);
    const x = m.extra ?? {};
    const out: Record<string, unknown> = {
      ticker: nativeId(v, m.marketId),
      event_ticker: m.eventId ?? null,
      series_ticker: m.seriesId ?? null,
      title: m.title,
      subtitle: m.outcome ?? null,
      ...(inSeriesCatalog(m) ? { category: m.category, tags: m.tags ?? [] } : {}),
      status: m.status,
      result: m.result ?? null,
      settlement_value_dollars:
        str(x['settlement_value_dollars']) ??
        (m.settlementValue !== undefined && (m.status === 'determined' || m.status === 'finalized') ? (m.settlementValue / 10_000).toFixed(4) : null),
      yes_bid: cents(q?.yesBid),
      yes_ask: cents(q?.yesAsk),
      no_bid: noCents(q?.yesAsk),
      no_ask: noCents(q?.yesBid),
      last_price: cents(q?.lastPrice),
      volume_fp: str(x['volume_fp']) ?? (m.volume !== undefined ? m.volume.toFixed(2) : null),
      open_interest_fp: str(x['open_interest_fp']) ?? (m.openInterest !== undefined ? m.openInterest.toFixed(2) : null),
      ...(typeof x['volume'] === 'number' ? { volume: x['volume'] } : {}),
      ...(typeof x['open_interest'] === 'number' ? { open_interest: x['open_interest'] } : {}),
      first_seen_at: new Date(m.firstSeenAt).toISOString(),
      created_time: str(x['created_time']) ?? null,
      open_time: str(x['open_time']) ?? (m.openTime !== undefined ? new Date(m.openTime).toISOString() : null),
      close_time: str(x['close_time']) ?? (m.closeTime !== undefined ? new Date(m.closeTime).toISOString() : null),
      expiration_time: str(x['expiration_time']) ?? null,
      updated_time: str(x['updated_time']) ?? null,
      settlement_ts: str(x['settlement_ts']) ?? null,
      is_combo: x['combo'] === true,
    };
    if (withRules) out['rules'] = { primary: str(x['rules_primary']) ?? null, secondary: str(x['rules_secondary']) ?? null };
    return out;
  };

  const degraded = (): boolean => {
    const h = state.health.get(label);
    const now = Date.now();
    return !h || !h.connected || h.lastCatalogAt === 0 || now - h.lastCatalogAt > v.freshness.catalogMaxAgeSec * 1000;
  };

  const sortedTickers = (): MarketRecord[] => {
    const keys = ctx.marketKeys();
    const prefix = `${label}:`;
    const out: MarketRecord[] = [];
    for (const k of keys) if (k.startsWith(prefix)) out.push(state.catalog.byKey(k)!);
    return out;
  };

  api.route({
    path: `/${v.slug}/markets`,
    summary: `Full ${v.slug} catalog with live prices and status; walk cursor until null`,
    tags: [v.slug],
    query: z.object({
      status: p.enum(['unopened', 'open', 'closed', 'settled'] as const, { description: 'single value' }),
      event_ticker: p.string({ max: 200 }),
      series_ticker: p.string({ max: 200 }),
      tickers: p.list({ max: 1000, description: 'specific market tickers' }),
      category: p.string({ max: 100, description: 'series category, case-insensitive' }),
      min_close_ts: p.unixSeconds(),
      max_close_ts: p.unixSeconds(),
      include_combos: p.enum(['true', 'false'] as const, { default: 'false', description: 'combo/parlay markets; true with created_since is rejected' }),
      include: p.enum(['rules'] as const),
      limit: p.int({ min: 1, max: 1000, default: 100 }),
      cursor: p.string({ max: 2000 }),
      created_since: p.unixSeconds({ orIso: true, description: 'delta mode: markets first observed after this (unix seconds or ISO 8601)' }),
    }),
    responseDescription: '{markets: VenueAMarket[], cursor: string|null, _meta: {pages_scanned?, watermark?, omitted_tickers?, degraded?}}',
    handler: (c) => {
      const q = c.query;
      const cat = checkCategory(q.category);
      if (cat && typeof cat === 'object') return errorReply(400, 'validation.invalid_category', cat.error);
      const statuses = q.status ? STATUS_FILTER[q.status]! : undefined;
      const combos = q.include_combos === 'true';
      const withRules = q.include === 'rules';
      const passes = (m: MarketRecord): boolean =>
        (!statuses || statuses.includes(m.status)) &&
        (combos || m.extra?.['combo'] !== true) &&
        (cat === undefined || (inSeriesCatalog(m) && m.category!.toLowerCase() === (cat as string).toLowerCase()));

      if (q.created_since !== undefined) {
        const bad = (['tickers', 'event_ticker', 'series_ticker', 'min_close_ts', 'max_close_ts'] as const).filter((k) => q[k] !== undefined);
        if (bad.length)
          return errorReply(400, 'validation.delta_mode', `invalid parameters: ${bad.join(', ')} cannot be combined with created_since (delta mode)`);
        if (combos) return errorReply(400, 'validation.delta_mode', 'invalid parameters: include_combos=true cannot be combined with created_since');
        return delta(
          q.created_since,
          q.limit!,
          q.cursor,
          passes,
          withRules,
          statuses !== undefined && !statuses.includes('closed') && !statuses.includes('determined'),
        );
      }

      let after = '';
      if (q.cursor !== undefined) {
        const k = decodeCursor(q.cursor);
        if (!k || typeof k['k'] !== 'string') return errorReply(400, 'validation.invalid_cursor', 'invalid parameter "cursor": not a cursor this API issued');
        after = k['k'];
      }
      const tickers = Array.isArray(q.tickers) ? new Set(q.tickers) : undefined;
      const minClose = q.min_close_ts;
      const maxClose = q.max_close_ts;
      const match = (m: MarketRecord): boolean =>
        passes(m) &&
        (q.event_ticker === undefined || m.eventId === q.event_ticker) &&
        (q.series_ticker === undefined || m.seriesId === q.series_ticker) &&
        (!tickers || tickers.has(nativeId(v, m.marketId))) &&
        (minClose === undefined || (m.closeTime !== undefined && m.closeTime >= minClose)) &&
        (maxClose === undefined || (m.closeTime !== undefined && m.closeTime <= maxClose));
      const all = sortedTickers();
      let i = after ? all.findIndex((m) => m.marketId > after) : 0;
      if (i < 0) i = all.length;
      const out: Record<string, unknown>[] = [];
      let pages = 0;
      let last = after;
      if (cat !== undefined) {
        // Rule 1: scan up to 10 catalog pages of `limit` markets; return what matched in them.
        while (pages < MAX_SCAN_PAGES && i < all.length) {
          const end = Math.min(all.length, i + q.limit!);
          for (; i < end; i++) if (match(all[i]!)) out.push(record(all[i]!, withRules));
          last = all[end - 1]!.marketId;
          pages++;
        }
        return jsonReply({ markets: out, cursor: i < all.length ? encodeCursor({ k: last }) : null, _meta: { pages_scanned: pages } });
      }
      for (; i < all.length; i++) {
        const m = all[i]!;
        if (!match(m)) continue;
        if (out.length === q.limit) break;
        out.push(record(m, withRules));
        last = m.marketId;
      }
      return jsonReply({ markets: out, cursor: i < all.length ? encodeCursor({ k: last }) : null, _meta: {} });
    },
  });

  /** Delta mode (rule 2–6): markets first recorded after `since`, oldest first, by internal record time. */
  function delta(
    since: number,
    limit: number,
    cursor: string | undefined,
    passes: (m: MarketRecord) => boolean,
    withRules: boolean,
    excludesFinished: boolean,
  ) {
    let afterT = since;
    let afterK = '';
    if (cursor !== undefined) {
      const k = decodeCursor(cursor);
      if (!k || typeof k['t'] !== 'number' || typeof k['k'] !== 'string')
        return errorReply(400, 'validation.invalid_cursor', 'invalid parameter "cursor": not a cursor this API issued');
      afterT = k['t'];
      afterK = k['k'];
    }
    const fresh = [...state.catalog.venue(label).values()]
      .filter((m) => m.recordedAt > afterT || (m.recordedAt === afterT && afterK !== '' && m.marketId > afterK))
      .sort((a, b) => a.recordedAt - b.recordedAt || (a.marketId < b.marketId ? -1 : 1));
    const examined = fresh.slice(0, limit);
    const out: Record<string, unknown>[] = [];
    const omitted: string[] = [];
    for (const m of examined) {
      const finishedKnown = m.status === 'closed' || m.status === 'determined' || m.status === 'finalized';
      if (passes(m) && !(excludesFinished && m.closeTime === undefined)) out.push(record(m, withRules));
      else if (!finishedKnown) omitted.push(nativeId(v, m.marketId));
    }
    const lastM = examined[examined.length - 1];
    const more = fresh.length > examined.length;
    const isDegraded = degraded();
    const watermarkMs = isDegraded || !lastM ? since : Math.max(since, lastM.recordedAt - SAFETY_MS);
    return jsonReply({
      markets: out,
      cursor: more && lastM ? encodeCursor({ t: lastM.recordedAt, k: lastM.marketId }) : null,
      _meta: { watermark: new Date(watermarkMs).toISOString(), omitted_tickers: omitted, ...(isDegraded ? { degraded: true } : {}) },
    });
  }

  api.route({
    path: `/${v.slug}/markets/:ticker`,
    summary: `One ${v.slug} market with live prices, status and rules (kept after archival)`,
    tags: [v.slug],
    pathParams: { ticker: 'full market ticker' },
    handler: (c) => {
      const t = c.path_['ticker']!;
      const m = state.catalog.get(label, t);
      if (!m) return errorReply(404, 'not_found', `unknown ${v.slug} market ticker "${t}" (a market ticker, not an event ticker)`);
      return jsonReply({ market: record(m, true) });
    },
  });

  api.route({
    path: `/${v.slug}/series`,
    summary: `${v.slug} series of a category`,
    tags: [v.slug],
    query: z.object({ category: p.string({ required: true, max: 100, description: 'case-insensitive, same values as the markets filter' }) }),
    handler: (c) => {
      const cat = checkCategory(c.query.category);
      if (cat && typeof cat === 'object') return errorReply(400, 'validation.invalid_category', cat.error);
      const series = [...seriesIndex().values()].filter((s) => s.category === cat).sort((a, b) => (a.ticker < b.ticker ? -1 : 1));
      return jsonReply({ series: series.map((s) => ({ ticker: s.ticker, title: s.title, tags: s.tags, frequency: s.frequency, category: s.category })) });
    },
  });
}
