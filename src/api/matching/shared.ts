import { p } from '../../access/params.js';
import type { MatchingService, ServedGroup } from '../../matching/service.js';
import { errorReply, type Reply } from '../../server/http.js';
import type { MarketRecord } from '../../state/catalog.js';
import { decodeCursor, type ApiContext } from '../context.js';
import type { EventIndex } from './event-index.js';
import type { GroupViews } from './views.js';
import { z } from 'zod';
import { count, cursor, EventJson, MatchGroup } from '../../views/schemas.js';

/** The 200 body of the routes that answer match groups. */
export const GroupList = z.object({
  groups: z.array(MatchGroup).describe('only groups with markets on at least two venues'),
  _meta: z.object({
    count: count('groups'),
    platform: z.string().optional().describe('/matching-markets/url: venue of the URL'),
    resolved: z.array(z.string()).optional().describe('/matching-markets/url: market ids the URL named'),
  }),
});

/** The 200 body of /events and /search. */
export const EventPage = z.object({
  events: z.array(EventJson),
  cursor,
  next_cursor: cursor,
  _meta: z.object({
    count: count('events on this page'),
    total_count: count('events matching'),
    prices_unavailable: z.literal(true).optional().describe('/search: no quotes yet; prices are null'),
  }),
});

export const CLASSES = ['moneyline', 'spread', 'total', 'player_prop', 'other'] as const;
/** A market class a request can filter on (`other`: groups without a class). */
export type Cls = (typeof CLASSES)[number];

/** The `types` parameter of /events and /search. */
export const typesParam = p.list({ values: CLASSES, allowAll: true, description: 'market_class values, comma-separated, or all' });

/** What every matching route group reads. */
export interface MatchingRoutes {
  readonly ctx: ApiContext;
  readonly matching: MatchingService;
  /** Events and their full-text index, rebuilt when the groups change. */
  readonly events: EventIndex;
  /** Groups, legs and events as the routes serve them. */
  readonly views: GroupViews;
}

/** The group's class is one of `types` (all when undefined or 'all'; classless groups are 'other'). */
export function typesMatch(g: ServedGroup, types: readonly string[] | 'all' | undefined): boolean {
  if (types === undefined || types === 'all') return true;
  return g.market_class !== null ? types.includes(g.market_class) : types.includes('other');
}

/** The served groups of some markets, by group id, each once. */
export function groupsOfRecords(matching: MatchingService, recs: Iterable<MarketRecord>): ServedGroup[] {
  const ids = new Set<number>();
  for (const r of recs) {
    const id = matching.groupIdOf(r.venue, r.marketId);
    if (id !== undefined) ids.add(id);
  }
  return [...ids].sort((a, b) => a - b).map((id) => matching.servedGroup(id)!);
}

/** The offset an offset cursor carries (0 without one), or the 400 of a cursor this API did not issue. */
export function cursorOffset(cursor: string | undefined): number | Reply {
  if (cursor === undefined) return 0;
  const k = decodeCursor(cursor);
  if (!k || typeof k['o'] !== 'number' || k['o'] < 0)
    return errorReply(400, 'validation.invalid_cursor', 'invalid parameter "cursor": not a cursor this API issued');
  return k['o'];
}
