import { z } from 'zod';
import { typedReply, type Api } from '../access/api.js';
import { p } from '../access/params.js';
import { errorReply } from '../server/http.js';
import type { HistoryCursor, OpportunityLog } from '../signals/lifecycle/log.js';
import { OpportunityRecordJson, recordJson, type OpportunityKind } from '../signals/lifecycle/record.js';
import { pairStats } from '../signals/lifecycle/stats.js';
import { count, cursor as pageCursor, strOrNull, time } from '../views/schemas.js';
import { decodeCursor, encodeCursor, type ApiContext } from './context.js';

/** Records read at most for one /arb/stats answer (the window is cut there and says so). */
const STATS_MAX_RECORDS = 200_000;
const DAY_MS = 86_400_000;

/** The 200 body of /arb/history and /ev/history. */
const HistoryPage = z.object({
  opportunities: z.array(OpportunityRecordJson).describe('closed opportunities, newest first'),
  next_cursor: pageCursor.describe('pass as cursor for the next (older) page; null at the end'),
  _meta: z.object({
    count: count('opportunities on this page'),
    retention_hours: z.number().describe('how long closed opportunities are kept, hours'),
    as_of: time('when the page was read'),
  }),
});

/** The 200 body of /arb/stats. */
const StatsPage = z.object({
  pairs: z
    .array(
      z.object({
        venues: z.array(z.string()).describe('the venues of the legs (slugs), sorted'),
        category: strOrNull('category of the match group; null when it has none'),
        count: count('opportunities closed in the window'),
        median_duration_ms: z.number().describe('median lifetime, ms'),
        p90_duration_ms: z.number().describe('90th percentile lifetime, ms'),
        median_peak_roi: z.number().describe('median peak net ROI, percent'),
        total_executable_size: z.number().describe('Σ ROI-weighted executable size, contracts'),
        by_hour: z.array(count('openings in the hour')).length(24).describe('openings per UTC hour of day, 0 to 23'),
      }),
    )
    .describe('by venue pair and category, busiest first'),
  _meta: z.object({
    from: time('start of the window (closed at or after)'),
    to: time('end of the window (closed before)'),
    count: count('opportunities read'),
    truncated: z.boolean().describe(`more than ${STATS_MAX_RECORDS} opportunities closed in the window; the figures cover the oldest of them`),
  }),
});

/** `from` before `to` when both are given. */
function ordered(v: { from?: number | undefined; to?: number | undefined }, ctx: z.RefinementCtx): void {
  if (v.from !== undefined && v.to !== undefined && v.from >= v.to)
    ctx.addIssue({ code: 'custom', path: ['from'], message: 'must be before to', params: { code: 'validation.invalid' } });
}

function readCursor(raw: string | undefined): HistoryCursor | undefined | 'bad' {
  if (raw === undefined) return undefined;
  const c = decodeCursor(raw);
  return c && typeof c['t'] === 'number' && Number.isSafeInteger(c['t']) && typeof c['i'] === 'string' ? { closedAt: c['t'], id: c['i'] } : 'bad';
}

/**
 * GET /arb/history, /ev/history and /arb/stats: closed opportunities (what /arb and /ev listed, with
 * how long each lived, its peak ROI and size, and why it closed), newest first with keyset paging,
 * and per venue pair and category figures. Same plan gates and quota groups as /arb and /ev.
 */
export function registerSignalHistory(api: Api, ctx: ApiContext, log: OpportunityLog): void {
  const slugs = ctx.venues.slugs();
  const window = {
    from: p.isoTime({ description: 'closed at or after (ISO 8601)' }),
    to: p.isoTime({ description: 'closed before (ISO 8601)' }),
    platforms: p.list({ values: slugs, description: 'keep opportunities with a leg on one of these venues' }),
    category: p.string({ max: 100, description: 'category of the match group (as /matching-markets reports it)' }),
  };
  const historyQuery = z
    .object({
      ...window,
      min_roi: p.number({ min: 0, description: 'minimum peak net ROI in percent' }),
      min_duration: p.number({ min: 0, description: 'minimum lifetime in seconds' }),
      limit: p.int({ min: 1, max: 500, default: 50 }),
      cursor: p.string({ max: 500, description: 'next_cursor of the previous page' }),
    })
    .superRefine(ordered);

  for (const kind of ['arb', 'ev'] as const satisfies readonly OpportunityKind[])
    api.route({
      path: `/${kind}/history`,
      summary: `Closed ${kind === 'arb' ? 'arbitrage' : 'EV'} opportunities, newest first: lifetime, peak net ROI and size, close reason`,
      description:
        'Each opportunity is identified from the recompute at which it appeared (group, legs, side) to the one at which it was gone; ' +
        'close_reason is group_changed, market_closed, fee_change, size_gone or book_moved. Keyset paging: pass next_cursor as cursor.',
      tags: ['signals'],
      group: kind,
      endpoint: kind,
      query: historyQuery,
      responseDescription: '{opportunities: [record], next_cursor, _meta}',
      response: HistoryPage,
      handler: (c) => {
        const q = c.query;
        const cursor = readCursor(q.cursor);
        if (cursor === 'bad')
          return errorReply(400, 'validation.invalid', 'invalid parameter "cursor": not a cursor of this endpoint (pass next_cursor as given)');
        const filter = {
          from: q.from,
          to: q.to,
          platforms: Array.isArray(q.platforms) ? q.platforms : undefined,
          category: q.category,
          minRoi: q.min_roi,
          minDurationMs: q.min_duration === undefined ? undefined : q.min_duration * 1000,
        };
        const page = log.page(kind, filter, q.limit!, cursor);
        return typedReply(HistoryPage, {
          opportunities: page.records.map(recordJson),
          next_cursor: page.next ? encodeCursor({ t: page.next.closedAt, i: page.next.id }) : null,
          _meta: { count: page.records.length, retention_hours: log.retentionMs / 3_600_000, as_of: new Date().toISOString() },
        });
      },
    });

  api.route({
    path: '/arb/stats',
    summary: 'Arbitrage by venue pair and category: count, median and p90 lifetime, median peak ROI, executable size, openings per hour of day',
    description: 'Over opportunities closed in [from, to): by default the last 24 hours.',
    tags: ['signals'],
    group: 'arb',
    endpoint: 'arb',
    query: z.object(window).superRefine(ordered),
    responseDescription: '{pairs: [{venues, category, count, median_duration_ms, p90_duration_ms, median_peak_roi, total_executable_size, by_hour}], _meta}',
    response: StatsPage,
    handler: (c) => {
      const q = c.query;
      const to = q.to ?? ctx.clock.now() + 1;
      const from = q.from ?? to - DAY_MS;
      const { records, truncated } = log.scan(
        'arb',
        { from, to, platforms: Array.isArray(q.platforms) ? q.platforms : undefined, category: q.category },
        STATS_MAX_RECORDS,
      );
      return typedReply(StatsPage, {
        pairs: pairStats(records),
        _meta: { from: new Date(from).toISOString(), to: new Date(to).toISOString(), count: records.length, truncated },
      });
    },
  });
}
