import type { VenueConfig } from '../config/schema.js';
import { PAYOUT } from '../core/price.js';
import type { NormalizedEvent, VenueLabel } from '../core/types.js';
import { BookStore } from './books.js';
import { CandleStore } from './candles.js';
import { MarketCatalog } from './catalog.js';
import { HealthStore } from './health.js';
import { QuoteStore } from './quotes.js';
import { TradeStore } from './trades.js';

/** All in-memory state of the engine: what every reader (REST, WebSocket, signals) serves from. */
export class EngineState {
  readonly catalog = new MarketCatalog();
  readonly books = new BookStore();
  readonly quotes = new QuoteStore();
  readonly candles = new CandleStore();
  readonly trades: TradeStore;
  readonly health: HealthStore;
  /** Events applied since start. */
  applied = 0;

  constructor(
    readonly venues: readonly VenueConfig[],
    opts: { tradeCapacity?: number } = {},
  ) {
    this.health = new HealthStore(venues.map((v) => v.label));
    this.trades = new TradeStore(opts.tradeCapacity);
  }
}

/** Book instruments map to their market (venue → instrument → marketId), learned from events. */
function refreshTop(s: EngineState, venue: VenueLabel, marketId: string, ts: number): void {
  const view = s.books.marketBook(venue, marketId, 1);
  if (!view || !view.ready) return;
  const b = view.bids[0];
  const a = view.asks[0];
  s.quotes.fromBook(venue, marketId, b?.[0], b?.[1], a?.[0], a?.[1], ts);
  const q = s.quotes.get(venue, marketId)!;
  const mid = b && a ? Math.round((b[0] + a[0]) / 2) : undefined;
  const price = q.lastPrice ?? mid;
  if (price !== undefined) s.candles.observe(venue, marketId, price, mid, 0, ts);
}

/**
 * Applies one normalized event to the state. A plain function (not an operator) so the hot path
 * is one call per event inside a single RxJS operator (see src/pipeline/operators.ts).
 */
export function applyEvent(s: EngineState, ev: NormalizedEvent): void {
  s.applied++;
  switch (ev.type) {
    case 'book_snapshot':
      if (s.books.applySnapshot(ev)) refreshTop(s, ev.venue, ev.marketId, ev.localTimestamp);
      else s.quotes.clearBook(ev.venue, ev.marketId, ev.localTimestamp);
      s.health.seen(ev.venue, ev.localTimestamp);
      return;
    case 'book_delta':
      if (s.books.applyDelta(ev)) refreshTop(s, ev.venue, ev.marketId, ev.localTimestamp);
      else s.quotes.clearBook(ev.venue, ev.marketId, ev.localTimestamp);
      s.health.seen(ev.venue, ev.localTimestamp);
      return;
    case 'quote': {
      s.quotes.fromQuote(ev);
      const q = s.quotes.get(ev.venue, ev.marketId)!;
      const mid = q.yesBid !== undefined && q.yesAsk !== undefined ? Math.round((q.yesBid + q.yesAsk) / 2) : undefined;
      const price = ev.lastPrice ?? mid;
      if (price !== undefined) s.candles.observe(ev.venue, ev.marketId, price, mid, 0, ev.localTimestamp);
      s.health.seen(ev.venue, ev.localTimestamp);
      return;
    }
    case 'trade': {
      if (!s.trades.add(ev)) return;
      s.quotes.fromTrade(ev.venue, ev.marketId, ev.yesPrice, ev.localTimestamp);
      const q = s.quotes.get(ev.venue, ev.marketId)!;
      const mid = q.yesBid !== undefined && q.yesAsk !== undefined ? Math.round((q.yesBid + q.yesAsk) / 2) : undefined;
      s.candles.observe(ev.venue, ev.marketId, ev.yesPrice, mid, ev.size, ev.localTimestamp);
      s.health.seen(ev.venue, ev.localTimestamp);
      return;
    }
    case 'market': {
      const rec = s.catalog.upsert(ev);
      if (rec) s.books.link(ev.venue, ev.marketId, ev.yesInstrument, ev.noInstrument);
      if (ev.settlementValue !== undefined && (ev.status === 'finalized' || ev.status === 'determined'))
        s.quotes.fromTrade(ev.venue, ev.marketId, Math.min(PAYOUT, Math.max(0, ev.settlementValue)), ev.localTimestamp);
      return;
    }
    case 'market_status':
      s.catalog.setStatus(ev);
      return;
    case 'feed':
      s.health.feed(ev);
      if (ev.state === 'disconnected' || ev.state === 'gap') {
        s.books.reset(ev.venue, ev.state === 'gap' ? ev.instrument : undefined);
      }
      return;
  }
}
