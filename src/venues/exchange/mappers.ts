import type { VenueConfig } from '../../config/schema.js';
import type { Logger } from '../../core/log.js';
import { complement, parseProbabilityDollars, parseSize, PAYOUT } from '../../core/price.js';
import type {
  BookDelta,
  BookSideName,
  BookSnapshot,
  FeedEvent,
  Level,
  MarketStatus,
  MarketStatusChange,
  MarketUpsert,
  NormalizedEvent,
  Trade,
} from '../../core/types.js';
import type { Mapper } from '../common/mapper.js';
import { FeedStats } from '../common/stats.js';
import { apiMarketId } from '../protocol.js';
import {
  bookKey,
  exchangeBookSchema,
  exchangeEventShellSchema,
  exchangeEventsShellSchema,
  exchangeMarketSchema,
  isErrorFrame,
  isRecordFrame,
  isSnapshotFrame,
  isStatusFrame,
  isTradeFrame,
  isUpdateFrame,
  parseBookKey,
  type BookName,
  type EventState,
  type ExchangeEventShell,
  type ExchangeMarket,
  type SnapshotFrame,
  type StatusFrame,
  type TradeFrame,
  type UpdateFrame,
  type WireChange,
  type WireLevel,
} from './raw.js';
import { without, issue, upsertHash } from '../common/util.js';

/**
 * crossbook exchange protocol v1 (see raw.ts) → normalized events.
 *
 * - marketId = apiMarketId(venue, market id): `venue_h_<outcome id>` on venue_h, the bare id
 *   elsewhere. Book events carry `instrument` = the book key: the market id for YES, and on a
 *   two-sided venue `<market id>:no` for NO, with levels in that contract's own prices.
 * - MarketUpsert.extra = { live, league, futures, sport, eventState, marketName, venueMarketId, startTime }, so
 *   fee rules that depend on the game (venue_h: none pre-game, 0.03 live, 0.06 NFL/NCAAF futures)
 *   can be applied; a `status` frame that changes the market's status or its event's state
 *   re-emits the market with the new values.
 * - Status: pending → initialized, open → active, suspended → closed, closed → closed (determined
 *   once a result is known), settled → finalized.
 *
 * Per-connection state (what `reset()` clears): the last seq per market and which books have a
 * snapshot. The catalog (last upsert per market) comes from REST and survives a reset.
 */

/** Our status for a protocol market status. */
function statusOf(status: string, result: 'yes' | 'no' | null | undefined, stats?: FeedStats): MarketStatus {
  switch (status) {
    case 'pending':
      return 'initialized';
    case 'open':
      return 'active';
    case 'suspended':
      return 'closed';
    case 'closed':
      return result ? 'determined' : 'closed';
    case 'settled':
      return 'finalized';
    default:
      stats?.unknownFrame(`status:${status}`);
      return 'closed';
  }
}

function settlement(result: 'yes' | 'no' | null | undefined): { result?: string; settlementValue?: number } {
  if (result === 'yes') return { result: 'yes', settlementValue: PAYOUT };
  if (result === 'no') return { result: 'no', settlementValue: 0 };
  return {};
}

/** The catalog record of one market of one event (pure). */
export function marketUpsert(
  venue: VenueConfig,
  event: ExchangeEventShell,
  m: ExchangeMarket,
  timestamp: number,
  localTimestamp: number,
  stats?: FeedStats,
): MarketUpsert {
  const status = statusOf(m.status, m.result, stats);
  return upsertOf(venue, event, event.state, new Known(venue, m, m.tags, status, event), status, m.result, timestamp, localTimestamp);
}

/** The record of a known market with its event in `state` and the market in `status` with `result`. */
function upsertOf(
  venue: VenueConfig,
  event: ExchangeEventShell,
  state: EventState,
  k: Known,
  status: MarketStatus,
  result: 'yes' | 'no' | null | undefined,
  timestamp: number,
  localTimestamp: number,
): MarketUpsert {
  return without<MarketUpsert>({
    type: 'market',
    venue: venue.label,
    timestamp,
    localTimestamp,
    marketId: k.marketId,
    title: k.title,
    eventTitle: event.name,
    eventId: event.id,
    outcome: k.outcome,
    category: event.category,
    tags: k.tags,
    status,
    openTime: k.openTime,
    closeTime: k.closeTime,
    yesInstrument: k.id,
    noInstrument: k.twoSided ? bookKey(k.id, 'no') : undefined,
    ...settlement(result),
    extra: eventExtra(event, state, k.marketName, k.venueMarketId),
  });
}

