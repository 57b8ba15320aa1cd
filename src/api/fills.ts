import { z } from 'zod';
import { typedReply, type Api } from '../access/api.js';
import { p } from '../access/params.js';
import { backtestOne, type OpportunityFill } from '../backtest/run.js';
import { TradeLeg, Unwind } from '../backtest/schema.js';
import { readBatches, ReplayFeed } from '../capture/index.js';
import { errorReply, type Reply } from '../server/http.js';
import type { OpportunityLog } from '../signals/lifecycle/log.js';
import { time } from '../views/schemas.js';
import type { ApiContext } from './context.js';
import { outsideRetention, type ReplaySource } from './replay.js';

/** The largest latency a request may ask for, ms: a fill a minute after the signal is already a different trade. */
export const MAX_FILL_LATENCY_MS = 60_000;
/** Latencies one request may ask for at most. */
const MAX_LATENCIES = 8;
/**
 * The longest capture one request replays, ms. The replay starts at the start of the capture (see
 * `registerFills`): about a CPU second per captured minute on this machine (BENCHMARKS.md), so
 * past this a request would hold a core for minutes; `crossbook backtest` runs such windows offline.
 */
export const MAX_REPLAY_SPAN_MS = 2 * 3_600_000;
/** Results kept (a closed opportunity's fills never change: the capture behind them is immutable). */
const CACHE_SIZE = 64;
/** Requests waiting for the replay at most; past it a 503. */
const MAX_WAITING = 4;
const ID = /^arb_[0-9a-z]{1,13}_[0-9a-z]{1,13}_[0-9a-z]{1,13}$/;

const FillRun = z.object({
  latency_ms: z.number().int().min(0).describe('the taker acted this long after the signal'),
  status: z
    .enum(['filled', 'partial', 'broken', 'unfilled', 'beyond_capture'])
    .describe(
      'filled: every leg as asked; partial: fewer contracts, legs equal; broken: legs unequal; unfilled: nothing filled; beyond_capture: the fill time is past what was captured',
    ),
  fillable: z.boolean().describe('at least one matched contract (a pair of legs) filled'),
  net_usd: z.number().describe('realized: $1 per matched pair − spend − fees ± unwind (0 when nothing filled)'),
  legs: z.array(TradeLeg).max(2).describe('what each leg got (empty when nothing filled)'),
  unwind: Unwind.nullable().describe('a broken arbitrage: its excess leg, exposure and what selling it back cost; null otherwise'),
});

const FillsPage = z.object({
  opportunity_id: z.string(),
  signal_at: time('when the engine opened the opportunity'),
  closed_at: time('when it closed'),
  signal_roi: z.number().nullable().describe('net ROI percent at the signal, as the replay saw it (null when no latency was evaluated)'),
  runs: z.array(FillRun).min(1).describe('one per latency asked, in increasing order'),
  _meta: z.object({
    window: z.object({ from: time('start of the capture replayed'), to: time('end of the window replayed') }),
    events: z.number().int().min(0).describe('events the replay applied'),
    max_usd: z.number().describe('dollars the taker put on the opportunity at most'),
    fees: z.enum(['venue-schedule', 'none']),
  }),
});
type FillsPage = z.output<typeof FillsPage>;

/** What the route reads besides the API context: the capture (as /replay) and the closed opportunities. */
export interface FillsSource extends ReplaySource {
  readonly history: OpportunityLog;
}

/**
 * GET /arb/history/:opportunity_id/fills: what a taker acting `latency_ms` after the signal would
 * have got on that opportunity, the numbers `crossbook backtest` reports for it, computed by the same
 * machinery (src/backtest/run.ts `backtestOne`: the pipeline replay on a virtual clock with the taker
 * inside) on the capture log of this service. The replay starts at the start of the capture, not at a
 * book checkpoint: a checkpoint holds the books, but the opportunity and its id also come from the
 * matcher's groups and the catalog, which only a replay from the start builds as live did. It ends
 * at the close plus the largest latency (and at least the signal plus twice it, for a broken arb's
 * unwind). One replay runs at a time; results are cached.
 */
