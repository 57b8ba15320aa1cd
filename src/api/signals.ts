import { z } from 'zod';
import type { Api } from '../access/api.js';
import { p } from '../access/params.js';
import { jsonReply } from '../server/http.js';
import type { SignalEngine } from '../signals/engine.js';
import type { ApiContext } from './context.js';
import { ArbPage, EvPage } from '../views/schemas.js';

const ARB_FIELDS =
  '{opportunities: [{group_id, group_title, title, event_date, event_type, roi_pct (= roi, net of fees, percent), roi, size, total_cost (= cost, dollars for both legs, fees included), cost, max_wager_usd (the cost at the most profitable size), payout, profit, detected_at, opportunity_id, legs: [{platform, source (venue slug), market_id, side, price (cents), avg_price, size, liquidity_usd (dollars the leg takes), fee_usd (= fee, dollars), fee, source_url (= url, null when unknown), url}], updated_at}], as_of (receive time of the last event the list reflects, ISO 8601), as_of_ms (the same, ms), delay_seconds (0: computed live), count, _meta: {count, total, as_of, fees}}';
const EV_FIELDS =
  '{opportunities: [{group_id, group_title, title, event_date, event_type, side, roi_pct (= roi), roi, ev_usd_per_dollar (= ev_per_dollar = roi / 100), ev_per_dollar, consensus_probability (= consensus, 0..1), consensus, consensus_sources, price, size, fee, detected_at, opportunity_id, legs: [{platform, source, market_id, side, price, size, roi_pct, ev_usd_per_dollar, fee_usd, fee, source_url, url}], updated_at}], as_of, as_of_ms, delay_seconds, count, _meta}';
const PLATFORMS = 'keep only opportunities whose legs are all on these venues (comma-separated)';

/**
 * GET /arb and GET /ev (spec 4.12, 4.13, 2.15): computed live on every book change (no 15-second
 * delay), net of each venue's taker fee and sized by book depth. `platforms` keeps opportunities
 * whose legs are all on the listed venues: a client asking for the venues it trades gets only
 * opportunities it can trade. The top-level `as_of`, `delay_seconds` and `count` are the names
 * clients of the hosted API read (README "Clients of the hosted API").
 */
export function registerSignals(api: Api, ctx: ApiContext, engine: SignalEngine): void {
  const slugs = ctx.venues.slugs();
  const common = {
    min_roi: p.number({ min: 0, default: 0, description: 'minimum net ROI in percent' }),
    platforms: p.list({ values: slugs, description: PLATFORMS }),
    limit: p.int({ min: 1, max: 100, default: 20 }),
  };
  // The list reflects the state as of the last event applied to it (the per-turn recompute runs in that event's turn).
  const lastEventAt = (c: ApiContext): number => c.state.current?.localTimestamp ?? c.clock.now();
  const legsMatch = (legs: readonly { platform: string }[], platforms: string[] | 'all' | undefined): boolean =>
    !Array.isArray(platforms) || legs.every((l) => platforms.includes(l.platform));

  api.route({
    path: '/arb',
    summary: 'Two-leg arbitrage (buy YES on one venue, NO on another), net of fees, sized by depth, sorted by ROI',
    tags: ['signals'],
    group: 'arb',
    endpoint: 'arb',
    query: z.object(common),
    description: `platforms: ${PLATFORMS}.`,
    responseDescription: ARB_FIELDS,
    response: ArbPage,
    handler: (c) => {
      const q = c.query;
      const out = [];
      for (const g of engine.all())
        for (const a of g.arbs)
          if (a.roi >= q.min_roi! && legsMatch(a.legs, q.platforms)) out.push({ ...a, title: g.title, updated_at: new Date(g.at).toISOString() });
      out.sort((a, b) => b.roi - a.roi);
      const asOfMs = lastEventAt(ctx);
      const asOf = new Date(asOfMs).toISOString();
      const count = Math.min(out.length, q.limit!);
      return jsonReply({
        as_of: asOf,
        as_of_ms: asOfMs,
        delay_seconds: 0,
        count,
        opportunities: out.slice(0, q.limit),
        _meta: {
          count,
          total: out.length,
          as_of: asOf,
          fees: 'ROI is net of each venue taker fee (see `crossbook arb --fees`)',
        },
      });
    },
  });

  api.route({
    path: '/ev',
    summary: 'Expected-value opportunities against a cross-venue consensus probability, net of fees',
    tags: ['signals'],
    group: 'ev',
    endpoint: 'ev',
    query: z.object({ ...common, side: p.enum(['yes', 'no', 'both'] as const, { default: 'both' }) }),
    description: `platforms: ${PLATFORMS}.`,
    responseDescription: EV_FIELDS,
    response: EvPage,
    handler: (c) => {
      const q = c.query;
      const out = [];
      for (const g of engine.all())
        for (const e of g.evs)
          if (e.roi >= q.min_roi! && (q.side === 'both' || e.side === q.side) && legsMatch(e.legs, q.platforms))
            out.push({ ...e, title: g.title, updated_at: new Date(g.at).toISOString() });
      out.sort((a, b) => b.roi - a.roi);
      const asOfMs = lastEventAt(ctx);
      const asOf = new Date(asOfMs).toISOString();
      const count = Math.min(out.length, q.limit!);
      return jsonReply({
        as_of: asOf,
        as_of_ms: asOfMs,
        delay_seconds: 0,
        count,
        opportunities: out.slice(0, q.limit),
        _meta: {
          count,
          total: out.length,
          as_of: asOf,
          consensus: 'depth-weighted mid of the other venues of the group (20-cent spread cap)',
        },
      });
    },
  });
}
