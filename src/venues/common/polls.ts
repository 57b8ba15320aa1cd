/**
 * When the polls of one service start. Each poll (Polymarket's trades, Manifold's market walk,
 * PredictIt's document) runs `pollMs` after its previous run ended, so two polls that start
 * together at start-up (or drift into step) would read, parse and apply their documents in the
 * same turns: a 2 s pair of main-thread pieces that WebSocket frames wait behind (the live
 * fan-out bench's probe, issue 34). Every poll of the service claims its next start here, and a
 * start is moved later until it is at least `gapMs` from every other poll's latest start, so no
 * two polls ever start in the same turn. Times are the engine clock's (the runtime schedules each
 * start on it), so the starts depend only on the clock and the runs' ends.
 */
export class PollStarts {
  /** Each poll's latest claimed start, by the poll's token. */
  private readonly latest = new Map<object, number>();

  constructor(readonly gapMs: number = POLL_GAP_MS) {}

  /**
   * The first time at or after `want` that lies at least `gapMs` from every other poll's latest
   * start; it becomes `poll`'s latest start.
   */
  claim(poll: object, want: number): number {
    let at = want;
    for (let moved = true; moved;) {
      moved = false;
      for (const [other, start] of this.latest)
        if (other !== poll && Math.abs(at - start) < this.gapMs) {
          // Only ever later: each other start moves it at most once past itself, so the loop ends.
          at = start + this.gapMs;
          moved = true;
        }
    }
    this.latest.set(poll, at);
    return at;
  }

  /** A poll that ended (its subscription stopped) holds no start any more. */
  release(poll: object): void {
    this.latest.delete(poll);
  }
}

/**
 * The least time between two polls' starts: a quarter of the default `pollMs` (2 s), so the three
 * polled venues of the default registry start half a second apart, and a trades page's slices (100
 * rows a turn, a turn apart) are done before the next poll's document arrives.
 */
export const POLL_GAP_MS = 500;
