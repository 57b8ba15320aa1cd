import { z } from 'zod';
import { typedReply, type Api } from '../../access/api.js';
import { p } from '../../access/params.js';
import { PAYOUT, toCents } from '../../core/price.js';
import { errorReply } from '../../server/http.js';
import { wilsonLow, type PositionRecord, type WalletRecord } from '../../signals/wallets.js';
import type { StoredTrade } from '../../state/trades.js';
import { decodeCursor, encodeCursor } from '../context.js';
import { tradeJson } from '../trades.js';
import { iso, isReply, NOT_FOUND, PATH, usd, type VenueB } from './shared.js';
import { centsOrNull, count, cursor, numOrNull, strOrNull, timeOrNull, tradeShape } from '../../views/schemas.js';
import { OffsetPagination } from './leaderboard.js';

/** The 200 body of /<venue_b>/wallets/{address}. */
export const Wallet = z.object({
  wallet: z.object({
    address: z.string().describe('lower-case'),
    name: strOrNull('public profile name the venue showed; null when never shown'),
    pseudonym: strOrNull('public pseudonym; null when never shown'),
    labels: z.array(z.enum(['smart_money', 'fade'])),
    first_seen: timeOrNull('first trade seen'),
    last_seen: timeOrNull('last trade seen'),
    trades: count('trades'),
    taker_trades: count('as taker'),
    maker_trades: count('as maker'),
    volume_usd: z.number(),
    markets_traded: count('markets traded'),
    open_positions: count('positions with shares held'),
    realized_pnl_usd: z.number(),
    entries: z.object({
      made: count('entries made'),
      scored: count('entries scored'),
      good: count('moved its way'),
      bad: count('moved against it'),
      neutral: count('neither'),
      hit_rate: numOrNull('good / scored, 0 to 1'),
      hit_rate_lower_bound: z.number().describe('lower 95% bound'),
      avg_move_cents: numOrNull('average move after entry, cents'),
    }),
  }),
  _meta: z.object({
    tracked_since: timeOrNull('first trade the wallet ledger saw'),
    horizon_seconds: z.number().int().describe('how long after an entry it is scored'),
    good_move_cents: z.number().describe('move that makes an entry good, cents'),
  }),
});

/** The 200 body of /<venue_b>/wallets/{address}/positions. */
export const Positions = z.object({
  wallet: z.string(),
  positions: z.array(
    z.object({
      market_id: z.string(),
      title: strOrNull('market title'),
      token_id: strOrNull('outcome token id'),
      outcome: z.enum(['yes', 'no']),
      status: z.enum(['open', 'closed', 'settled']),
      shares: z.number(),
      avg_price: centsOrNull('average entry price; null when closed'),
      cost_usd: z.number(),
      current_price: centsOrNull('current price of the outcome'),
      value_usd: numOrNull('marked at the current price'),
      unrealized_pnl_usd: numOrNull('value − cost'),
      realized_pnl_usd: z.number(),
      bought: z.number().describe('shares bought'),
      sold: z.number().describe('shares sold'),
      opened_at: timeOrNull('opened'),
      updated_at: timeOrNull('last change'),
      settled_at: timeOrNull('settled'),
      payout: centsOrNull('settlement payout per share'),
    }),
  ),
  pagination: OffsetPagination,
});

/** The 200 body of /<venue_b>/wallets/{address}/activity. */
export const Activity = z.object({
  wallet: z.string(),
  activity: z.array(z.object({ ...tradeShape, role: z.enum(['taker', 'maker']) })),
  pagination: z.object({ limit: count('page size'), count: count('trades on this page'), cursor, has_more: z.boolean() }),
  next_cursor: cursor,
  _meta: z.object({ indexed: count('trades of the wallet the ledger indexes') }),
});

/** 4.19 wallets: /<slug>/wallets/{address}, …/positions and …/activity. */
export function registerWallets(api: Api, b: VenueB): void {
  registerWallet(api, b);
  registerPositions(api, b);
  registerActivity(api, b);
}

