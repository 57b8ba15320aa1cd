import { describe, expect, it } from 'vitest';
import { BookIntegrityError, BookSide, OrderBook } from '../../src/core/book.js';
import type { Level } from '../../src/core/types.js';

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

  it('keeps both sides right while either grows past its room and moves the storage they share', () => {
    // A seeded walk of inserts, size changes and deletes on both sides, checked against a Map per side.
    let seed = 7;
    const rnd = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n) as number;
    const b = new OrderBook('X');
    const ref = { bid: new Map<number, number>(), ask: new Map<number, number>() };
    b.snapshot([[4000, 1]], [[6000, 1.5]], 1);
    ref.bid.set(4000, 1);
    ref.ask.set(6000, 1.5);
    const sorted = (m: Map<number, number>, desc: boolean): Level[] => [...m].sort((x, y) => (desc ? y[0] - x[0] : x[0] - y[0]));
    for (let k = 0; k < 3000; k++) {
      const side = rnd(2) === 0 ? 'bid' : 'ask';
      const price = side === 'bid' ? 3000 + 10 * rnd(60) : 5500 + 10 * rnd(60);
      const size = rnd(4) === 0 ? 0 : 1 + rnd(50) / 4;
      b.apply([[side, price, size]], k);
      if (size === 0) ref[side].delete(price);
      else ref[side].set(price, size);
      if (k % 97 === 0) {
        expect(b.bids.levels()).toEqual(sorted(ref.bid, true));
        expect(b.asks.levels()).toEqual(sorted(ref.ask, false));
      }
    }
    expect(b.bids.levels()).toEqual(sorted(ref.bid, true));
    expect(b.asks.levels()).toEqual(sorted(ref.ask, false));
    expect(b.bids.get(3000 + 10 * 59)).toBe(ref.bid.get(3000 + 10 * 59) ?? 0);
    expect(b.asks.bestSize()).toBe(sorted(ref.ask, false)[0]?.[1]);
  });

  it('takes snapshots in any order (repeats and zero sizes included) and keeps deltas right after each', () => {
    // Seeded: each round a snapshot of 0 to 30 levels a side over overlapping price ranges, best
    // first, shuffled, or with a repeated price (the last size wins), then deltas; checked against a Map per side.
    let seed = 11;
    const rnd = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n) as number;
    const b = new OrderBook('X');
    const sorted = (m: Map<number, number>, desc: boolean): Level[] => [...m].sort((x, y) => (desc ? y[0] - x[0] : x[0] - y[0]));
    const draw = (desc: boolean): Level[] => {
      const m = new Map<number, number>();
      for (let i = rnd(31); i > 0; i--) m.set(4000 + 10 * rnd(200), rnd(5) === 0 ? 0 : 1 + rnd(40) / 8);
      const out = sorted(m, desc);
      const order = rnd(3);
      if (order === 1) for (let i = out.length - 1; i > 0; i--) out.push(...out.splice(rnd(i + 1), 1));
      if (order === 2 && out.length > 0) out.unshift([out[out.length - 1]![0], 0.25]);
      return out;
    };
    const model = (levels: Level[]): Map<number, number> => {
      const m = new Map<number, number>();
      for (const [p, z] of levels) if (z > 0) m.set(p, z);
      return m;
    };
    for (let round = 0; round < 200; round++) {
      const bids = draw(true);
      const asks = draw(false);
      b.snapshot(bids, asks, round);
      const ref = { bid: model(bids), ask: model(asks) };
      for (let k = rnd(40); k > 0; k--) {
        const side = rnd(2) === 0 ? 'bid' : 'ask';
        const price = 4000 + 10 * rnd(200);
        const size = rnd(3) === 0 ? 0 : 1 + rnd(40) / 8;
        b.apply([[side, price, size]], round);
        if (size === 0) ref[side].delete(price);
        else ref[side].set(price, size);
      }
      const want = { bid: sorted(ref.bid, true), ask: sorted(ref.ask, false) };
      expect(b.bids.levels()).toEqual(want.bid);
      expect(b.asks.levels()).toEqual(want.ask);
      expect([b.bids.best(), b.bids.bestSize(), b.asks.best(), b.asks.bestSize()]).toEqual([
        want.bid[0]?.[0],
        want.bid[0]?.[1],
        want.ask[0]?.[0],
        want.ask[0]?.[1],
      ]);
      const probe = 4000 + 10 * rnd(200);
      expect([b.bids.get(probe), b.asks.get(probe)]).toEqual([ref.bid.get(probe) ?? 0, ref.ask.get(probe) ?? 0]);
    }
  });

  it('refits both sides on a snapshot, and a side alone grows and empties', () => {
    const b = new OrderBook('X');
    const many = (from: number, n: number, step: number): Level[] => Array.from({ length: n }, (_, i) => [from + i * step, i + 1] as const);
    b.snapshot(many(4000, 40, -10), many(6000, 3, 10), 1);
    expect(b.bids.length).toBe(40);
    b.snapshot([[4000, 2]], many(6000, 30, 10), 2);
    expect(b.bids.levels()).toEqual([[4000, 2]]);
    expect(b.asks.levels(2)).toEqual([
      [6000, 1],
      [6010, 2],
    ]);
    expect(b.asks.length).toBe(30);
    b.snapshot([], [], 3);
    expect([b.bids.best(), b.asks.best(), b.asks.bestSize()]).toEqual([undefined, undefined, undefined]);
    b.apply([['ask', 7000, 1]], 4);
    expect(b.asks.levels()).toEqual([[7000, 1]]);

    const alone = new BookSide(false);
    for (let p = 100; p > 0; p--) alone.set(p, p / 2);
    expect(alone.length).toBe(100);
    expect([alone.best(), alone.price(99), alone.size(0)]).toEqual([1, 100, 0.5]);
    for (let p = 1; p <= 100; p++) alone.set(p, 0);
    expect(alone.levels()).toEqual([]);
  });
});
