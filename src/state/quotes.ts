import { Subject } from 'rxjs';
import { PAYOUT } from '../core/price.js';
import type { Quote, VenueLabel } from '../core/types.js';
import { marketKey } from './catalog.js';

/** Current quote of a market, integer units; undefined = truly missing (spec 2.1). */
export interface QuoteRecord {
  readonly venue: VenueLabel;
  readonly marketId: string;
  yesBid?: number | undefined;
  yesAsk?: number | undefined;
  yesBidSize?: number | undefined;
  yesAskSize?: number | undefined;
  lastPrice?: number | undefined;
  volume?: number | undefined;
  openInterest?: number | undefined;
  liquidity?: number | undefined;
  /** Top of book came from a book (true) or from a venue ticker/listing (false). */
  fromBook: boolean;
  updatedAt: number;
  /** Bumped whenever a field changes. */
  version: number;
}

/** NO bid/ask of a YES quote: NO bid = 100 − YES ask, NO ask = 100 − YES bid (spec 2.1). */
export function noSide(q: Pick<QuoteRecord, 'yesBid' | 'yesAsk'>): { noBid: number | undefined; noAsk: number | undefined } {
  return {
    noBid: q.yesAsk === undefined ? undefined : PAYOUT - q.yesAsk,
    noAsk: q.yesBid === undefined ? undefined : PAYOUT - q.yesBid,
  };
}

/**
 * Current quotes. Top of book from a ready book wins over a venue ticker's bid/ask (the book is
 * newer and deeper); last price, volume, open interest and liquidity come from tickers and trades.
 * `changes$` fires only when something a client would see changed, not on every deep level.
 */
export class QuoteStore {
  private readonly quotes = new Map<string, QuoteRecord>();
  readonly changes$ = new Subject<QuoteRecord>();
  /** Latest update time over all quotes (ms). */
  lastUpdate = 0;

  get size(): number {
    return this.quotes.size;
  }

  get(venue: VenueLabel, marketId: string): QuoteRecord | undefined {
    return this.quotes.get(marketKey(venue, marketId));
  }

  all(): IterableIterator<QuoteRecord> {
    return this.quotes.values();
  }

  private record(venue: VenueLabel, marketId: string): QuoteRecord {
    const k = marketKey(venue, marketId);
    let q = this.quotes.get(k);
    if (!q) this.quotes.set(k, (q = { venue, marketId, fromBook: false, updatedAt: 0, version: 0 }));
    return q;
  }

  /** Top of book from the market's YES book. */
  fromBook(
    venue: VenueLabel,
    marketId: string,
    bid: number | undefined,
    bidSize: number | undefined,
    ask: number | undefined,
    askSize: number | undefined,
    ts: number,
  ): void {
    const q = this.record(venue, marketId);
    if (q.fromBook && q.yesBid === bid && q.yesAsk === ask && q.yesBidSize === bidSize && q.yesAskSize === askSize) return;
    q.yesBid = bid;
    q.yesAsk = ask;
    q.yesBidSize = bidSize;
    q.yesAskSize = askSize;
    q.fromBook = true;
    this.touch(q, ts);
  }

  /** A venue quote (ticker, listing). Book-derived top of book is not overwritten. */
  fromQuote(ev: Quote): void {
    const q = this.record(ev.venue, ev.marketId);
    let changed = false;
    if (!q.fromBook) {
      if (ev.yesBid !== q.yesBid) {
        q.yesBid = ev.yesBid;
        changed = true;
      }
      if (ev.yesAsk !== q.yesAsk) {
        q.yesAsk = ev.yesAsk;
        changed = true;
      }
    }
    for (const f of ['lastPrice', 'volume', 'openInterest', 'liquidity'] as const) {
      const v = ev[f];
      if (v !== undefined && v !== q[f]) {
        q[f] = v;
        changed = true;
      }
    }
    if (changed) this.touch(q, ev.localTimestamp);
  }

  /** A trade sets the last price. */
  fromTrade(venue: VenueLabel, marketId: string, yesPrice: number, ts: number): void {
    const q = this.record(venue, marketId);
    if (q.lastPrice === yesPrice) return;
    q.lastPrice = yesPrice;
    this.touch(q, ts);
  }

  /** The book went away (disconnect, gap): the top of book is unknown until resync. */
  clearBook(venue: VenueLabel, marketId: string, ts: number): void {
    const q = this.quotes.get(marketKey(venue, marketId));
    if (!q || !q.fromBook) return;
    q.yesBid = q.yesAsk = q.yesBidSize = q.yesAskSize = undefined;
    q.fromBook = false;
    this.touch(q, ts);
  }

  restore(q: QuoteRecord): void {
    this.quotes.set(marketKey(q.venue, q.marketId), q);
    if (q.updatedAt > this.lastUpdate) this.lastUpdate = q.updatedAt;
  }

  private touch(q: QuoteRecord, ts: number): void {
    q.updatedAt = ts;
    q.version++;
    if (ts > this.lastUpdate) this.lastUpdate = ts;
    this.changes$.next(q);
  }
}
