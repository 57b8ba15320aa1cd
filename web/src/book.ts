/** A price level: [cents, size]. */
export type Level = readonly [number, number];

/** One side's view of a market's book (YES or NO), as the API gives it: bids and asks in cents. */
export interface Book {
  readonly bids: readonly Level[];
  readonly asks: readonly Level[];
}
