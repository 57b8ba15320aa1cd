import { asyncScheduler, type SchedulerLike } from 'rxjs';

/**
 * The one source of time for the engine. Every time the engine reads (receive stamps, the
 * per-turn flush, matching's debounce, candle closes, opportunity lifetimes, alert windows,
 * retention) comes from the clock it was given: `realClock` in `serve`, a virtual clock in a
 * replay or backtest, so a replay runs the live code and gives the live answers (as
 * nautilus_trader runs live and backtest engines on one code path with the clock passed in).
 */
export interface Clock {
  /** Milliseconds since the epoch, as this clock reads them. */
  now(): number;
  /** The RxJS scheduler whose `now()` is this clock's: every `interval`, `timer` and `auditTime` in the engine takes it. */
  readonly scheduler: SchedulerLike;
  /** Runs `fn` once after `ms` of this clock's time (for code outside RxJS: retries, sweeps); returns its cancel. */
  after(ms: number, fn: () => void): () => void;
}

/** Wall time: `Date.now()` and RxJS's async scheduler. */
export const realClock: Clock = {
  now: () => Date.now(),
  scheduler: asyncScheduler,
  after(ms, fn) {
    const sub = asyncScheduler.schedule(fn, ms);
    return () => sub.unsubscribe();
  },
};
