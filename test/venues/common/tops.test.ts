import { describe, expect, it } from 'vitest';
import { OrderBook } from '../../../src/core/book.js';
import type { BookSideName } from '../../../src/core/types.js';
import { BookTops } from '../../../src/venues/common/tops.js';

/** The Polymarket mapper's check book (src/venues/common/tops.ts) against the OrderBook it replaced. */

describe('BookTops', () => {
  it('knows the best bid and ask an OrderBook would, through snapshots and absolute changes', () => {
    let seed = 7;
    const next = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const tops = new BookTops();
    const book = new OrderBook('T');
    const bids: [number, number][] = [
      [4800, 10],
      [4700, 5],
      [4500, 1],
    ];
    const asks: [number, number][] = [
      [5000, 3],
      [5100, 8],
    ];
    tops.snapshot(bids, asks);
    book.snapshot(bids, asks, 0);
    expect([tops.bestBid(), tops.bestAsk()]).toEqual([4800, 5000]);
    for (let i = 0; i < 5_000; i++) {
      const changes: [BookSideName, number, number][] = [];
      for (let k = 1 + next(3); k > 0; k--) {
        const bid = next(2) === 0;
        // Prices near the touch, a third of the changes removing a level.
        changes.push([bid ? 'bid' : 'ask', (bid ? 4400 : 4900) + 100 * next(8), next(3) === 0 ? 0 : 1 + next(50)]);
      }
      tops.apply(changes);
      book.apply(changes, i);
      expect([tops.bestBid(), tops.bestAsk()], `step ${i}`).toEqual([book.bids.best(), book.asks.best()]);
    }
    tops.snapshot([], []);
    expect([tops.bestBid(), tops.bestAsk()]).toEqual([undefined, undefined]);
  });

  it('grows from nothing on either side, and empties again', () => {
    const tops = new BookTops();
    const book = new OrderBook('T');
    book.snapshot([], [], 0);
    const steps: [BookSideName, number, number][] = [];
    for (let p = 1; p <= 12; p++) steps.push(['ask', 5000 + 100 * p, 1], ['bid', 5000 - 100 * p, 1]);
    for (let p = 12; p >= 1; p--) steps.push(['ask', 5000 + 100 * p, 0], ['bid', 5000 - 100 * (13 - p), 0]);
    steps.forEach((c, i) => {
      tops.apply([c]);
      book.apply([c], i);
      expect([tops.bestBid(), tops.bestAsk()], `step ${i}`).toEqual([book.bids.best(), book.asks.best()]);
    });
    expect([tops.bestBid(), tops.bestAsk()]).toEqual([undefined, undefined]);
  });
});
