import type { Config } from '../config/schema.js';
import type { Logger } from '../core/log.js';
import type { ReplayItem } from '../replay/input.js';
import { replay } from '../replay/run.js';
import { ReportWriter } from './report.js';
import { Taker, type TakerOptions } from './taker.js';

export interface BacktestOptions extends TakerOptions {
  readonly config: Config;
  readonly items: AsyncIterable<ReplayItem>;
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

/**
 * A backtest: one replay of the window (src/replay/run.ts: the live rooms on a virtual clock) with
 * the taker inside it, consuming the lifecycle's events as live would publish them, and the report
 * streamed to `out`. Items before `from` warm the books and the matcher up; the replay stops at `to`.
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
  let taker: Taker | undefined;
  const r = await replay({
    config: opts.config,
    items: until(opts.items, opts.to),
    // The recording's flush markers say where live recomputed: no extra flush after the last one
    // (it would open signals live never had, with no book left to fill them against).
    flushAtEnd: false,
    log: opts.log,
    onWired: ({ clock, core, domain }) => {
      const t = new Taker(clock, core.state, core.venues, writer, opts, (id) => domain.matching.servedGroup(id)?.category ?? null);
      taker = t;
      domain.lifecycle.events$.subscribe((e) => {
        t.onEvent(e);
        if (e.type === 'expired' && e.record.first_seen >= opts.from) writer.closed(e.record);
      });
    },
  });
  taker?.finish();
  const lines = await writer.finish(r.events, taker?.beyondWindow ?? new Map());
  return { lines, events: r.events, flushes: r.flushes };
}

/** The items up to time `to` (ms). */
async function* until(items: AsyncIterable<ReplayItem>, to: number): AsyncGenerator<ReplayItem> {
  for await (const it of items) {
    if ((it.type === 'event' ? it.event.localTimestamp : it.at) > to) return;
    yield it;
  }
}