/** A wallet's scored entries and hit rate. */
function entryJson(w: WalletRecord): z.output<typeof Wallet>['wallet']['entries'] {
  const e = w.entries;
  return {
    made: e.made,
    scored: e.scored,
    good: e.good,
    bad: e.bad,
    neutral: e.scored - e.good - e.bad,
    hit_rate: e.scored ? Math.round((e.good / e.scored) * 1000) / 1000 : null,
    hit_rate_lower_bound: Math.round(wilsonLow(e.good, e.scored) * 1000) / 1000,
    avg_move_cents: e.scored ? Math.round(e.moveSum / e.scored) / 100 : null,
  };
}

function registerWallet(api: Api, b: VenueB): void {
  const ledger = b.ledger;
  api.route({
    path: `/${b.slug}/wallets/:address`,
    summary: `GET /${b.slug}/wallets/{address}: identity and record of a wallet (first/last seen, volume, PnL, scored entries, labels)`,
    description:
      "labels: smart_money (passes the smart-money test), fade (reliably wrong). name and pseudonym: the latest public profile the venue showed on one of the wallet's trades; null when it never showed one (maker-only wallets, anonymous traders).",
    tags: b.tags,
    pathParams: { address: PATH.address },
    response: Wallet,
    errors: { 404: NOT_FOUND },
    handler: (c) => {
      const w = b.resolveWallet(c.path_['address']!);
      if (isReply(w)) return w;
      const labels = [...(ledger.isSmart(w) ? (['smart_money'] as const) : []), ...(ledger.isFade(w) ? (['fade'] as const) : [])];
      let open = 0;
      for (const pos of w.positions.values()) if (pos.shares > 0) open++;
      return typedReply(Wallet, {
        wallet: {
          address: w.address,
          name: w.name ?? null,
          pseudonym: w.pseudonym ?? null,
          labels,
          first_seen: iso(w.firstSeen),
          last_seen: iso(w.lastSeen),
          trades: w.trades,
          taker_trades: w.takerTrades,
          maker_trades: w.makerTrades,
          volume_usd: usd(w.volume),
          markets_traded: w.markets.size + (w.marketsEvicted ?? 0),
          open_positions: open,
          realized_pnl_usd: usd(w.realized),
          entries: entryJson(w),
        },
        _meta: { tracked_since: iso(ledger.firstTradeAt), horizon_seconds: Math.round(ledger.horizonMs / 1000), good_move_cents: ledger.goodMove / 100 },
      });
    },
  });
}

function registerPositions(api: Api, b: VenueB): void {
  api.route({
    path: `/${b.slug}/wallets/:address/positions`,
    summary: `GET /${b.slug}/wallets/{address}/positions: a wallet's positions (shares, average price, cost, current value, PnL); offset pagination`,
    description: 'status: open (default; shares held), closed (sold out or settled), all. Largest cost first for open positions, most recent first otherwise.',
    tags: b.tags,
    pathParams: { address: PATH.address },
    query: z.object({
      status: p.enum(['open', 'closed', 'all'] as const, { default: 'open' }),
      limit: p.int({ min: 1, max: 500, default: 100 }),
      offset: p.int({ min: 0, max: 100_000, default: 0 }),
    }),
    response: Positions,
    errors: { 404: NOT_FOUND },
    handler: (c) => {
      const w = b.resolveWallet(c.path_['address']!);
      if (isReply(w)) return w;
      const q = c.query as { status: 'open' | 'closed' | 'all'; limit: number; offset: number };
      const all = [...w.positions.values()].filter((x) => x.venue === b.label && (q.status === 'all' || (q.status === 'open') === x.shares > 0));
      all.sort(
        (x, y) =>
          (q.status === 'open' ? y.cost - x.cost : y.updatedAt - x.updatedAt) ||
          (x.marketId < y.marketId ? -1 : x.marketId > y.marketId ? 1 : x.outcome < y.outcome ? -1 : 1),
      );
      const page = all.slice(q.offset, q.offset + q.limit).map((x) => positionJson(b, x));
      return typedReply(Positions, {
        wallet: w.address,
        positions: page,
        pagination: { offset: q.offset, limit: q.limit, count: page.length, total: all.length, has_more: q.offset + page.length < all.length },
      });
    },
  });
}

