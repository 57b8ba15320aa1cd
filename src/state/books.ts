import { Subject } from 'rxjs';
import { BookIntegrityError, LevelPool, OrderBook, type BookSide } from '../core/book.js';
import type { BookDelta, BookSnapshot, Level, VenueLabel } from '../core/types.js';
import type { HeldCandle } from './candles.js';
import type { HeldQuote, QuoteRecord } from './quotes.js';

/**
 * A book changed. The store hands every subscriber the same object, rewritten for each change: it
 * is valid during the call only, so a subscriber that keeps anything copies the fields it needs.
 */
export interface BookChange {
  readonly venue: VenueLabel;
  readonly marketId: string;
  readonly instrument: string;
  readonly book: StateBook;
}

/**
 * Bounds above and below every price (prices lie in 0..PAYOUT), as small integers: ±Infinity made
 * the two fields that hold them doubles, a 12-byte heap number each in every book (~3.3 MiB at 108k).
 */
export const ABOVE_ANY_PRICE = 0x3fffffff;
export const BELOW_ANY_PRICE = -0x40000000;

/**
 * The numeric slots of a store's books, thirteen a book in one `Int32Array` (a book's row: its
 * `index` × SLOTS), beside the store's levels: as fields of the book they took 8 bytes each, here 4
 * (BENCHMARKS.md issue 34 `side21`). Rows are handed out in the order books are made and never given
 * back (a store never forgets a book). The array grows by a quarter (and 64 rows) when full; a
 * new row starts with every slot's initial value. A slot holds a 32-bit integer: every one is a
 * price bound, a slot number or a count a consumer compares for equality (a count past 2^31 stores
 * as another number, which only costs the consumer a lookup it would have saved).
 */
export class StatePool extends LevelPool {
  /** Slots by row. */
  slots = new Int32Array(0);
  /** Rows handed out. */
  rows = 0;

  /** A new row, its slots at their initial values: the row's first slot. */
  row(): number {
    const at = this.rows++ * SLOTS;
    if (at + SLOTS > this.slots.length) {
      const next = new Int32Array((this.rows + (this.rows >> 2) + 64) * SLOTS);
      next.set(this.slots);
      this.slots = next;
    }
    this.slots.set(INITIAL, at);
    return at;
  }
}

/** A book's slots in its row (StatePool), and their initial values. */
const QUOTE_EPOCH = 0;
const CANDLE_SLOT = 1;
const CANDLE_EPOCH = 2;
const PERSIST_MARK = 3;
const GROUPS_INDEX = 4;
const CHANGED_BID = 5;
const CHANGED_ASK = 6;
const READ_SERIAL = 7;
const READ_BID = 8;
const READ_ASK = 9;
const SUBS_LAYOUT = 10;
const YES_LAYOUT = 11;
const STORE_ID = 12;
const SLOTS = 13;
const INITIAL = Int32Array.of(0, -1, 0, 0, -1, ABOVE_ANY_PRICE, BELOW_ANY_PRICE, 0, 0, 0, 0, -1, 0);

/**
 * A book of the store: an OrderBook with slots the state and its change's consumers keep per book;
 * the object ones as fields, the numeric ones in the store's `StatePool` (accessors: the consumers
 * read and write them as fields).
 */
export class StateBook extends OrderBook implements HeldQuote, HeldCandle {
  /** Its row's first slot in the pool's `slots`. */
  private readonly at: number;
  /** Its market's quote record (EngineState's top of book), held so that a delta does not look it up. */
  quote: QuoteRecord | undefined = undefined;
  /** Its market's open candle's slot as the state last found it (HeldCandle, src/state/candles.ts): `candleOf`, and `candleSlot`, `candleEpoch` in the pool. */
  candleOf: object | undefined = undefined;
  /** Receive time (ms, the event's localTimestamp) of the last event that changed this book: what a read of it says as `as_of`. */
  recvTs = 0;
  /** Its market's arb/EV groups as the signal engine last looked them up (HeldGroups, src/signals/engine.ts), with `groupsIndex` in the pool. */
  groupsMarket: string | undefined = undefined;
  groups: readonly number[] = NO_GROUPS;
  /** What the signal engine's last read of this book covered (HeldRead, src/signals/engine.ts): `readBy`, and `readSerial`, `readBid`, `readAsk` in the pool. */
  readBy: object | undefined = undefined;
  /** Its market's held WebSocket topics as the fan-out last found them (SubsSlot, src/ws/topics.ts), with `subsLayout` in the pool. */
  subsOf: object | undefined = undefined;
  subsId: string | undefined = undefined;
  subsHeld: readonly object[] | undefined = undefined;
  /** The market this book was last found to be the YES book of (`marketSides`), while the store's `layout` is `yesLayout` (in the pool). */
  yesOf: string | undefined = undefined;

