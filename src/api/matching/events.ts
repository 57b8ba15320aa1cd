import { z } from 'zod';
import type { Api } from '../../access/api.js';
import { p } from '../../access/params.js';
import { jsonReply } from '../../server/http.js';
import { encodeCursor } from '../context.js';
import { cursorOffset, EventPage, typesMatch, typesParam, type MatchingRoutes } from './shared.js';

/** /events: events with their cross-venue match groups, filtered, offset cursor. */
export function registerEvents(api: Api, r: MatchingRoutes): void {
  api.route({
    path: '/events',
    summary: 'Events with their cross-venue match groups',
    tags: ['matching'],
    group: 'matched_markets',
    response: EventPage,
    query: z.object({
      event_type: p.string({ max: 40, description: 'sports, politics, economics, crypto, entertainment, …' }),
      status: p.enum(['active', 'all'] as const, { default: 'active', retired: ['resolved', 'cancelled', 'completed'] }),
      tags: p.list({ max: 20 }),
      date: p.date(),
      q: p.string({ min: 1, max: 100 }),
      include_groups: p.bool({ default: true }),
      types: typesParam,
      limit: p.int({ min: 1, max: 100, default: 20 }),
      cursor: p.string({ max: 500 }),
    }),
    responseDescription:
      '{total_count (= _meta.total_count), events: Event[], cursor: string|null, next_cursor: string|null (the same token as cursor: pass it as cursor; null on the last page), _meta: {count, total_count}}',
    handler: (c) => {
      const q = c.query;
      const all = r.events.all();
      const offset = cursorOffset(q.cursor);
      if (typeof offset !== 'number') return offset;
      const tags = Array.isArray(q.tags) ? q.tags.map((t) => t.toLowerCase()) : undefined;
      const list = (q.q ? r.events.search(q.q) : all).filter(
        (e) =>
          (q.status === 'all' || !e.completed) &&
          (q.event_type === undefined || e.event_type === q.event_type.toLowerCase()) &&
          (!tags || tags.every((t) => e.tags.some((x) => x.toLowerCase() === t))) &&
          (q.date === undefined || e.date === q.date) &&
          e.groups.some((g) => typesMatch(g, q.types)),
      );
      const page = list.slice(offset, offset + q.limit!);
      const more = offset + q.limit! < list.length;
      const cursor = more ? encodeCursor({ o: offset + q.limit! }) : null;
      return jsonReply({
        total_count: list.length,
        events: page.map((e) => r.views.event(e, q.include_groups!, q.types, true)),
        cursor,
        next_cursor: cursor,
        _meta: { count: page.length, total_count: list.length },
      });
    },
  });
}
