import { z } from 'zod';
import { typedReply, type Api, type ApiCtx } from '../access/api.js';
import { p } from '../access/params.js';
import { PAYOUT, toCents } from '../core/price.js';
import type { VenueLabel } from '../core/types.js';
import { errorReply, type Reply } from '../server/http.js';
import type { BookStore } from '../state/books.js';
import type { MarketCatalog, MarketRecord } from '../state/catalog.js';
import type { EngineState } from '../state/engine.js';
import type { QuoteRecord, QuoteStore } from '../state/quotes.js';
import { AS_OF_DOC, AS_OF_STOPPED, asOfParam, isReply, marketRef, stateAsOf } from './as-of.js';
import type { ApiContext } from './context.js';
import { quotePrices } from '../views/market.js';
import { asOfFields, asOfOf, centsOrNull, count, Level, numOrNull, platform, strOrNull, time, timeOrNull } from '../views/schemas.js';

/** The 200 body of /prices/bulk. */
export const BulkPrices = z.object({
  prices: z
    .record(
      z.string().describe('platform:market_id as requested'),
      z.object({
        platform,
        market_id: z.string(),
        yes_bid: centsOrNull('best YES bid'),
        yes_ask: centsOrNull('best YES ask'),
        no_bid: centsOrNull('best NO bid'),
        no_ask: centsOrNull('best NO ask'),
        last_price: centsOrNull('last trade'),
        volume: numOrNull('traded volume as the venue reports it'),
        updated_at: time('last quote update'),
      }),
    )
    .describe('prices of the resolved ids, keyed as requested'),
  ...asOfFields('the latest quote update of the resolved ids'),
  _meta: z.object({
    requested: count('ids requested'),
    resolved: count('ids with a price'),
    unresolved_ids: z.array(z.string()).describe('unknown ids and markets without a price yet'),
  }),
});

const side = z.object({ bids: z.array(Level).describe('best (highest) first'), asks: z.array(Level).describe('best (lowest) first') });

/** The 200 body of /orderbook. */
export const OrderBook = z.object({
  platform,
  market_id: z.string(),
  title: strOrNull('market title; null when the catalog does not hold the market'),
  ready: z.boolean().describe('a full snapshot has been applied (false while resyncing)'),
  yes: side,
  no: side.describe('NO book (the YES book complemented); empty on yes-only venues'),
  timestamp: timeOrNull('last book update'),
  ...asOfFields('the book'),
});

