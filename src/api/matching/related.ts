import { z } from 'zod';
import { typedReply, type Api } from '../../access/api.js';
import { p } from '../../access/params.js';
import { errorReply } from '../../server/http.js';
import { count, platform } from '../../views/schemas.js';
import type { MatchingRoutes } from './shared.js';

const RELATIONS = ['same', 'inverted', 'subset', 'superset', 'overlap'] as const;

/** The 200 body of /matching-markets/related. */
const Related = z.object({
  market: z.object({ platform, market_id: z.string(), title: z.string() }).describe('the market asked about'),
  related: z
    .array(
      z.object({
        platform,
        market_id: z.string(),
        title: z.string(),
        relation: z
          .enum(RELATIONS)
          .describe(
            "how the asked market's YES relates to this one's: same, inverted (one's YES is the other's NO), subset (the asked YES implies this YES), superset (the reverse), overlap (both can be YES, neither implies the other)",
          ),
        confidence: z.number().min(0).max(1).describe('how sure the matcher is of the relation (0..1)'),
        reasons: z.array(z.string()).describe('the settlement fields that agreed, and what differs (a threshold, a margin bucket, a settlement window)'),
        group_id: z.number().int().nullable().describe("the market's match group id; null when it has none"),
      }),
    )
    .describe('markets of the same kind and subject that are not unrelated, by platform and id; subset/superset/overlap pairs are never arbitrage'),
  _meta: z.object({ count: count('related markets') }),
});

/**
 * /matching-markets/related: the relations of one market beyond its match group (issue 32). Match
 * groups hold `same` and `inverted` members; a market whose YES implies another's ("wins by 0–3%"
 * ⊂ "wins", "reach $150k" ⊂ "reach $120k", a nomination by 2026 ⊂ one by 2029) is a subset of it.
 * Nothing that trades reads this route.
 */
export function registerMatchingRelated(api: Api, r: MatchingRoutes): void {
  const { venues, state } = r.ctx;
  api.route({
    path: '/matching-markets/related',
    summary: 'Markets related to one market: same, inverted, subset, superset or overlapping propositions, with confidence and reasons',
    description:
      'A subset market settles YES only when the other does (a margin bucket of a win, a higher strike of a "reach" ladder, an earlier deadline). ' +
      'Such pairs are informative, not arbitrage: the larger side can win while the smaller loses.',
    tags: ['matching'],
    group: 'matched_markets',
    query: z.object({
      platform: p.enum(venues.slugs(), { required: true, description: 'venue of the market' }),
      market_id: p.string({ required: true, max: 300, description: 'platform-native market id; for venue_a the full market ticker' }),
    }),
    responseDescription: '{market, related: [{platform, market_id, title, relation, confidence, reasons, group_id}], _meta}',
    response: Related,
    errors: { 404: 'No such market on that platform, or not matched yet (code not_found)' },
    handler: (c) => {
      const v = venues.bySlug.get(c.query.platform!)!;
      const marketId = c.query.market_id!;
      const rec = state.catalog.get(v.label, marketId);
      const related = rec ? r.matching.matcher.related(`${rec.venue}:${rec.marketId}`) : undefined;
      if (!rec || !related) return errorReply(404, 'not_found', `no ${v.slug} market "${marketId}" known to matching`);
      const rows = related.map((x) => ({
        platform: venues.slugOf(x.platform),
        // The catalog's id (the member key's), not the id the matcher read (a slug for some protocols).
        market_id: x.key.slice(x.key.indexOf(':') + 1),
        title: x.title,
        relation: x.relation,
        confidence: x.confidence,
        reasons: [...x.reasons],
        group_id: x.group_id,
      }));
      return typedReply(Related, {
        market: { platform: v.slug, market_id: rec.marketId, title: rec.title },
        related: rows,
        _meta: { count: rows.length },
      });
    },
  });
}