function eventExtra(event: ExchangeEventShell, state: EventState, marketName: string, venueMarketId: string | undefined): Record<string, unknown> {
  return without({
    live: state === 'live',
    league: event.league ?? undefined,
    futures: event.futures,
    sport: event.sport ?? undefined,
    eventState: state,
    marketName,
    venueMarketId,
    startTime: Date.parse(event.start_time),
  });
}

/**
 * Parses wire levels into units, best first. Undefined when a price or size is bad (the whole
 * frame is then dropped). Zero sizes are left out; out-of-order levels are sorted, a price listed
 * twice is malformed.
 */
export function parseLevels(levels: readonly WireLevel[], side: BookSideName): Level[] | undefined {
  const out: Level[] = [];
  let sorted = true;
  for (const [p, s] of levels) {
    const price = parseProbabilityDollars(p);
    const size = parseSize(s);
    if (Number.isNaN(price) || !(size >= 0)) return undefined;
    if (size === 0) continue;
    const prev = out[out.length - 1];
    if (prev !== undefined && (side === 'bid' ? prev[0] <= price : prev[0] >= price)) sorted = false;
    out.push([price, size]);
  }
  if (!sorted) {
    out.sort((a, b) => (side === 'bid' ? b[0] - a[0] : a[0] - b[0]));
    for (let i = 1; i < out.length; i++) if (out[i]![0] === out[i - 1]![0]) return undefined;
  }
  return out;
}

/** Parses absolute level changes. Undefined when any is bad. */
export function parseChanges(changes: readonly WireChange[]): [BookSideName, number, number][] | undefined {
  const out: [BookSideName, number, number][] = [];
  for (const [side, p, s] of changes) {
    const price = parseProbabilityDollars(p);
    const size = parseSize(s);
    if (Number.isNaN(price) || !(size >= 0)) return undefined;
    out.push([side, price, size]);
  }
  return out;
}

const time = (s: string | null | undefined): number | undefined => (s ? Date.parse(s) : undefined);

/**
 * What the mapper remembers of a market to rebuild its record on a status frame: one object of fixed
 * fields a market, holding what a record is made of (the times parsed, the books as a flag), the
 * event's shell (shared by its markets, without their raw markets; a status frame carries the
 * event's state, so none is kept), and the last record's status, result and hash. At 108k markets (about 38,000 of them on
 * the exchange venues) the parsed wire market, its books and tags arrays, its time strings and a
 * copy of the event per status frame held about 840 B a market on the main thread and the history
 * thread each (bench/scale/exchange-mapper-heap.mjs).
 */
class Known {
  /** upsertHash of the last record emitted. */
  key = 0;
  result: 'yes' | 'no' | undefined;
  readonly id: string;
  readonly marketId: string;
  readonly title: string;
  readonly outcome: string | undefined;
  readonly marketName: string;
  readonly venueMarketId: string | undefined;
  readonly openTime: number | undefined;
  readonly closeTime: number | undefined;
  readonly twoSided: boolean;

  constructor(
    venue: VenueConfig,
    m: ExchangeMarket,
    readonly tags: readonly string[] | undefined,
    public status: MarketStatus,
    public event: ExchangeEventShell,
  ) {
    this.result = m.result ?? undefined;
    this.id = m.id;
    this.marketId = apiMarketId(venue, m.id);
    this.title = m.name;
    this.outcome = m.outcome ?? undefined;
    this.marketName = m.market_name;
    this.venueMarketId = m.market_id ?? undefined;
    this.openTime = time(m.open_time);
    this.closeTime = time(m.close_time);
    this.twoSided = !venue.capabilities.yesOnlyBook && m.books.includes('no');
  }
}

