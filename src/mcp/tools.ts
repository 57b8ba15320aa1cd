import { z } from 'zod';
import type { QueryValue } from './http.js';

/** One read-only tool: what it does (units included), its arguments, and the crossbook request it makes. */
export interface ToolSpec<S extends z.ZodRawShape = z.ZodRawShape> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: S;
  /** The route (under /api/v2) and query of a call with validated arguments. */
  readonly request: (args: z.infer<z.ZodObject<S>>) => { path: string; query: Record<string, QueryValue> };
}

function tool<S extends z.ZodRawShape>(t: ToolSpec<S>): ToolSpec {
  return t as unknown as ToolSpec;
}

const platform = z.string().min(1).max(40).describe('venue slug, e.g. venue_a (see /status for the list)');
const platforms = z.array(z.string().min(1).max(40)).min(1).max(20).optional().describe('keep opportunities with a leg on one of these venue slugs');
const limit = (max: number, dflt: number) => z.number().int().min(1).max(max).optional().describe(`how many to return (1 to ${max}, default ${dflt})`);
const PRICES = 'Prices are cents on a 0 to 100 scale (the probability in percent); NO prices are 100 − the YES price.';

/**
 * The tools `crossbook mcp` offers: each is one GET of the crossbook API, so what a model sees is
 * what the API documents (/api/v2/openapi.json). All are read-only.
 */
export const TOOLS: readonly ToolSpec[] = [
  tool({
    name: 'search_markets',
    title: 'Search markets',
    description: `Markets across venues with current prices, filtered by text, venue, status or category; paginated with cursor. ${PRICES} volume is as the venue reports it.`,
    input: {
      q: z.string().min(1).max(200).optional().describe('substring of title, market id or series title (case-insensitive)'),
      platform: platform.optional(),
      status: z.enum(['active', 'closed', 'all']).optional().describe('default active'),
      category: z.string().min(1).max(100).optional(),
      limit: limit(2000, 50),
      cursor: z.string().min(1).max(2000).optional().describe('cursor of a previous page'),
    },
    request: (a) => ({ path: '/markets', query: a }),
  }),
  tool({
    name: 'search_events',
    title: 'Search events',
    description: `Full-text search over events (games, elections, meetings) with their cross-venue match groups and prices. Short all-caps acronyms (NFL, CPI, BTC) match whole words. last_price here is the mid of the best YES bid and ask, null when wider than 20 cents. ${PRICES}`,
    input: {
      q: z.string().min(3).max(100).describe('search text, 3 to 100 characters'),
      event_type: z.string().min(1).max(40).optional().describe('sports, politics, economics, crypto, …'),
      status: z.enum(['active', 'completed', 'all']).optional().describe('default active'),
      limit: limit(100, 20),
    },
    request: (a) => ({ path: '/search', query: a }),
  }),
  tool({
    name: 'matching_groups',
    title: 'Cross-venue match groups',
    description: `The groups of equivalent markets on different venues for exactly one of: a free-text query, a venue_b key (condition id or URL slug), a venue_a market ticker, or a market page URL. Each group lists its markets (legs) with prices; inverted=true means the leg's YES is the group's NO. ${PRICES}`,
    input: {
      query: z.string().min(3).max(100).optional().describe('free text'),
      venue_b_key: z.string().min(1).max(300).optional().describe('venue_b condition id or market URL slug'),
      venue_a_key: z.string().min(1).max(200).optional().describe('venue_a full market ticker'),
      url: z.string().url().max(2000).optional().describe('a market page URL on a supported venue'),
    },
    request: (a) => {
      const given = (['query', 'venue_b_key', 'venue_a_key', 'url'] as const).filter((k) => a[k] !== undefined);
      if (given.length !== 1) throw new RangeError(`give exactly one of query, venue_b_key, venue_a_key, url (got ${given.join(', ') || 'none'})`);
      if (a.url !== undefined) return { path: '/matching-markets/url', query: { url: a.url } };
      return { path: '/matching-markets', query: { q: a.query, venue_b_key: a.venue_b_key, venue_a_key: a.venue_a_key } };
    },
  }),
  tool({
    name: 'get_prices',
    title: 'Current prices',
    description: `Current YES/NO bid and ask and last trade of up to 100 markets given as platform:market_id. ${PRICES} Unknown ids are listed in _meta.unresolved_ids.`,
    input: { ids: z.array(z.string().min(3).max(300)).min(1).max(100).describe('platform:market_id, e.g. venue_a:KXNFLGAME-26NOV23NESEA-SEA') },
    request: (a) => ({ path: '/prices/bulk', query: { ids: a.ids } }),
  }),
  tool({
    name: 'get_orderbook',
    title: 'Order book',
    description: `Order book of one market: yes and no sides, bids and asks best first, each level {price (cents), size (contracts)}. Yes-only venues have an empty no side. ${PRICES}`,
    input: {
      platform,
      market_id: z.string().min(1).max(300).describe('platform-native market id'),
      depth: limit(500, 50).describe('levels per side (1 to 500, default 50)'),
    },
    request: (a) => ({ path: '/orderbook', query: a }),
  }),
  tool({
    name: 'unified_orderbook',
    title: 'Unified order book of a match group',
    description: `Merged depth of every venue of a match group in the group's YES terms (inverted members complemented); each level names its venue and market. ${PRICES}`,
    input: {
      group_id: z.number().int().min(1).describe('match group id (from matching_groups or search_events)'),
      depth: limit(200, 25).describe('levels per side (1 to 200, default 25)'),
    },
    request: (a) => ({ path: '/unified-orderbook', query: a }),
  }),
  tool({
    name: 'live_arb',
    title: 'Live arbitrage',
    description:
      'Two-leg arbitrage now: buy YES on one venue and NO on another for a guaranteed payout. roi is percent return on cost, net of each venue taker fee (fee-net); size is contracts per leg available at a positive net ROI; cost, payout, profit and fee are USD; leg prices are cents (0 to 100). Sorted by roi, best first.',
    input: { min_roi: z.number().min(0).optional().describe('minimum net ROI, percent (default 0)'), platforms, limit: limit(100, 20) },
    request: (a) => ({ path: '/arb', query: a }),
  }),
  tool({
    name: 'live_ev',
    title: 'Live expected-value opportunities',
    description:
      'Positive expected value against the cross-venue consensus: buying one side at one venue’s best ask. roi is percent, net of the taker fee (fee-net); ev_per_dollar is expected profit per dollar spent; consensus and price are cents (0 to 100); fee is USD per contract. Sorted by roi.',
    input: {
      min_roi: z.number().min(0).optional().describe('minimum net ROI, percent (default 0)'),
      platforms,
      side: z.enum(['yes', 'no', 'both']).optional().describe('default both'),
      limit: limit(100, 20),
    },
    request: (a) => ({ path: '/ev', query: a }),
  }),
  tool({
    name: 'smart_money_alerts',
    title: 'Smart-money alerts',
    description:
      'Alerts newest first: smart_money (a buy by a wallet with a proven record of early entries), insider (a position taken ahead of a confirmed move), captain_hook (a seller into a spike). Each has price (cents), shares, amount_usd, wallet, reason and figures.',
    input: {
      alert_type: z.enum(['all', 'smart_money', 'insider', 'captain_hook']).optional().describe('default all'),
      platform: platform.optional(),
      since: z.string().min(1).max(40).optional().describe('unix seconds or ISO 8601: only alerts raised at or after this'),
      limit: limit(100, 20),
    },
    request: (a) => ({ path: '/alerts/smart-money', query: a }),
  }),
];