  /** `pool`: the store's (its levels and its numeric slots); a book alone gets a pool of its own. */
  constructor(instrument: string, pool: StatePool = new StatePool()) {
    super(instrument, pool);
    this.at = pool.row();
  }

  /** The book's row in its pool's slots: dense, from 0, in the order the store made its books. */
  get index(): number {
    return this.at / SLOTS;
  }

  private get s(): Int32Array {
    return (this.pool as StatePool).slots;
  }

  /** `QuoteStore.replaced` when `quote` was found (HeldQuote, src/state/quotes.ts). */
  get quoteEpoch(): number {
    return this.s[this.at + QUOTE_EPOCH]!;
  }
  set quoteEpoch(v: number) {
    this.s[this.at + QUOTE_EPOCH] = v;
  }

  get candleSlot(): number {
    return this.s[this.at + CANDLE_SLOT]!;
  }
  set candleSlot(v: number) {
    this.s[this.at + CANDLE_SLOT] = v;
  }

  get candleEpoch(): number {
    return this.s[this.at + CANDLE_EPOCH]!;
  }
  set candleEpoch(v: number) {
    this.s[this.at + CANDLE_EPOCH] = v;
  }

  /** Persistence's dirty-mark generation that last took this book (Persistence.markBook): marking it again in that generation is a no-op without a set lookup. */
  get persistMark(): number {
    return this.s[this.at + PERSIST_MARK]!;
  }
  set persistMark(v: number) {
    this.s[this.at + PERSIST_MARK] = v;
  }

  get groupsIndex(): number {
    return this.s[this.at + GROUPS_INDEX]!;
  }
  set groupsIndex(v: number) {
    this.s[this.at + GROUPS_INDEX] = v;
  }

  /**
   * How far into each side the last update of this book reached: the highest bid price and the
   * lowest ask price it changed (a snapshot: ABOVE_ANY_PRICE and BELOW_ANY_PRICE, the whole book; a
   * side it left alone: BELOW_ANY_PRICE for the bids, ABOVE_ANY_PRICE for the asks). What a consumer
   * that read only the top of a side needs to know whether the update could change what it read.
   */
  get changedBid(): number {
    return this.s[this.at + CHANGED_BID]!;
  }
  set changedBid(v: number) {
    this.s[this.at + CHANGED_BID] = v;
  }

  get changedAsk(): number {
    return this.s[this.at + CHANGED_ASK]!;
  }
  set changedAsk(v: number) {
    this.s[this.at + CHANGED_ASK] = v;
  }

  get readSerial(): number {
    return this.s[this.at + READ_SERIAL]!;
  }
  set readSerial(v: number) {
    this.s[this.at + READ_SERIAL] = v;
  }

  get readBid(): number {
    return this.s[this.at + READ_BID]!;
  }
  set readBid(v: number) {
    this.s[this.at + READ_BID] = v;
  }

  get readAsk(): number {
    return this.s[this.at + READ_ASK]!;
  }
  set readAsk(v: number) {
    this.s[this.at + READ_ASK] = v;
  }

  get subsLayout(): number {
    return this.s[this.at + SUBS_LAYOUT]!;
  }
  set subsLayout(v: number) {
    this.s[this.at + SUBS_LAYOUT] = v;
  }

  get yesLayout(): number {
    return this.s[this.at + YES_LAYOUT]!;
  }
  set yesLayout(v: number) {
    this.s[this.at + YES_LAYOUT] = v;
  }

  /** The instrument's id in the store (store format 4, src/persist/keys.ts: its book record's key); 0 until the store gives it one. A u32, kept as its 32 bits. */
  get storeId(): number {
    return this.s[this.at + STORE_ID]! >>> 0;
  }
  set storeId(v: number) {
    this.s[this.at + STORE_ID] = v | 0;
  }
}

const NO_GROUPS: readonly number[] = [];

