import { z } from 'zod';
import type { Api } from '../../access/api.js';
import { p } from '../../access/params.js';
import { PAYOUT, toCents } from '../../core/price.js';
import type { Outcome, PositionRecord, WalletRecord } from '../../signals/wallets.js';
import type { MarketRecord } from '../../state/catalog.js';
import { iso, isReply, NOT_FOUND, PATH, roundShares, usd, type VenueB } from './shared.js';
import { cents, freshnessShape, numOrNull, strOrNull, timeOrNull } from '../../views/schemas.js';

const outcome = z.enum(['yes', 'no']);
const perOutcome = (d: string) => z.object({ yes: z.number(), no: z.number() }).describe(d);

/** The 200 body of /<venue_b>/open-interest/{condition_id}. */
export const OpenInterest = z.object({
  condition_id: z.string(),
  open_interest: numOrNull('venue-reported open interest, shares; null when the venue publishes none'),
  source: z.literal('venue').nullable(),
  tracked: z.array(
    z.object({
      token_id: strOrNull('outcome token id'),
      outcome,
      shares: z.number().describe('shares tracked wallets hold'),
      holders: z.number().int().describe('tracked wallets holding'),
    }),
  ),
  _meta: z.object({ ...freshnessShape, tracked_since: timeOrNull('first trade the wallet ledger saw') }),
});

/** The 200 body of /<venue_b>/top-holders/{condition_id}. */
export const TopHolders = z.object({
  condition_id: z.string(),
  outcomes: z.array(
    z.object({
      outcome,
      token_id: strOrNull('outcome token id'),
      holders: z.array(
        z.object({
          rank: z.number().int(),
          wallet: z.string(),
          shares: z.number(),
          avg_price: cents('average entry price'),
          cost_usd: z.number().describe('USD paid'),
          value_usd: numOrNull('marked at the current price, USD; null without a price'),
        }),
      ),
      has_more: z.boolean(),
    }),
  ),
  pagination: z.object({ offset: z.number().int(), limit: z.number().int(), top_n: z.number().int() }),
  _meta: z.object({
    coverage: z.object({
      top_n: z.number().int(),
      holders_tracked: perOutcome('tracked holders per outcome'),
      shares_tracked: perOutcome('tracked shares per outcome'),
      venue_open_interest: numOrNull('venue open interest, shares'),
      share_of_open_interest: perOutcome('tracked shares over open interest').nullable(),
      tracked_since: timeOrNull('first trade the wallet ledger saw'),
    }),
    refreshed_at: freshnessShape.refreshed_at,
    cached: z.boolean(),
    age_seconds: freshnessShape.age_seconds,
  }),
});

const TOP_N = 20;

type Holding = { w: WalletRecord; p: PositionRecord };

/** 4.19 holdings: /<slug>/open-interest/{condition_id} and /<slug>/top-holders/{condition_id}. */
export function registerHolders(api: Api, b: VenueB): void {
  registerOpenInterest(api, b);
  registerTopHolders(api, b);
}

/** Open positions of tracked wallets in a market, per outcome, largest first. */
function holdings(b: VenueB, marketId: string): Record<Outcome, Holding[]> {
  const out: Record<Outcome, Holding[]> = { yes: [], no: [] };
  for (const w of b.ledger.holdersOf(b.label, marketId))
    for (const o of ['yes', 'no'] as const) {
      const pos = b.ledger.positionOf(w, b.label, marketId, o);
      if (pos && pos.shares > 0) out[o].push({ w, p: pos });
    }
  for (const o of ['yes', 'no'] as const) out[o].sort((x, y) => y.p.shares - x.p.shares || (x.w.address < y.w.address ? -1 : 1));
  return out;
}

/** The venue-reported open interest (shares), null when the venue publishes none. */
function venueOpenInterest(b: VenueB, m: MarketRecord | undefined, marketId: string): number | null {
  return b.state.quotes.get(b.label, marketId)?.openInterest ?? m?.openInterest ?? null;
}

const sumShares = (xs: readonly Holding[]): number => roundShares(xs.reduce((a, x) => a + x.p.shares, 0));

