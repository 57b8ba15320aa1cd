import { z } from 'zod';
import { typedReply, type Api } from '../../access/api.js';
import { p } from '../../access/params.js';
import { precisionOf, type QualityFilter, type Tally } from '../../matching/audit.js';
import { count, platform, strOrNull, time } from '../../views/schemas.js';
import type { MatchingRoutes } from './shared.js';

/** The settlement counts of a set of pairs. */
const counts = {
  agreements: count('settled pairs that settled consistently with their orientation in the group'),
  contradictions: count('settled pairs that did not (a wrong match or a wrong inversion)'),
  voided: count('pairs with a void, cancelled or partial settlement: not counted either way'),
  pending: count('pairs of current groups of which one market settled and the other not yet'),
  precision: z.number().nullable().describe('agreements / (agreements + contradictions); null before any'),
};

/** The 200 body of /matching-markets/quality. */
const Quality = z.object({
  summary: z.object({
    ...counts,
    pending_groups: count('groups with a settled member waiting for another to settle'),
    suspect_groups: count('groups whose members settled inconsistently'),
  }),
  pairs: z
    .array(
      z.object({
        category: strOrNull('category of the match group; null when it has none'),
        platforms: z.array(platform).length(2).describe('venues of the two markets, sorted'),
        ...counts,
      }),
    )
    .describe('by category and venue pair'),
  suspect_groups: z
    .array(
      z.object({
        group_id: z.number().int().describe('match group id'),
        title: z.string().describe('match group title'),
        category: strOrNull('category of the match group; null when it has none'),
        platforms: z.array(platform).describe("venues of the group's members"),
        reason: z.string().describe('which settlements contradict the match, with the markets as platform:market_id'),
      }),
    )
    .describe('groups whose settlements contradict the match (no arb or EV is computed from them), by group id'),
  _meta: z.object({ count: count('rows of pairs'), as_of: time('when the audit was read') }),
});

/** The counts of a tally under their API names. */
function countsOf(t: Tally): { agreements: number; contradictions: number; voided: number; pending: number; precision: number | null } {
  return { agreements: t.agree, contradictions: t.contradict, voided: t.void, pending: t.pending, precision: precisionOf(t) };
}

/**
 * /matching-markets/quality: the settlement audit (src/matching/audit.ts). Every pair of grouped
 * markets that both settled is an agreement or a contradiction; the figures by category and venue
 * pair are the matcher's precision measured on real resolutions.
 */
export function registerMatchingQuality(api: Api, r: MatchingRoutes): void {
  const venues = r.ctx.venues;
  const audit = r.matching.audit;
  api.route({
    path: '/matching-markets/quality',
    summary: 'Settlement audit of the match groups: agreements and contradictions by category and venue pair, and the suspect groups',
    description:
      'When two markets of a group have both settled, they agree if they settled on the same side (opposite sides for an inverted member) ' +
      'and contradict otherwise; a contradiction marks the group suspect (its arbitrage and EV stop). Void or partial settlements are not counted. ' +
      'Counts persist across restarts.',
    tags: ['matching'],
    group: 'matched_markets',
    query: z.object({
      category: p.string({ max: 100, description: 'category of the match group (case-insensitive)' }),
      platforms: p.list({ values: venues.slugs(), max: 2, description: 'one venue: pairs with a market on it; two: that venue pair' }),
    }),
    responseDescription: '{summary, pairs: [{category, platforms, agreements, contradictions, voided, pending, precision}], suspect_groups, _meta}',
    response: Quality,
    handler: (c) => {
      const q = c.query;
      const f: QualityFilter = { category: q.category, venues: Array.isArray(q.platforms) ? q.platforms.map((s) => venues.bySlug.get(s)!.label) : undefined };
      const totals = audit.totals(f);
      const pairs = audit.rows(f).map((row) => ({ category: row.category, platforms: row.venues.map((v) => venues.slugOf(v)).sort(), ...countsOf(row.tally) }));
      const suspects = audit.suspects(f).map((s) => ({
        group_id: s.groupId,
        title: s.title,
        category: s.category,
        platforms: s.venues.map((v) => venues.slugOf(v)),
        reason: s.reason,
      }));
      return typedReply(Quality, {
        summary: { ...countsOf(totals), pending_groups: totals.pendingGroups, suspect_groups: totals.suspectGroups },
        pairs,
        suspect_groups: suspects,
        _meta: { count: pairs.length, as_of: new Date().toISOString() },
      });
    },
  });
}
