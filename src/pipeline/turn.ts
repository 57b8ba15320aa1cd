import type { Clock } from '../core/clock.js';
import { laterTurn } from '../core/later.js';

/** Schedules a callback once, soon (default: `setImmediate`); returns its cancel. */
export type Schedule = (run: () => void) => () => void;

const onImmediate: Schedule = (run) => {
  const h = setImmediate(run);
  return () => clearImmediate(h);
};

/**
 * The live turn's schedule on a clock: on setImmediate, the flush runs as one unit of the clock at
 * the time it starts, told first to `flushed` (a recorder keeps where the live turn flushed, so a
 * replay flushes at the same places and times).
 */
export function clockSchedule(clock: Clock, flushed?: (at: number) => void): Schedule {
  return (run) => {
    const h = setImmediate(() => {
      const at = clock.now();
      flushed?.(at);
      clock.run(at, run);
    });
    return () => clearImmediate(h);
  };
}

/**
 * A later turn on a clock: after this turn's I/O and its flush (`laterTurn`: an immediate, then a
 * timer), `run` runs as one unit of the clock at the time it starts. For a long piece of work cut in
 * slices (the minute's candle close): the frames read between two slices go out between them.
 */
export function timerSchedule(clock: Clock): Schedule {
  return (run) => laterTurn(() => clock.run(clock.now(), run));
}

/** A replay's schedule: nothing on its own; the replay flushes where the recording says the live turn did. */
export const onMarkers: Schedule = () => () => undefined;

/**
 * One flush per event-loop turn, for conflation: consumers mark what a change made dirty (cheap,
 * once per change) and `touch()` the turn; once the current batch of frames is done (setImmediate:
 * after the poll phase's I/O callbacks, so every frame of a socket read is in), the flushers run
 * once each, in the order they were added. Flushers are the expensive half (serializing a book,
 * recomputing a group) and see the state as it stands, so a burst costs one of each per dirty key.
 */
export class Turn {
  private readonly flushers: (() => void)[] = [];
  private cancel: (() => void) | undefined;
  /** Flushes run (for tests and benches). */
  flushes = 0;

  constructor(private readonly schedule: Schedule = onImmediate) {}

  /** Adds a flusher, run after the ones added before it; returns its removal. */
  add(flush: () => void): () => void {
    this.flushers.push(flush);
    return () => {
      const i = this.flushers.indexOf(flush);
      if (i >= 0) this.flushers.splice(i, 1);
    };
  }

  /** Something is dirty: a flush runs at the end of this turn (one, however often touched). */
  touch(): void {
    if (this.cancel === undefined) this.cancel = this.schedule(() => this.flush());
  }

  /** Runs every flusher now, in order (also when something must go out before what follows, e.g. a feed warning). */
  flush(): void {
    if (this.cancel !== undefined) {
      this.cancel();
      this.cancel = undefined;
    }
    this.flushes++;
    for (let i = 0; i < this.flushers.length; i++) this.flushers[i]!();
  }

  /** Drops a scheduled flush (what is dirty stays with its owners). */
  stop(): void {
    this.cancel?.();
    this.cancel = undefined;
  }
}
