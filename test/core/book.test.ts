import { describe, expect, it } from 'vitest';
import { BookIntegrityError, BookSide, LevelPool, OrderBook } from '../../src/core/book.js';
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

describe('LevelPool (the levels of many books in shared arrays)', () => {
  const sorted = (m: Map<number, number>, desc: boolean): Level[] => [...m].sort((x, y) => (desc ? y[0] - x[0] : x[0] - y[0]));
  type Ref = { bid: Map<number, number>; ask: Map<number, number> };
  const expectBook = (b: OrderBook, ref: Ref): void => {
    expect(b.bids.levels()).toEqual(sorted(ref.bid, true));
    expect(b.asks.levels()).toEqual(sorted(ref.ask, false));
  };

  it('keeps every book of a pool right while they grow past their slots, move and repack, interleaved', () => {
    // Seeded: 12 books of one pool, each change on a random book and side, so a book that moves or
    // a repack has its neighbours' levels on both sides of it; checked against a Map per side.
    let seed = 3;
    // The high bits of the generator (its low bits repeat with short periods).
    const rnd = (n: number): number => Math.floor(((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * n);
    const pool = new LevelPool();
    const books = Array.from({ length: 12 }, (_, i) => new OrderBook(`B${i}`, pool));
    const refs: Ref[] = books.map(() => ({ bid: new Map(), ask: new Map() }));
    books.forEach((b) => b.snapshot([[4000, 1]], [[6000, 2]], 0));
    refs.forEach((r) => (r.bid.set(4000, 1), r.ask.set(6000, 2)));
    for (let k = 0; k < 6000; k++) {
      const i = rnd(books.length);
      const side = rnd(2) === 0 ? 'bid' : 'ask';
      const price = side === 'bid' ? 3000 + 10 * rnd(80) : 5500 + 10 * rnd(80);
      // Deletes rarer than inserts early on, so books grow to tens of levels before they thin out.
      const size = rnd(k < 3000 ? 6 : 2) === 0 ? 0 : 1 + rnd(50) / 4;
      books[i]!.apply([[side, price, size]], k);
      if (size === 0) refs[i]![side].delete(price);
      else refs[i]![side].set(price, size);
      if (k % 101 === 0) books.forEach((b, j) => expectBook(b, refs[j]!));
    }
    books.forEach((b, j) => expectBook(b, refs[j]!));
    expect(pool.repacks).toBeGreaterThan(3);
    expect(Math.max(...refs.map((r) => r.bid.size + r.ask.size))).toBeGreaterThan(30);
  });

  it('empties a side by deletes and fills it again, its neighbours untouched', () => {
    const pool = new LevelPool();
    const a = new OrderBook('A', pool);
    const b = new OrderBook('B', pool);
    a.snapshot(
      [
        [4000, 1],
        [3900, 2],
      ],
      [[6000, 3]],
      1,
    );
    b.snapshot([[4100, 4]], [[5900, 5]], 1);
    a.apply(
      [
        ['bid', 4000, 0],
        ['bid', 3900, 0],
        ['ask', 6000, 0],
      ],
      2,
    );
    expect([a.bids.length, a.asks.length, a.bids.get(4000), a.asks.get(6000), a.bids.best()]).toEqual([0, 0, 0, 0, undefined]);
    a.apply(
      [
        ['ask', 6100, 7],
        ['bid', 3800, 8],
        ['ask', 6050, 9],
      ],
      3,
    );
    expectBook(a, {
      bid: new Map([[3800, 8]]),
      ask: new Map([
        [6050, 9],
        [6100, 7],
      ]),
    });
    expectBook(b, { bid: new Map([[4100, 4]]), ask: new Map([[5900, 5]]) });
  });

  it('takes an unsorted snapshot into a slot of its own without touching the next book', () => {
    const pool = new LevelPool();
    const a = new OrderBook('A', pool);
    const b = new OrderBook('B', pool);
    a.snapshot([[4000, 1]], [[6000, 1]], 1);
    b.snapshot([[4100, 2]], [[5900, 2]], 1);
    // Larger than its slot, out of order and with a repeated price: a moves, and goes in level by level.
    a.fill(
      [
        [3000, 1],
        [3500, 2],
        [3200, 3],
        [3500, 4],
        [3100, 0],
      ],
      [
        [7000, 5],
        [6500, 6],
        [6800, 7],
      ],
      2,
    );
    expectBook(a, {
      bid: new Map([
        [3000, 1],
        [3500, 4],
        [3200, 3],
      ]),
      ask: new Map([
        [7000, 5],
        [6500, 6],
        [6800, 7],
      ]),
    });
    expectBook(b, { bid: new Map([[4100, 2]]), ask: new Map([[5900, 2]]) });
    // Smaller than its slot (7 levels, 2 free: 9 pairs, headroom given so that sizes are known): it
    // shrinks in place, and the 7 pairs it gives back, after its one level, go to the next book of 7.
    a.fill([[3300, 1]], [], 1);
    const c = new OrderBook('C', pool);
    c.fill(
      [
        [2000, 9],
        [1900, 8],
      ],
      [
        [8000, 7],
        [8100, 6],
        [8200, 5],
      ],
      2,
    );
    c.put(true, 2100, 4);
    expectBook(a, { bid: new Map([[3300, 1]]), ask: new Map() });
    expectBook(b, { bid: new Map([[4100, 2]]), ask: new Map([[5900, 2]]) });
    expectBook(c, {
      bid: new Map([
        [2000, 9],
        [1900, 8],
        [2100, 4],
      ]),
      ask: new Map([
        [8000, 7],
        [8100, 6],
        [8200, 5],
      ]),
    });
  });

  it("gives a released or emptied book's slot to another book, and the first book works again after", () => {
    const pool = new LevelPool();
    const a = new OrderBook('A', pool);
    const b = new OrderBook('B', pool);
    const levels = (from: number, n: number, step: number): Level[] => Array.from({ length: n }, (_, i) => [from + i * step, i + 1] as const);
    a.snapshot(levels(4000, 5, -10), levels(6000, 5, 10), 1);
    a.release();
    expect([a.bids.length, a.asks.length, a.bids.get(4000)]).toEqual([0, 0, 0]);
    // b takes a's slot (same size) and writes all of it.
    b.snapshot(levels(4500, 5, -10), levels(5500, 5, 10), 1);
    a.snapshot([], [], 2);
    expect([a.bids.length, a.asks.best()]).toEqual([0, undefined]);
    a.snapshot(levels(3000, 3, -10), [], 4);
    a.apply([['ask', 9000, 2]], 5);
    const want = (ls: Level[]): Map<number, number> => new Map(ls.map(([p, z]) => [p, z]));
    expectBook(a, { bid: want(levels(3000, 3, -10)), ask: new Map([[9000, 2]]) });
    expectBook(b, { bid: want(levels(4500, 5, -10)), ask: want(levels(5500, 5, 10)) });
  });

  it('lets a released book go at the next repack, and keeps the others', () => {
    const pool = new LevelPool();
    const books = Array.from({ length: 40 }, (_, i) => new OrderBook(`B${i}`, pool));
    books.forEach((b, i) => b.snapshot([[4000 - i, 1]], [[6000 + i, 1]], 0));
    expect(pool.owners.length).toBe(40);
    for (let i = 0; i < 40; i += 2) books[i]!.release();
    const before = pool.repacks;
    // Grow the kept books until the pool repacks.
    for (let k = 1; pool.repacks === before; k++) for (let i = 1; i < 40; i += 2) books[i]!.apply([['bid', 4000 - i - 100 * k, k]], k);
    expect(pool.owners.length).toBe(20);
    expect(pool.owners.every((b) => books.indexOf(b as OrderBook) % 2 === 1)).toBe(true);
    expect(books[1]!.bids.best()).toBe(3999);
    expect(books[1]!.asks.levels()).toEqual([[6001, 1]]);
    expect(books[0]!.bids.length).toBe(0);
  });
});
