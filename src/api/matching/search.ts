import { z } from 'zod';
import type { Api } from '../../access/api.js';
import { p } from '../../access/params.js';
import { errorReply } from '../../server/http.js';
import type { QuoteRecord } from '../../state/quotes.js';
import { encodeCursor } from '../context.js';
import type { EventRec } from './event-index.js';
import { cursorOffset, EventPage, typesMatch, typesParam, type MatchingRoutes } from './shared.js';

/** A serialized /search body and what it depends on: the groups, the catalog and the quotes it shows. */
interface CachedSearch {
  /** UTF-8 bytes: uWS sends a Buffer as it is, and would encode a string again on every answer. */
  readonly body: Buffer;
  readonly deps: [QuoteRecord, number][];
  readonly matching: number;
  readonly catalog: number;
  readonly quotes: number;
}

/** /search: full-text search over events and their matched markets, with prices. */
export function registerSearch(api: Api, r: MatchingRoutes): void {
  const state = r.ctx.state;
  const cache = new Map<string, CachedSearch>();
  api.route({
    path: '/search',
    summary: 'Full-text search over events and their matched markets',
    description:
      'Short all-caps acronyms (NFL, CPI, BTC) match whole words only. last_price is the midpoint of the best YES bid and ask, null when a side is missing, the spread is wider than 20 cents, or the event is completed.',
    tags: ['matching'],
    response: EventPage,
    query: z.object({
      q: p.string({ required: true, min: 3, max: 100 }),
      event_type: p.string({ max: 40 }),
      status: p.enum(['active', 'completed', 'all'] as const, { default: 'active', retired: ['resolved', 'cancelled'] }),
      date_from: p.date(),
      date_to: p.date(),
      include_groups: p.bool({ default: true }),
      include_prices: p.bool({ default: true }),
      types: typesParam,
      limit: p.int({ min: 1, max: 100, default: 20 }),
      cursor: p.string({ max: 500 }),
    }),
    responseDescription:
      '{total_count (= _meta.total_count), events: Event[], cursor: string|null, next_cursor: string|null (the same token as cursor: pass it as cursor; null on the last page), _meta: {count, total_count, prices_unavailable?}}',
    handler: (c) => {
      const q = c.query;
      // Serialized once per state: a cached body is served while the groups, the catalog and
      // every quote it shows are unchanged (broad queries build hundreds of legs).
      const hit = cache.get(c.rawQuery);
      if (
        hit &&
        hit.matching === r.matching.version &&
        hit.catalog === state.catalog.version &&
        hit.quotes === state.quotes.size &&
        hit.deps.every(([qr, v]) => qr.version === v)
      )
        return { status: 200, body: hit.body };
      if (q.date_from && q.date_to && q.date_from > q.date_to)
        return errorReply(400, 'validation.time_range', 'invalid parameters: date_from is after date_to');
      const offset = cursorOffset(q.cursor);
      if (typeof offset !== 'number') return offset;
      const list = r.events
        .search(q.q!)
        .filter(
          (e) =>
            (q.status === 'all' || (q.status === 'completed') === e.completed) &&
            (q.event_type === undefined || e.event_type === q.event_type.toLowerCase()) &&
            (q.date_from === undefined || (e.date !== null && e.date >= q.date_from)) &&
            (q.date_to === undefined || (e.date !== null && e.date <= q.date_to)) &&
            e.groups.some((g) => typesMatch(g, q.types)),
        );
      const pricesUnavailable = q.include_prices! && state.quotes.size === 0;
      const page = list.slice(offset, offset + q.limit!);
      const more = offset + q.limit! < list.length;
      const events = page.map((e) => {
        const j = r.views.event(e, q.include_groups!, q.types, q.include_prices! && !pricesUnavailable, true);
        if (q.include_groups && q.include_prices && pricesUnavailable)
          for (const g of j['groups'] as Record<string, unknown>[])
            for (const l of g['markets'] as Record<string, unknown>[]) Object.assign(l, { last_price: null, yes_bid: null, yes_ask: null });
        return j;
      });
      const cursor = more ? encodeCursor({ o: offset + q.limit! }) : null;
      const body = Buffer.from(
        JSON.stringify({
          total_count: list.length,
          events,
          cursor,
          next_cursor: cursor,
          _meta: { count: page.length, total_count: list.length, ...(pricesUnavailable ? { prices_unavailable: true } : {}) },
        }),
      );
      if (cache.size >= 500) cache.clear();
      // A leg with no quote yet gets one by growing the quote store: the count guards that case.
      cache.set(c.rawQuery, {
        body,
        deps: q.include_prices ? quotesShown(r, page) : [],
        matching: r.matching.version,
        catalog: state.catalog.version,
        quotes: state.quotes.size,
      });
      return { status: 200, body };
    },
  });
}

/** The quotes a page of events shows, with their versions when it was built. */
function quotesShown(r: MatchingRoutes, page: readonly EventRec[]): [QuoteRecord, number][] {
  const state = r.ctx.state;
  const deps: [QuoteRecord, number][] = [];
  for (const e of page)
    for (const g of e.groups)
      for (const m of g.members) {
        const rec = state.catalog.byKey(m.key);
        const qr = rec ? state.quotes.get(rec.venue, rec.marketId) : undefined;
        if (qr) deps.push([qr, qr.version]);
      }
  return deps;
}