/** GET /prices/bulk (spec 4.9, 2.7) and GET /orderbook (spec 4.10, 2.8). */
export function registerPrices(api: Api, ctx: ApiContext): void {
  const priceFragments: PriceFragments = new WeakMap();
  const bulkCache = new Map<string, BulkEntry>();
  api.route({
    path: '/prices/bulk',
    summary: 'Current prices of up to 100 markets by platform:market_id',
    tags: ['prices'],
    query: z.object({
      ids: p.string({
        required: true,
        max: 20_000,
        handlerPattern: /^[^,]*[^,\s][^,]*(,[^,]*[^,\s][^,]*){0,99}$/,
        description: 'comma-separated platform:market_id pairs, at most 100, no empty items',
      }),
      as_of: asOfParam(),
    }),
    description: `as_of is the latest updated_at of the resolved ids.${AS_OF_DOC}`,
    errors: { 503: AS_OF_STOPPED },
    responseDescription: 'Prices of the ids that resolved; the others in _meta.unresolved_ids',
    response: BulkPrices,
    handler: (c) => {
      if (c.query.as_of !== undefined) return bulkAsOf(c, c.query.ids!, c.query.as_of);
      // Whole responses are cached per ids list and served while none of their quotes moved.
      const store = ctx.state.quotes;
      const cached = bulkCache.get(c.query.ids!);
      if (cached && cached.unresolvedKnown === store.size) {
        // No quote changed since the entry's last check: its quotes are as they were, unwalked.
        if (cached.checkedAt === store.changes) return cached.reply;
        if (unmoved(cached.quotes, cached.versions)) {
          cached.checkedAt = store.changes;
          return cached.reply;
        }
      }
      const ids = splitIds(c.query.ids!);
      if (typeof ids === 'object' && !Array.isArray(ids)) return ids;
      const checkedAt = store.changes;
      const { body, quotes, versions } = bulkBody(ctx, ctx.state, ids, priceFragments);
      if (bulkCache.size >= 1_000) bulkCache.clear();
      // An unresolved id may resolve once new quotes appear: the cache entry also keys on the quote count.
      const reply: Reply = { status: 200, body };
      bulkCache.set(c.query.ids!, { reply, quotes, versions, unresolvedKnown: store.size, checkedAt });
      return reply;
    },
  });

  /** /prices/bulk at a past moment: the ids' markets rebuilt from the history (never cached). */
  async function bulkAsOf(c: ApiCtx<unknown>, idList: string, t: number): Promise<Reply> {
    const ids = splitIds(idList);
    if (!Array.isArray(ids)) return ids;
    const refs = [];
    for (const id of ids) {
      const i = id.indexOf(':');
      const v = i > 0 ? ctx.venues.bySlug.get(id.slice(0, i)) : undefined;
      if (v && i + 1 < id.length) refs.push(marketRef(ctx, v.label, id.slice(i + 1)));
    }
    const state = await stateAsOf(ctx, c, t, refs);
    if (isReply(state)) return state;
    return { status: 200, body: bulkBody(ctx, state, ids, new WeakMap()).body };
  }

  const bookVenues = ctx.venues.slugs((v) => v.capabilities.orderbook);
  const bookPages: BookPages = { byQuery: new WeakMap(), lastQuery: undefined, lastPage: undefined };
  api.route({
    path: '/orderbook',
    summary: 'Order book depth of one market, cents',
    tags: ['prices'],
    query: z.object({
      platform: p.enum(bookVenues, { required: true }),
      market_id: p.string({ required: true, max: 300 }),
      depth: p.int({ min: 1, max: 500, default: 50, description: 'levels per side' }),
      as_of: asOfParam(),
    }),
    description: `as_of is the receive time of the last event that changed the market's book.${AS_OF_DOC}`,
    responseDescription: 'Levels [{price, size}] best first; yes-only venues have empty no levels',
    response: OrderBook,
    errors: { 404: 'No such market on the venue (code not_found)', 503: AS_OF_STOPPED },
    handler: (c) => {
      const q = c.query;
      const { books, catalog } = ctx.state;
      // The kept page's market needs no venue lookup: a client polling a book asks the same query again and again.
      const hit = q.as_of === undefined ? keptBookPage(bookPages, q, books, catalog) : undefined;
      if (hit !== undefined) return hit.reply;
      const v = ctx.venues.bySlug.get(q.platform!)!;
      const marketId = q.market_id!;
      if (q.as_of !== undefined) {
        const t = q.as_of;
        const depth = q.depth;
        const m = catalog.get(v.label, marketId);
        return stateAsOf(ctx, c, t, [marketRef(ctx, v.label, marketId)]).then((s) => (isReply(s) ? s : orderbookReply(s.books, v, marketId, m, depth)));
      }
      const layout = books.layout;
      const inserts = catalog.inserts;
      const m = catalog.get(v.label, marketId);
      const src = books.marketBookSource(v.label, marketId);
      const reply = orderbookReply(books, v, marketId, m, q.depth);
      if (reply.status !== 200) return reply;
      keepBookPage(bookPages, q, { venue: v.label, marketId, record: m, title: m?.title, src, reply, layout, inserts });
      return reply;
    },
  });

  /** The /orderbook reply of one market from `books` (the live ones, or ones rebuilt for as_of), serialized to bytes. */
  function orderbookReply(
    books: BookStore,
    v: (typeof ctx.venues.enabled)[number],
    marketId: string,
    m: ReturnType<typeof ctx.state.catalog.get>,
    depth: number | undefined,
  ): Reply {
    const view = books.marketBook(v.label, marketId, depth);
    if (!m && !view) return errorReply(404, 'not_found', `no ${v.slug} market "${marketId}"`);
    const lv = (ls: readonly (readonly [number, number])[], flip: boolean): { price: number; size: number }[] =>
      ls.map(([pr, s]) => ({ price: toCents(flip ? PAYOUT - pr : pr), size: s }));
    const bids = view?.bids ?? [];
    const asks = view?.asks ?? [];
    const yesOnly = v.capabilities.yesOnlyBook;
    const reply = typedReply(OrderBook, {
      platform: v.slug,
      market_id: marketId,
      title: m?.title ?? null,
      ready: view?.ready ?? false,
      yes: { bids: lv(bids, false), asks: lv(asks, false) },
      // NO bids are YES asks seen from the other side; yes-only venues quote no NO book (spec 2.8).
      no: yesOnly ? { bids: [], asks: [] } : { bids: lv(asks, true), asks: lv(bids, true) },
      timestamp: view && view.timestamp > 0 ? new Date(view.timestamp).toISOString() : null,
      ...asOfOf(books.marketRecvTs(v.label, marketId)),
    });
    // Bytes, so a cached reply is not encoded again on every send.
    return { ...reply, body: Buffer.from(reply.body) };
  }
}

