import { interval, Subscription } from 'rxjs';
import type { Persistence } from '../src/persist/store.js';
import type { EngineState } from '../src/state/engine.js';

export interface PersistenceOptions {
  /** Dirty catalog records, quotes and books are snapshotted this often. */
  readonly snapshotIntervalMs: number;
}

/** The minute clock: finished one-minute candles close, and the catalog's record times are written. */
export const CLOCK_MS = 1000;

/**
 * The persistence flow: state changes → LMDB. Records, quotes and books are marked dirty and
 * written by the snapshot timer (only what changed); closed candles and trades are appended as
 * they happen. Every second the minute clock closes finished candles (which reach the append log
 * through `closed$`).
 */
export function persistenceFlow(state: EngineState, persistence: Persistence, opts: PersistenceOptions): Subscription {
  const sub = persistChanges(state, persistence);
  sub.add(interval(opts.snapshotIntervalMs).subscribe(() => void persistence.snapshot(state)));
  sub.add(
    interval(CLOCK_MS).subscribe(() => {
      state.candles.flush(Date.now());
      void persistence.flushCatalog(state);
    }),
  );
  return sub;
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
