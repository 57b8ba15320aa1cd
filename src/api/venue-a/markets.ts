import { z } from 'zod';
import { typedReply, type Api } from '../../access/api.js';
import { p } from '../../access/params.js';
import { errorReply, type Reply } from '../../server/http.js';
import type { MarketRecord } from '../../state/catalog.js';
import { decodeCursor, encodeCursor } from '../context.js';
import { categoryPattern, inSeriesCatalog, VenueAMarket, type VenueA } from './shared.js';
import { documentAs } from '../../access/params.js';
import { cursor, time } from '../../views/schemas.js';

/** The 200 body of /<venue_a>/markets/{ticker}. */
export const VenueAMarketBody = z.object({ market: VenueAMarket });

/** The 200 body of /<venue_a>/markets. */
export const VenueAMarketsPage = z.object({
  markets: z.array(VenueAMarket),
  cursor,
  next_cursor: cursor,
  _meta: z.object({
    pages_scanned: z.number().int().optional().describe('category filter: catalog pages scanned (at most 10)'),
    watermark: time('delta mode: pass as created_since next time').optional(),
    omitted_tickers: z.array(z.string()).optional().describe('delta mode: new markets the filters left out'),
    degraded: z.literal(true).optional().describe('delta mode: the catalog is not known to be current'),
  }),
});

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

const invalidCursor = (): Reply => errorReply(400, 'validation.invalid_cursor', 'invalid parameter "cursor": not a cursor this API issued');

/** /<slug>/markets: the full catalog with live prices, cursor pages, a category scan and delta mode. */
export function registerMarketList(api: Api, a: VenueA): void {
  api.route({
    path: `/${a.slug}/markets`,
    summary: `Full ${a.slug} catalog with live prices and status; walk cursor until null`,
    tags: [a.slug],
    query: z.object({
      status: p.enum(['unopened', 'open', 'closed', 'settled'] as const, { description: 'single value' }),
      event_ticker: p.string({ max: 200 }),
      series_ticker: p.string({ max: 200 }),
      tickers: p.list({ max: 1000, description: 'specific market tickers' }),
      category: documentAs(p.string({ max: 100, description: 'series category, case-insensitive' }), () => ({
        type: 'string',
        pattern: categoryPattern(a.categories()),
      })),
      min_close_ts: p.unixSeconds(),
      max_close_ts: p.unixSeconds(),
      include_combos: p.enum(['true', 'false'] as const, { default: 'false', description: 'combo/parlay markets; true with created_since is rejected (400)' }),
      include: p.enum(['rules'] as const),
      limit: p.int({ min: 1, max: 1000, default: 100 }),
      cursor: p.string({ max: 2000 }),
      created_since: p.unixSeconds({
        orIso: true,
        description:
          'delta mode: markets first observed after this (unix seconds or ISO 8601); cannot be combined with tickers, event_ticker, series_ticker, min_close_ts, max_close_ts or include_combos=true (400)',
      }),
    }),
    responseDescription: 'A page of the catalog; next_cursor = cursor',
    response: VenueAMarketsPage,
    handler: (c) => {
      const q = c.query;
      const cat = a.checkCategory(q.category);
      if (cat && typeof cat === 'object') return errorReply(400, 'validation.invalid_category', cat.error);
      const statuses = q.status ? STATUS_FILTER[q.status]! : undefined;
      const combos = q.include_combos === 'true';
      const withRules = q.include === 'rules';
      const passes = (m: MarketRecord): boolean =>
        (!statuses || statuses.includes(m.status)) &&
        (combos || m.extra?.['combo'] !== true) &&
        (cat === undefined || (inSeriesCatalog(m) && m.category!.toLowerCase() === cat.toLowerCase()));

      if (q.created_since !== undefined) {
        const bad = (['tickers', 'event_ticker', 'series_ticker', 'min_close_ts', 'max_close_ts'] as const).filter((k) => q[k] !== undefined);
        if (bad.length)
          return errorReply(400, 'validation.delta_mode', `invalid parameters: ${bad.join(', ')} cannot be combined with created_since (delta mode)`);
        if (combos) return errorReply(400, 'validation.delta_mode', 'invalid parameters: include_combos=true cannot be combined with created_since');
        const excludesFinished = statuses !== undefined && !statuses.includes('closed') && !statuses.includes('determined');
        return delta(a, { since: q.created_since, limit: q.limit!, cursor: q.cursor, passes, withRules, excludesFinished });
      }

      let after = '';
      if (q.cursor !== undefined) {
        const k = decodeCursor(q.cursor);
        if (!k || typeof k['k'] !== 'string') return invalidCursor();
        after = k['k'];
      }
      const tickers = Array.isArray(q.tickers) ? new Set(q.tickers) : undefined;
      const minClose = q.min_close_ts;
      const maxClose = q.max_close_ts;
      const match = (m: MarketRecord): boolean =>
        passes(m) &&
        (q.event_ticker === undefined || m.eventId === q.event_ticker) &&
        (q.series_ticker === undefined || m.seriesId === q.series_ticker) &&
        (!tickers || tickers.has(a.ticker(m.marketId))) &&
        (minClose === undefined || (m.closeTime !== undefined && m.closeTime >= minClose)) &&
        (maxClose === undefined || (m.closeTime !== undefined && m.closeTime <= maxClose));
      const page = { after, limit: q.limit!, match, withRules };
      return cat !== undefined ? scan(a, page) : list(a, page);
    },
  });
}

