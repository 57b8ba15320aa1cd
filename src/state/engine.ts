import type { VenueConfig } from '../config/schema.js';
import { PAYOUT } from '../core/price.js';
import type { FeedEvent, NormalizedEvent, VenueLabel } from '../core/types.js';
import { BookStore, type StateBook } from './books.js';
import { CandleStore } from './candles.js';
import { MarketCatalog } from './catalog.js';
import { HealthStore } from './health.js';
import { QuoteStore } from './quotes.js';
import { TradeStore } from './trades.js';

/** All in-memory state of the engine: what every reader (REST, WebSocket, signals) serves from. */
export class EngineState {
  readonly catalog: MarketCatalog;
  readonly books = new BookStore();
  readonly quotes = new QuoteStore((venue, marketId) => this.catalog.get(venue, marketId)?.marketId ?? marketId);
  readonly candles: CandleStore;
  readonly trades: TradeStore;
  readonly health: HealthStore;
  /** Events applied since start. */
  applied = 0;
  /** The event applied last: while the change streams fire, the one that caused the change (fan-out stamps its times). */
  current: NormalizedEvent | undefined = undefined;

  constructor(
    readonly venues: readonly VenueConfig[],
    opts: {
      tradeCapacity?: number;
      /** False: no one-minute candles are built (a state read only for books and quotes). */
      candles?: boolean;
    } = {},
  ) {
    this.catalog = new MarketCatalog(venues);
    this.candles = new CandleStore(opts.candles !== false);
    this.health = new HealthStore(venues.map((v) => v.label));
    this.trades = new TradeStore(opts.tradeCapacity);
  }
}

/**
 * After a change to `book` (an instrument of `marketId`), updates the market's top of book and,
 * when the top moved, its candle. Reads the top straight off the book: no views are built on the
 * hot path. A NO-token change is the mirror of the YES book when that one is live, so it only
 * counts when the market has no ready YES book.
 */
function refreshTop(s: EngineState, venue: VenueLabel, marketId: string, book: StateBook, ts: number): void {
  let bid: number | undefined;
  let bidSize: number | undefined;
  let ask: number | undefined;
  let askSize: number | undefined;
  if (book.role === 'no') {
    if (s.books.yesBook(venue, marketId)) return;
    const a = book.best(false);
    const b = book.best(true);
    bid = a === undefined ? undefined : PAYOUT - a;
    bidSize = book.bestSize(false);
    ask = b === undefined ? undefined : PAYOUT - b;
    askSize = book.bestSize(true);
  } else {
    bid = book.best(true);
    bidSize = book.bestSize(true);
    ask = book.best(false);
    askSize = book.bestSize(false);
  }
  const q = s.quotes.fromBook(venue, marketId, bid, bidSize, ask, askSize, ts, book);
  if (q === undefined) return;
  const mid = bid !== undefined && ask !== undefined ? Math.round((bid + ask) / 2) : undefined;
  const price = q.lastPrice ?? mid;
  // The quote's copy of the id, not the frame's: the open candle keeps it.
  if (price !== undefined) s.candles.observe(venue, q.marketId, price, mid, 0, ts, bid, ask, 0, book);
}

/**
 * Applies one normalized event to the state. A plain function (not an operator) so the hot path
 * is one call per event inside a single RxJS operator (see src/pipeline/operators.ts).
 */
export function applyEvent(s: EngineState, ev: NormalizedEvent): void {
  s.applied++;
  s.current = ev;
  switch (ev.type) {
    case 'book_snapshot': {
      const b = s.books.applySnapshot(ev);
      if (b) refreshTop(s, ev.venue, ev.marketId, b, ev.localTimestamp);
      else s.quotes.clearBook(ev.venue, ev.marketId, ev.localTimestamp);
      s.health.seen(ev.venue, ev.localTimestamp);
      return;
    }
    case 'book_delta': {
      const b = s.books.applyDelta(ev);
      if (b) refreshTop(s, ev.venue, ev.marketId, b, ev.localTimestamp);
      else if (s.books.instrument(ev.venue, ev.instrument)) s.quotes.clearBook(ev.venue, ev.marketId, ev.localTimestamp);
      s.health.seen(ev.venue, ev.localTimestamp);
      return;
    }
    case 'quote': {
      s.quotes.fromQuote(ev);
      const q = s.quotes.get(ev.venue, ev.marketId)!;
      const mid = q.yesBid !== undefined && q.yesAsk !== undefined ? Math.round((q.yesBid + q.yesAsk) / 2) : undefined;
      const price = ev.lastPrice ?? mid;
      if (price !== undefined) s.candles.observe(ev.venue, q.marketId, price, mid, 0, ev.localTimestamp, q.yesBid, q.yesAsk);
      s.health.seen(ev.venue, ev.localTimestamp);
      return;
    }
    case 'trade': {
      if (!s.trades.add(ev)) return;
      s.quotes.fromTrade(ev.venue, ev.marketId, ev.yesPrice, ev.localTimestamp);
      const q = s.quotes.get(ev.venue, ev.marketId)!;
      const mid = q.yesBid !== undefined && q.yesAsk !== undefined ? Math.round((q.yesBid + q.yesAsk) / 2) : undefined;
      s.candles.observe(ev.venue, q.marketId, ev.yesPrice, mid, ev.size, ev.localTimestamp, q.yesBid, q.yesAsk, ev.price * ev.size);
      s.health.seen(ev.venue, ev.localTimestamp);
      return;
    }
    case 'market': {
      const rec = s.catalog.upsert(ev);
      // The record's copies of the id and instruments (what a restart links too), not the frame's.
      if (rec) s.books.link(rec.venue, rec.marketId, rec.yesInstrument, rec.noInstrument);
      if (ev.settlementValue !== undefined && (ev.status === 'finalized' || ev.status === 'determined'))
        s.quotes.fromTrade(ev.venue, ev.marketId, Math.min(PAYOUT, Math.max(0, ev.settlementValue)), ev.localTimestamp);
      return;
    }
    case 'market_status':
      s.catalog.setStatus(ev);
      return;
    case 'feed':
      s.health.feed(ev);
      if (resetsBooks(ev)) s.books.reset(ev.venue, ev.state === 'gap' ? ev.instrument : undefined, ev.localTimestamp);
      return;
  }
}

/** Whether `applyEvent` resets books on this feed event (a disconnect, a stall, or a gap: the venue's, or one instrument's). */
export function resetsBooks(ev: FeedEvent): boolean {
  return ev.state === 'disconnected' || ev.state === 'stalled' || ev.state === 'gap';
}
