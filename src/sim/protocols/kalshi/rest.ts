import type { MarketStatus } from '../../../core/types.js';
import { KALSHI_STATUS_FILTERS, type KalshiStatusFilter } from '../../../venues/kalshi/raw.js';
import { HttpError, type SimHttp } from '../../server-kit.js';
import { groupsOf } from '../groups.js';
import type { SimListing, SimWorldApi } from '../../types.js';
import { BASE, iso, marketObject, restBook } from './wire.js';

/**
 * The simulated Kalshi REST routes under `/trade-api/v2`: markets (list, one, orderbook,
 * orderbooks), events, series and exchange status, with the venue's cursor paging and errors.
 */

const STATUS_FILTER: Readonly<Record<KalshiStatusFilter, readonly MarketStatus[]>> = {
  unopened: ['initialized'],
  open: ['active'],
  closed: ['closed', 'determined'],
  settled: ['finalized'],
};

/** The venue's listings, read on each request (listings appear over time). */
export interface KalshiListings {
  readonly world: SimWorldApi;
  all(): readonly SimListing[];
  one(ticker: string): SimListing | undefined;
}

/** Registers every REST route on `http`. */
export function registerRest(http: SimHttp, ls: KalshiListings): void {
  marketRoutes(http, ls);
  eventRoutes(
    http,
    ls,
    groupsOf(
      () => ls.all(),
      (l) => l.ids['event_ticker'] ?? l.id,
    ),
  );
  seriesRoutes(http, ls);
  http.get(`${BASE}/exchange/status`, () => ({
    exchange_active: true,
    exchange_index_statuses: [
      { description: 'Default', exchange_active: true, exchange_index: 0, intra_exchange_transfers_active: true, trading_active: true },
    ],
    intra_exchange_transfers_active: true,
    trading_active: true,
  }));
}

function marketRoutes(http: SimHttp, ls: KalshiListings): void {
  http.get(`${BASE}/markets`, (q) => {
    const statuses = statusesOf(q);
    const events = listOf(q, 'event_ticker');
    const series = q.get('series_ticker') || undefined;
    const tickers = listOf(q, 'tickers');
    const minClose = q.get('min_close_ts') ? Number(q.get('min_close_ts')) * 1000 : undefined;
    const maxClose = q.get('max_close_ts') ? Number(q.get('max_close_ts')) * 1000 : undefined;
    if ((minClose !== undefined && !Number.isFinite(minClose)) || (maxClose !== undefined && !Number.isFinite(maxClose)))
      throw badRequest('min_close_ts / max_close_ts must be unix seconds');
    const mve = q.get('mve_filter');
    if (mve !== null && mve !== 'only' && mve !== 'exclude') throw badRequest('mve_filter must be only or exclude');
    const all = ls
      .all()
      .filter(
        (l) =>
          (!statuses || statuses.has(l.status)) &&
          (!events || events.includes(l.ids['event_ticker'] ?? '')) &&
          (!series || l.ids['series_ticker'] === series) &&
          (!tickers || tickers.includes(l.id)) &&
          (minClose === undefined || l.closeTime >= minClose) &&
          (maxClose === undefined || l.closeTime <= maxClose) &&
          (mve === null || (mve === 'only') === (l.ids['combo'] === 'true')),
      );
    const { items, cursor } = page(all, q, 100, 1000);
    return { cursor, markets: items.map((l) => marketObject(l)) };
  });

  // Registered before /markets/:ticker, which would otherwise take "orderbooks" for a ticker.
  http.get(`${BASE}/markets/orderbooks`, (q) => {
    const tickers = listOf(q, 'tickers');
    if (!tickers) throw badRequest('tickers is required');
    if (tickers.length > 100) throw badRequest('at most 100 tickers');
    const orderbooks: unknown[] = [];
    for (const t of tickers) {
      const l = ls.one(t);
      if (l) orderbooks.push({ orderbook_fp: restBook(l), ticker: t });
    }
    return { orderbooks };
  });

  http.get(`${BASE}/markets/:ticker`, (_q, p) => {
    const l = ls.one(p['ticker'] ?? '');
    if (!l) throw notFound(`market ${p['ticker']} not found`);
    return { market: marketObject(l) };
  });

  http.get(`${BASE}/markets/:ticker/orderbook`, (q, p) => {
    const l = ls.one(p['ticker'] ?? '');
    if (!l) throw notFound(`market ${p['ticker']} not found`);
    const depth = q.get('depth') ? Number(q.get('depth')) : 0;
    if (!Number.isInteger(depth) || depth < 0 || depth > 100) throw badRequest('depth must be an integer between 0 and 100');
    return { orderbook_fp: restBook(l, depth === 0 ? Infinity : depth) };
  });
}