/** The same strings in the same order. */
function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The exchange-protocol mapper. Input: a `GET /events` document, a `GET /book` document, or one
 * stream frame (parsed JSON). Stream book frames are checked against the market's seq: a gap
 * yields a `feed` `gap` event per book of the market (the feed resubscribes the market) and the
 * market's frames are dropped until its new snapshots, each of which yields `resynced`.
 */
export class ExchangeMapper implements Mapper {
  private readonly seq = new Map<string, number>();
  private readonly ready = new Set<string>();
  /** Markets waiting for snapshots after a gap (to say `resynced` when they come). */
  private readonly resyncing = new Set<string>();
  private readonly catalog = new Map<string, Known>();
  private readonly twoSided: boolean;

  constructor(
    private readonly venueConfig: VenueConfig,
    readonly stats: FeedStats,
  ) {
    this.twoSided = !venueConfig.capabilities.yesOnlyBook;
  }

  get venue(): string {
    return this.venueConfig.label;
  }

  /** The book keys of a market on this venue. */
  booksOf(market: string): string[] {
    return this.twoSided ? [market, bookKey(market, 'no')] : [market];
  }

  /** The market of a book key (what the feed resubscribes after a gap). */
  marketOf(instrument: string): string {
    return parseBookKey(instrument).market;
  }

  /** Market ids of the catalog worth subscribing: everything not finalized. */
  subscribable(): string[] {
    const out: string[] = [];
    for (const [id, k] of this.catalog) if (k.status !== 'finalized') out.push(id);
    return out;
  }

  map(raw: unknown, localTimestamp: number): NormalizedEvent[] {
    this.stats.frames++;
    this.stats.lastFrameAt = localTimestamp;
    const out: NormalizedEvent[] = [];
    this.frame(raw, localTimestamp, out);
    this.stats.events += out.length;
    return out;
  }

  reset(): void {
    this.seq.clear();
    this.ready.clear();
    this.resyncing.clear();
  }

  private frame(raw: unknown, local: number, out: NormalizedEvent[]): void {
    if (!isRecordFrame(raw)) {
      if (typeof raw === 'object' && raw !== null && 'events' in raw) return this.events(raw, local, out);
      this.stats.malformedFrame('frame', 'not an object with a type', raw);
      return;
    }
    const f = raw;
    switch (f.type) {
      case 'snapshot':
        if (!isSnapshotFrame(f)) return this.stats.malformedFrame('snapshot', 'bad snapshot fields', f);
        return this.snapshot(f, local, out);
      case 'update':
        if (!isUpdateFrame(f)) return this.stats.malformedFrame('update', 'bad update fields', f);
        return this.update(f, local, out);
      case 'trade':
        if (!isTradeFrame(f)) return this.stats.malformedFrame('trade', 'bad trade fields', f);
        return this.trade(f, local, out);
      case 'status':
        if (!isStatusFrame(f)) return this.stats.malformedFrame('status', 'bad status fields', f);
        return this.status(f, local, out);
      case 'book':
        return this.restBook(f, local, out);
      case 'heartbeat':
      case 'subscribed':
      case 'unsubscribed':
        this.stats.ignored++;
        return;
      case 'error': {
        if (!isErrorFrame(f)) return this.stats.malformedFrame('error', 'bad error fields', f);
        const e: FeedEvent = { type: 'feed', venue: this.venue, timestamp: local, localTimestamp: local, state: 'error', detail: `${f.code}: ${f.msg}` };
        out.push(f.market === undefined ? e : { ...e, instrument: f.market });
        return;
      }
      default:
        this.stats.unknownFrame(f.type);
    }
  }

  /**
   * Common seq check of stream frames. True when the frame is next in line and may be applied.
   * A gap forgets the market's seq and books until its next snapshot (the feed resubscribes it).
   */
  private inSequence(market: string, seq: number, ts: number, local: number, out: NormalizedEvent[]): boolean {
    const last = this.seq.get(market);
    if (last === undefined || seq <= last) {
      // Not subscribed, waiting for the snapshot after a gap, or a replay.
      this.stats.ignored++;
      return false;
    }
    if (seq !== last + 1) {
      this.stats.gaps++;
      this.seq.delete(market);
      this.resyncing.add(market);
      for (const b of this.booksOf(market)) {
        this.ready.delete(b);
        out.push({ type: 'feed', venue: this.venue, timestamp: ts, localTimestamp: local, state: 'gap', instrument: b, detail: `seq ${seq} after ${last}` });
      }
      return false;
    }
    this.seq.set(market, seq);
    return true;
  }

