/**
 * How the world quotes each listing (SYNTHETIC DATA), as columns indexed by the listing's book
 * slot: one object and one Map entry per listing cost several times these four integers, at up
 * to a million listings.
 */
export class QuoteStates {
  /** The fair value the listing currently believes (lags the true fair), units. */
  believed: Int32Array = new Int32Array(64);
  /** Persistent venue-specific mispricing, mean-reverting, units. */
  offset: Int32Array = new Int32Array(64);
  /** The listing's price tick, units. */
  tick: Int32Array = new Int32Array(64);
  /** Its quoted spread, in ticks. */
  spreadTicks: Int32Array = new Int32Array(64);
  private n = 0;

  /** Adds the state of the next slot; returns that slot. */
  add(believed: number, offset: number, tick: number, spreadTicks: number): number {
    const i = this.n++;
    if (i >= this.believed.length) this.resize(this.believed.length * 2);
    this.believed[i] = believed;
    this.offset[i] = offset;
    this.tick[i] = tick;
    this.spreadTicks[i] = spreadTicks;
    return i;
  }

  /** Gives back the room the doubling left unused, once every listing was added. */
  trim(): void {
    if (this.n < this.believed.length) this.resize(Math.max(1, this.n));
  }

  private resize(n: number): void {
    const grow = (a: Int32Array): Int32Array => {
      const b = new Int32Array(n);
      b.set(a.subarray(0, Math.min(a.length, n)));
      return b;
    };
    this.believed = grow(this.believed);
    this.offset = grow(this.offset);
    this.tick = grow(this.tick);
    this.spreadTicks = grow(this.spreadTicks);
  }
}
