import { Subject } from 'rxjs';
import { BookIntegrityError, OrderBook } from '../core/book.js';
import type { BookDelta, BookSnapshot, Level, VenueLabel } from '../core/types.js';
import { PAYOUT } from '../core/price.js';
import { marketKey } from './catalog.js';

export interface BookChange {
  readonly venue: VenueLabel;
  readonly marketId: string;
  readonly instrument: string;
  readonly book: OrderBook;
}

/** A market's book in YES perspective, built from whichever instrument carries it. */
export interface MarketBookView {
  readonly bids: readonly Level[];
  readonly asks: readonly Level[];
  readonly timestamp: number;
  readonly ready: boolean;
}

/**
 * Every instrument's L2 book, keyed `<venue>:<instrument>`. Integrity errors leave the book reset
 * (not corrupt) and are counted; the feed resyncs it with the next snapshot.
 */
export class BookStore {
  private readonly books = new Map<string, OrderBook>();
  /** market key → instrument of its YES side / NO side. */
  private readonly yesOf = new Map<string, string>();
  private readonly noOf = new Map<string, string>();
  readonly changes$ = new Subject<BookChange>();
  integrityErrors = 0;

  get size(): number {
    return this.books.size;
  }

  instrument(venue: VenueLabel, instrument: string): OrderBook | undefined {
    return this.books.get(marketKey(venue, instrument));
  }

  /** Declares which instruments carry a market's YES and NO sides (from its catalog record). */
  link(venue: VenueLabel, marketId: string, yes: string | undefined, no: string | undefined): void {
    const k = marketKey(venue, marketId);
    if (yes) this.yesOf.set(k, yes);
    if (no) this.noOf.set(k, no);
  }

  private getOrCreate(venue: VenueLabel, instrument: string): OrderBook {
    const k = marketKey(venue, instrument);
    let b = this.books.get(k);
    if (!b) this.books.set(k, (b = new OrderBook(instrument)));
    return b;
  }

  applySnapshot(ev: BookSnapshot): OrderBook | undefined {
    const b = this.getOrCreate(ev.venue, ev.instrument);
    try {
      b.snapshot(ev.bids, ev.asks, ev.timestamp);
    } catch (e) {
      if (!(e instanceof BookIntegrityError)) throw e;
      this.integrityErrors++;
      b.reset();
      return undefined;
    }
    this.changes$.next({ venue: ev.venue, marketId: ev.marketId, instrument: ev.instrument, book: b });
    return b;
  }

  applyDelta(ev: BookDelta): OrderBook | undefined {
    const b = this.books.get(marketKey(ev.venue, ev.instrument));
    if (!b || !b.ready) return undefined; // deltas before the first snapshot are dropped
    try {
      b.apply(ev.changes, ev.timestamp);
    } catch (e) {
      if (!(e instanceof BookIntegrityError)) throw e;
      this.integrityErrors++;
      b.reset();
      return undefined;
    }
    this.changes$.next({ venue: ev.venue, marketId: ev.marketId, instrument: ev.instrument, book: b });
    return b;
  }

  /** Resets every book of a venue (disconnect) or one instrument (gap). */
  reset(venue: VenueLabel, instrument?: string): void {
    if (instrument !== undefined) {
      this.books.get(marketKey(venue, instrument))?.reset();
      return;
    }
    const prefix = `${venue}:`;
    for (const [k, b] of this.books) if (k.startsWith(prefix)) b.reset();
  }

  /**
   * The market's YES book: its YES instrument's book, else the complement of its NO instrument's
   * book (a NO bid at p is a YES ask at 100 − p), else the book keyed by the market id.
   */
  marketBook(venue: VenueLabel, marketId: string, depth = Infinity): MarketBookView | undefined {
    const k = marketKey(venue, marketId);
    const yes = this.books.get(marketKey(venue, this.yesOf.get(k) ?? marketId));
    if (yes && yes.ready) return { bids: yes.bids.levels(depth), asks: yes.asks.levels(depth), timestamp: yes.timestamp, ready: true };
    const noId = this.noOf.get(k);
    const no = noId ? this.books.get(marketKey(venue, noId)) : undefined;
    if (no && no.ready) {
      return {
        bids: no.asks.levels(depth).map(([p, s]) => [PAYOUT - p, s] as const),
        asks: no.bids.levels(depth).map(([p, s]) => [PAYOUT - p, s] as const),
        timestamp: no.timestamp,
        ready: true,
      };
    }
    return yes ? { bids: [], asks: [], timestamp: yes.timestamp, ready: false } : undefined;
  }

  /** The market a book instrument belongs to, and whether it is the NO side. */
  entries(): IterableIterator<[string, OrderBook]> {
    return this.books.entries();
  }

  /** Restores a persisted book at start-up. */
  restore(venue: VenueLabel, instrument: string, bids: readonly Level[], asks: readonly Level[], ts: number): void {
    this.getOrCreate(venue, instrument).snapshot(bids, asks, ts);
  }
}
