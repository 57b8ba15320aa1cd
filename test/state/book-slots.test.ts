import { describe, expect, it } from 'vitest';
import type { BookSnapshot, Level } from '../../src/core/types.js';
import { ABOVE_ANY_PRICE, BELOW_ANY_PRICE, BookStore, StateBook, type MarketRead } from '../../src/state/books.js';

/**
 * A state book's numeric slots live in its store's pool, a row of an Int32Array per book
 * (src/state/books.ts `StatePool`), read and written as fields of the book.
 */

const NUMERIC = [
  'quoteEpoch',
  'candleSlot',
  'candleEpoch',
  'persistMark',
  'groupsIndex',
  'changedBid',
  'changedAsk',
  'readSerial',
  'readBid',
  'readAsk',
  'subsLayout',
  'yesLayout',
] as const;

/** What a book's slots hold before anything wrote them (the fields' initial values before the slots moved to the pool). */
const INITIAL: Record<(typeof NUMERIC)[number], number> = {
  quoteEpoch: 0,
  candleSlot: -1,
  candleEpoch: 0,
  persistMark: 0,
  groupsIndex: -1,
  changedBid: ABOVE_ANY_PRICE,
  changedAsk: BELOW_ANY_PRICE,
  readSerial: 0,
  readBid: 0,
  readAsk: 0,
  subsLayout: 0,
  yesLayout: -1,
};

const snap = (instrument: string, bids: Level[], asks: Level[]): BookSnapshot =>
  ({ type: 'book_snapshot', venue: 'V', marketId: instrument, instrument, bids, asks, timestamp: 1, localTimestamp: 2 }) as BookSnapshot;

/** A distinct value for slot `k` of book `i` (negative ones too: a slot holds any 32-bit integer). */
const value = (i: number, k: number): number => (i * NUMERIC.length + k) * (k % 2 === 0 ? 7 : -7);

const slotsOf = (b: StateBook): Record<string, number> => Object.fromEntries(NUMERIC.map((f) => [f, b[f]]));

describe('StateBook numeric slots in the store pool', () => {
  it('start at their initial values in every row, also in rows made after the slots grew, one row a book in the order made', () => {
    const store = new BookStore();
    const fresh: StateBook[] = [];
    for (let i = 0; i < 700; i++) {
      store.applySnapshot(snap(`I${i}`, [], []));
      const made = store.instrument('V', `I${i}`)!;
      fresh.push(made);
      // A snapshot sets how far the change reached to the whole book, which is its initial value anyway.
      expect(slotsOf(made), `book ${i}`).toEqual(INITIAL);
      // Dirty the row, so a row handed out again (or not cleared when the slots grew) would show it.
      NUMERIC.forEach((f, k) => (made[f] = value(i, k)));
    }
    expect(fresh.map((b) => b.index)).toEqual(fresh.map((_, i) => i + 1)); // row 0: the store's change object
  });

  it('keep each book its own values through growth of the slots and repacks of the levels', () => {
    const store = new BookStore();
    const books: StateBook[] = [];
    for (let i = 0; i < 1_500; i++) {
      store.applySnapshot(snap(`I${i}`, [[4000, 1]], [[6000, 1]]));
      const b = store.instrument('V', `I${i}`)!;
      NUMERIC.forEach((f, k) => (b[f] = value(i, k)));
      books.push(b);
    }
    // Grow every book past its slot of levels (moves, repacks), with slot writes in between.
    for (let n = 1; n <= 12; n++)
      for (let i = 0; i < books.length; i += 3) {
        store.applyDelta({
          type: 'book_delta',
          venue: 'V',
          marketId: `I${i}`,
          instrument: `I${i}`,
          changes: [['bid', 4000 - n, n]],
          timestamp: 3,
          localTimestamp: 4,
        });
        // A delta sets how far it reached: the highest bid it changed, no ask.
        expect([books[i]!.changedBid, books[i]!.changedAsk]).toEqual([4000 - n, ABOVE_ANY_PRICE]);
        books[i]!.changedBid = value(i, 5);
        books[i]!.changedAsk = value(i, 6);
      }
    for (let i = 0; i < books.length; i++) {
      const want = Object.fromEntries(NUMERIC.map((f, k) => [f, value(i, k)]));
      expect(slotsOf(books[i]!), `book ${i}`).toEqual(want);
      expect(books[i]!.levelsOf(true).length).toBe(i % 3 === 0 ? 13 : 1);
    }
  });

  it('keep a book its row and its slots through a reset and the snapshot that brings it back, and a relink to another market', () => {
    const store = new BookStore();
    store.link('V', 'M', 'Y', 'N');
    store.applySnapshot(snap('Y', [[4000, 1]], [[6000, 1]]));
    store.applySnapshot(snap('N', [[3000, 1]], [[3500, 1]]));
    const yes = store.instrument('V', 'Y')!;
    const no = store.instrument('V', 'N')!;
    const read: MarketRead = { book: undefined, complement: false };
    expect(store.readMarket(read, 'V', 'M', yes)).toBe(yes);
    const at = yes.yesLayout;
    expect(at).toBe(store.layout);
    yes.persistMark = 41;
    yes.quoteEpoch = -3;
    store.reset('V', 'Y');
    expect(store.readMarket(read, 'V', 'M', yes)).toBe(no);
    expect(read.complement).toBe(true);
    store.applySnapshot(snap('Y', [[4100, 2]], []));
    expect(store.instrument('V', 'Y')).toBe(yes);
    expect([yes.index, yes.persistMark, yes.quoteEpoch, yes.yesLayout]).toEqual([1, 41, -3, at]);
    expect(store.readMarket(read, 'V', 'M', yes)).toBe(yes);
    expect(read.complement).toBe(false);
    // Relinked: Y is now market M2's YES book, and no longer M's.
    store.link('V', 'M2', 'Y', undefined);
    store.link('V', 'M', 'Z', 'N');
    expect(store.readMarket(read, 'V', 'M', yes)).toBe(no);
    expect(store.readMarket(read, 'V', 'M2', yes)).toBe(yes);
    expect([yes.yesOf, yes.yesLayout]).toEqual(['M2', store.layout]);
    expect(no.persistMark).toBe(0);
  });
});
