import { z } from 'zod';
import type { Api } from '../access/api.js';
import { p } from '../access/params.js';
import { jsonReply } from '../server/http.js';
import type { SignalEngine } from '../signals/engine.js';
import type { ApiContext } from './context.js';
import { ArbPage, EvPage } from '../views/schemas.js';

/**
 * GET /arb and GET /ev (spec 4.12, 4.13, 2.15): computed live on every book change (no 15-second
 * delay), net of each venue's taker fee and sized by book depth. `platforms` keeps opportunities
 * with at least one leg on one of the listed venues.
 */
export function registerSignals(api: Api, ctx: ApiContext, engine: SignalEngine): void {
  const slugs = ctx.venues.slugs();
  const common = {
    min_roi: p.number({ min: 0, default: 0, description: 'minimum net ROI in percent' }),
    platforms: p.list({ values: slugs, description: 'keep opportunities with a leg on one of these venues' }),
    limit: p.int({ min: 1, max: 100, default: 20 }),
  };
  const legsMatch = (legs: readonly { platform: string }[], platforms: string[] | 'all' | undefined): boolean =>
    !Array.isArray(platforms) || legs.some((l) => platforms.includes(l.platform));

  api.route({
    path: '/arb',
    summary: 'Two-leg arbitrage (buy YES on one venue, NO on another), net of fees, sized by depth, sorted by ROI',
    tags: ['signals'],
    group: 'arb',
    endpoint: 'arb',
    query: z.object(common),
    responseDescription: 'Opportunities by net ROI (percent, fee-net), best first; prices in cents, sizes in contracts, cost/payout/profit/fee in USD',
    response: ArbPage,
    handler: (c) => {
      const q = c.query;
      const out = [];
      for (const g of engine.all())
        for (const a of g.arbs)
          if (a.roi >= q.min_roi! && legsMatch(a.legs, q.platforms)) out.push({ ...a, title: g.title, updated_at: new Date(g.at).toISOString() });
      out.sort((a, b) => b.roi - a.roi);
      return jsonReply({
        opportunities: out.slice(0, q.limit),
        _meta: {
          count: Math.min(out.length, q.limit!),
          total: out.length,
          as_of: new Date().toISOString(),
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
    responseDescription: 'Opportunities by net ROI (percent, fee-net), best first; prices and consensus in cents',
    response: EvPage,
    handler: (c) => {
      const q = c.query;
      const out = [];
      for (const g of engine.all())
        for (const e of g.evs)
          if (e.roi >= q.min_roi! && (q.side === 'both' || e.side === q.side) && legsMatch(e.legs, q.platforms))
            out.push({ ...e, title: g.title, updated_at: new Date(g.at).toISOString() });
      out.sort((a, b) => b.roi - a.roi);
      return jsonReply({
        opportunities: out.slice(0, q.limit),
        _meta: {
          count: Math.min(out.length, q.limit!),
          total: out.length,
          as_of: new Date().toISOString(),
          consensus: 'depth-weighted mid of the other venues of the group (20-cent spread cap)',
        },
      });
    },
  });
}
