import { describe, expect, it } from 'vitest';
import { BookIntegrityError, OrderBook } from '../../src/core/book.js';

describe('OrderBook (the one book contract)', () => {
  it('keeps levels sorted best first; size 0 deletes; a snapshot replaces', () => {
    const b = new OrderBook('X');
    b.snapshot(
      [
        [4000, 10],
        [4200, 5],
        [4100, 7],
      ],
      [
        [4500, 3],
        [4300, 1],
      ],
      1,
    );
    expect(b.bids.levels()).toEqual([
      [4200, 5],
      [4100, 7],
      [4000, 10],
    ]);
    expect(b.asks.levels()).toEqual([
      [4300, 1],
      [4500, 3],
    ]);
    b.apply(
      [
        ['bid', 4150, 2],
        ['ask', 4300, 0],
        ['bid', 4000, 11],
      ],
      2,
    );
    expect(b.bids.levels()).toEqual([
      [4200, 5],
      [4150, 2],
      [4100, 7],
      [4000, 11],
    ]);
    expect(b.asks.best()).toBe(4500);
    b.snapshot([[100, 1]], [], 3);
    expect(b.bids.levels()).toEqual([[100, 1]]);
    expect(b.asks.length).toBe(0);
  });

  it('refuses deltas before the first snapshot and after a reset', () => {
    const b = new OrderBook('X');
    expect(() => b.apply([['bid', 100, 1]], 1)).toThrow(BookIntegrityError);
    b.snapshot([[100, 1]], [], 1);
    b.reset();
    expect(b.ready).toBe(false);
    expect(() => b.apply([['bid', 100, 1]], 1)).toThrow(/not_ready/);
  });

  it('is all-or-nothing: a bad change leaves the book as it was', () => {
    const b = new OrderBook('X');
    b.snapshot([[4000, 10]], [[4500, 3]], 1);
    const v = b.version;
    expect(() =>
      b.apply(
        [
          ['bid', 4100, 5],
          ['ask', 10_001, 1],
        ],
        2,
      ),
    ).toThrow(/price_out_of_range/);
    expect(() => b.apply([['bid', 4100, -1]], 2)).toThrow(/negative_size/);
    expect(() => b.apply([['bid', 4100.5, 1]], 2)).toThrow(/price_out_of_range/);
    expect(() => b.apply([['bid', 4100, Number.NaN]], 2)).toThrow(BookIntegrityError);
    expect(b.bids.levels()).toEqual([[4000, 10]]);
    expect(b.version).toBe(v);
    expect(() => b.snapshot([[4000, 1]], [[-5, 1]], 3)).toThrow(BookIntegrityError);
    expect(b.bids.levels()).toEqual([[4000, 10]]);
  });
});
