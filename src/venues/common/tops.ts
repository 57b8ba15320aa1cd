import type { BookSideName, Level } from '../../core/types.js';

/**
 * Which prices of a book hold size, each side best first: all a mapper needs to know a book's
 * best bid and ask through absolute level changes (size 0 deletes). No sizes and arrays sized to
 * the snapshot's levels: a third of an OrderBook's memory, for a check copy kept per token.
 */
export class BookTops {
  /** Bid prices descending, ask prices ascending. */
  private bids: number[] = [];
  private asks: number[] = [];

  /** Replaces both sides; levels best first with sizes above zero (as parsed from a `book`). */
  snapshot(bids: readonly Level[], asks: readonly Level[]): void {
    this.bids = bids.map((l) => l[0]);
    this.asks = asks.map((l) => l[0]);
  }

  /** Absolute changes: a size above zero makes the price a level, zero removes it. */
  apply(changes: readonly (readonly [BookSideName, number, number])[]): void {
    for (let i = 0; i < changes.length; i++) {
      const c = changes[i]!;
      if (c[0] === 'bid') set(this.bids, c[1], c[2] > 0, true);
      else set(this.asks, c[1], c[2] > 0, false);
    }
  }

  bestBid(): number | undefined {
    return this.bids[0];
  }

  bestAsk(): number | undefined {
    return this.asks[0];
  }
}

/** Adds or removes `price` in a side kept sorted best first (shifted in place, as BookSide.set does). */
function set(side: number[], price: number, present: boolean, descending: boolean): void {
  let lo = 0;
  let hi = side.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (descending ? side[mid]! > price : side[mid]! < price) lo = mid + 1;
    else hi = mid;
  }
  const n = side.length;
  const has = lo < n && side[lo] === price;
  if (present && !has) {
    side.push(price);
    for (let k = n; k > lo; k--) side[k] = side[k - 1]!;
    side[lo] = price;
  } else if (!present && has) {
    for (let k = lo; k < n - 1; k++) side[k] = side[k + 1]!;
    side.pop();
  }
}