/** A /prices/bulk answer kept for one ids list: the quotes it read at their versions. */
interface BulkEntry {
  readonly reply: Reply;
  readonly quotes: QuoteRecord[];
  readonly versions: number[];
  /** QuoteStore.size when built (an unresolved id may resolve once a new quote appears). */
  readonly unresolvedKnown: number;
  /** QuoteStore.changes when the versions were last found current. */
  checkedAt: number;
}

/** An /orderbook answer kept for one parsed query: the record and books it read, and what it found them at. */
interface BookPage {
  /** The market the page answers for. */
  readonly venue: VenueLabel;
  readonly marketId: string;
  readonly record: MarketRecord | undefined;
  readonly title: string | undefined;
  /** `marketBookSource` when built: the YES book, its version, the NO book, its version. */
  readonly src: ReturnType<BookStore['marketBookSource']>;
  readonly reply: Reply;
  /** BookStore.layout and MarketCatalog.inserts when the record and books were last found the market's. */
  layout: number;
  inserts: number;
}

/**
 * The /orderbook pages kept, by parsed query (the access layer keeps one object per distinct query
 * string), and the query last answered with its page: compared first, it spares the map's lookup.
 */
interface BookPages {
  readonly byQuery: WeakMap<object, BookPage>;
  lastQuery: object | undefined;
  lastPage: BookPage | undefined;
}

/**
 * The kept page of `query` when it still answers for its market: the same record and books at the
 * same versions, and the same title (catalog records change in place), answer the same bytes.
 */
function keptBookPage(pages: BookPages, query: object, books: BookStore, catalog: MarketCatalog): BookPage | undefined {
  const hit = query === pages.lastQuery ? pages.lastPage : pages.byQuery.get(query);
  if (hit === undefined || !bookPageCurrent(hit, books, catalog)) return undefined;
  pages.lastQuery = query;
  pages.lastPage = hit;
  return hit;
}

/** Keeps the page built for `query` (the last query answered from now on). */
function keepBookPage(pages: BookPages, query: object, page: BookPage): void {
  pages.byQuery.set(query, page);
  pages.lastQuery = query;
  pages.lastPage = page;
}

/** Whether a kept /orderbook page still answers for the market (refreshing what it found the stores at). */
function bookPageCurrent(hit: BookPage, books: BookStore, catalog: MarketCatalog): boolean {
  // While no record was added or replaced and no book created or relinked, the page's record and books are still the market's.
  if (hit.inserts !== catalog.inserts || hit.layout !== books.layout) {
    if (hit.record !== catalog.get(hit.venue, hit.marketId) || !sameSource(hit.src, books.marketBookSource(hit.venue, hit.marketId))) return false;
    hit.inserts = catalog.inserts;
    hit.layout = books.layout;
  }
  return hit.title === hit.record?.title && sameSource(hit.src);
}

/**
 * The same books at the same versions: `src` against the versions its books have now, or against
 * another source read for the market (a loop: `every` would make a closure per request).
 */