/** A market's book in YES perspective, built from whichever instrument carries it. */
export interface MarketBookView {
  readonly bids: readonly Level[];
  readonly asks: readonly Level[];
  readonly timestamp: number;
  readonly ready: boolean;
}

/**
 * A market's book sides in place (no copy): its YES book's, or its NO book's with `complement` set,
 * in which case YES bids are `bids` (the NO asks) at 100 − p and YES asks are `asks` (the NO bids).
 * Views made for the reader (`marketSides`); the hot paths read the book itself (`MarketRead`).
 */
export interface MarketSides {
  readonly bids: BookSide;
  readonly asks: BookSide;
  readonly complement: boolean;
  readonly timestamp: number;
}

/**
 * What `BookStore.readMarket` found for a market, in a record the caller owns and reuses (no object
 * per read): the ready book to read, and whether it is the NO book, whose bids are the YES asks at
 * 100 − p and whose asks the YES bids. `book` is undefined when the market has no ready book.
 */
export interface MarketRead {
  book: OrderBook | undefined;
  complement: boolean;
}

/** At most `depth` levels of a side best first, each price complemented (100 − p) when `complement`. */
export function sideLevels(side: BookSide, depth: number, complement: boolean): Level[] {
  return side.of.levelsOf(side.descending, depth, complement);
}

/** Which side of its market an instrument's book is: the YES book, or the NO book (complement). */
export type BookRole = OrderBook['role'];

/**
 * Every instrument's L2 book, by venue then instrument (nested maps: no key strings built on the
 * hot path). Integrity errors leave the book reset (not corrupt) and are counted; the feed resyncs
 * it with the next snapshot. `changes$` is only fed while someone listens.
 */
export class BookStore {
  private readonly books = new Map<VenueLabel, Map<string, StateBook>>();
  /** The levels and numeric slots of every book of the store (it never forgets a book, so none is released). */
  private readonly levels = new StatePool();
  /** venue → instrument → 'no' (absent: 'yes'), and venue → market → [yes instrument, no instrument] (absent: [market id, none]). */
  private readonly roles = new Map<VenueLabel, Map<string, BookRole>>();
  private readonly instrumentsOf = new Map<VenueLabel, Map<string, [string | undefined, string | undefined]>>();
  readonly changes$ = new Subject<BookChange>();
  /** The one change object `changes$` carries (see BookChange): no allocation per delta. */
  private readonly change: { venue: VenueLabel; marketId: string; instrument: string; book: StateBook } = {
    venue: '',
    marketId: '',
    instrument: '',
    book: new StateBook('', this.levels),
  };
  private announcing = false;
  integrityErrors = 0;
  /** Books reset (integrity errors, gaps, disconnects): a reset changes what a reader of the book finds without a change on `changes$`. */
  resets = 0;
  /** Bumped when a book is created or a market's instruments change: books a reader found for a market (`marketBookSource`) stay its books while it stands. */
  layout = 0;

  get size(): number {
    let n = 0;
    for (const m of this.books.values()) n += m.size;
    return n;
  }

  instrument(venue: VenueLabel, instrument: string): StateBook | undefined {
    return this.books.get(venue)?.get(instrument);
  }

  /** Role of an instrument's book for its market (default: the YES book, as for one-book venues). */
  roleOf(venue: VenueLabel, instrument: string): BookRole {
    return this.roles.get(venue)?.get(instrument) ?? 'yes';
  }

  /**
   * Declares which instruments carry a market's YES and NO sides (from its catalog record). What
   * the lookups assume anyway is not stored: a YES role (the default), and a market whose YES
   * book is keyed by its id and that has no NO book.
   */
  link(venue: VenueLabel, marketId: string, yes: string | undefined, no: string | undefined): void {
    let r = this.roles.get(venue);
    if (!r) this.roles.set(venue, (r = new Map()));
    let m = this.instrumentsOf.get(venue);
    if (!m) this.instrumentsOf.set(venue, (m = new Map()));
    let cur = m.get(marketId);
    const books = this.books.get(venue);
    if (yes) {
      r.delete(yes);
      const b = books?.get(yes);
      if (b) b.role = 'yes';
    }
    if (no) {
      r.set(no, 'no');
      const b = books?.get(no);
      if (b) b.role = 'no';
    }
    if (cur === undefined) {
      if (no === undefined && (yes === undefined || yes === marketId)) return;
      m.set(marketId, (cur = [undefined, undefined]));
    }
    if ((yes && cur[0] !== yes) || (no && cur[1] !== no)) this.layout++;
    if (yes) cur[0] = yes;
    if (no) cur[1] = no;
  }

