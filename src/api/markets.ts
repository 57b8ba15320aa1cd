import { z } from 'zod';
import type { Api } from '../access/api.js';
import { p } from '../access/params.js';
import { errorReply, type Reply } from '../server/http.js';
import type { MarketRecord } from '../state/catalog.js';
import type { QuoteRecord } from '../state/quotes.js';
import { after, decodeCursor, encodeCursor, type ApiContext } from './context.js';
import { apiStatus } from '../views/market.js';
import { count, cursor, Market, time } from '../views/schemas.js';

/** The 200 body of /markets. */
export const MarketsPage = z.object({
  markets: z.array(Market),
  total_count: count('markets matching the filters'),
  as_of: time(
    'receive time of the last event the page reflects (the latest change to a listed market or its quote), ISO 8601; an empty page: when it was built',
  ),
  as_of_ms: z.number().int().describe('as_of in ms since the epoch'),
  cursor,
  next_cursor: cursor,
});

interface PageCache {
  /** The page's answer, kept with it: its body UTF-8 once (uWS writes a Buffer as is, while a string is encoded again on every send). */
  readonly reply: Reply;
  readonly catalogVersion: number;
  /** The number of quotes when the page's markets without one were last seen to have none (quotes are never removed). */
  quoteCount: number;
  /** QuoteStore.changes when the page's quotes were last found at their versions. */
  checkedAt: number;
  /** The quotes of the page's markets, and each one's version when the page was built. */
  readonly quotes: readonly QuoteRecord[];
  readonly versions: readonly number[];
  /** The page's markets that had no quote. */
  readonly unquoted: readonly MarketRecord[];
}