export function registerFills(api: Api, ctx: ApiContext, src: FillsSource): void {
  const query = z
    .object({
      latency_ms: p.list({
        max: MAX_LATENCIES,
        description: `one latency or a comma list, whole ms from 0 to ${MAX_FILL_LATENCY_MS} (default 250)`,
      }),
      max_usd: p.number({ min: 1, max: 1_000_000, default: 500, description: 'dollars the taker puts on the opportunity at most' }),
      fees: p.enum(['venue-schedule', 'none'] as const, { default: 'venue-schedule', description: "each venue's taker fees, or none" }),
    })
    .superRefine((q, c) => {
      const l = q.latency_ms;
      if (Array.isArray(l) && l.some((s) => !/^\d{1,9}$/.test(s) || Number(s) > MAX_FILL_LATENCY_MS))
        c.addIssue({
          code: 'custom',
          path: ['latency_ms'],
          message: `must be whole milliseconds from 0 to ${MAX_FILL_LATENCY_MS}, comma-separated; got "${l.join(',').slice(0, 100)}"`,
          params: { code: 'validation.invalid' },
        });
    });
  const runner = new SerialRunner<FillsPage>(CACHE_SIZE, MAX_WAITING);
  api.route({
    path: '/arb/history/:opportunity_id/fills',
    summary: 'What a taker would have got on one closed arbitrage at each latency (the backtest of that opportunity)',
    description:
      'Replays the capture log of this service (from its start, so the books and groups are as live had them) through the same rooms on a virtual clock, with a simulated taker who acts latency_ms after the signal: each leg walks the book as it stood then (depth, venue taker fee), and a leg filled without its pair is sold back another latency later (the unwind). The same numbers as `crossbook backtest` for that opportunity id. ' +
      `One replay at a time (about a CPU second per captured minute); a capture longer than ${MAX_REPLAY_SPAN_MS / 3_600_000} h before the window is refused (422): run crossbook backtest offline. Same plan gate as /replay.`,
    tags: ['signals', 'replay'],
    group: 'arb',
    endpoint: 'replay',
    pathParams: { opportunity_id: { description: 'opportunity_id of a closed arbitrage (as /arb/history lists it)', pattern: ID } },
    query,
    response: FillsPage,
    responseDescription: '{opportunity_id, signal_at, closed_at, signal_roi, runs: [{latency_ms, status, fillable, net_usd, legs, unwind}], _meta}',
    errors: {
      404: 'No closed arbitrage with this id in /arb/history (code not_found): unknown, still open (see /arb), or past history retention',
      409: 'The window is not captured yet (code fills.not_captured_yet, retry after Retry-After), or the replay of the capture did not open this opportunity (code fills.not_reproduced)',
      422: 'The capture before the window is too long to replay on request (code fills.window_too_long)',
      503: 'Too many fills requests waiting for the replay (code fills.busy); retry after Retry-After',
    },
    handler: async (c): Promise<Reply> => {
      const id = c.path_['opportunity_id']!;
      if (!ID.test(id))
        return errorReply(
          400,
          'validation.invalid',
          `invalid path parameter "opportunity_id": must be an arbitrage opportunity_id like arb_1f_mi4x2k3c_0, got "${id.slice(0, 100)}"`,
        );
      const rec = src.history.find('arb', id);
      if (!rec) return errorReply(404, 'not_found', `no closed arbitrage "${id}" in /arb/history (unknown, still open: see /arb, or past history retention)`);
      const raw = c.query.latency_ms;
      const latencies = [...new Set((Array.isArray(raw) ? raw : ['250']).map(Number))].sort((a, b) => a - b);
      const maxLat = latencies[latencies.length - 1]!;
      const to = Math.max(rec.closed_at + maxLat, rec.first_seen + 2 * maxLat + 1);
      const refusal = outsideRetention(src, rec.first_seen, to);
      if (refusal) return refusal;
      const capture = src.capture!;
      const now = src.now();
      if (to > now)
        return errorReply(
          409,
          'fills.not_captured_yet',
          `the window ends at ${new Date(to).toISOString()}, after now: retry then`,
          {},
          Math.ceil((to - now) / 1000),
        );
      const start = capture.store.oldest() ?? 0;
      if (to - start > MAX_REPLAY_SPAN_MS)
        return errorReply(
          422,
          'fills.window_too_long',
          `this opportunity needs a replay of the capture from ${new Date(start).toISOString()} (its start) to ${new Date(to).toISOString()}: more than ${MAX_REPLAY_SPAN_MS / 3_600_000} h; run crossbook backtest --from ${new Date(rec.first_seen).toISOString()} --to ${new Date(to).toISOString()} offline`,
        );
      const maxUsd = c.query.max_usd!;
      const fees = c.query.fees!;
      const key = `${id}|${latencies.join(',')}|${maxUsd}|${fees}`;
      const r = await runner.run(key, async () => {
        // What the writer still buffers goes to disk first: the window ends before now.
        await capture.flush();
        const items = new ReplayFeed(ctx.config.venues, src.log).items(readBatches(capture.store, { from: 0, to }));
        const res = await backtestOne({
          config: ctx.config,
          items,
          from: rec.first_seen,
          to,
          latencies,
          strategy: 'arb',
          maxUsd,
          minRoi: -100,
          fees,
          id,
          log: src.log,
        });
        if (!res.opened) return undefined;
        return fillsPage(id, rec.first_seen, rec.closed_at, res.fills, { from: start, to, events: res.events, maxUsd, fees });
      });
      if (r === 'busy') return errorReply(503, 'fills.busy', 'too many fills requests are waiting for the replay; retry shortly', {}, 5);
      if (r === undefined)
        return errorReply(
          409,
          'fills.not_reproduced',
          `the replay of the capture did not open "${id}": the capture does not start with the session that found it (a restart with an earlier DATA_DIR, or retention dropped its start)`,
        );
      return typedReply(FillsPage, r);
    },
  });
}