  private getOrCreate(venue: VenueLabel, instrument: string): StateBook {
    let v = this.books.get(venue);
    if (!v) this.books.set(venue, (v = new Map()));
    let b = v.get(instrument);
    if (!b) {
      v.set(instrument, (b = new StateBook(instrument, this.levels)));
      b.role = this.roleOf(venue, instrument);
      this.layout++;
    }
    return b;
  }

  applySnapshot(ev: BookSnapshot): StateBook | undefined {
    const b = this.getOrCreate(ev.venue, ev.instrument);
    b.recvTs = ev.localTimestamp;
    b.changedBid = ABOVE_ANY_PRICE;
    b.changedAsk = BELOW_ANY_PRICE;
    try {
      b.snapshot(ev.bids, ev.asks, ev.timestamp);
    } catch (e) {
      if (!(e instanceof BookIntegrityError)) throw e;
      this.integrityErrors++;
      this.resets++;
      b.reset();
      return undefined;
    }
    if (this.changes$.observed) this.announce(ev, b);
    return b;
  }

  applyDelta(ev: BookDelta): StateBook | undefined {
    const b = this.books.get(ev.venue)?.get(ev.instrument);
    if (!b || !b.ready) return undefined; // deltas before the first snapshot are dropped
    b.recvTs = ev.localTimestamp;
    try {
      b.apply(ev.changes, ev.timestamp);
    } catch (e) {
      if (!(e instanceof BookIntegrityError)) throw e;
      this.integrityErrors++;
      this.resets++;
      b.reset();
      return undefined;
    }
    let bid = BELOW_ANY_PRICE;
    let ask = ABOVE_ANY_PRICE;
    const cs = ev.changes;
    for (let i = 0; i < cs.length; i++) {
      const c = cs[i]!;
      if (c[0] === 'bid') {
        if (c[1] > bid) bid = c[1];
      } else if (c[1] < ask) ask = c[1];
    }
    b.changedBid = bid;
    b.changedAsk = ask;
    if (this.changes$.observed) this.announce(ev, b);
    return b;
  }

  /** Emits a change on `changes$` in the shared object, or a fresh one when a subscriber's own change nests inside another's. */
  private announce(ev: BookSnapshot | BookDelta, b: StateBook): void {
    if (this.announcing) {
      this.changes$.next({ venue: ev.venue, marketId: ev.marketId, instrument: ev.instrument, book: b });
      return;
    }
    const c = this.change;
    c.venue = ev.venue;
    c.marketId = ev.marketId;
    c.instrument = ev.instrument;
    c.book = b;
    this.announcing = true;
    try {
      this.changes$.next(c);
    } finally {
      this.announcing = false;
    }
  }

  /** Resets every book of a venue (disconnect) or one instrument (gap); `at`: the receive time of the event that did. */
  reset(venue: VenueLabel, instrument?: string, at?: number): void {
    const v = this.books.get(venue);
    if (!v) return;
    const one = (b: StateBook | undefined): void => {
      if (!b) return;
      this.resets++;
      b.reset();
      if (at !== undefined) b.recvTs = at;
    };
    if (instrument !== undefined) one(v.get(instrument));
    else for (const b of v.values()) one(b);
  }

  /** The receive time of the last event that changed a market's books (its YES and NO instruments); 0 when it has none. */
  marketRecvTs(venue: VenueLabel, marketId: string): number {
    const ins = this.instrumentsOf.get(venue)?.get(marketId);
    const books = this.books.get(venue);
    const yes = books?.get(ins?.[0] ?? marketId);
    const no = ins?.[1] ? books?.get(ins[1]) : undefined;
    return Math.max(yes?.recvTs ?? 0, no?.recvTs ?? 0);
  }

  /** The ready YES book of a market, if it has one (its YES instrument, or the market id itself). */
  yesBook(venue: VenueLabel, marketId: string): OrderBook | undefined {
    const ins = this.instrumentsOf.get(venue)?.get(marketId);
    const b = this.books.get(venue)?.get(ins?.[0] ?? marketId);
    return b && b.ready ? b : undefined;
  }

