import { z } from 'zod';
import { typedReply, type Api } from '../../access/api.js';
import { p } from '../../access/params.js';
import { MINUTE } from '../../state/candles.js';
import { DAY, HOUR, iso, roundShares, usd, type VenueB } from './shared.js';
import { count, strOrNull, time, timeOrNull } from '../../views/schemas.js';

const sideFlow = z.object({ wallets: count('smart wallets'), shares: z.number(), amount_usd: z.number() });

/** The 200 body of /<venue_b>/smart-activity. */
export const SmartActivity = z.object({
  markets: z.array(
    z.object({
      rank: z.number().int(),
      market_id: z.string(),
      title: strOrNull('market title'),
      smart_wallets: count('distinct smart wallets entering'),
      entries: count('smart entries'),
      amount_usd: z.number(),
      yes: sideFlow,
      no: sideFlow,
      direction: z.enum(['yes', 'no', 'mixed']).describe('yes/no when one side has more than twice the other’s USD'),
      last_entry_at: timeOrNull('latest entry'),
    }),
  ),
  _meta: z.object({
    warming: z.boolean().describe('too few scored entries to tell smart wallets apart: no ranking yet'),
    window: z.enum(['15m', '1h', '6h', '24h']),
    scored_entries: count('entries scored so far'),
    as_of: time('when computed'),
    needed_scored_entries: count('while warming: scored entries needed').optional(),
    retry_after_seconds: z.number().int().optional().describe('while warming: retry after this long'),
    markets_with_activity: count('markets with smart entries in the window').optional(),
  }),
});

const WINDOWS = { '15m': 15 * MINUTE, '1h': HOUR, '6h': 6 * HOUR, '24h': DAY } as const;

type Side = { wallets: Set<string>; shares: number; notional: number };
type MarketFlow = { yes: Side; no: Side; entries: number; last: number };

/** 4.19: /<slug>/smart-activity, markets smart wallets are entering (warming first). */
export function registerSmartActivity(api: Api, b: VenueB): void {
  const ledger = b.ledger;
  api.route({
    path: `/${b.slug}/smart-activity`,
    summary: `GET /${b.slug}/smart-activity: markets that smart wallets are entering, ranked by distinct smart wallets then USD`,
    description:
      'A smart wallet has at least the smart-money minimum of scored entries with a good-entry rate whose lower 95% bound passes the threshold (see /alerts/smart-money). While the ledger has scored too few entries to tell smart wallets apart, _meta.warming is true and the response has no ranking: an empty list then does not mean no activity; retry with backoff (_meta.retry_after_seconds).',
    tags: b.tags,
    query: z.object({ window: p.enum(Object.keys(WINDOWS) as (keyof typeof WINDOWS)[], { default: '1h' }), limit: p.int({ min: 1, max: 100, default: 20 }) }),
    response: SmartActivity,
    handler: (c) => {
      const now = b.ctx.clock.now();
      const base = { window: c.query.window!, scored_entries: ledger.scoredTotal, as_of: new Date(now).toISOString() };
      if (ledger.warming())
        return typedReply(SmartActivity, {
          markets: [],
          _meta: {
            warming: true,
            ...base,
            needed_scored_entries: ledger.options.warmMinScored,
            retry_after_seconds: Math.max(5, Math.round(ledger.horizonMs / 1000 / 4)),
          },
        });
      const rows = [...smartFlow(b, now - WINDOWS[c.query.window!])].map(([marketId, a]) => ({
        marketId,
        a,
        wallets: new Set([...a.yes.wallets, ...a.no.wallets]).size,
        notional: a.yes.notional + a.no.notional,
      }));
      rows.sort((x, y) => y.wallets - x.wallets || y.notional - x.notional || (x.marketId < y.marketId ? -1 : 1));
      const side = (s: Side) => ({ wallets: s.wallets.size, shares: roundShares(s.shares), amount_usd: usd(s.notional) });
      return typedReply(SmartActivity, {
        markets: rows.slice(0, c.query.limit).map((x, i) => ({
          rank: i + 1,
          market_id: x.marketId,
          title: b.state.catalog.get(b.label, x.marketId)?.title ?? null,
          smart_wallets: x.wallets,
          entries: x.a.entries,
          amount_usd: usd(x.notional),
          yes: side(x.a.yes),
          no: side(x.a.no),
          direction: x.a.yes.notional > 2 * x.a.no.notional ? ('yes' as const) : x.a.no.notional > 2 * x.a.yes.notional ? ('no' as const) : ('mixed' as const),
          last_entry_at: iso(x.a.last),
        })),
        _meta: { warming: false, ...base, markets_with_activity: rows.length },
      });
    },
  });
}

/** Smart wallets' entries on this venue since `since`, per market and outcome. */
function smartFlow(b: VenueB, since: number): Map<string, MarketFlow> {
  const agg = new Map<string, MarketFlow>();
  for (const f of b.ledger.smartFlow(since)) {
    if (f.venue !== b.label) continue;
    let a = agg.get(f.marketId);
    if (!a)
      agg.set(
        f.marketId,
        (a = { yes: { wallets: new Set(), shares: 0, notional: 0 }, no: { wallets: new Set(), shares: 0, notional: 0 }, entries: 0, last: 0 }),
      );
    const s = a[f.outcome];
    s.wallets.add(f.wallet);
    s.shares += f.size;
    s.notional += f.notional;
    a.entries++;
    if (f.timestamp > a.last) a.last = f.timestamp;
  }
  return agg;
}
