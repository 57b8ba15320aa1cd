/**
 * The subscription work of one key, shared by all its connections: a token bucket of market ids
 * subscribed or unsubscribed (each subscribed id costs a snapshot and both cost bookkeeping), so
 * that one key doing its worst within its plan (many connections, each subscribing and
 * unsubscribing hundreds of ids many times a second) cannot take the event loop from REST and
 * other clients. A message whose ids the bucket cannot cover is refused whole (RATE_LIMITED).
 */
export class KeyBudget {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  /**
   * @param perSecond ids a key's connections may subscribe or unsubscribe per second, together
   * @param burst ids at once (a client's first subscription of its whole set)
   */
  constructor(
    readonly perSecond: number,
    readonly burst: number,
  ) {}

  /** Takes `n` ids from the key's bucket at `now` (ms); false (nothing taken) when it cannot. */
  take(keyId: string, n: number, now: number): boolean {
    let b = this.buckets.get(keyId);
    if (b === undefined) this.buckets.set(keyId, (b = { tokens: this.burst, at: now }));
    else if (now > b.at) {
      b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) * this.perSecond) / 1000);
      b.at = now;
    }
    if (n > b.tokens) return false;
    b.tokens -= n;
    return true;
  }

  /** The key has no connection left: its bucket goes (a new connection starts with a full one). */
  forget(keyId: string): void {
    this.buckets.delete(keyId);
  }

  /** Keys with a bucket (tests check it shrinks). */
  get size(): number {
    return this.buckets.size;
  }
}
