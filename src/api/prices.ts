import { z } from 'zod';
import type { Api } from '../access/api.js';
import { p } from '../access/params.js';
import { toCents } from '../core/price.js';
import { errorReply, jsonReply } from '../server/http.js';
import type { ApiContext } from './context.js';
import { cents } from './views.js';

/** GET /prices/bulk (spec 4.9, 2.7) and GET /orderbook (spec 4.10, 2.8). */
export function registerPrices(api: Api, ctx: ApiContext): void {
  api.route({
    path: '/prices/bulk',
    summary: 'Current prices of up to 100 markets by platform:market_id',
    tags: ['prices'],
    query: z.object({ ids: p.string({ required: true, max: 20_000, description: 'comma-separated platform:market_id pairs, at most 100' }) }),
    responseDescription: '{prices: {"<platform>:<market_id>": {yes_bid, yes_ask, no_bid, no_ask, last_price, volume, updated_at}}, _meta: {requested, resolved, unresolved_ids}}',
    handler: (c) => {
      const ids = c.query.ids!.split(',').map((s) => s.trim());
      if (ids.some((s) => s === '')) return errorReply(400, 'validation.invalid', 'invalid parameter "ids": must be a comma-separated list without empty items');
      if (ids.length > 100) return errorReply(400, 'validation.too_many', `invalid parameter "ids": at most 100 ids, got ${ids.length}`);
      const prices: Record<string, unknown> = {};
      const unresolved: string[] = [];
      for (const id of ids) {
        const i = id.indexOf(':');
        const v = i > 0 ? ctx.venues.bySlug.get(id.slice(0, i)) : undefined;
        const marketId = i > 0 ? id.slice(i + 1) : '';
        const q = v && marketId ? ctx.state.quotes.get(v.label, marketId) : undefined;
        const hasPrice = q && (q.yesBid !== undefined || q.yesAsk !== undefined || q.lastPrice !== undefined);
        if (!v || !q || !hasPrice) {
          unresolved.push(id);
          continue;
        }
        prices[id] = {
          platform: v.slug,
          market_id: marketId,
          yes_bid: cents(q.yesBid),
          yes_ask: cents(q.yesAsk),
          no_bid: q.yesAsk === undefined ? null : 100 - toCents(q.yesAsk),
          no_ask: q.yesBid === undefined ? null : 100 - toCents(q.yesBid),
          last_price: cents(q.lastPrice),
          volume: q.volume ?? null,
          updated_at: new Date(q.updatedAt).toISOString(),
        };
      }
      return jsonReply({ prices, _meta: { requested: ids.length, resolved: ids.length - unresolved.length, unresolved_ids: unresolved } });
    },
  });

  const bookVenues = ctx.venues.slugs((v) => v.capabilities.orderbook);
  api.route({
    path: '/orderbook',
    summary: 'Order book depth of one market, cents',
    tags: ['prices'],
    query: z.object({
      platform: p.enum(bookVenues, { required: true }),
      market_id: p.string({ required: true, max: 300 }),
      depth: p.int({ min: 1, max: 500, default: 50, description: 'levels per side' }),
    }),
    responseDescription: '{platform, market_id, yes: {bids, asks}, no: {bids, asks}, timestamp} — levels [{price, size}] best first; yes-only venues have empty no levels',
    handler: (c) => {
      const v = ctx.venues.bySlug.get(c.query.platform!)!;
      const marketId = c.query.market_id!;
      const m = ctx.state.catalog.get(v.label, marketId);
      const view = ctx.state.books.marketBook(v.label, marketId, c.query.depth);
      if (!m && !view) return errorReply(404, 'not_found', `no ${v.slug} market "${marketId}"`);
      const lv = (ls: readonly (readonly [number, number])[], flip: boolean): { price: number; size: number }[] =>
        ls.map(([pr, s]) => ({ price: flip ? 100 - toCents(pr) : toCents(pr), size: s }));
      const bids = view?.bids ?? [];
      const asks = view?.asks ?? [];
      const yesOnly = v.capabilities.yesOnlyBook;
      return jsonReply({
        platform: v.slug,
        market_id: marketId,
        title: m?.title ?? null,
        ready: view?.ready ?? false,
        yes: { bids: lv(bids, false), asks: lv(asks, false) },
        // NO bids are YES asks seen from the other side; yes-only venues quote no NO book (spec 2.8).
        no: yesOnly ? { bids: [], asks: [] } : { bids: lv(asks, true), asks: lv(bids, true) },
        timestamp: view && view.timestamp > 0 ? new Date(view.timestamp).toISOString() : null,
      });
    },
  });
}
