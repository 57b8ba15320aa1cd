import type { OrderBook } from '../core/book.js';
import type { FrameTimes } from '../core/types.js';
import type { QuoteRecord } from '../state/quotes.js';
import type { WsHub } from './hub.js';

/** A market with a change not yet published, and the times of the latest frame behind it. */
interface Pending {
  venue: string;
  marketId: string;
  q: QuoteRecord | undefined;
  book: boolean;
  /** The book of the latest book change (the hub reads the market's sides without a lookup when it is the YES book). */
  held: OrderBook | undefined;
  /** The latest conflated frame's venue and receive times (copied: a mapper may reuse its event). */
  timestamp: number;
  localTimestamp: number;
  timed: boolean;
}

/**
 * One venue's dirty markets: by id, and in the order they were first marked this turn (the first
 * `n` of `list`). The lists are kept at their size and overwritten by position: emptying an array
 * (`length = 0`) drops its storage, so every turn grew it again (the flush's largest cost in a
 * profile of the fan-out under 1,000 clients, BENCHMARKS.md issue 34 `live15`).
 */
interface VenueDirty {
  readonly byId: Map<string, Pending>;
  list: Pending[];
  n: number;
  /** The list of the turn being flushed (its first `spareN`), then reused. */
  spare: Pending[];
  spareN: number;
}

/**
 * The fan-out's dirty set (conflation): book and quote changes are marked per market as they are
 * applied, and `flush` publishes each dirty market once with its state as it stands: one
 * orderbook_update, and one price_update when the shown fields changed (the hub's `onQuote`
 * decides). Each message carries the times of the latest frame conflated into it, and the next
 * seq of its topic, so seq stays gap-free with fewer messages. Owned by pipelines/fanout.ts,
 * which flushes it once per turn (src/pipeline/turn.ts). Markets go out venue by venue, venues in
 * the order the turn first marked them, markets in the order they were first marked. The records
 * of a flushed turn are reused by the next ones, so a turn allocates nothing per market.
 */
export class HubConflation {
  private readonly venues = new Map<string, VenueDirty>();
  /** The venues marked this turn, in order (the first `orderN`). */
  private order: VenueDirty[] = [];
  private orderN = 0;
  private spareOrder: VenueDirty[] = [];
  /** Records not in use: the first `freeN` of `free`. */
  private readonly free: Pending[] = [];
  private freeN = 0;
  private size = 0;
  /** The record marked last this turn: a quote change follows its book's change, so its market is usually this one. */
  private last: Pending | undefined = undefined;

  constructor(private readonly hub: Pick<WsHub, 'onBook' | 'onQuote'>) {}

  /** A book of the market changed (`book`, when the caller has it); `at`: the frame behind the change. */
  markBook(venue: string, marketId: string, at: FrameTimes | undefined, book?: OrderBook): void {
    const p = this.pending(venue, marketId, at);
    p.book = true;
    p.held = book;
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
    // What is marked while this runs goes into the next turn's lists.
    const order = this.order;
    const venues = this.orderN;
    this.order = this.spareOrder;
    this.orderN = 0;
    this.size = 0;
    this.last = undefined;
    for (let v = 0; v < venues; v++) {
      const d = order[v]!;
      const batch = d.list;
      d.list = d.spare;
      d.spare = batch;
      d.spareN = d.n;
      d.n = 0;
      d.byId.clear();
    }
    for (let v = 0; v < venues; v++) {
      const d = order[v]!;
      const batch = d.spare;
      const n = d.spareN;
      for (let i = 0; i < n; i++) {
        const p = batch[i]!;
        const at = p.timed ? p : undefined;
        if (p.book) this.hub.onBook(p.venue, p.marketId, at, p.held);
        if (p.q) this.hub.onQuote(p.q, at, p.held);
      }
      for (let i = 0; i < n; i++) {
        const p = batch[i]!;
        p.q = undefined;
        p.held = undefined;
        this.free[this.freeN++] = p;
      }
      d.spareN = 0;
    }
    this.spareOrder = order;
  }

  private pending(venue: string, marketId: string, at: FrameTimes | undefined): Pending {
    const last = this.last;
    if (last !== undefined && last.marketId === marketId && last.venue === venue) return this.stamp(last, at);
    let d = this.venues.get(venue);
    if (d === undefined) this.venues.set(venue, (d = { byId: new Map(), list: [], n: 0, spare: [], spareN: 0 }));
    let p = d.byId.get(marketId);
    if (p === undefined) {
      if (this.freeN === 0) p = { venue, marketId, q: undefined, book: false, held: undefined, timestamp: 0, localTimestamp: 0, timed: false };
      else {
        p = this.free[--this.freeN]!;
        p.venue = venue;
        p.marketId = marketId;
        p.book = false;
        p.timed = false;
      }
      d.byId.set(marketId, p);
      if (d.n === 0) this.order[this.orderN++] = d;
      d.list[d.n++] = p;
      this.size++;
    }
    this.last = p;
    return this.stamp(p, at);
  }

  /** Takes the times of the frame behind a change, when there is one. */
  private stamp(p: Pending, at: FrameTimes | undefined): Pending {
    if (at !== undefined) {
      p.timestamp = at.timestamp;
      p.localTimestamp = at.localTimestamp;
      p.timed = true;
    }
    return p;
  }
}
