import { p } from '../../access/params.js';
import type { MatchingService, ServedGroup } from '../../matching/service.js';
import { errorReply, type Reply } from '../../server/http.js';
import type { MarketRecord } from '../../state/catalog.js';
import { decodeCursor, type ApiContext } from '../context.js';
import type { EventIndex } from './event-index.js';
import type { GroupViews } from './views.js';
import { z } from 'zod';
import { count, cursor, EventJson, MatchGroup, strOrNull } from '../../views/schemas.js';

/** The 200 body of the routes that answer match groups. */
export const GroupList = z.object({
  success: z.literal(true).describe('always true on a 200 (the name clients of the hosted API read; errors carry false)'),
  count: count('groups (= _meta.count)'),
  groups: z.array(MatchGroup).describe('only groups with markets on at least two venues'),
  events: z
    .array(
      z.object({
        event_id: z.string().describe('shared by every group of one real-world event'),
        id: z.string().describe('= event_id'),
        event_name: z.string().describe('the event’s name: its groups’ event_name, else their game title, else the first group’s title'),
        event_date: strOrNull('event date, YYYY-MM-DD'),
        group_count: count('groups of the event here'),
        groups: z.array(MatchGroup).describe('the event’s groups, as in groups'),
      }),
    )
    .describe('the same groups by event, in the order of groups (the shape clients of the hosted API read)'),
  _meta: z.object({
    count: count('groups'),
    platform: z.string().optional().describe('/matching-markets/url: venue of the URL'),
    resolved: z.array(z.string()).optional().describe('/matching-markets/url: market ids the URL named'),
  }),
});

/**
 * The body of the routes that answer match groups (/matching-markets, /matching-markets/url): the
 * groups, and the same groups by event as clients of the hosted API read them.
 */
export function groupListBody(views: GroupViews, served: readonly ServedGroup[], meta: Record<string, unknown> = {}): z.input<typeof GroupList> {
  const groups = served.map((g) => views.group(g));
  const byEvent = new Map<string, { event_id: string; id: string; event_name: string; event_date: string | null; group_count: number; groups: unknown[] }>();
  for (const g of groups) {
    const id = g['event_id'] as string;
    let e = byEvent.get(id);
    if (!e) {
      const name = (g['event_name'] ?? g['game_title'] ?? g['title']) as string;
      byEvent.set(id, (e = { event_id: id, id, event_name: name, event_date: g['event_date'] as string | null, group_count: 0, groups: [] }));
    }
    e.groups.push(g);
    e.group_count++;
  }
  return { success: true, count: groups.length, groups, events: [...byEvent.values()], _meta: { count: groups.length, ...meta } } as z.input<typeof GroupList>;
}

/** The 200 body of /events and /search. */
export const EventPage = z.object({
  total_count: count('events matching (= _meta.total_count)'),
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
