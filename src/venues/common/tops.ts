import type { BookSideName, Level } from '../../core/types.js';

/** Free slots the prices array gets past the levels when it is (re)allocated, shared by both sides. */
const HEADROOM = 4;

/**
 * Which prices of a book hold size, each side best first: all a mapper needs to know a book's
 * best bid and ask through absolute level changes (size 0 deletes). No sizes, and both sides in
 * one array sized to the levels plus a few free slots between them (bids from the front, best
 * first; asks from the back, best last): the mapper keeps one per token, 100,000 and more.
 */
export class BookTops {
  private lv: number[] = [];
  /** Bid prices at lv[0 … nb), descending. */
  private nb = 0;
  /** Ask prices at lv[length − na … length), descending too (the best ask is the last slot). */
  private na = 0;

  /** Replaces both sides; levels best first with sizes above zero (as parsed from a `book`). */
  snapshot(bids: readonly Level[], asks: readonly Level[]): void {
    const len = bids.length + asks.length === 0 ? 0 : bids.length + asks.length + HEADROOM;
    if (this.lv.length !== len) this.lv = new Array<number>(len);
    const lv = this.lv;
    for (let i = 0; i < bids.length; i++) lv[i] = bids[i]![0];
    for (let i = 0; i < asks.length; i++) lv[len - 1 - i] = asks[i]![0];
    this.nb = bids.length;
    this.na = asks.length;
  }

  /** Absolute changes: a size above zero makes the price a level, zero removes it. */
  apply(changes: readonly (readonly [BookSideName, number, number])[]): void {
    for (let i = 0; i < changes.length; i++) {
      const c = changes[i]!;
      if (c[0] === 'bid') this.setBid(c[1], c[2] > 0);
      else this.setAsk(c[1], c[2] > 0);
    }
  }

  bestBid(): number | undefined {
    return this.nb === 0 ? undefined : this.lv[0];
  }

  bestAsk(): number | undefined {
    return this.na === 0 ? undefined : this.lv[this.lv.length - 1];
  }

  private setBid(price: number, present: boolean): void {
    let lv = this.lv;
    const n = this.nb;
    const i = above(lv, 0, n, price);
    const has = i < n && lv[i] === price;
    if (present && !has) {
      if (n + this.na === lv.length) lv = this.grow();
      for (let k = n; k > i; k--) lv[k] = lv[k - 1]!;
      lv[i] = price;
      this.nb = n + 1;
    } else if (!present && has) {
      for (let k = i; k < n - 1; k++) lv[k] = lv[k + 1]!;
      this.nb = n - 1;
    }
  }

  private setAsk(price: number, present: boolean): void {
    let lv = this.lv;
    const n = this.na;
    // Asks sit descending in lv[len − n … len): the slot where `price` is or goes.
    const from = lv.length - n;
    const i = above(lv, from, lv.length, price);
    const has = i < lv.length && lv[i] === price;
    if (present && !has) {
      if (this.nb + n === lv.length) {
        const before = lv.length;
        lv = this.grow();
        const j = i + lv.length - before;
        for (let k = lv.length - n - 1; k < j - 1; k++) lv[k] = lv[k + 1]!;
        lv[j - 1] = price;
      } else {
        for (let k = from - 1; k < i - 1; k++) lv[k] = lv[k + 1]!;
        lv[i - 1] = price;
      }
      this.na = n + 1;
    } else if (!present && has) {
      for (let k = i; k > from; k--) lv[k] = lv[k - 1]!;
      this.na = n - 1;
    }
  }

  /** Moves both sides to an array with HEADROOM free slots between them; returns it. */
  private grow(): number[] {
    const old = this.lv;
    const len = this.nb + this.na + HEADROOM;
    const lv = new Array<number>(len);
    for (let k = 0; k < this.nb; k++) lv[k] = old[k]!;
    for (let k = 1; k <= this.na; k++) lv[len - k] = old[old.length - k]!;
    this.lv = lv;
    return lv;
  }
}

/** In lv[lo … hi), sorted descending: the first index whose price is not above `price`. */
function above(lv: readonly number[], lo: number, hi: number, price: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (lv[mid]! > price) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
