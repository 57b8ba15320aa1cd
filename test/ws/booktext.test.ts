import { describe, expect, it } from 'vitest';
import { BookSide } from '../../src/core/book.js';
import { BookText, bookHead, bookJson, levelsJson, SideText } from '../../src/ws/booktext.js';

/** A side with `[price, size]` levels set in the order given. */
function side(descending: boolean, levels: [number, number][]): BookSide {
  const s = new BookSide(descending);
  for (const [p, z] of levels) s.set(p, z);
  return s;
}

describe('SideText (the orderbook_update text a held topic keeps between publications)', () => {
  it('renders what levelsJson renders, either way round, after every kind of change', () => {
    const bids = side(true, [
      [5500, 10],
      [5400, 20],
      [5300, 30],
    ]);
    const text = new SideText();
    const same = (depth: number): void => {
      for (const flip of [false, true]) expect(text.levels(bids, depth, flip)).toBe(levelsJson(bids, depth, flip));
    };
    same(20);
    bids.set(5400, 25); // a size among the first levels
    same(20);
    bids.set(5450, 5); // an insert: prices shift
    same(20);
    bids.set(5500, 0); // a delete: fewer levels
    same(20);
    same(2); // a shallower depth is a different text
    bids.set(5200, 1); // a change below the depth shown leaves the text as it was
    expect(text.levels(bids, 2, false)).toBe('[[54.5,5],[54,25]]');
    const other = side(true, [
      [5450, 5],
      [5400, 25],
    ]);
    expect(text.levels(other, 2, false)).toBe(levelsJson(other, 2, false)); // another side, same levels
    other.set(5450, 6);
    expect(text.levels(other, 2, true)).toBe(levelsJson(other, 2, true));
  });

  it('writes an orderbook_update equal to the one written without kept text', () => {
    const sides = {
      bids: side(true, [
        [5500, 10],
        [5400, 20],
      ]),
      asks: side(false, [[5700, 20]]),
      complement: false,
      timestamp: 0,
    };
    const kept = new BookText(bookHead('KX-1', 'venue_a'));
    for (const [p, z] of [
      [5600, 3],
      [5500, 0],
      [5600, 4],
    ] as const) {
      sides.asks.set(p + 200, z);
      sides.bids.set(p, z);
      for (const yesOnly of [false, true]) {
        const json = bookJson(kept.head, sides, 20, yesOnly, kept);
        expect(json).toBe(bookJson(bookHead('KX-1', 'venue_a'), sides, 20, yesOnly));
        expect(JSON.parse(json)).toMatchObject({ type: 'orderbook_update', market_id: 'KX-1', source: 'venue_a', ready: true });
      }
    }
  });
});
