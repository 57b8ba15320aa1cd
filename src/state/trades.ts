import { Subject } from 'rxjs';
import type { Trade } from '../core/types.js';

/** A trade with the sequence number we gave it on arrival (the persistence key). */
export interface StoredTrade extends Trade {
  readonly seq: number;
}

/**
 * Recent trades in memory (a ring of `capacity`), newest last, and the stream of new ones that
 * persistence appends to LMDB. Duplicates (same venue and trade id, within the ring) are dropped,
 * since polled venues re-send overlapping pages.
 */
export class TradeStore {
  private readonly ring: (StoredTrade | undefined)[];
  private head = 0;
  private count = 0;
  private readonly ids = new Set<string>();
  readonly trades$ = new Subject<StoredTrade>();
  seq = 0;

  constructor(readonly capacity = 100_000) {
    this.ring = new Array(capacity);
  }

  get size(): number {
    return this.count;
  }

  add(t: Trade): StoredTrade | undefined {
    const id = `${t.venue}:${t.tradeId}`;
    if (this.ids.has(id)) return undefined;
    // Copied key by key: in the service an object spread here gave nearly every stored trade a
    // hidden class of its own (the ring holds up to `capacity` of them).
    const s: StoredTrade = Object.assign({}, t, { seq: ++this.seq });
    const old = this.ring[this.head];
    if (old) this.ids.delete(`${old.venue}:${old.tradeId}`);
    this.ring[this.head] = s;
    this.head = (this.head + 1) % this.capacity;
    if (this.count < this.capacity) this.count++;
    this.ids.add(id);
    this.trades$.next(s);
    return s;
  }

  /** Recent trades, newest first. */
  *recent(): Generator<StoredTrade> {
    for (let i = 1; i <= this.count; i++) {
      const t = this.ring[(this.head - i + this.capacity) % this.capacity];
      if (t) yield t;
    }
  }

  /** Restores the sequence counter (and optionally recent trades) at start-up. */
  restore(seq: number, recentOldestFirst: readonly StoredTrade[] = []): void {
    this.seq = Math.max(this.seq, seq);
    for (const t of recentOldestFirst) {
      const old = this.ring[this.head];
      if (old) this.ids.delete(`${old.venue}:${old.tradeId}`);
      this.ring[this.head] = t;
      this.head = (this.head + 1) % this.capacity;
      if (this.count < this.capacity) this.count++;
      this.ids.add(`${t.venue}:${t.tradeId}`);
    }
  }
}
