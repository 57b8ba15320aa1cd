import type { Level, VenueLabel } from '../core/types.js';
import type { OrderBook } from '../core/book.js';

/** One book in a checkpoint: absolute L2 levels, best first, as the state held them. */
export interface CheckpointBook {
  readonly venue: VenueLabel;
  readonly instrument: string;
  readonly bids: readonly Level[];
  readonly asks: readonly Level[];
  /** The book's venue time. */
  readonly ts: number;
}

/**
 * The books of the state at one moment, with the capture sequence number they cover: every record
 * up to `seq` had been applied, none after. Any moment is then this checkpoint plus the records
 * after `seq` up to it, a run bounded by the checkpoint interval.
 */
export interface Checkpoint {
  readonly seq: number;
  /** When it was taken (the clock's ms). */
  readonly t: number;
  readonly books: readonly CheckpointBook[];
}

/** The ready books of `books` (a BookStore's `entries()`), copied: the state goes on changing them. */
export function checkpointOf(books: Iterable<readonly [VenueLabel, string, OrderBook]>, seq: number, t: number): Checkpoint {
  const out: CheckpointBook[] = [];
  for (const [venue, instrument, b] of books) if (b.ready) out.push({ venue, instrument, bids: b.bids.levels(), asks: b.asks.levels(), ts: b.timestamp });
  return { seq, t, books: out };
}