function registerOpenInterest(api: Api, b: VenueB): void {
  api.route({
    path: `/${b.slug}/open-interest/:condition_id`,
    summary: `GET /${b.slug}/open-interest/{condition_id}: open interest of a market (venue figure) and what tracked wallets hold per outcome`,
    description:
      "open_interest is the venue-reported figure (shares) when the venue publishes one, else null; tracked holdings are the wallet ledger's open positions (wallets seen on trades since _meta.tracked_since). Cached up to 20 s.",
    tags: b.tags,
    pathParams: { condition_id: PATH.condition_id },
    response: OpenInterest,
    errors: { 404: NOT_FOUND },
    handler: (c) => {
      const r = b.resolveCondition(c.path_['condition_id']!);
      if (isReply(r)) return r;
      return b.cached(c, (now) => {
        const h = holdings(b, r.marketId);
        const oi = venueOpenInterest(b, r.market, r.marketId);
        return {
          condition_id: r.conditionId,
          open_interest: oi,
          source: oi === null ? null : 'venue',
          tracked: (['yes', 'no'] as const).map((o) => ({
            token_id: b.tokenOf(r.market, o) ?? h[o][0]?.p.token ?? null,
            outcome: o,
            shares: sumShares(h[o]),
            holders: h[o].length,
          })),
          _meta: { ...b.freshness(now), tracked_since: iso(b.ledger.firstTradeAt) },
        };
      });
    },
  });
}

function registerTopHolders(api: Api, b: VenueB): void {
  api.route({
    path: `/${b.slug}/top-holders/:condition_id`,
    summary: `GET /${b.slug}/top-holders/{condition_id}: the top ${TOP_N} holders of each outcome, offset pagination`,
    description: `Each outcome lists up to ${TOP_N} holders by shares (offset + limit within the top ${TOP_N}). _meta.coverage says how much of the market the tracked wallets cover: holders and shares tracked per outcome, the venue open interest when known and the share of it covered. Wallets that bought before tracked_since are not covered. Cached up to 20 s.`,
    tags: b.tags,
    pathParams: { condition_id: PATH.condition_id },
    query: z.object({ limit: p.int({ min: 1, max: TOP_N, default: TOP_N }), offset: p.int({ min: 0, max: TOP_N - 1, default: 0 }) }),
    response: TopHolders,
    errors: { 404: NOT_FOUND },
    handler: (c) => {
      const r = b.resolveCondition(c.path_['condition_id']!);
      if (isReply(r)) return r;
      const { limit, offset } = c.query as { limit: number; offset: number };
      return b.cached(c, (now) => {
        const h = holdings(b, r.marketId);
        const y = b.yesNow(r.marketId);
        const oi = venueOpenInterest(b, r.market, r.marketId);
        const outcomes = (['yes', 'no'] as const).map((o) => {
          const top = h[o].slice(0, TOP_N);
          const px = y === undefined ? undefined : o === 'yes' ? y.price : PAYOUT - y.price;
          return {
            outcome: o,
            token_id: b.tokenOf(r.market, o) ?? top[0]?.p.token ?? null,
            holders: top.slice(offset, offset + limit).map((x, i) => ({
              rank: offset + i + 1,
              wallet: x.w.address,
              shares: x.p.shares,
              avg_price: toCents(Math.round(x.p.cost / x.p.shares)),
              cost_usd: usd(x.p.cost),
              value_usd: px === undefined ? null : usd(px * x.p.shares),
            })),
            has_more: offset + limit < top.length,
          };
        });
        const tracked = (o: Outcome): number => sumShares(h[o]);
        return {
          condition_id: r.conditionId,
          outcomes,
          pagination: { offset, limit, top_n: TOP_N },
          _meta: {
            coverage: {
              top_n: TOP_N,
              holders_tracked: { yes: h.yes.length, no: h.no.length },
              shares_tracked: { yes: tracked('yes'), no: tracked('no') },
              venue_open_interest: oi,
              share_of_open_interest: oi ? { yes: Math.round((tracked('yes') / oi) * 1000) / 1000, no: Math.round((tracked('no') / oi) * 1000) / 1000 } : null,
              tracked_since: iso(b.ledger.firstTradeAt),
            },
            refreshed_at: new Date(now).toISOString(),
            cached: false,
          },
        };
      });
    },
  });
}