  private checkBook(book: BookName, f: unknown): boolean {
    if (book === 'no' && !this.twoSided) {
      this.stats.malformedFrame('no_book', 'NO book on a yes-only venue', f);
      return false;
    }
    return true;
  }

  private snapshot(f: SnapshotFrame, local: number, out: NormalizedEvent[]): void {
    if (!this.checkBook(f.book, f)) return;
    const bids = parseLevels(f.bids, 'bid');
    const asks = parseLevels(f.asks, 'ask');
    if (bids === undefined || asks === undefined) return this.stats.malformedFrame('snapshot', 'bad level', f);
    const last = this.seq.get(f.market);
    // A snapshot (re)starts the count; one at or below the last seq is a replay.
    if (last !== undefined && f.seq <= last) {
      this.stats.ignored++;
      return;
    }
    this.seq.set(f.market, f.seq);
    const instrument = bookKey(f.market, f.book);
    this.ready.add(instrument);
    const e: BookSnapshot = {
      type: 'book_snapshot',
      venue: this.venue,
      timestamp: f.ts,
      localTimestamp: local,
      marketId: apiMarketId(this.venueConfig, f.market),
      instrument,
      bids,
      asks,
    };
    out.push(e);
    if (this.resyncing.has(f.market)) {
      out.push({ type: 'feed', venue: this.venue, timestamp: f.ts, localTimestamp: local, state: 'resynced', instrument });
      if (this.booksOf(f.market).every((b) => this.ready.has(b))) this.resyncing.delete(f.market);
    }
  }

  private update(f: UpdateFrame, local: number, out: NormalizedEvent[]): void {
    if (!this.checkBook(f.book, f)) return;
    const changes = parseChanges(f.changes);
    if (changes === undefined) return this.stats.malformedFrame('update', 'bad level', f);
    if (!this.inSequence(f.market, f.seq, f.ts, local, out)) return;
    const instrument = bookKey(f.market, f.book);
    // In sequence but for a book whose snapshot is still to come (the NO book right after a
    // resubscribe): that snapshot will replace it.
    if (!this.ready.has(instrument)) {
      this.stats.ignored++;
      return;
    }
    if (changes.length === 0) return;
    const e: BookDelta = {
      type: 'book_delta',
      venue: this.venue,
      timestamp: f.ts,
      localTimestamp: local,
      marketId: apiMarketId(this.venueConfig, f.market),
      instrument,
      changes,
    };
    out.push(e);
  }

  private trade(f: TradeFrame, local: number, out: NormalizedEvent[]): void {
    const yesPrice = parseProbabilityDollars(f.price);
    const size = parseSize(f.size);
    if (Number.isNaN(yesPrice) || !(size > 0)) return this.stats.malformedFrame('trade', 'bad price or size', f);
    if (!this.inSequence(f.market, f.seq, f.ts, local, out)) return;
    const noSide = f.taker === 'no';
    // Two-sided: the taker bought NO on the NO book. Yes-only: the taker sold YES on the YES book.
    const e: Trade = {
      type: 'trade',
      venue: this.venue,
      timestamp: f.ts,
      localTimestamp: local,
      marketId: apiMarketId(this.venueConfig, f.market),
      instrument: noSide && this.twoSided ? bookKey(f.market, 'no') : f.market,
      tradeId: f.id,
      price: noSide && this.twoSided ? complement(yesPrice) : yesPrice,
      yesPrice,
      size,
      side: noSide && !this.twoSided ? 'sell' : 'buy',
      takerSide: f.taker,
    };
    out.push(e);
  }

