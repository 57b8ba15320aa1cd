import { interval, Subscription, timer } from 'rxjs';
import { realClock, type Clock } from '../src/core/clock.js';
import type { Config } from '../src/config/schema.js';
import type { Persistence } from '../src/persist/store.js';
import { timerSchedule, type Schedule } from '../src/pipeline/turn.js';
import type { CandleStore } from '../src/state/candles.js';
import type { EngineState } from '../src/state/engine.js';

export interface PersistenceOptions {
  /** Dirty catalog records, quotes and books are snapshotted this often. */
  readonly snapshotIntervalMs: number;
  /** One-minute candles older than this are removed (undefined: kept for good). */
  readonly minuteRetentionMs?: number | undefined;
  /** Trades older than this leave the trade log and its time index (undefined: kept for good). */
  readonly tradesRetentionMs?: number | undefined;
}

/** The flow's options as the configuration gives them (a single process and a cluster edge alike). */
export function persistenceOptions(config: Config): PersistenceOptions {
  return {
    snapshotIntervalMs: config.persistence.snapshotIntervalMs,
    minuteRetentionMs: config.persistence.minuteCandleRetentionDays * 86_400_000,
    tradesRetentionMs: config.api.tradesRetentionDays * 86_400_000,
  };
}

/** How often old one-minute candles are removed; the first run waits a minute, past the start's load. */
export const PRUNE_MS = 3_600_000;
const FIRST_PRUNE_MS = 60_000;

/** The minute clock: finished one-minute candles close, and the catalog's record times are written. */
export const CLOCK_MS = 1000;

/**
 * The persistence flow: state changes → LMDB. Records, quotes and books are marked dirty and
 * written by the snapshot timer (only what changed); closed candles and trades are appended as
 * they happen. Every second the minute clock closes finished candles (which reach the append log
 * through `closed$`). Every hour one-minute candles past their retention are removed, and trades past
 * theirs (at once too).
 */
export function persistenceFlow(state: EngineState, persistence: Persistence, opts: PersistenceOptions, clock: Clock = realClock): Subscription {
  const sub = persistChanges(state, persistence);
  sub.add(interval(opts.snapshotIntervalMs, clock.scheduler).subscribe(() => void persistence.snapshot(state)));
  const closer = candleCloser(state.candles, clock);
  sub.add(closer.stop);
  sub.add(
    interval(CLOCK_MS, clock.scheduler).subscribe(() => {
      closer.close();
      void persistence.flushCatalog(state);
    }),
  );
  const keep = opts.minuteRetentionMs;
  if (keep !== undefined) sub.add(timer(FIRST_PRUNE_MS, PRUNE_MS, clock.scheduler).subscribe(() => void persistence.pruneMinutes(clock.now() - keep)));
  const keepTrades = opts.tradesRetentionMs;
  if (keepTrades !== undefined) sub.add(timer(0, PRUNE_MS, clock.scheduler).subscribe(() => persistence.pruneTrades(clock.now() - keepTrades)));
  return sub;
}

/**
 * Candles one unit of the minute clock closes at most. Every market's candle ends at the same
 * minute, so the first tick past it closed them all in one task (each a candle value, an LMDB put
 * and the hour and day rollups): 13 ms of the main thread once a minute in the live fan-out bench,
 * which WebSocket frames waited behind (issue 34).
 */
export const CLOSE_SLICE = 1_000;

/**
 * The minute clock's close: `close()` closes the candles finished by now, CLOSE_SLICE at a time, each
 * next slice on `later` (live, a timer turn later: the socket reads and the turn's flush between; a
 * unit of the clock), until none is left; a tick while a slice waits adds nothing. Each market's
 * candles are those the close in one piece gave (`CandleStore.flush`: a candle not closed yet is
 * closed as it stands by the slice that reaches it or by the observation that rolls it), so where
 * the slices fall changes when a candle is appended, never what it holds. `stop` cancels.
 */
export function candleCloser(
  candles: CandleStore,
  clock: Clock,
  later: Schedule = timerSchedule(clock),
): { readonly close: () => void; readonly stop: () => void } {
  let next: (() => void) | undefined;
  const slice = (): void => {
    next = undefined;
    if (candles.flush(clock.now(), false, CLOSE_SLICE)) next = later(slice);
  };
  return {
    close: () => {
      if (next === undefined) slice();
    },
    stop: () => next?.(),
  };
}

/** The change half of the flow, without its timers (for a caller that snapshots and closes candles itself). */
export function persistChanges(state: EngineState, persistence: Persistence): Subscription {
  const sub = new Subscription();
  sub.add(state.catalog.changes$.subscribe((c) => persistence.markMarket(c.market.venue, c.market.marketId)));
  sub.add(state.quotes.changes$.subscribe((q) => persistence.markQuote(q.venue, q.marketId)));
  sub.add(state.books.changes$.subscribe((b) => persistence.markBook(b.venue, b.instrument, b.book)));
  sub.add(state.candles.closed$.subscribe((c) => persistence.appendCandle(c)));
  sub.add(state.trades.trades$.subscribe((t) => persistence.appendTrade(t)));
  return sub;
}