/** One position as /wallets/{address}/positions serves it, open ones marked at the current price. */
function positionJson(b: VenueB, x: PositionRecord): z.output<typeof Positions>['positions'][number] {
  const m = b.state.catalog.get(b.label, x.marketId);
  const y = x.shares > 0 ? b.yesNow(x.marketId) : undefined;
  const px = y === undefined ? undefined : x.outcome === 'yes' ? y.price : PAYOUT - y.price;
  return {
    market_id: x.marketId,
    title: m?.title ?? null,
    token_id: x.token ?? b.tokenOf(m, x.outcome),
    outcome: x.outcome,
    status: x.settledAt !== undefined ? 'settled' : x.shares > 0 ? 'open' : 'closed',
    shares: x.shares,
    avg_price: x.shares > 0 ? toCents(Math.round(x.cost / x.shares)) : null,
    cost_usd: usd(x.cost),
    current_price: px === undefined ? null : toCents(px),
    value_usd: px === undefined ? null : usd(px * x.shares),
    unrealized_pnl_usd: px === undefined ? null : usd(px * x.shares - x.cost),
    realized_pnl_usd: usd(x.realized),
    bought: x.bought,
    sold: x.sold,
    opened_at: iso(x.openedAt),
    updated_at: iso(x.updatedAt),
    settled_at: iso(x.settledAt),
    payout: x.payout === undefined ? null : toCents(x.payout),
  };
}

function registerActivity(api: Api, b: VenueB): void {
  const tradesDb = b.ctx.persistence.db('trades');
  api.route({
    path: `/${b.slug}/wallets/:address/activity`,
    summary: `GET /${b.slug}/wallets/{address}/activity: a wallet's latest trades, newest first (cursor pagination)`,
    description: `Trades in the unified record of /trades plus role (taker or maker). The ledger indexes each wallet's latest ${b.ledger.options.recentTrades} trades; older ones are in /trades?wallet=.`,
    tags: b.tags,
    pathParams: { address: PATH.address },
    query: z.object({ limit: p.int({ min: 1, max: 100, default: 50 }), cursor: p.string({ max: 2000 }) }),
    response: Activity,
    errors: { 404: NOT_FOUND },
    handler: (c) => {
      const w = b.resolveWallet(c.path_['address']!);
      if (isReply(w)) return w;
      let before = Number.MAX_SAFE_INTEGER;
      if (c.query.cursor !== undefined) {
        const k = decodeCursor(c.query.cursor);
        if (!k || typeof k['s'] !== 'number') return errorReply(400, 'validation.invalid_cursor', 'invalid parameter "cursor": not a cursor this API issued');
        before = k['s'];
      }
      const out: z.output<typeof Activity>['activity'] = [];
      let last = 0;
      let more = false;
      for (let i = w.recent.length - 1; i >= 0; i--) {
        const seq = w.recent[i]!;
        if (seq >= before) continue;
        const t = tradesDb.get(seq) as StoredTrade | undefined;
        if (!t || t.venue !== b.label) continue;
        if (out.length === c.query.limit) {
          more = true;
          break;
        }
        out.push({ ...tradeJson(b.slug, t), role: t.taker?.toLowerCase() === w.address ? ('taker' as const) : ('maker' as const) });
        last = seq;
      }
      return typedReply(Activity, {
        wallet: w.address,
        activity: out,
        pagination: { limit: c.query.limit!, count: out.length, cursor: more ? encodeCursor({ s: last }) : null, has_more: more },
        next_cursor: more ? encodeCursor({ s: last }) : null,
        _meta: { indexed: w.recent.length },
      });
    },
  });
}
