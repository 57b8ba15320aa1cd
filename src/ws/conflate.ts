import type { FrameTimes } from '../core/types.js';
import type { QuoteRecord } from '../state/quotes.js';
import type { WsHub } from './hub.js';

/** A market with a change not yet published, and the times of the latest frame behind it. */
interface Pending {
  readonly venue: string;
  readonly marketId: string;
  q: QuoteRecord | undefined;
  book: boolean;
  /** The latest conflated frame's venue and receive times (copied: a mapper may reuse its event). */
  timestamp: number;
  localTimestamp: number;
  timed: boolean;
}

/**
 * The fan-out's dirty set (conflation): book and quote changes are marked per market as they are
 * applied, and `flush` publishes each dirty market once with its state as it stands: one
 * orderbook_update, and one price_update when the shown fields changed (the hub's `onQuote`
 * decides). Each message carries the times of the latest frame conflated into it, and the next
 * seq of its topic, so seq stays gap-free with fewer messages. Owned by pipelines/fanout.ts,
 * which flushes it once per turn (src/pipeline/turn.ts).
 */
export class HubConflation {
  private readonly dirty = new Map<string, Map<string, Pending>>();
  private size = 0;

  constructor(private readonly hub: Pick<WsHub, 'onBook' | 'onQuote'>) {}

  /** A book of the market changed; `at`: the frame behind the change. */
  markBook(venue: string, marketId: string, at: FrameTimes | undefined): void {
    this.pending(venue, marketId, at).book = true;
  }

  /** The market's quote changed. */
  markQuote(q: QuoteRecord, at: FrameTimes | undefined): void {
    this.pending(q.venue, q.marketId, at).q = q;
  }

  /** Whether anything waits for a flush. */
  get dirtyMarkets(): number {
    return this.size;
  }

  /** Publishes every dirty market once (books, then quotes), and forgets them. */
  flush(): void {
    if (this.size === 0) return;
    const batch = [...this.dirty.values()];
    this.dirty.clear();
    this.size = 0;
    for (const markets of batch)
      for (const p of markets.values()) {
        const at = p.timed ? p : undefined;
        if (p.book) this.hub.onBook(p.venue, p.marketId, at);
        if (p.q) this.hub.onQuote(p.q, at);
      }
  }

  private pending(venue: string, marketId: string, at: FrameTimes | undefined): Pending {
    let markets = this.dirty.get(venue);
    if (markets === undefined) this.dirty.set(venue, (markets = new Map()));
    let p = markets.get(marketId);
    if (p === undefined) {
      markets.set(marketId, (p = { venue, marketId, q: undefined, book: false, timestamp: 0, localTimestamp: 0, timed: false }));
      this.size++;
    }
    if (at !== undefined) {
      p.timestamp = at.timestamp;
      p.localTimestamp = at.localTimestamp;
      p.timed = true;
    }
    return p;
  }
}