function sameSource(src: ReturnType<BookStore['marketBookSource']>, now?: ReturnType<BookStore['marketBookSource']>): boolean {
  if (now !== undefined) return src[0] === now[0] && src[1] === now[1] && src[2] === now[2] && src[3] === now[3];
  return (src[0]?.version ?? -1) === src[1] && (src[2]?.version ?? -1) === src[3];
}

/** No quote moved since its version was taken. */
function unmoved(quotes: readonly QuoteRecord[], versions: readonly number[]): boolean {
  for (let i = 0; i < quotes.length; i++) if (quotes[i]!.version !== versions[i]) return false;
  return true;
}

/** Each quote's /prices/bulk entry as JSON, at the quote version it was serialized at. */
type PriceFragments = WeakMap<object, { version: number; json: string }>;

/**
 * The `"id":{…}` entries of /prices/bulk for `ids`, the ids without a price, and the quotes (at
 * their versions) the answer depends on. Each market's price object is serialized once per quote
 * version and reused.
 */
function priceParts(
  ctx: ApiContext,
  quoteStore: QuoteStore,
  ids: readonly string[],
  priceFragments: PriceFragments,
): { parts: string[]; unresolved: string[]; quotes: QuoteRecord[]; versions: number[]; asOf: number } {
  const parts: string[] = [];
  const unresolved: string[] = [];
  let asOf = 0;
  // The quotes the answer depends on, each at its version.
  const quotes: QuoteRecord[] = [];
  const versions: number[] = [];
  for (const id of ids) {
    const i = id.indexOf(':');
    const v = i > 0 ? ctx.venues.bySlug.get(id.slice(0, i)) : undefined;
    const marketId = i > 0 ? id.slice(i + 1) : '';
    const q = v && marketId ? quoteStore.get(v.label, marketId) : undefined;
    const hasPrice = q && (q.yesBid !== undefined || q.yesAsk !== undefined || q.lastPrice !== undefined);
    if (!v || !q || !hasPrice) {
      unresolved.push(id);
      // A quote without prices yet: its first price must invalidate.
      if (q) {
        quotes.push(q);
        versions.push(q.version);
      }
      continue;
    }
    let f = priceFragments.get(q);
    if (!f || f.version !== q.version) {
      const json = JSON.stringify({
        platform: v.slug,
        market_id: marketId,
        ...quotePrices(v, q),
        volume: q.volume ?? null,
        updated_at: new Date(q.updatedAt).toISOString(),
      });
      priceFragments.set(q, (f = { version: q.version, json }));
    }
    parts.push(`${JSON.stringify(id)}:${f.json}`);
    quotes.push(q);
    versions.push(q.version);
    if (q.updatedAt > asOf) asOf = q.updatedAt;
  }
  return { parts, unresolved, quotes, versions, asOf };
}

/** The ids of an `ids` parameter, or its 400. */
function splitIds(list: string): string[] | Reply {
  const ids = list.split(',').map((s) => s.trim());
  if (ids.some((s) => s === '')) return errorReply(400, 'validation.invalid', 'invalid parameter "ids": must be a comma-separated list without empty items');
  if (ids.length > 100) return errorReply(400, 'validation.too_many', `invalid parameter "ids": at most 100 ids, got ${ids.length}`);
  return ids;
}

/** The /prices/bulk body of `ids` from `state` (the live one, or one rebuilt for as_of), as bytes, with the quotes it read. */
function bulkBody(
  ctx: ApiContext,
  state: EngineState,
  ids: readonly string[],
  priceFragments: PriceFragments,
): { body: Buffer; quotes: QuoteRecord[]; versions: number[] } {
  const { parts, unresolved, quotes, versions, asOf } = priceParts(ctx, state.quotes, ids, priceFragments);
  const meta = JSON.stringify({ requested: ids.length, resolved: ids.length - unresolved.length, unresolved_ids: unresolved });
  const a = asOfOf(asOf);
  // UTF-8 once: uWS writes a Buffer as is, while a string is encoded again on every send.
  const body = Buffer.from(`{"prices":{${parts.join(',')}},"as_of":${JSON.stringify(a.as_of)},"as_of_ms":${a.as_of_ms},"_meta":${meta}}`);
  return { body, quotes, versions };
}
