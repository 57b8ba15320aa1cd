import { PAYOUT } from '../../../core/price.js';
import { HttpError, type SimHttp } from '../../server-kit.js';
import type { SimListing, SimTrade, SimWorldApi } from '../../types.js';
import { bookFrame, CLOSED, dataTrade, eventRef, eventsOf, gammaMarket, iso, resultOf, tokenLevels, type TokenIndex } from './docs.js';

/** The simulated Polymarket's REST routes: Gamma (markets, events), CLOB (book, market) and the data-api's trades. */

/** What the routes read: the world, the venue's label and its token index. */
export interface PolyVenue {
  readonly world: SimWorldApi;
  readonly label: string;
  readonly tokens: TokenIndex;
  listings(): readonly SimListing[];
}

/** Registers every REST route on `http`. */
export function registerRest(http: SimHttp, p: PolyVenue): void {
  gammaRoutes(http, p);
  clobRoutes(http, p);
  http.get('/data/trades', (q) => {
    const markets = new Set((q.get('market') ?? '').split(',').filter(Boolean));
    const user = q.get('user')?.toLowerCase();
    const all = p.world.trades(p.label);
    const rows: SimTrade[] = [];
    for (let i = all.length - 1; i >= 0; i--) {
      const t = all[i]!;
      if (markets.size && !markets.has(t.listing.id)) continue;
      if (user && t.taker.toLowerCase() !== user) continue;
      rows.push(t);
    }
    return page(rows, q, 100, 10_000).map(dataTrade);
  });
}

function gammaRoutes(http: SimHttp, p: PolyVenue): void {
  http.get('/gamma/markets', (q) => {
    const active = boolFilter(q, 'active');
    const closed = boolFilter(q, 'closed');
    const cids = new Set(q.getAll('condition_ids'));
    const slugs = new Set(q.getAll('slug'));
    const ids = new Set(q.getAll('id'));
    const groups = eventsOf(p.listings());
    const refs = new Map<string, Record<string, unknown>>();
    for (const g of groups.values()) {
      const ref = eventRef(g[0]!);
      ref['closed'] = g.every((l) => CLOSED.includes(l.status));
      for (const l of g) refs.set(l.id, ref);
    }
    const rows = p
      .listings()
      .filter(
        (l) =>
          (active === undefined || active) &&
          (closed === undefined || closed === CLOSED.includes(l.status)) &&
          (cids.size === 0 || cids.has(l.id)) &&
          (slugs.size === 0 || slugs.has(l.ids['slug']!)) &&
          (ids.size === 0 || ids.has(l.ids['gamma_id']!)),
      );
    return page(rows, q, 20, 500).map((l) => gammaMarket(p.world, l, refs.get(l.id)));
  });

  http.get('/gamma/events', (q) => {
    const active = boolFilter(q, 'active');
    const closed = boolFilter(q, 'closed');
    const slugs = new Set(q.getAll('slug'));
    const ids = new Set(q.getAll('id'));
    const rows: Record<string, unknown>[] = [];
    if (active === false) return [];
    for (const g of eventsOf(p.listings()).values()) {
      const ref = eventRef(g[0]!);
      const isClosed = g.every((l) => CLOSED.includes(l.status));
      ref['closed'] = isClosed;
      if (closed !== undefined && closed !== isClosed) continue;
      if (slugs.size && !slugs.has(String(ref['slug']))) continue;
      if (ids.size && !ids.has(String(ref['id']))) continue;
      const volume = g.reduce((s, l) => s + l.volume, 0);
      rows.push({
        ...ref,
        description: '',
        startDate: iso(Math.min(...g.map((l) => l.openTime))),
        creationDate: iso(Math.min(...g.map((l) => l.createdAt))),
        volume,
        negRisk: g[0]!.ids['neg_risk'] === 'true',
        markets: g.map((l) => {
          const { events: _e, ...m } = gammaMarket(p.world, l);
          return m;
        }),
      });
    }
    return page(rows, q, 20, 500);
  });
}

function clobRoutes(http: SimHttp, p: PolyVenue): void {
  http.get('/clob/book', (q) => {
    const t = p.tokens.get(q.get('token_id') ?? '');
    if (!t) throw new HttpError(404, { error: 'No orderbook exists for the requested token id' });
    const f = bookFrame(p.world, t.listing, t.yes);
    return {
      market: f['market'],
      asset_id: f['asset_id'],
      timestamp: f['timestamp'],
      hash: f['hash'],
      bids: f['bids'],
      asks: f['asks'],
      min_order_size: '5',
      tick_size: f['tick_size'],
      neg_risk: t.listing.ids['neg_risk'] === 'true',
      last_trade_price: f['last_trade_price'],
    };
  });

  http.get('/clob/markets/:condition_id', (_q, params) => {
    const l = p.world.listing(p.label, params['condition_id'] ?? '');
    if (!l) throw new HttpError(404, { error: 'market not found' });
    const result = resultOf(l);
    const mid = (t: boolean): number => {
      const { bids, asks } = tokenLevels(l, t);
      const b = bids[0]?.[0];
      const a = asks[0]?.[0];
      return b !== undefined && a !== undefined ? (b + a) / 2 / PAYOUT : 0.5;
    };
    return {
      condition_id: l.id,
      question_id: l.ids['question_id'],
      tokens: [
        { token_id: l.ids['yes_token'], outcome: l.ids['outcome_yes'] ?? 'Yes', price: mid(true), winner: result === 'yes' },
        { token_id: l.ids['no_token'], outcome: l.ids['outcome_no'] ?? 'No', price: mid(false), winner: result === 'no' },
      ],
      minimum_order_size: 5,
      minimum_tick_size: Number(l.ids['tick_size'] ?? '0.01'),
      category: l.category,
      end_date_iso: iso(l.closeTime),
      question: l.title,
      market_slug: l.ids['slug'],
      active: true,
      closed: CLOSED.includes(l.status),
      accepting_orders: l.status === 'active',
      neg_risk: l.ids['neg_risk'] === 'true',
    };
  });
}

function boolFilter(q: URLSearchParams, key: string): boolean | undefined {
  const v = q.get(key);
  return v === null ? undefined : v === 'true';
}

function page<T>(rows: T[], q: URLSearchParams, defLimit: number, maxLimit: number): T[] {
  const limit = Math.min(maxLimit, Math.max(0, Number(q.get('limit') ?? defLimit) || defLimit));
  const offset = Math.max(0, Number(q.get('offset') ?? 0) || 0);
  return rows.slice(offset, offset + limit);
}