/** The event routes; `eventsOf` gives the listings by event ticker, in listing order. */
function eventRoutes(http: SimHttp, ls: KalshiListings, eventsOf: () => ReadonlyMap<string, readonly SimListing[]>): void {
  http.get(`${BASE}/events`, (q) => {
    const status = q.get('status') || undefined;
    if (status !== undefined && !['open', 'closed', 'settled'].includes(status)) throw badRequest('status must be open, closed or settled');
    const series = q.get('series_ticker') || undefined;
    const nested = q.get('with_nested_markets') === 'true';
    const minClose = q.get('min_close_ts') ? Number(q.get('min_close_ts')) * 1000 : undefined;
    if (minClose !== undefined && !Number.isFinite(minClose)) throw badRequest('min_close_ts must be unix seconds');
    const all = [...eventsOf()].filter(
      ([, g]) =>
        (!status || eventStatus(g) === status) &&
        (!series || g[0]!.ids['series_ticker'] === series) &&
        (minClose === undefined || Math.max(...g.map((l) => l.closeTime)) >= minClose),
    );
    const { items, cursor } = page(all, q, 200, 200);
    return { cursor, events: items.map(([t, g]) => eventObject(ls.world, t, g, nested)), milestones: [] };
  });

  http.get(`${BASE}/events/:ticker`, (q, p) => {
    const t = p['ticker'] ?? '';
    const g = eventsOf().get(t);
    if (!g) throw notFound(`event ${t} not found`);
    const nested = q.get('with_nested_markets') === 'true';
    // As captured: nested markets live in event.markets and the top-level list is empty.
    return { event: eventObject(ls.world, t, g, nested), markets: nested ? [] : g.map((l) => marketObject(l)) };
  });
}

function seriesRoutes(http: SimHttp, ls: KalshiListings): void {
  http.get(`${BASE}/series`, (q) => {
    const cat = q.get('category')?.toLowerCase();
    const tags = listOf(q, 'tags');
    const series = seriesObjects(ls).filter(
      (s) => (!cat || String(s['category']).toLowerCase() === cat) && (!tags || (s['tags'] as string[]).some((t) => tags.includes(t))),
    );
    return { series };
  });

  http.get(`${BASE}/series/:ticker`, (_q, p) => {
    const s = seriesObjects(ls).find((x) => x['ticker'] === p['ticker']);
    if (!s) throw notFound(`series ${p['ticker']} not found`);
    return { series: s };
  });
}

function eventObject(world: SimWorldApi, ticker: string, ls: readonly SimListing[], nested: boolean): Record<string, unknown> {
  const first = ls[0]!;
  const e: Record<string, unknown> = {
    available_on_brokers: true,
    category: first.category,
    collateral_return_type: '',
    event_ticker: ticker,
    exchange_index: 0,
    last_updated_ts: iso(world.now()),
    mutually_exclusive: false,
    series_ticker: first.ids['series_ticker'] ?? ticker,
    settlement_sources: [],
    strike_period: '',
    sub_title: '',
    title: first.eventTitle,
  };
  if (nested) e['markets'] = ls.map((l) => marketObject(l));
  return e;
}

function eventStatus(ls: readonly SimListing[]): 'open' | 'closed' | 'settled' {
  if (ls.some((l) => l.status === 'active' || l.status === 'initialized')) return 'open';
  if (ls.every((l) => l.status === 'finalized')) return 'settled';
  return 'closed';
}

/** One series object per series ticker, described by its first listing. */
function seriesObjects(ls: KalshiListings): Record<string, unknown>[] {
  const by = new Map<string, SimListing>();
  for (const l of ls.all()) {
    const s = l.ids['series_ticker'];
    if (s && !by.has(s)) by.set(s, l);
  }
  return [...by].map(([ticker, l]) => ({
    additional_prohibitions: [],
    category: l.category,
    contract_terms_url: `https://assets.kalshi.com/contract_terms/${ticker}.pdf`,
    contract_url: `https://assets.kalshi.com/regulatory/product-certifications/${ticker}.pdf`,
    exchange_index: 0,
    fee_multiplier: 1,
    fee_type: l.ids['fee_type'] ?? 'quadratic',
    frequency: l.ids['frequency'] ?? 'custom',
    last_updated_ts: iso(ls.world.now()),
    settlement_sources: [],
    tags: [...l.tags],
    ticker,
    title: l.seriesTitle ?? l.eventTitle,
  }));
}

function badRequest(message: string): HttpError {
  return new HttpError(400, { error: { code: 'bad_request', message, service: 'exchange' } });
}

function notFound(message: string): HttpError {
  return new HttpError(404, { error: { code: 'not_found', message, service: 'exchange' } });
}

function cursorOf(offset: number): string {
  return Buffer.from(`o:${offset}`).toString('base64url');
}

function offsetOf(cursor: string | null): number {
  if (!cursor) return 0;
  const m = /^o:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw badRequest('invalid cursor');
  return Number(m[1]);
}

function limitOf(q: URLSearchParams, def: number, max: number): number {
  const s = q.get('limit');
  if (s === null || s === '') return def;
  const n = Number(s);
  if (!Number.isInteger(n) || n < 1 || n > max) throw badRequest(`limit must be an integer between 1 and ${max}`);
  return n;
}

function listOf(q: URLSearchParams, key: string): string[] | undefined {
  const s = q.get(key);
  if (s === null || s === '') return undefined;
  return s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}

function statusesOf(q: URLSearchParams): Set<MarketStatus> | undefined {
  const list = listOf(q, 'status');
  if (!list) return undefined;
  const out = new Set<MarketStatus>();
  for (const s of list) {
    if (!(KALSHI_STATUS_FILTERS as readonly string[]).includes(s))
      throw badRequest(`invalid status filter ${s}: use one of ${KALSHI_STATUS_FILTERS.join(', ')}`);
    for (const st of STATUS_FILTER[s as KalshiStatusFilter]) out.add(st);
  }
  return out;
}

function page<T>(items: readonly T[], q: URLSearchParams, def: number, max: number): { items: T[]; cursor: string } {
  const limit = limitOf(q, def, max);
  const offset = offsetOf(q.get('cursor'));
  const slice = items.slice(offset, offset + limit);
  return { items: slice, cursor: offset + limit < items.length ? cursorOf(offset + limit) : '' };
}