  private status(f: StatusFrame, local: number, out: NormalizedEvent[]): void {
    if (!this.inSequence(f.market, f.seq, f.ts, local, out)) return;
    const status = statusOf(f.status, f.result, this.stats);
    const marketId = apiMarketId(this.venueConfig, f.market);
    const known = this.catalog.get(f.market);
    if (known === undefined || known.status !== status || known.result !== (f.result ?? undefined)) {
      const change: MarketStatusChange = without({
        type: 'market_status',
        venue: this.venue,
        timestamp: f.ts,
        localTimestamp: local,
        marketId,
        status,
        ...settlement(f.result),
      });
      out.push(change);
    }
    if (known === undefined) return;
    // The record again with the new state and status (counted again when unknown, as the record's own).
    // The frame's event state goes into this record only: the shell stays shared with the event's other markets.
    const again = statusOf(f.status, f.result, this.stats);
    const upsert = upsertOf(this.venueConfig, known.event, f.event_state, known, again, f.result, f.ts, local);
    const key = upsertHash(upsert);
    if (known.key === key) return;
    known.key = key;
    known.status = again;
    known.result = f.result ?? undefined;
    out.push(upsert);
  }

  private restBook(f: unknown, local: number, out: NormalizedEvent[]): void {
    const b = exchangeBookSchema.safeParse(f);
    if (!b.success) return this.stats.malformedFrame('book', issue(b.error), f);
    if (!this.checkBook(b.data.book, f)) return;
    const bids = parseLevels(b.data.bids, 'bid');
    const asks = parseLevels(b.data.asks, 'ask');
    if (bids === undefined || asks === undefined) return this.stats.malformedFrame('book', 'bad level', f);
    out.push({
      type: 'book_snapshot',
      venue: this.venue,
      timestamp: b.data.ts,
      localTimestamp: local,
      marketId: apiMarketId(this.venueConfig, b.data.market),
      instrument: bookKey(b.data.market, b.data.book),
      bids,
      asks,
    });
  }

  private events(raw: object, local: number, out: NormalizedEvent[]): void {
    const doc = exchangeEventsShellSchema.safeParse(raw);
    if (!doc.success) return this.stats.malformedFrame('events', issue(doc.error), raw);
    const ts = doc.data.ts ?? local;
    for (const rawEvent of doc.data.events) {
      const ev = exchangeEventShellSchema.safeParse(rawEvent);
      if (!ev.success) {
        this.stats.malformedFrame('event', issue(ev.error), rawEvent);
        continue;
      }
      const shell: ExchangeEventShell = { ...ev.data, markets: [] };
      // An event's markets mostly carry the same tags: one frozen list for each distinct one (records share it).
      const lists: (readonly string[])[] = [];
      for (const rawMarket of ev.data.markets) {
        const m = exchangeMarketSchema.safeParse(rawMarket);
        if (!m.success) {
          this.stats.malformedFrame('market', issue(m.error), rawMarket);
          continue;
        }
        const own = m.data.tags;
        let tags = own === undefined ? undefined : lists.find((l) => sameList(l, own));
        if (own !== undefined && tags === undefined) lists.push((tags = Object.freeze(own)));
        this.remember(shell, m.data, tags, ts, local, out);
      }
    }
  }

  /** Stores and emits a market record when it differs from what we last emitted. */
  private remember(
    event: ExchangeEventShell,
    market: ExchangeMarket,
    tags: readonly string[] | undefined,
    ts: number,
    local: number,
    out: NormalizedEvent[],
  ): void {
    const k = new Known(this.venueConfig, market, tags, statusOf(market.status, market.result, this.stats), event);
    const upsert = upsertOf(this.venueConfig, event, event.state, k, k.status, market.result, ts, local);
    const key = upsertHash(upsert);
    if (this.catalog.get(market.id)?.key === key) return;
    k.key = key;
    this.catalog.set(market.id, k);
    out.push(upsert);
  }
}

/** A fresh exchange-protocol mapper for `venue` (also what `crossbook normalize --protocol exchange` uses). */
export function createExchangeMapper(venue: VenueConfig, log?: Logger): ExchangeMapper {
  return new ExchangeMapper(venue, new FeedStats(log?.child({ venue: venue.label })));
}