/** GET /markets (spec 4.5): a page of markets across venues with live quotes. */
export function registerMarkets(api: Api, ctx: ApiContext): void {
  const slugs = ctx.venues.slugs();
  const query = z.object({
    platform: p.enum(slugs, { description: 'venue filter' }),
    status: p.enum(['active', 'closed', 'all'] as const, { default: 'active', retired: ['resolved', 'cancelled'] }),
    category: p.string({ max: 100, description: 'category or tag, case-insensitive' }),
    q: p.string({ max: 200, description: 'matches title, market_id and series_title (case-insensitive substring)' }),
    include: p.enum(['rules'] as const, { description: 'rules adds the optional rules object' }),
    limit: p.int({ min: 1, max: 2000, default: 50 }),
    cursor: p.string({ max: 2000, description: 'opaque token from a previous page' }),
  });
  const pages = new Map<string, PageCache>();
  /** The page cache key of each parsed query (the access layer hands out one object per distinct query string). */
  const keyOf = new WeakMap<object, string>();
  const counts = new Map<string, { version: number; count: number }>();

  api.route({
    path: '/markets',
    summary: 'Markets with current prices, across venues',
    tags: ['markets'],
    query,
    responseDescription: 'A page of markets; next_cursor = cursor (pass it as cursor; null on the last page)',
    response: MarketsPage,
    handler: (c) => {
      const qy = c.query;
      let startAfter = '';
      if (qy.cursor !== undefined) {
        const cur = decodeCursor(qy.cursor);
        if (!cur || typeof cur['k'] !== 'string')
          return errorReply(400, 'validation.invalid_cursor', 'invalid parameter "cursor": not a cursor this API issued');
        startAfter = cur['k'];
      }
      const label = qy.platform ? ctx.venues.bySlug.get(qy.platform)!.label : undefined;
      let cacheKey = keyOf.get(qy);
      if (cacheKey === undefined) keyOf.set(qy, (cacheKey = JSON.stringify([label, qy.status, qy.category, qy.q, qy.include, qy.limit, startAfter])));
      const catalog = ctx.state.catalog;
      const hit = pages.get(cacheKey);
      if (hit && hit.catalogVersion === catalog.version && fresh(ctx, hit)) return hit.reply;

      const cat = qy.category?.toLowerCase();
      const needle = qy.q?.toLowerCase();
      const match = (m: MarketRecord): boolean => {
        if (label && m.venue !== label) return false;
        if (qy.status !== 'all' && apiStatus(m) !== qy.status) return false;
        if (cat !== undefined && m.category?.toLowerCase() !== cat && !(m.tags ?? []).some((t) => t.toLowerCase() === cat)) return false;
        if (
          needle !== undefined &&
          !m.title.toLowerCase().includes(needle) &&
          !m.marketId.toLowerCase().includes(needle) &&
          !(m.seriesTitle ?? '').toLowerCase().includes(needle)
        )
          return false;
        return true;
      };
      const keys = ctx.marketKeys();
      const recs = ctx.marketRecords();
      let i = startAfter ? after(keys, startAfter) : label ? lowerBound(keys, `${label}:`) : 0;
      const parts: string[] = [];
      const quotes: QuoteRecord[] = [];
      const versions: number[] = [];
      const unquoted: MarketRecord[] = [];
      let last = '';
      let more = false;
      let asOf = 0;
      for (; i < keys.length; i++) {
        const k = keys[i]!;
        if (label && !k.startsWith(`${label}:`)) break;
        const m = recs[i]!;
        if (!match(m)) continue;
        if (parts.length === qy.limit) {
          more = true;
          break;
        }
        const v = ctx.venues.byLabel.get(m.venue)!;
        const q = ctx.state.quotes.get(m.venue, m.marketId);
        parts.push(ctx.fragments.get(k, v, m, q, qy.include === 'rules'));
        asOf = Math.max(asOf, m.updatedAt, q?.updatedAt ?? 0);
        if (q) {
          quotes.push(q);
          versions.push(q.version);
        } else unquoted.push(m);
        last = k;
      }
      const countKey = JSON.stringify([label, qy.status, cat, needle]);
      let total = counts.get(countKey);
      if (!total || total.version !== catalog.version) {
        let n = 0;
        for (const m of label ? catalog.venue(label).values() : catalog.all()) if (match(m)) n++;
        counts.set(countKey, (total = { version: catalog.version, count: n }));
      }
      const cursor = more ? JSON.stringify(encodeCursor({ k: last })) : 'null';
      if (asOf === 0) asOf = ctx.clock.now();
      const body = Buffer.from(
        `{"markets":[${parts.join(',')}],"total_count":${total.count},"as_of":"${new Date(asOf).toISOString()}","as_of_ms":${asOf},"cursor":${cursor},"next_cursor":${cursor}}`,
      );
      if (pages.size > 5000) pages.clear();
      const reply: Reply = { status: 200, body };
      const store = ctx.state.quotes;
      pages.set(cacheKey, { reply, catalogVersion: catalog.version, quoteCount: store.size, checkedAt: store.changes, quotes, versions, unquoted });
      return reply;
    },
  });
}

/**
 * A cached page of the current catalog version (which moves with every change to a market) is
 * fresh while none of its quotes moved and none of its markets without one got one. Those are
 * looked for only when the quote count grew since (quotes are never removed). While no quote
 * anywhere changed or appeared since the page was last found fresh (QuoteStore.changes and size
 * where they stood), it is fresh without walking its quotes (as /prices/bulk's entries are): under
 * live ingest the requests of one event-loop turn come between the same two socket reads, and the
 * walk read 50 quote records, scattered over the heap, on every request.
 */
function fresh(ctx: ApiContext, page: PageCache): boolean {
  const store = ctx.state.quotes;
  if (page.checkedAt === store.changes && page.quoteCount === store.size) return true;
  const { quotes, versions, unquoted } = page;
  for (let i = 0; i < quotes.length; i++) if (quotes[i]!.version !== versions[i]) return false;
  if (store.size !== page.quoteCount) {
    for (const m of unquoted) if (store.get(m.venue, m.marketId) !== undefined) return false;
    page.quoteCount = store.size;
  }
  page.checkedAt = store.changes;
  return true;
}

function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
