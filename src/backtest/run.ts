import type { Config } from '../config/schema.js';
import type { VirtualClock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import { itemsBefore, itemTime } from '../replay/input.js';
import { replay, type ReplayInput } from '../replay/run.js';
import type { OpportunityRecord } from '../signals/lifecycle/record.js';
import { ReportWriter } from './report.js';
import type { Trade } from './schema.js';
import { Taker, type TakerOptions, type TradeSink } from './taker.js';

export interface BacktestOptions extends TakerOptions {
  readonly config: Config;
  /** One item at a time or in batches (src/replay/input.ts `ReplayInput`). */
  readonly items: ReplayInput;
  /** Items after this time (ms) are not replayed. */
  readonly to: number;
  readonly out: string;
  readonly log?: Logger | undefined;
}

export interface BacktestResult {
  /** The closing line of each latency, in the order given. */
  readonly lines: readonly string[];
  readonly events: number;
  readonly flushes: number;
}

/** What one replay with the taker inside gave, besides what went to its sink. */
interface TakerRun {
  readonly events: number;
  readonly flushes: number;
  readonly beyondWindow: ReadonlyMap<number, number>;
}

/**
 * One replay of the window (src/replay/run.ts: the live rooms on a virtual clock) with the taker
 * inside it, consuming the lifecycle's events as live would publish them; its results go to `sink`
 * and each opportunity closed in the window to `onClosed`. Items before `from` warm the books and
 * the matcher up; the replay stops at `to`.
 */
async function runTaker(opts: Omit<BacktestOptions, 'out'>, sink: TradeSink, onClosed: (r: OpportunityRecord) => void): Promise<TakerRun> {
  let taker: Taker | undefined;
  let clock: VirtualClock | undefined;
  const r = await replay({
    config: opts.config,
    items: itemsBefore(opts.items, (it) => itemTime(it) > opts.to),
    // The recording's flush markers say where live recomputed: no extra flush after the last one
    // (it would open signals live never had, with no book left to fill them against).
    flushAtEnd: false,
    // The report takes each closed opportunity as it closes (`onClosed`): none is kept for the window.
    keepClosed: false,
    log: opts.log,
    onWired: (rooms) => {
      const { core, domain } = rooms;
      clock = rooms.clock;
      const t = new Taker(rooms.clock, core.state, core.venues, sink, opts, (id) => domain.matching.servedGroup(id)?.category ?? null);
      taker = t;
      domain.lifecycle.events$.subscribe((e) => {
        t.onEvent(e);
        if (e.type === 'expired' && e.record.first_seen >= opts.from) onClosed(e.record);
      });
    },
  });
  // The window ends at `to`, not at its last item: a fill or unwind due between the two runs on the
  // books as the last item left them (else a broken leg sold back then read as never sold, and a
  // longer window gave another number for the same opportunity).
  clock?.advanceTo(opts.to);
  taker?.finish();
  return { events: r.events, flushes: r.flushes, beyondWindow: taker?.beyondWindow ?? new Map() };
}

/**
 * A backtest: the window replayed with the taker inside (`runTaker`), the report streamed to `out`.
 */
export async function backtest(opts: BacktestOptions): Promise<BacktestResult> {
  const writer = new ReportWriter(
    opts.out,
    {
      generated_by: 'crossbook backtest',
      window: { from: new Date(opts.from).toISOString(), to: new Date(opts.to).toISOString() },
      strategy: opts.strategy,
      max_usd: opts.maxUsd,
      min_roi: opts.minRoi,
      fees: opts.fees,
      platforms: opts.platforms ? [...opts.platforms].sort() : null,
    },
    opts.latencies,
  );
  const r = await runTaker(opts, writer, (rec) => writer.closed(rec));
  const lines = await writer.finish(r.events, r.beyondWindow);
  return { lines, events: r.events, flushes: r.flushes };
}

/** One latency's outcome for one opportunity: its trade (undefined: nothing filled), or not evaluated (the window ended first). */
export interface OpportunityFill {
  readonly latencyMs: number;
  /** The replay opened the opportunity and its fill time fell inside the window. */
  readonly evaluated: boolean;
  readonly trade: Trade | undefined;
}

/**
 * The backtest of one opportunity: the same replay and taker as `backtest`, acting only on the
 * opportunity `id` (the taker only reads the books, so acting on the others or not changes nothing
 * of its fills), its results kept in memory. Whether the replay opened `id` at all is in `evaluated`.
 */
export async function backtestOne(
  opts: Omit<BacktestOptions, 'out'> & { readonly id: string },
): Promise<{ fills: OpportunityFill[]; opened: boolean; events: number }> {
  const got = new Map<number, Trade | undefined>();
  const r = await runTaker({ ...opts, only: opts.id }, { result: (lat, trade) => void got.set(lat, trade) }, () => undefined);
  const opened = got.size > 0 || [...r.beyondWindow.values()].some((n) => n > 0);
  return { fills: opts.latencies.map((l) => ({ latencyMs: l, evaluated: got.has(l), trade: got.get(l) })), opened, events: r.events };
}
