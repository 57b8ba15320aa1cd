import type { NormalizedEvent, VenueLabel } from '../../core/types.js';
import type { FeedStats } from './stats.js';

/**
 * A protocol's mapper: raw frame (already JSON-parsed) → zero or more normalized events.
 * Pure apart from the explicit per-connection state a venue forces on us (Kalshi's relative book
 * deltas, sequence numbers), which lives in the mapper object and is cleared by `reset()` on
 * every disconnect. Malformed frames and unknown variants yield nothing and are counted in `stats`.
 */
export interface Mapper {
  readonly venue: VenueLabel;
  readonly stats: FeedStats;
  map(raw: unknown, localTimestamp: number): Iterable<NormalizedEvent>;
  /** Forget all per-connection state (books, seq) after a disconnect. */
  reset(): void;
  /** Frames ignored or mapped with less than full knowledge, by reason (`crossbook normalize` reports them). */
  reasons?(): Record<string, number>;
}
