import type { Level, NormalizedEvent } from '../../src/core/types.js';

/** The venue and the times of a hand-made event, stamped with the (possibly faked) clock now. */
export const eventBase = (venue: string): { venue: string; timestamp: number; localTimestamp: number } => ({
  venue,
  timestamp: Date.now(),
  localTimestamp: Date.now(),
});

/** A full book of one market (its instrument is the market id), stamped now. */
export const bookSnapshot = (venue: string, id: string, bids: Level[], asks: Level[]): NormalizedEvent => ({
  ...eventBase(venue),
  type: 'book_snapshot',
  marketId: id,
  instrument: id,
  bids,
  asks,
});
