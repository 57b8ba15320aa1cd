import { z } from 'zod';
import { typedReply, type Api } from '../../access/api.js';
import { p } from '../../access/params.js';
import { PAYOUT } from '../../core/price.js';
import { wilsonLow, type WalletRecord } from '../../signals/wallets.js';
import { CACHE_MS, iso, usd, type VenueB } from './shared.js';
import { count, numOrNull, time, timeOrNull } from '../../views/schemas.js';

/** Offset pagination of the venue_b lists. */
export const OffsetPagination = z.object({
  offset: count('rows skipped'),
  limit: count('page size'),
  count: count('rows on this page'),
  total: count('rows in all'),
  has_more: z.boolean(),
});

/** The 200 body of /<venue_b>/leaderboard. */
export const Leaderboard = z.object({
  leaderboard: z.array(
    z.object({
      rank: z.number().int(),
      wallet: z.string(),
      pnl_usd: z.number().describe('realized + marked to market, USD'),
      realized_pnl_usd: z.number(),
      unrealized_pnl_usd: z.number(),
      volume_usd: z.number(),
      trades: count('trades'),
      markets_traded: count('markets traded'),
      scored_entries: count('entries scored good, bad or neutral'),
      hit_rate: numOrNull('good entries / scored entries, 0 to 1; null without scored entries'),
      hit_rate_lower_bound: z.number().describe('lower 95% (Wilson) bound of the hit rate'),
      first_seen: timeOrNull('first trade seen'),
      last_seen: timeOrNull('last trade seen'),
    }),
  ),
  pagination: OffsetPagination,
  _meta: z.object({
    sort: z.enum(['pnl', 'realized_pnl', 'volume', 'hit_rate']),
    refreshed_at: time('when the ranking was built'),
    cached: z.boolean(),
    tracked_since: timeOrNull('first trade the wallet ledger saw'),
    tracked_wallets: count('wallets the ledger tracks'),
  }),
});

type LeaderSort = 'pnl' | 'realized_pnl' | 'volume' | 'hit_rate';
type LeaderRow = { w: WalletRecord; realized: number; unrealized: number; volume: number; lb: number };

/** 4.19: /<slug>/leaderboard, wallets ranked by PnL, realized PnL, volume or hit rate. */
export function registerLeaderboard(api: Api, b: VenueB): void {
  const boards = new Map<string, { at: number; rows: LeaderRow[] }>();
  api.route({
    path: `/${b.slug}/leaderboard`,
    summary: `GET /${b.slug}/leaderboard: wallets ranked by PnL (realized + marked to market), realized PnL, volume or hit rate; offset pagination`,
    description: `hit_rate ranks by the lower 95% bound of the share of good entries (so a wallet with few entries does not top it by luck). min_entries filters on scored entries. Cached up to 20 s.`,
    tags: b.tags,
    query: z.object({
      sort: p.enum(['pnl', 'realized_pnl', 'volume', 'hit_rate'] as const, { default: 'pnl' }),
      limit: p.int({ min: 1, max: 100, default: 20 }),
      offset: p.int({ min: 0, max: 10_000, default: 0 }),
      min_entries: p.int({ min: 0, max: 100_000, default: 0, description: 'minimum scored entries' }),
    }),
    response: Leaderboard,
    handler: (c) => {
      const q = c.query as { sort: LeaderSort; limit: number; offset: number; min_entries: number };
      const now = b.ctx.clock.now();
      // The ranking (one pass over every wallet's positions) is built once per sort and
      // min_entries for 20 s; pages are slices of it, so walking the offsets costs one build.
      const key = `${q.sort}|${q.min_entries}`;
      let board = boards.get(key);
      if (!board || now - board.at >= CACHE_MS) {
        board = { at: now, rows: rank(b, q.sort, q.min_entries) };
        boards.set(key, board);
      }
      const rows = board.rows;
      const page = rows.slice(q.offset, q.offset + q.limit);
      return typedReply(Leaderboard, {
        leaderboard: page.map((x, i) => ({
          rank: q.offset + i + 1,
          wallet: x.w.address,
          pnl_usd: usd(x.realized + x.unrealized),
          realized_pnl_usd: usd(x.realized),
          unrealized_pnl_usd: usd(x.unrealized),
          volume_usd: usd(x.volume),
          trades: x.w.trades,
          markets_traded: x.w.markets.size + (x.w.marketsEvicted ?? 0),
          scored_entries: x.w.entries.scored,
          hit_rate: x.w.entries.scored ? Math.round((x.w.entries.good / x.w.entries.scored) * 1000) / 1000 : null,
          hit_rate_lower_bound: Math.round(x.lb * 1000) / 1000,
          first_seen: iso(x.w.firstSeen),
          last_seen: iso(x.w.lastSeen),
        })),
        pagination: { offset: q.offset, limit: q.limit, count: page.length, total: rows.length, has_more: q.offset + page.length < rows.length },
        _meta: {
          sort: q.sort,
          refreshed_at: new Date(board.at).toISOString(),
          cached: board.at !== now,
          tracked_since: iso(b.ledger.firstTradeAt),
          tracked_wallets: b.ledger.walletCount,
        },
      });
    },
  });
}

/** Every wallet with a position on this venue, ranked; PnL marks open positions at the current price. */
function rank(b: VenueB, sort: LeaderSort, minEntries: number): LeaderRow[] {
  const prices = new Map<string, number | undefined>();
  const priceOf = (marketId: string): number | undefined => {
    if (!prices.has(marketId)) prices.set(marketId, b.yesNow(marketId)?.price);
    return prices.get(marketId);
  };
  const rows: LeaderRow[] = [];
  for (const w of b.ledger.allWallets()) {
    if (w.entries.scored < minEntries) continue;
    let unrealized = 0;
    let realized = 0;
    let any = false;
    for (const pos of w.positions.values()) {
      if (pos.venue !== b.label) continue;
      any = true;
      realized += pos.realized;
      if (pos.shares > 0) {
        const y = priceOf(pos.marketId);
        if (y !== undefined) unrealized += (pos.outcome === 'yes' ? y : PAYOUT - y) * pos.shares - pos.cost;
      }
    }
    if (any) rows.push({ w, realized, unrealized, volume: w.volume, lb: wilsonLow(w.entries.good, w.entries.scored) });
  }
  const key = (x: LeaderRow): number =>
    sort === 'pnl' ? x.realized + x.unrealized : sort === 'realized_pnl' ? x.realized : sort === 'volume' ? x.volume : x.lb;
  rows.sort((x, y) => key(y) - key(x) || (x.w.address < y.w.address ? -1 : 1));
  return rows;
}
