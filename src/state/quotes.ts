import { Subject } from 'rxjs';
import { PAYOUT } from '../core/price.js';
import type { Quote, VenueLabel } from '../core/types.js';

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

/** A caller's slot for the quote record it last used (a book keeps its market's): spares the lookup while the record stands. */
export interface HeldQuote {
  quote: QuoteRecord | undefined;
  /** QuoteStore.replaced when `quote` was taken. */
  quoteEpoch: number;
}

/**
 * Current quotes. Top of book from a ready book wins over a venue ticker's bid/ask (the book is
 * newer and deeper); last price, volume, open interest and liquidity come from tickers and trades.
 * `changes$` fires only when something a client would see changed, not on every deep level.
 */
export class QuoteStore {
  /** venue → market → quote (nested: no key strings built on the hot path). */
  private readonly quotes = new Map<VenueLabel, Map<string, QuoteRecord>>();
  private count = 0;
  readonly changes$ = new Subject<QuoteRecord>();
  /** Latest update time over all quotes (ms). */
  lastUpdate = 0;
  /** Bumped when `restore` replaces a record: a record held (HeldQuote) before is no longer the store's. */
  replaced = 0;
  /**
   * Bumped on every change to any quote (and every restore): a reader that checked its quotes'
   * versions at one value need not check them again while it stands (/prices/bulk's cache).
   */
  changes = 0;

  /**
   * @param canonicalId the copy of a market's id that other records already hold (the catalog's),
   *   so that a new quote does not keep the copy parsed from its own frame.
   */
  constructor(private readonly canonicalId: (venue: VenueLabel, marketId: string) => string = (_venue, marketId) => marketId) {}

  get size(): number {
    return this.count;
  }

  get(venue: VenueLabel, marketId: string): QuoteRecord | undefined {
    return this.quotes.get(venue)?.get(marketId);
  }

  *all(): Generator<QuoteRecord> {
    for (const m of this.quotes.values()) yield* m.values();
  }

  private record(venue: VenueLabel, marketId: string): QuoteRecord {
    let v = this.quotes.get(venue);
    if (!v) this.quotes.set(venue, (v = new Map()));
    let q = v.get(marketId);
    if (!q) {
      const id = this.canonicalId(venue, marketId);
      v.set(id, (q = { venue, marketId: id, fromBook: false, updatedAt: 0, version: 0 }));
      this.count++;
    }
    return q;
  }

  /**
   * Top of book from the market's YES book. Returns the market's quote when anything changed.
   * `held`: the caller's slot for this market's record, used instead of the lookup when it holds it.
   */
  fromBook(
    venue: VenueLabel,
    marketId: string,
    bid: number | undefined,
    bidSize: number | undefined,
    ask: number | undefined,
    askSize: number | undefined,
    ts: number,
    held?: HeldQuote,
  ): QuoteRecord | undefined {
    const q = held === undefined ? this.record(venue, marketId) : this.held(held, venue, marketId);
    if (q.fromBook && q.yesBid === bid && q.yesAsk === ask && q.yesBidSize === bidSize && q.yesAskSize === askSize) return undefined;
    q.yesBid = bid;
    q.yesAsk = ask;
    q.yesBidSize = bidSize;
    q.yesAskSize = askSize;
    q.fromBook = true;
    this.touch(q, ts);
    return q;
  }

  private held(h: HeldQuote, venue: VenueLabel, marketId: string): QuoteRecord {
    const q = h.quote;
    if (q !== undefined && h.quoteEpoch === this.replaced && q.marketId === marketId) return q;
    h.quoteEpoch = this.replaced;
    return (h.quote = this.record(venue, marketId));
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
    const q = this.quotes.get(venue)?.get(marketId);
    if (!q || !q.fromBook) return;
    q.yesBid = q.yesAsk = q.yesBidSize = q.yesAskSize = undefined;
    q.fromBook = false;
    this.touch(q, ts);
  }

  /** Loads a persisted quote at start-up (after the catalog, whose copy of the market id it takes). */
  restore(q: QuoteRecord): void {
    if (!this.get(q.venue, q.marketId)) this.count++;
    else this.replaced++;
    (q as { marketId: string }).marketId = this.canonicalId(q.venue, q.marketId);
    let v = this.quotes.get(q.venue);
    if (!v) this.quotes.set(q.venue, (v = new Map()));
    v.set(q.marketId, q);
    if (q.updatedAt > this.lastUpdate) this.lastUpdate = q.updatedAt;
    this.changes++;
  }

  private touch(q: QuoteRecord, ts: number): void {
    q.updatedAt = ts;
    q.version++;
    this.changes++;
    if (ts > this.lastUpdate) this.lastUpdate = ts;
    if (this.changes$.observed) this.changes$.next(q);
  }
}