/** A page of the catalog after the market id `after`, of markets `match` accepts. */
interface PageRequest {
  readonly after: string;
  readonly limit: number;
  readonly match: (m: MarketRecord) => boolean;
  readonly withRules: boolean;
}

/** Index in `all` of the first market after the market id `after`. */
function start(all: readonly MarketRecord[], after: string): number {
  const i = after ? all.findIndex((m) => m.marketId > after) : 0;
  return i < 0 ? all.length : i;
}

/** Up to `limit` matching markets after the cursor. */
function list(a: VenueA, r: PageRequest): Reply {
  const all = a.sortedMarkets();
  let i = start(all, r.after);
  let last = r.after;
  const out: z.output<typeof VenueAMarket>[] = [];
  for (; i < all.length; i++) {
    const m = all[i]!;
    if (!r.match(m)) continue;
    if (out.length === r.limit) break;
    out.push(a.record(m, r.withRules));
    last = m.marketId;
  }
  const cursor = i < all.length ? encodeCursor({ k: last }) : null;
  return typedReply(VenueAMarketsPage, { markets: out, cursor, next_cursor: cursor, _meta: {} });
}

/** Rule 1 of a category filter: scan up to 10 catalog pages of `limit` markets; return what matched in them. */
function scan(a: VenueA, r: PageRequest): Reply {
  const all = a.sortedMarkets();
  let i = start(all, r.after);
  let last = r.after;
  let pages = 0;
  const out: z.output<typeof VenueAMarket>[] = [];
  while (pages < MAX_SCAN_PAGES && i < all.length) {
    const end = Math.min(all.length, i + r.limit);
    for (; i < end; i++) if (r.match(all[i]!)) out.push(a.record(all[i]!, r.withRules));
    last = all[end - 1]!.marketId;
    pages++;
  }
  const cursor = i < all.length ? encodeCursor({ k: last }) : null;
  return typedReply(VenueAMarketsPage, { markets: out, cursor, next_cursor: cursor, _meta: { pages_scanned: pages } });
}

/** A delta-mode request: markets first recorded after `since` that `passes` accepts. */
interface DeltaRequest {
  readonly since: number;
  readonly limit: number;
  readonly cursor: string | undefined;
  readonly passes: (m: MarketRecord) => boolean;
  readonly withRules: boolean;
  /** The status filter leaves out finished markets, so a market without a close time cannot be shown. */
  readonly excludesFinished: boolean;
}

/** Delta mode (rule 2–6): markets first recorded after `since`, oldest first, by internal record time. */
function delta(a: VenueA, r: DeltaRequest): Reply {
  let afterT = r.since;
  let afterK = '';
  if (r.cursor !== undefined) {
    const k = decodeCursor(r.cursor);
    if (!k || typeof k['t'] !== 'number' || typeof k['k'] !== 'string') return invalidCursor();
    afterT = k['t'];
    afterK = k['k'];
  }
  const fresh = [...a.state.catalog.venue(a.label).values()]
    .filter((m) => m.recordedAt > afterT || (m.recordedAt === afterT && afterK !== '' && m.marketId > afterK))
    .sort((x, y) => x.recordedAt - y.recordedAt || (x.marketId < y.marketId ? -1 : 1));
  const examined = fresh.slice(0, r.limit);
  const out: z.output<typeof VenueAMarket>[] = [];
  const omitted: string[] = [];
  for (const m of examined) {
    const finishedKnown = m.status === 'closed' || m.status === 'determined' || m.status === 'finalized';
    if (r.passes(m) && !(r.excludesFinished && m.closeTime === undefined)) out.push(a.record(m, r.withRules));
    else if (!finishedKnown) omitted.push(a.ticker(m.marketId));
  }
  const lastM = examined[examined.length - 1];
  const more = fresh.length > examined.length;
  const isDegraded = a.degraded();
  const watermarkMs = isDegraded || !lastM ? r.since : Math.max(r.since, lastM.recordedAt - SAFETY_MS);
  const cursor = more && lastM ? encodeCursor({ t: lastM.recordedAt, k: lastM.marketId }) : null;
  return typedReply(VenueAMarketsPage, {
    markets: out,
    cursor,
    next_cursor: cursor,
    _meta: { watermark: new Date(watermarkMs).toISOString(), omitted_tickers: omitted, ...(isDegraded ? { degraded: true } : {}) },
  });
}

/** /<slug>/markets/{ticker}: one market with rules, kept after archival. */
export function registerMarket(api: Api, a: VenueA): void {
  api.route({
    path: `/${a.slug}/markets/:ticker`,
    summary: `One ${a.slug} market with live prices, status and rules (kept after archival)`,
    tags: [a.slug],
    pathParams: { ticker: 'full market ticker' },
    response: VenueAMarketBody,
    errors: { 404: 'Unknown market ticker (code not_found)' },
    handler: (c) => {
      const t = c.path_['ticker']!;
      const m = a.state.catalog.get(a.label, t);
      if (!m) return errorReply(404, 'not_found', `unknown ${a.slug} market ticker "${t}" (a market ticker, not an event ticker)`);
      return typedReply(VenueAMarketBody, { market: a.record(m, true) });
    },
  });
}
