import { z } from 'zod';
import type { Api } from '../../access/api.js';
import { exactlyOne, p } from '../../access/params.js';
import type { ServedGroup } from '../../matching/service.js';
import { jsonReply } from '../../server/http.js';
import type { MarketRecord } from '../../state/catalog.js';
import { GroupList, groupListBody, groupsOfRecords, type MatchingRoutes } from './shared.js';

/** The `extra` fields in which mappers keep the slugs a venue's pages and links name a market by. */
const SLUG_FIELDS = ['slug', 'eventSlug'] as const;

/** The market is `key` by id or by one of its slugs. */
const isKey = (m: MarketRecord, key: string): boolean => m.marketId === key || SLUG_FIELDS.some((f) => m.extra?.[f] === key);

/** /matching-markets: groups of a free-text query, a venue_b key or a venue_a ticker (exactly one). */
export function registerMatchingMarkets(api: Api, r: MatchingRoutes): void {
  const { state, venues } = r.ctx;
  const venueA = venues.withCapability('catalog');
  const venueB = venues.withCapability('walletData');
  const aKey = `${venueA?.slug ?? 'venue_a'}_key`;
  const bKey = `${venueB?.slug ?? 'venue_b'}_key`;
  api.route({
    path: '/matching-markets',
    summary: 'Cross-venue match groups for a query, a venue_b key or a venue_a ticker (exactly one)',
    description: `Give exactly one of q, ${bKey} and ${aKey}: none or more than one is a 400 (validation.exactly_one).`,
    tags: ['matching'],
    group: 'matched_markets',
    query: z
      .object({
        q: p.string({ min: 3, max: 100, description: `free text, 3 to 100 characters; exactly one of q, ${bKey}, ${aKey}` }),
        [bKey]: p.string({ max: 300, description: `${venueB?.slug ?? 'venue_b'} condition id or market URL slug; exactly one of q, ${bKey}, ${aKey}` }),
        [aKey]: p.string({ max: 200, description: `${venueA?.slug ?? 'venue_a'} full market ticker; exactly one of q, ${bKey}, ${aKey}` }),
      })
      .superRefine(exactlyOne(['q', bKey, aKey])),
    responseDescription: 'Only groups with markets on at least two venues',
    response: GroupList,
    handler: (c) => {
      const q = c.query as Record<string, string | undefined>;
      let groups: ServedGroup[];
      if (q['q'] !== undefined) {
        groups = r.events.search(q['q']).flatMap((e) => e.groups);
      } else if (q[bKey] !== undefined && venueB) {
        const key = q[bKey]!;
        groups = groupsOfRecords(
          r.matching,
          [...state.catalog.venue(venueB.label).values()].filter((m) => isKey(m, key)),
        );
      } else if (venueA) {
        const m = state.catalog.get(venueA.label, q[aKey]!);
        groups = groupsOfRecords(r.matching, m ? [m] : []);
      } else groups = [];
      return jsonReply(groupListBody(r.views, groups));
    },
  });
}
