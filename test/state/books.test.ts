import { describe, expect, it } from 'vitest';
import { OrderBook } from '../../src/core/book.js';
import type { BookSideName, BookSnapshot, Level } from '../../src/core/types.js';
import { BookStore } from '../../src/state/books.js';

/**
 * Book sides size their own arrays (src/core/book.ts): through snapshots, growth past the
 * headroom, emptying and refilling, a book holds exactly the levels a plain map of price → size
 * holds, best first.
 */

describe('OrderBook sides sized by the book', () => {
  it('hold what a price → size map holds through growth, deletes down to empty, and snapshots', () => {
    let seed = 3;
    const next = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const book = new OrderBook('T');
    const want = { bid: new Map<number, number>(), ask: new Map<number, number>() };
    const levels = (side: BookSideName): Level[] =>
      [...want[side]].sort((a, b) => (side === 'bid' ? b[0] - a[0] : a[0] - b[0])).map(([p, s]) => [p, s] as const);
    const snapshot = (): void => {
      for (const side of ['bid', 'ask'] as const) {
        want[side].clear();
        for (let k = next(12); k > 0; k--) want[side].set(side === 'bid' ? 100 + 100 * next(40) : 5000 + 100 * next(40), 1 + next(9) + 0.25);
      }
      book.snapshot(levels('bid'), levels('ask'), 0);
    };
    snapshot();
    for (let i = 0; i < 20_000; i++) {
      if (next(500) === 0) snapshot();
      const side: BookSideName = next(2) === 0 ? 'bid' : 'ask';
      // Phases that mostly add (the side grows past its headroom) and mostly delete (down to empty).
      const adding = Math.floor(i / 1_000) % 2 === 0;
      const price = (side === 'bid' ? 100 : 5000) + 100 * next(40);
      const size = (adding ? next(8) !== 0 : next(8) === 0) ? 1 + next(50) : 0;
      book.apply([[side, price, size]], i);
      if (size === 0) want[side].delete(price);
      else want[side].set(price, size);
      expect(book.bids.levels(), `bids at ${i}`).toEqual(levels('bid'));
      expect(book.asks.levels(), `asks at ${i}`).toEqual(levels('ask'));
    }
  });
});

describe('BookStore.link', () => {
  const snap = (store: BookStore, instrument: string, bids: Level[], asks: Level[]): void => {
    store.applySnapshot({ type: 'book_snapshot', venue: 'V', marketId: 'M', instrument, bids, asks, timestamp: 1, localTimestamp: 1 } as BookSnapshot);
  };

  it('reads a market by its id until a NO instrument is linked, then the NO book in complement', () => {
    const store = new BookStore();
    store.link('V', 'M', 'M', undefined);
    expect(store.roleOf('V', 'M')).toBe('yes');
    snap(store, 'N', [[4000, 2]], [[4500, 3]]);
    expect(store.marketBook('V', 'M')).toBeUndefined();
    store.link('V', 'M', undefined, 'N');
    expect(store.roleOf('V', 'N')).toBe('no');
    expect(store.instrument('V', 'N')!.role).toBe('no');
    expect(store.marketBook('V', 'M')).toEqual({ bids: [[5500, 3]], asks: [[6000, 2]], timestamp: 1, ready: true });
    snap(store, 'M', [[100, 1]], []);
    expect(store.marketBook('V', 'M')!.bids).toEqual([[100, 1]]);
  });

  it('gives an instrument linked as NO and then as YES the YES role, and reads a YES instrument other than the id', () => {
    const store = new BookStore();
    store.link('V', 'A', undefined, 'X');
    snap(store, 'X', [[300, 1]], []);
    expect(store.instrument('V', 'X')!.role).toBe('no');
    store.link('V', 'B', 'X', undefined);
    expect(store.roleOf('V', 'X')).toBe('yes');
    expect(store.instrument('V', 'X')!.role).toBe('yes');
    expect(store.marketBook('V', 'B')!.bids).toEqual([[300, 1]]);
  });

  it('reads the same sides with a book in hand as without: its own when it is the YES book, else the lookup', () => {
    const store = new BookStore();
    store.link('V', 'M', 'Y', 'N');
    snap(store, 'N', [[4000, 2]], [[4500, 3]]);
    const no = store.instrument('V', 'N')!;
    const other = new OrderBook('M');
    other.snapshot([[9000, 9]], [], 1);
    const noSides = store.marketSides('V', 'M');
    expect(noSides).toMatchObject({ complement: true, bids: no.asks, asks: no.bids });
    // A NO book or a book keyed by the market id are not the YES book: the answer is the lookup's.
    expect(store.marketSides('V', 'M', no)).toEqual(noSides);
    expect(store.marketSides('V', 'M', other)).toEqual(noSides);
    snap(store, 'Y', [[5000, 1]], [[5200, 4]]);
    const yes = store.instrument('V', 'Y')!;
    expect(store.marketSides('V', 'M', yes)).toEqual({ bids: yes.bids, asks: yes.asks, complement: false, timestamp: 1 });
    expect(store.marketSides('V', 'M', no)).toEqual(store.marketSides('V', 'M'));
    yes.reset();
    expect(store.marketSides('V', 'M', yes)).toEqual(noSides);
  });
});

describe('BookStore.changes$', () => {
  const ev = (instrument: string, marketId: string): BookSnapshot =>
    ({ type: 'book_snapshot', venue: 'V', marketId, instrument, bids: [[4000, 1]], asks: [[4500, 1]], timestamp: 1, localTimestamp: 1 }) as BookSnapshot;

  it('tells every subscriber the change it is called for, also when a subscriber applies a change of its own', () => {
    const store = new BookStore();
    const seen: string[] = [];
    store.changes$.subscribe((c) => {
      seen.push(`first ${c.instrument} ${c.marketId} ${c.book.instrument}`);
      if (c.instrument === 'A') store.applySnapshot(ev('B', 'MB'));
    });
    store.changes$.subscribe((c) => seen.push(`second ${c.instrument} ${c.marketId} ${c.book.instrument}`));
    store.applySnapshot(ev('A', 'MA'));
    store.applySnapshot(ev('C', 'MC'));
    expect(seen).toEqual(['first A MA A', 'first B MB B', 'second B MB B', 'second A MA A', 'first C MC C', 'second C MC C']);
  });
});