/** The 200 body from the replay's fills. */
function fillsPage(
  id: string,
  firstSeen: number,
  closedAt: number,
  fills: readonly OpportunityFill[],
  m: { from: number; to: number; events: number; maxUsd: number; fees: 'venue-schedule' | 'none' },
): FillsPage {
  const iso = (t: number): string => new Date(t).toISOString();
  const runs = fills.map((f): z.output<typeof FillRun> => {
    const t = f.trade;
    const status = !f.evaluated ? 'beyond_capture' : t === undefined ? 'unfilled' : t.status;
    const legs = t?.legs ?? [];
    return {
      latency_ms: f.latencyMs,
      status,
      fillable: legs.length > 0 && Math.min(...legs.map((l) => l.size)) > 0,
      net_usd: t?.net_usd ?? 0,
      legs,
      unwind: t?.unwind ?? null,
    };
  });
  const roi = fills.find((f) => f.trade)?.trade?.signal_roi ?? null;
  return {
    opportunity_id: id,
    signal_at: iso(firstSeen),
    closed_at: iso(closedAt),
    signal_roi: roi,
    runs,
    _meta: { window: { from: iso(m.from), to: iso(m.to) }, events: m.events, max_usd: m.maxUsd, fees: m.fees },
  };
}

/**
 * Runs jobs one at a time (a replay takes a core), caching results by key and sharing a running
 * job with requests for the same key; past `maxWaiting` queued jobs a new key is refused ('busy').
 */
class SerialRunner<T> {
  private readonly cache = new Map<string, T | undefined>();
  private readonly running = new Map<string, Promise<T | undefined>>();
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly cacheSize: number,
    private readonly maxWaiting: number,
  ) {}

  run(key: string, job: () => Promise<T | undefined>): Promise<T | undefined | 'busy'> {
    if (this.cache.has(key)) return Promise.resolve(this.cache.get(key));
    const same = this.running.get(key);
    if (same) return same;
    if (this.running.size > this.maxWaiting) return Promise.resolve('busy');
    const p = this.tail.then(job, job).then(
      (v) => {
        this.running.delete(key);
        this.cache.set(key, v);
        if (this.cache.size > this.cacheSize) this.cache.delete(this.cache.keys().next().value!);
        return v;
      },
      (e: unknown) => {
        this.running.delete(key);
        throw e;
      },
    );
    this.running.set(key, p);
    this.tail = p.catch(() => undefined);
    return p;
  }
}