  /**
   * The market's YES book: its YES instrument's book, else the complement of its NO instrument's
   * book (a NO bid at p is a YES ask at 100 − p), else the book keyed by the market id.
   */
  marketBook(venue: VenueLabel, marketId: string, depth = Infinity): MarketBookView | undefined {
    const ins = this.instrumentsOf.get(venue)?.get(marketId);
    const books = this.books.get(venue);
    const yes = books?.get(ins?.[0] ?? marketId);
    if (yes && yes.ready) return { bids: yes.levelsOf(true, depth), asks: yes.levelsOf(false, depth), timestamp: yes.timestamp, ready: true };
    const no = ins?.[1] ? books?.get(ins[1]) : undefined;
    if (no && no.ready) return { bids: no.levelsOf(false, depth, true), asks: no.levelsOf(true, depth, true), timestamp: no.timestamp, ready: true };
    return yes ? { bids: [], asks: [], timestamp: yes.timestamp, ready: false } : undefined;
  }

  /**
   * What `marketBook` reads a market from: its YES and NO books (either may be missing) and their
   * versions. A reader that cached a view holds the pair: the same objects at the same versions
   * read the same view.
   */
  marketBookSource(venue: VenueLabel, marketId: string): readonly [StateBook | undefined, number, StateBook | undefined, number] {
    const ins = this.instrumentsOf.get(venue)?.get(marketId);
    const books = this.books.get(venue);
    const yes = books?.get(ins?.[0] ?? marketId);
    const no = ins?.[1] ? books?.get(ins[1]) : undefined;
    return [yes, yes?.version ?? -1, no, no?.version ?? -1];
  }

  /**
   * The sides `marketBook` reads, without copying levels: undefined when the market has no ready
   * book. `held` as for `readMarket`. Views made per call: the hot paths call `readMarket`.
   */
  marketSides(venue: VenueLabel, marketId: string, held?: OrderBook): MarketSides | undefined {
    const b = this.readMarket(this.read, venue, marketId, held);
    if (b === undefined) return undefined;
    const c = this.read.complement;
    return { bids: c ? b.asks : b.bids, asks: c ? b.bids : b.asks, complement: c, timestamp: b.timestamp };
  }

  /** `marketSides`' own record for `readMarket`. */
  private readonly read: MarketRead = { book: undefined, complement: false };

  /**
   * The ready book `marketBook` reads a market from, into the caller's `into` (also returned as
   * `into.book`): its YES book, else its NO book (`into.complement`), else undefined (for the hot
   * paths that serialize or scan a few levels on every change). `held`: a book of this venue the
   * caller has in hand (e.g. from a change); when it is the market's YES book it is used as it is,
   * without looking it up (a book is never replaced in the store).
   */
  readMarket(into: MarketRead, venue: VenueLabel, marketId: string, held?: OrderBook): OrderBook | undefined {
    into.complement = false;
    // A held book found to be the market's YES book under this layout still is: no lookup.
    if (held instanceof StateBook && held.yesOf === marketId && held.yesLayout === this.layout && held.ready) return (into.book = held);
    const ins = this.instrumentsOf.get(venue)?.get(marketId);
    const key = ins?.[0] ?? marketId;
    const isHeld = held !== undefined && held.instrument === key;
    if (isHeld && held instanceof StateBook) {
      held.yesOf = marketId;
      held.yesLayout = this.layout;
    }
    const yes = isHeld ? held : this.books.get(venue)?.get(key);
    if (yes && yes.ready) return (into.book = yes);
    const no = ins?.[1] ? this.books.get(venue)?.get(ins[1]) : undefined;
    into.complement = no !== undefined && no.ready;
    return (into.book = into.complement ? no : undefined);
  }

  /** Every book as [venue, instrument, book]. */
  *entries(): Generator<[VenueLabel, string, OrderBook]> {
    for (const [venue, m] of this.books) for (const [ins, b] of m) yield [venue, ins, b];
  }

  /** Restores a persisted book at start-up (`recvTs`: the receive time it was last changed at, when known). */
  restore(venue: VenueLabel, instrument: string, bids: readonly Level[], asks: readonly Level[], ts: number, recvTs?: number): StateBook {
    const b = this.getOrCreate(venue, instrument);
    b.snapshot(bids, asks, ts);
    if (recvTs !== undefined) b.recvTs = recvTs;
    return b;
  }
}
