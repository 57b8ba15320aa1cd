import { PAYOUT } from '../../../core/price.js';
import { HttpError, type SimHttp } from '../../server-kit.js';
import type { SimListing, SimTrade, SimWorldApi } from '../../types.js';
import { groupsOf } from '../groups.js';
import { bookFrame, CLOSED, dataTrade, eventKey, eventRef, gammaMarket, iso, resultOf, tokenLevels, type TokenIndex } from './docs.js';

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
  gammaRoutes(
    http,
    p,
    groupsOf(() => p.listings(), eventKey),
  );
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

function gammaRoutes(http: SimHttp, p: PolyVenue, eventsOf: () => ReadonlyMap<string, readonly SimListing[]>): void {
  http.get('/gamma/markets', (q) => {
    const active = boolFilter(q, 'active');
    const closed = boolFilter(q, 'closed');
    const cids = new Set(q.getAll('condition_ids'));
    const slugs = new Set(q.getAll('slug'));
    const ids = new Set(q.getAll('id'));
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
    const shown = page(rows, q, 20, 500);
    if (shown.length === 0) return [];
    // The event of each shown market, built once per event (documents for the page only: building
    // every one per page made a catalog walk quadratic in the listings).
    const groupOf = new Map<SimListing, readonly SimListing[]>();
    const wanted = new Set(shown);
    for (const g of eventsOf().values()) if (g.some((l) => wanted.has(l))) for (const l of g) groupOf.set(l, g);
    const refs = new Map<readonly SimListing[], Record<string, unknown>>();
    const refOf = (l: SimListing): Record<string, unknown> | undefined => {
      const g = groupOf.get(l);
      if (!g) return undefined;
      let ref = refs.get(g);
      if (!ref) {
        ref = eventRef(g[0]!);
        ref['closed'] = g.every((x) => CLOSED.includes(x.status));
        refs.set(g, ref);
      }
      return ref;
    };
    return shown.map((l) => gammaMarket(p.world, l, refOf(l)));
  });

  http.get('/gamma/events', (q) => {
    const active = boolFilter(q, 'active');
    const closed = boolFilter(q, 'closed');
    const slugs = new Set(q.getAll('slug'));
    const ids = new Set(q.getAll('id'));
    if (active === false) return [];
    // Filters read the listings (eventRef's id and slug are the first listing's ids); documents are built for the page only.
    const rows: (readonly SimListing[])[] = [];
    for (const g of eventsOf().values()) {
      const first = g[0]!;
      if (closed !== undefined && closed !== g.every((l) => CLOSED.includes(l.status))) continue;
      if (slugs.size && !slugs.has(String(first.ids['event_slug']))) continue;
      if (ids.size && !ids.has(String(first.ids['event_id']))) continue;
      rows.push(g);
    }
    return page(rows, q, 20, 500).map((g) => gammaEvent(p, g));
  });
}

/** One Gamma event with its markets. */
function gammaEvent(p: PolyVenue, g: readonly SimListing[]): Record<string, unknown> {
  const ref = eventRef(g[0]!);
  ref['closed'] = g.every((l) => CLOSED.includes(l.status));
  return {
    ...ref,
    description: '',
    startDate: iso(Math.min(...g.map((l) => l.openTime))),
    creationDate: iso(Math.min(...g.map((l) => l.createdAt))),
    volume: g.reduce((s, l) => s + l.volume, 0),
    negRisk: g[0]!.ids['neg_risk'] === 'true',
    markets: g.map((l) => {
      const { events: _e, ...m } = gammaMarket(p.world, l);
      return m;
    }),
  };
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
