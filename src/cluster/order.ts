/** How many messages past a hole an edge holds, waiting for the core to send the missing ones again. */
export const HOLD_MAX = 10_000;
/** How long an edge waits for a hole in the core's numbering to fill before it re-bootstraps. */
export const HOLD_MS = 5_000;

/**
 * Puts the core's numbered stream messages (`Cb-Seq`) back in order for an edge. The core sends a
 * publish JetStream refused again (NATS going down refuses what is in flight), so the stream can
 * hold n+1… before n, and n again where an acknowledgement was lost: messages past a hole are held
 * until it fills, and numbers already applied are dropped. A hole that stays open past `maxHeld`
 * messages or `maxMs` is a real loss (the core dropped messages from its full buffer, or the window
 * moved past the edge): `offer` says so and the edge starts again from a snapshot.
 */
export class Reorder<T> {
  private readonly held = new Map<number, T>();
  private since: number | undefined;

  /** `next`: the number the edge applies next. */
  constructor(
    public next: number,
    private readonly maxHeld = HOLD_MAX,
    private readonly maxMs = HOLD_MS,
  ) {}

  /** Message `n`: the messages now in order (none while a hole is open), or 'gap' when the hole is given up. */
  offer(n: number, item: T, now: number): T[] | 'gap' {
    if (n < this.next) return [];
    if (n > this.next) {
      this.held.set(n, item);
      this.since ??= now;
      return this.held.size > this.maxHeld || now - this.since > this.maxMs ? 'gap' : [];
    }
    const out = [item];
    this.next++;
    for (let h = this.held.get(this.next); h !== undefined; h = this.held.get(this.next)) {
      this.held.delete(this.next);
      out.push(h);
      this.next++;
    }
    this.since = this.held.size > 0 ? now : undefined;
    return out;
  }

  /** The messages held past a hole. */
  pending(): IterableIterator<T> {
    return this.held.values();
  }

  /** Forgets what is held (the stream is read again from before it), or starts over at `next`. */
  clear(next = this.next): void {
    this.held.clear();
    this.since = undefined;
    this.next = next;
  }
}
