import { z } from 'zod';
import type { Api } from '../../access/api.js';
import { p } from '../../access/params.js';
import { precisionOf, type QualityFilter, type Tally } from '../../matching/audit.js';
import { jsonReply } from '../../server/http.js';
import type { MatchingRoutes } from './shared.js';

const COUNTS: Record<string, unknown> = {
  agreements: { type: 'integer', description: 'settled pairs that settled consistently with their orientation in the group' },
  contradictions: { type: 'integer', description: 'settled pairs that did not (a wrong match or a wrong inversion)' },
  voided: { type: 'integer', description: 'pairs with a void, cancelled or partial settlement: not counted either way' },
  pending: { type: 'integer', description: 'pairs of current groups of which one market settled and the other not yet' },
  precision: { type: ['number', 'null'], description: 'agreements / (agreements + contradictions); null before any' },
};

const QUALITY_SCHEMA: Record<string, unknown> = {
  type: 'object',
  required: ['summary', 'pairs', 'suspect_groups', '_meta'],
  properties: {
    summary: {
      type: 'object',
      properties: {
        ...COUNTS,
        pending_groups: { type: 'integer', description: 'groups with a settled member waiting for another to settle' },
        suspect_groups: { type: 'integer', description: 'groups whose members settled inconsistently' },
      },
    },
    pairs: {
      type: 'array',
      description: 'by category and venue pair',
      items: {
        type: 'object',
        properties: {
          category: { type: ['string', 'null'], description: 'category of the match group' },
          platforms: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 2, description: 'venues of the two markets, sorted' },
          ...COUNTS,
        },
      },
    },
    suspect_groups: {
      type: 'array',
      description: 'groups whose settlements contradict the match (no arb or EV is computed from them), by group id',
      items: {
        type: 'object',
        properties: {
          group_id: { type: 'integer' },
          title: { type: 'string' },
          category: { type: ['string', 'null'] },
          platforms: { type: 'array', items: { type: 'string' } },
          reason: { type: 'string' },
        },
      },
    },
    _meta: { type: 'object', properties: { count: { type: 'integer' }, as_of: { type: 'string', format: 'date-time' } } },
  },
};

/** The counts of a tally under their API names. */
function counts(t: Tally): Record<string, number | null> {
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
    response: z.fromJSONSchema(QUALITY_SCHEMA),
    handler: (c) => {
      const q = c.query;
      const f: QualityFilter = { category: q.category, venues: Array.isArray(q.platforms) ? q.platforms.map((s) => venues.bySlug.get(s)!.label) : undefined };
      const totals = audit.totals(f);
      const pairs = audit.rows(f).map((row) => ({ category: row.category, platforms: row.venues.map((v) => venues.slugOf(v)).sort(), ...counts(row.tally) }));
      const suspects = audit.suspects(f).map((s) => ({
        group_id: s.groupId,
        title: s.title,
        category: s.category,
        platforms: s.venues.map((v) => venues.slugOf(v)),
        reason: s.reason,
      }));
      return jsonReply({
        summary: { ...counts(totals), pending_groups: totals.pendingGroups, suspect_groups: totals.suspectGroups },
        pairs,
        suspect_groups: suspects,
        _meta: { count: pairs.length, as_of: new Date().toISOString() },
      });
    },
  });
}
