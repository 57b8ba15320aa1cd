import { asyncScheduler, Subscription, type SchedulerAction, type SchedulerLike } from 'rxjs';

/**
 * The one source of time for the engine. Every time the engine reads (receive stamps, the
 * per-turn flush, matching's debounce, candle closes, opportunity lifetimes, alert windows,
 * retention) comes from the clock it was given: a wall clock in `serve`, a virtual clock in a
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
  /**
   * Runs `fn` as one unit of work at time `at` (an event applied at its receive time, a turn's
   * flush): timers due by `at` run first, and every read of `now()` inside reads the same time.
   */
  run<T>(at: number, fn: () => T): T;
}

/** Wall time: `Date.now()` and RxJS's async scheduler, with no units (for tools outside the engine). */
export const realClock: Clock = {
  now: () => Date.now(),
  scheduler: asyncScheduler,
  after(ms, fn) {
    const sub = asyncScheduler.schedule(fn, ms);
    return () => sub.unsubscribe();
  },
  run: (_at, fn) => fn(),
};

/** What a StepClock's queue holds. */
interface Queued {
  due: number;
  queued: boolean;
  execute(): void;
}

/** One scheduled piece of work of a StepClock (an RxJS SchedulerAction: `interval` reschedules the same one). */
class StepAction<T> extends Subscription implements SchedulerAction<T>, Queued {
  due = 0;
  queued = false;
  private state: T | undefined;

  constructor(
    private readonly clock: StepClock,
    private readonly work: (this: SchedulerAction<T>, state?: T) => void,
  ) {
    super(() => clock.dequeue(this));
  }

  schedule(state?: T, delay = 0): Subscription {
    if (this.closed) return this;
    this.state = state;
    this.clock.enqueue(this, this.clock.base() + Math.max(0, delay));
    return this;
  }

  execute(): void {
    this.work.call(this, this.state);
  }
}

/**
 * What a timer's exception becomes: thrown again in a microtask of its own, after the work that ran
 * the timer, as an uncaught exception, which is what a plain `setTimeout` callback's would be. No
 * timer of the OS is set for it: the clock's own time stays the only one.
 */
export function reportTimerError(e: unknown): void {
  queueMicrotask(() => {
    throw e;
  });
}

/**
 * A clock whose time moves in steps: `run(at, fn)` and `advanceTo(t)` move it forward, first running
 * every timer due by then in due order, each as a unit at its due time, so the order of timers and
 * units depends only on their times. With a wall source (the live service) `now()` outside a unit
 * reads the wall, and a timer also fires on its own when its due time passes; without one (a
 * replay) time moves only when told. Fed the same units at the same times, the two run the same
 * work in the same order and read the same times: the live run can be replayed to the millisecond.
 * A timer that throws is one timer failing: its exception goes to `onTimerError` (by default
 * `reportTimerError`), and the timers due with it and the unit that moved the clock still run.
 */
export class StepClock implements Clock {
  private frame: number;
  private depth = 0;
  private readonly queue: Queued[] = [];
  private pump: NodeJS.Timeout | undefined;
  private pumpAt = Infinity;
  readonly scheduler: SchedulerLike;

  constructor(
    start: number,
    private readonly wall?: () => number,
    private readonly onTimerError: (e: unknown) => void = reportTimerError,
  ) {
    this.frame = start;
    this.scheduler = {
      now: () => this.base(),
      schedule: <T>(work: (this: SchedulerAction<T>, state?: T) => void, delay?: number, state?: T): Subscription =>
        new StepAction<T>(this, work).schedule(state, delay),
    };
  }

  /** The time now: a unit's time inside one; outside, the wall's (never behind the last step) or the last step's. */
  now(): number {
    return this.base();
  }

  /** Where a timer set now counts from (the same as `now()`, without moving the clock). */
  base(): number {
    if (this.depth > 0 || this.wall === undefined) return this.frame;
    const w = this.wall();
    return w > this.frame ? w : this.frame;
  }

  after(ms: number, fn: () => void): () => void {
    const s = this.scheduler.schedule(fn, ms);
    return () => s.unsubscribe();
  }

  run<T>(at: number, fn: () => T): T {
    this.advanceTo(at);
    this.depth++;
    try {
      return fn();
    } finally {
      this.depth--;
    }
  }

  /**
   * Runs every timer due by `t`, in due order (ties in the order they were set), each at its due
   * time; then the clock reads `t` (it never moves back: an earlier `t` only runs what is due).
   */
  advanceTo(t: number): void {
    let a: Queued | undefined;
    while ((a = this.queue[0]) !== undefined && a.due <= t) {
      this.queue.shift();
      a.queued = false;
      if (a.due > this.frame) this.frame = a.due;
      this.depth++;
      try {
        a.execute();
      } catch (e) {
        this.onTimerError(e);
      } finally {
        this.depth--;
      }
    }
    if (t > this.frame) this.frame = t;
    this.arm();
  }

  /** Timers waiting (for tests). */
  get pending(): number {
    return this.queue.length;
  }

  /** @internal */
  enqueue(a: Queued, due: number): void {
    if (a.queued) this.dequeue(a);
    a.due = due;
    a.queued = true;
    // Binary search for the first action due later (equal dues keep the order they were set in).
    let lo = 0;
    let hi = this.queue.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.queue[mid]!.due <= due) lo = mid + 1;
      else hi = mid;
    }
    this.queue.splice(lo, 0, a);
    if (lo === 0) this.arm();
  }

  /** @internal */
  dequeue(a: Queued): void {
    if (!a.queued) return;
    a.queued = false;
    const i = this.queue.indexOf(a);
    if (i >= 0) this.queue.splice(i, 1);
    if (i === 0) this.arm();
  }

  /** With a wall source: one OS timer for the earliest due, which steps the clock to the wall when it fires. */
  private arm(): void {
    if (this.wall === undefined) return;
    const next = this.queue[0]?.due ?? Infinity;
    if (next === this.pumpAt) return;
    if (this.pump !== undefined) clearTimeout(this.pump);
    this.pump = undefined;
    this.pumpAt = next;
    if (next === Infinity) return;
    const wall = this.wall;
    this.pump = setTimeout(
      () => {
        this.pump = undefined;
        this.pumpAt = Infinity;
        if (this.depth === 0) this.advanceTo(wall());
        else this.arm();
      },
      Math.max(0, next - wall()),
    );
  }
}

/** The live service's clock: wall time, in steps (see StepClock). */
export function wallClock(): StepClock {
  return new StepClock(Date.now(), () => Date.now());
}

/**
 * A replay's clock: starts at `start` and moves only by `run`/`advanceTo` (RxJS's VirtualTimeScheduler
 * runs everything at once and cannot be stepped to a time while actions keep arriving; this one can).
 */
export class VirtualClock extends StepClock {
  constructor(start: number, onTimerError?: (e: unknown) => void) {
    super(start, undefined, onTimerError);
  }
}

/** A time for a message: ISO 8601 when it is one (a number outside Date's range is written as it is). */
export function iso(t: number): string {
  return Number.isFinite(t) && Math.abs(t) < 8.64e15 ? new Date(t).toISOString() : String(t);
}
