import type { VenueConfig } from '../../config/schema.js';
import type { Logger } from '../../core/log.js';
import { BookLevels, LevelPool } from '../../core/book.js';
import { PAYOUT, parseDollarsAt, parseProbabilityDollars, parseSize, parseSizeAt, roundSize, unitsFromIntCents } from '../../core/price.js';
import type {
  BookSnapshot,
  FeedEvent,
  Level,
  MarketStatus,
  MarketStatusChange,
  MarketUpsert,
  NormalizedEvent,
  Quote,
  Trade,
  VenueLabel,
} from '../../core/types.js';
import type { Mapper } from '../common/mapper.js';
import { FeedStats } from '../common/stats.js';
import { apiMarketId } from '../protocol.js';
import {
  isObject,
  isWsError,
  isWsEventFeeUpdate,
  isWsEventLifecycle,
  isWsFrame,
  isWsMarketLifecycle,
  isWsOk,
  isWsOrderbookDelta,
  isWsOrderbookSnapshot,
  isWsSubscribed,
  isWsTicker,
  isWsTickerV2,
  isWsTrade,
  isWsUnsubscribed,
  kalshiEventSchema,
  kalshiMarketSchema,
  kalshiMarketsPageShellSchema,
  kalshiOrderbooksSchema,
  kalshiSeriesListSchema,
  sequenced,
  type KalshiEvent,
  type KalshiMarket,
  type KalshiOrderbooks,
  type KalshiSeries,
  type WsFrame,
  type WsLevel,
  type WsMarketLifecycle,
  type WsOrderbookDelta,
  type WsOrderbookSnapshot,
  type WsTicker,
  type WsTickerV2,
  type WsTrade,
} from './raw.js';
import { without, issue } from '../common/util.js';
import { deltaText, scanDelta } from './scan.js';

/**
 * Kalshi → normalized events.
 *
 * Books: the instrument is the market ticker. Kalshi books hold YES bids (`yes`) and NO bids
 * (`no`); we publish them in YES perspective: bids = YES bids, asks = 10_000 − NO bid price (a NO
 * bid at q is an offer to sell YES at 1 − q), best first. `orderbook_delta` is RELATIVE (`delta_fp`
 * is the change of the resting count), so the mapper keeps each market's current sizes and emits
 * ABSOLUTE `book_delta` changes (size 0 deletes).
 *
 * Integrity, in the order checked:
 * - Sequence: per `sid`, every frame carrying a `seq` (acks included) must be the previous + 1. A
 *   gap (or a step back) emits a `feed` 'gap' per market of that sid, whose books then wait for a
 *   fresh snapshot (the feed asks for one, see `takeResync`).
 * - A delta for a market without a snapshot, a delta that would leave a negative size, and a
 *   malformed orderbook frame that still used up a seq each reset that market the same way. A
 *   corrupt book is never published.
 * - While a market waits for its snapshot its deltas are dropped (counted as ignored); the snapshot
 *   that ends the wait is followed by a `feed` 'resynced'.
 *
 * Quotes (`ticker`): Kalshi fills absent prices with placeholders, seen in the 2026-02-12 capture:
 * `yes_ask` 100 / "1.0000" with `yes_ask_size_fp` "0.00" when no YES offer rests. We read the same
 * convention on the bid (a YES bid at 0 cannot rest) and for the last price (a trade at 0 cannot
 * happen: `price` 0 comes with volume 0 before the first trade). So yesBid 0, yesAsk 10_000 and
 * lastPrice 0 are reported as undefined, while volume / open interest 0 are real zeros.
 *
 * Lifecycle (`market_lifecycle_v2`): created → `market` upsert; activated → active; deactivated →
 * closed (trading paused; our vocabulary has no "paused", and a paused market must not look
 * tradable); close_date_updated → closed when the new close time has passed (otherwise the status
 * last seen, when known); determined → determined with result and settlement value; settled →
 * finalized. metadata/price-structure updates, `event_lifecycle` and `event_fee_update` are counted
 * and left to the periodic REST catalog refresh.
 */

/** Our status for a Kalshi REST market status (current and legacy vocabularies). */
export function kalshiStatus(s: string): MarketStatus | undefined {
  switch (s) {
    case 'initialized':
    case 'unopened':
      return 'initialized';
    case 'active':
    case 'open':
      return 'active';
    // Paused by the exchange: not tradable until activated again (see the module comment).
    case 'inactive':
    case 'paused':
    case 'closed':
      return 'closed';
    case 'determined':
    case 'disputed':
    case 'amended':
      return 'determined';
    case 'finalized':
    case 'settled':
      return 'finalized';
    default:
      return undefined;
  }
}

/** The series ticker of an event ticker ("KXELONMARS-99" → "KXELONMARS"), by Kalshi's naming. */
export function seriesOfEvent(eventTicker: string): string {
  const i = eventTicker.indexOf('-');
  return i > 0 ? eventTicker.slice(0, i) : eventTicker;
}

/** RFC 3339 → ms; undefined for null, "", Go's zero time or anything unparseable. */
export function isoMs(s: string | null | undefined): number | undefined {
  if (!s || s.startsWith('0001-01-01')) return undefined;
  const t = Date.parse(s);
  return Number.isFinite(t) && t >= 0 ? t : undefined;
}

const isoOf = (secs: number | undefined): string | undefined => (secs === undefined ? undefined : new Date(secs * 1000).toISOString());

/**
 * A price given as a dollar string and/or legacy integer cents. undefined when neither is there
 * (or the string is empty), null when present but invalid.
 */
export function priceOf(dollars: unknown, cents: unknown): number | undefined | null {
  if (typeof dollars === 'string' && dollars !== '') {
    const u = parseProbabilityDollars(dollars);
    return Number.isNaN(u) ? null : u;
  }
  if (cents === undefined || cents === null) return undefined;
  const u = unitsFromIntCents(cents);
  return Number.isNaN(u) ? null : u;
}

/** A count given as a fixed-point string and/or a legacy number. undefined when absent, null when invalid. */
export function sizeOf(fp: unknown, legacy: unknown): number | undefined | null {
  if (typeof fp === 'string' && fp !== '') {
    const n = parseSize(fp);
    return Number.isNaN(n) ? null : n;
  }
  if (legacy === undefined || legacy === null) return undefined;
  return typeof legacy === 'number' && Number.isFinite(legacy) ? roundSize(legacy) : null;
}

/** Venue time of a frame: ts_ms, else ts (seconds), else an RFC 3339 `time`/`ts`, else local. */
function frameTime(m: { ts_ms?: unknown; ts?: unknown; time?: unknown }, local: number): number {
  if (typeof m.ts_ms === 'number' && Number.isFinite(m.ts_ms)) return m.ts_ms;
  if (typeof m.ts === 'number' && Number.isFinite(m.ts)) return m.ts * 1000;
  if (typeof m.ts === 'string') return isoMs(m.ts) ?? local;
  if (typeof m.time === 'string') return isoMs(m.time) ?? local;
  return local;
}

/** The market's web page from the venue's URL template ({series}, {event}, {marketId}; Kalshi URLs are lowercase). */
function marketUrl(venue: VenueConfig, series: string | undefined, event: string, ticker: string): string | undefined {
  let missing = false;
  const u = venue.web.marketUrl.replace(/\{(\w+)\}/g, (_, k: string) => {
    const v = k === 'series' ? series : k === 'event' ? event : k === 'marketId' || k === 'ticker' ? ticker : undefined;
    if (v === undefined) missing = true;
    return (v ?? '').toLowerCase();
  });
  return missing ? undefined : u;
}

/** What we know of a market's event and series when mapping it (either may be unknown). */
export interface KalshiMarketContext {
  readonly series?: KalshiSeries | undefined;
  readonly event?: Pick<KalshiEvent, 'title' | 'series_ticker' | 'category' | 'sub_title'> | undefined;
}

/**
 * The catalog record of a REST market object (pure). seriesId is the market's `series_ticker`,
 * else its event's, else derived from the event ticker; category and tags come from the series
 * when it is known (spec 2.11: absent otherwise), the event's category as a fallback for category.
 * `extra` keeps what the venue_a catalog endpoint serves (rules, times, fixed-point volume, combo
 * flag, fees) under the venue's own field names.
 */
export function mapRestMarket(
  venue: VenueConfig,
  m: KalshiMarket,
  ctx: KalshiMarketContext,
  timestamp: number,
  localTimestamp: number,
  stats?: FeedStats,
): MarketUpsert {
  let status = kalshiStatus(m.status);
  if (status === undefined) {
    stats?.unknownFrame(`status:${m.status}`);
    status = 'closed';
  }
  const seriesId = m.series_ticker || ctx.event?.series_ticker || seriesOfEvent(m.event_ticker);
  const series = ctx.series && ctx.series.ticker === seriesId ? ctx.series : undefined;
  const result = m.result ? m.result : undefined;
  let settlementValue = priceOf(m.settlement_value_dollars, m.settlement_value) ?? undefined;
  if (settlementValue === undefined && (status === 'determined' || status === 'finalized')) {
    if (result === 'yes') settlementValue = PAYOUT;
    else if (result === 'no') settlementValue = 0;
  }
  const volume = sizeOf(m.volume_fp, m.volume) ?? undefined;
  const openInterest = sizeOf(m.open_interest_fp, m.open_interest) ?? undefined;
  const liquidity = sizeOf(m.liquidity_dollars, undefined) ?? undefined;
  const combo = Boolean(m.mve_collection_ticker) || (m.mve_selected_legs?.length ?? 0) > 0;
  return without<MarketUpsert>({
    type: 'market',
    venue: venue.label,
    timestamp,
    localTimestamp,
    marketId: apiMarketId(venue, m.ticker),
    title: m.title || m.yes_sub_title || m.ticker,
    eventTitle: ctx.event?.title || undefined,
    seriesTitle: series?.title || undefined,
    eventId: m.event_ticker,
    seriesId,
    outcome: m.yes_sub_title || undefined,
    category: series?.category || ctx.event?.category || undefined,
    tags: series?.tags ?? undefined,
    status,
    openTime: isoMs(m.open_time),
    closeTime: isoMs(m.close_time),
    url: marketUrl(venue, seriesId, m.event_ticker, m.ticker),
    yesInstrument: m.ticker,
    result,
    settlementValue,
    volume,
    openInterest,
    liquidity,
    extra: without({
      venue_status: m.status,
      market_type: m.market_type ?? undefined,
      rules_primary: m.rules_primary ?? undefined,
      rules_secondary: m.rules_secondary ?? undefined,
      created_time: m.created_time ?? undefined,
      open_time: m.open_time ?? undefined,
      close_time: m.close_time ?? undefined,
      updated_time: m.updated_time ?? undefined,
      expiration_time: m.expiration_time ?? undefined,
      expected_expiration_time: m.expected_expiration_time ?? undefined,
      latest_expiration_time: m.latest_expiration_time ?? undefined,
      settlement_ts: m.settlement_ts ?? undefined,
      settlement_value_dollars: m.settlement_value_dollars ?? undefined,
      volume_fp: m.volume_fp ?? undefined,
      open_interest_fp: m.open_interest_fp ?? undefined,
      volume: m.volume ?? undefined,
      open_interest: m.open_interest ?? undefined,
      combo,
      mve_collection_ticker: m.mve_collection_ticker ?? undefined,
      can_close_early: m.can_close_early ?? undefined,
      price_level_structure: m.price_level_structure ?? undefined,
      fee_type: series?.fee_type ?? undefined,
      fee_multiplier: series?.fee_multiplier ?? undefined,
      frequency: series?.frequency ?? undefined,
    }),
  });
}

/** Parses REST `[price_dollars, count_fp]` bids; undefined when any level is invalid. */
function restBids(levels: readonly (readonly [string, string])[] | null | undefined): Map<number, number> | undefined {
  const out = new Map<number, number>();
  for (const [p, q] of levels ?? []) {
    const price = parseProbabilityDollars(p);
    const size = parseSize(q);
    if (!(price > 0 && price < PAYOUT) || !(size >= 0)) return undefined;
    if (size > 0) out.set(price, size);
  }
  return out;
}

/** YES-perspective levels of a Kalshi book (YES bids, NO bids), best first. */
export function yesPerspective(yes: ReadonlyMap<number, number>, no: ReadonlyMap<number, number>): { bids: Level[]; asks: Level[] } {
  const bids: Level[] = [...yes].map(([p, s]): Level => [p, s]).sort((a, b) => b[0] - a[0]);
  const asks: Level[] = [...no].map(([p, s]): Level => [PAYOUT - p, s]).sort((a, b) => a[0] - b[0]);
  return { bids, asks };
}

/**
 * `GET /markets/orderbooks` → one book_snapshot per market (pure). REST books list bids ASCENDING
 * (best bid last); we sort explicitly rather than trust the order. A book with an invalid level is
 * skipped (counted when `stats` is given).
 */
export function mapRestOrderbooks(venue: VenueConfig, doc: KalshiOrderbooks, timestamp: number, localTimestamp: number, stats?: FeedStats): BookSnapshot[] {
  const out: BookSnapshot[] = [];
  for (const ob of doc.orderbooks ?? []) {
    const yes = restBids(ob.orderbook_fp.yes_dollars);
    const no = restBids(ob.orderbook_fp.no_dollars);
    if (!yes || !no) {
      stats?.malformedFrame('rest_orderbook', `invalid level in ${ob.ticker}`, ob);
      continue;
    }
    const { bids, asks } = yesPerspective(yes, no);
    out.push({
      type: 'book_snapshot',
      venue: venue.label,
      timestamp,
      localTimestamp,
      marketId: apiMarketId(venue, ob.ticker),
      instrument: ob.ticker,
      bids,
      asks,
    });
  }
  return out;
}

/**
 * One market's book as the mapper keeps it: the current sizes of its YES bids (the bids) and NO
 * bids (the asks, at 100 − p), what a relative delta adds to. One BookLevels array per market, the
 * book fields on the same object: the mapper holds one per subscribed market (100,000 and more).
 */
class MarketBook extends BookLevels {
  constructor(
    /** The subscription whose frames maintain this book. */
    public sid: number,
    /** false while waiting for a snapshot (after a gap or integrity failure). */
    public live: boolean,
    /**
     * The ticker and market id every event of this book carries: one string each per market, so
     * the consumers' maps compare keys by identity and nothing is concatenated per delta.
     */
    readonly ticker: string,
    readonly marketId: string,
    /** The mapper's level storage (see KalshiMapper `levels`). */
    pool: LevelPool,
  ) {
    super(pool);
  }
}

interface SidState {
  channel?: string | undefined;
  lastSeq?: number | undefined;
  /** Markets whose books this sid maintains. */
  readonly tickers: Set<string>;
}

/** Markets to re-snapshot, by the sid that maintains them. */
export interface ResyncRequest {
  readonly sid: number;
  readonly tickers: readonly string[];
}

const NO_RESYNC: readonly ResyncRequest[] = Object.freeze([]);

export interface KalshiMapperOptions {
  /** Counters to share with the feed; a fresh FeedStats when omitted. */
  readonly stats?: FeedStats;
}

/**
 * The Kalshi mapper. `map()` takes one parsed WebSocket frame, or (for `crossbook normalize` and
 * for the feed's catalog walk) a REST document: a `/markets` page, `{market}`, an event response,
 * an `/events` page, `/series`, `/markets/orderbooks`, `/exchange/status`; or an array of any of
 * these (a recording, mapped in order).
 *
 * State, and why:
 * - `books` and `sids`: connection state forced by relative deltas and per-sid seq; `reset()`
 *   clears it (call it on every disconnect).
 * - `series`, `events`, `statuses`: catalog knowledge learned from REST documents and lifecycle
 *   frames (categories for upserts, status for close_date_updated); kept across `reset()`.
 */
export class KalshiMapper implements Mapper {
  readonly venue: VenueLabel;
  readonly stats: FeedStats;
  private readonly books = new Map<string, MarketBook>();
  /** The levels of `books`: a book forgotten alone is released into it; `reset`, which forgets them all, starts a new one. */
  private levels = new LevelPool();
  private readonly sids = new Map<number, SidState>();
  private readonly resync = new Map<number, Set<string>>();
  private readonly series = new Map<string, KalshiSeries>();
  private readonly events = new Map<string, Pick<KalshiEvent, 'title' | 'series_ticker' | 'category' | 'sub_title'>>();
  private readonly statuses = new Map<string, MarketStatus>();
  private readonly scanned = deltaText();
  /** Markets whose books wait for a snapshot: what the feed's retry timer asks about, without a walk over every book. */
  private readonly waiting = new Set<string>();

  constructor(
    readonly config: VenueConfig,
    log?: Logger,
    opts: KalshiMapperOptions = {},
  ) {
    this.venue = config.label;
    this.stats = opts.stats ?? new FeedStats(log?.child({ venue: config.label }));
  }

  reset(): void {
    this.books.clear();
    this.levels = new LevelPool();
    this.sids.clear();
    this.resync.clear();
    this.waiting.clear();
  }

  /** Markets that need a fresh snapshot since the last call, by sid (the feed sends get_snapshot). */
  takeResync(): readonly ResyncRequest[] {
    if (this.resync.size === 0) return NO_RESYNC; // the feed asks after every frame
    const out: ResyncRequest[] = [];
    for (const [sid, set] of this.resync) if (set.size > 0) out.push({ sid, tickers: [...set] });
    this.resync.clear();
    return out;
  }

  /** Markets still waiting for a snapshot, by sid (for the feed's retry timer). */
  awaiting(): ResyncRequest[] {
    const by = new Map<number, string[]>();
    for (const t of this.waiting) {
      const b = this.books.get(t);
      if (b === undefined || b.live) continue;
      const l = by.get(b.sid);
      if (l) l.push(t);
      else by.set(b.sid, [t]);
    }
    return [...by].map(([sid, tickers]) => ({ sid, tickers }));
  }

  /** Whether the mapper holds a live book of `ticker`. */
  hasBook(ticker: string): boolean {
    return this.books.get(ticker)?.live === true;
  }

  /** The series catalog entry learned for `ticker`, if any. */
  seriesInfo(ticker: string): KalshiSeries | undefined {
    return this.series.get(ticker);
  }

  /** Learns series (categories, tags, fees) for the upserts that follow. */
  learnSeries(list: readonly KalshiSeries[]): void {
    for (const s of list) this.series.set(s.ticker, s);
  }

  /** Learns an event's title and series for the upserts that follow. */
  learnEvent(e: KalshiEvent): void {
    this.events.set(e.event_ticker, { title: e.title, series_ticker: e.series_ticker, category: e.category, sub_title: e.sub_title });
  }

  /** Eager (an array, not a generator): state such as seq and books advances even if nobody iterates. */
  map(raw: unknown, localTimestamp: number): NormalizedEvent[] {
    this.stats.frames++;
    this.stats.lastFrameAt = localTimestamp;
    const out: NormalizedEvent[] = [];
    if (Array.isArray(raw)) {
      if (raw.length === 0) this.stats.ignored++;
      for (const item of raw) this.one(item, localTimestamp, out);
    } else this.one(raw, localTimestamp, out);
    this.stats.events += out.length;
    return out;
  }

  private one(raw: unknown, local: number, out: NormalizedEvent[]): void {
    if (!isObject(raw)) {
      this.stats.malformedFrame('frame', 'not a JSON object', raw);
      return;
    }
    if (isWsFrame(raw)) this.frame(raw, local, out);
    else this.rest(raw, local, out);
  }

  // ---- WebSocket ----------------------------------------------------------------------------

  private frame(f: WsFrame, local: number, out: NormalizedEvent[]): void {
    // Every frame with a sid and a seq takes part in the sequence, whatever its type or content:
    // a frame we cannot use still used up its number.
    this.sequence(f, local, out);
    switch (f.type) {
      case 'orderbook_snapshot':
        if (isWsOrderbookSnapshot(f)) this.snapshot(f, local, out);
        else this.badBookFrame(f, 'orderbook_snapshot', local, out);
        return;
      case 'orderbook_delta':
        if (isWsOrderbookDelta(f)) this.delta(f, local, out);
        else this.badBookFrame(f, 'orderbook_delta', local, out);
        return;
      case 'ticker':
        if (isWsTicker(f)) this.ticker(f, local, out);
        else this.stats.malformedFrame('ticker', 'ticker frame with missing or mistyped fields', f);
        return;
      case 'ticker_v2':
        if (isWsTickerV2(f)) this.tickerV2(f, local, out);
        else this.stats.malformedFrame('ticker_v2', 'ticker_v2 frame with missing or mistyped fields', f);
        return;
      case 'trade':
        if (isWsTrade(f)) this.trade(f, local, out);
        else this.stats.malformedFrame('trade', 'trade frame with missing or mistyped fields', f);
        return;
      case 'market_lifecycle_v2':
      case 'multivariate_market_lifecycle':
        if (isWsMarketLifecycle(f)) this.lifecycle(f, local, out);
        else this.stats.malformedFrame('market_lifecycle_v2', 'lifecycle frame with missing or mistyped fields', f);
        return;
      case 'event_lifecycle':
        if (isWsEventLifecycle(f)) this.stats.ignored++;
        else this.stats.malformedFrame('event_lifecycle', 'event_lifecycle frame with missing or mistyped fields', f);
        return;
      case 'event_fee_update':
        if (isWsEventFeeUpdate(f)) this.stats.ignored++;
        else this.stats.malformedFrame('event_fee_update', 'event_fee_update frame with missing or mistyped fields', f);
        return;
      case 'subscribed':
        if (isWsSubscribed(f)) {
          this.sid(f.msg.sid).channel = f.msg.channel;
          this.stats.ignored++;
        } else this.stats.malformedFrame('subscribed', 'subscribed frame without channel/sid', f);
        return;
      case 'ok':
      case 'list_subscriptions':
        if (isWsOk(f)) this.stats.ignored++;
        else this.stats.malformedFrame('ok', 'ok frame with mistyped msg', f);
        return;
      case 'unsubscribed':
        if (isWsUnsubscribed(f)) this.unsubscribed(f.sid);
        else this.stats.malformedFrame('unsubscribed', 'unsubscribed frame without sid', f);
        return;
      case 'error':
        if (isWsError(f)) {
          const id = typeof f.id === 'number' ? ` (command ${f.id})` : '';
          out.push(this.feed('error', local, `code ${f.msg.code}: ${f.msg.msg ?? ''}${id}`));
        } else this.stats.malformedFrame('error', 'error frame without code', f);
        return;
      default:
        this.stats.unknownFrame(f.type);
    }
  }

  private sid(sid: number): SidState {
    let s = this.sids.get(sid);
    if (!s) this.sids.set(sid, (s = { tickers: new Set() }));
    return s;
  }

  private sequence(f: WsFrame, local: number, out: NormalizedEvent[]): void {
    const s = sequenced(f);
    if (!s) return;
    const st = this.sid(s.sid);
    if (st.lastSeq !== undefined && s.seq !== st.lastSeq + 1) {
      this.stats.gaps++;
      this.resetSid(s.sid, `sid ${s.sid}: seq expected ${st.lastSeq + 1}, got ${s.seq}`, local, out);
    }
    st.lastSeq = s.seq;
  }

  /** Every book of a sid waits for a snapshot; one `gap` per market (or one for the sid when it has none). */
  private resetSid(sid: number, detail: string, local: number, out: NormalizedEvent[]): void {
    const st = this.sid(sid);
    let any = false;
    for (const t of st.tickers) {
      const b = this.books.get(t);
      if (!b || b.sid !== sid) continue;
      any = true;
      this.await(t, b);
      out.push(this.feed('gap', local, detail, t));
    }
    // A sid without books (trades, lifecycle): missed frames cannot be replayed, only reported.
    if (!any) out.push(this.feed('gap', local, detail, `sid:${sid}`));
  }

  /** One market waits for a snapshot. */
  private resetMarket(ticker: string, sid: number, detail: string, local: number, out: NormalizedEvent[]): void {
    this.stats.gaps++;
    let b = this.books.get(ticker);
    if (!b) this.books.set(ticker, (b = new MarketBook(sid, false, ticker, this.id(ticker), this.levels)));
    b.sid = sid;
    this.sid(sid).tickers.add(ticker);
    this.await(ticker, b);
    out.push(this.feed('gap', local, detail, ticker));
  }

  private await(ticker: string, b: MarketBook): void {
    b.live = false;
    this.waiting.add(ticker);
    b.fill([], []);
    let r = this.resync.get(b.sid);
    if (!r) this.resync.set(b.sid, (r = new Set()));
    r.add(ticker);
  }

  private unsubscribed(sid: number): void {
    const st = this.sids.get(sid);
    this.sids.delete(sid);
    this.resync.delete(sid);
    this.stats.ignored++;
    // The feed asked for this: the books are no longer maintained, so they are forgotten quietly.
    if (st)
      for (const t of st.tickers) {
        const b = this.books.get(t);
        if (b?.sid !== sid) continue;
        b.release(); // its slot back to the pool, which would otherwise hold the book
        this.books.delete(t);
        this.waiting.delete(t);
      }
  }

  /**
   * An orderbook frame we cannot read. If it used up a seq it carried an update we missed, so
   * the market it names (or, when it names none we know, every market of its sid) is resynced.
   */
  private badBookFrame(f: WsFrame, kind: string, local: number, out: NormalizedEvent[]): void {
    this.stats.malformedFrame(kind, `${kind} frame with missing or mistyped fields`, f);
    const s = sequenced(f);
    if (!s) return;
    const t = isObject(f.msg) ? f.msg['market_ticker'] : undefined;
    if (typeof t === 'string' && this.books.has(t)) this.resetMarket(t, s.sid, `malformed ${kind}`, local, out);
    else if (this.sid(s.sid).tickers.size > 0) this.resetSid(s.sid, `malformed ${kind} on sid ${s.sid}`, local, out);
  }

  private snapshot(f: WsOrderbookSnapshot, local: number, out: NormalizedEvent[]): void {
    const m = f.msg;
    const ticker = m.market_ticker;
    const yes = levelsOf(m.yes_dollars_fp ?? m.yes_dollars ?? m.yes);
    const no = levelsOf(m.no_dollars_fp ?? m.no_dollars ?? m.no);
    if (!yes || !no) {
      this.stats.malformedFrame('orderbook_snapshot', `invalid level in snapshot of ${ticker}`, f);
      this.resetMarket(ticker, f.sid, 'malformed snapshot', local, out);
      return;
    }
    const prev = this.books.get(ticker);
    const wasWaiting = prev !== undefined && !prev.live;
    if (prev && prev.sid !== f.sid) this.sids.get(prev.sid)?.tickers.delete(ticker);
    const b = prev ?? new MarketBook(f.sid, true, ticker, this.id(ticker), this.levels);
    b.sid = f.sid;
    b.live = true;
    const { bids, asks } = yesPerspective(yes, no);
    // Room for exactly the snapshot's levels, as the ladders it replaces had; a side that grows gets free room then.
    b.fill(bids, asks, 0);
    if (prev === undefined) this.books.set(ticker, b);
    this.waiting.delete(ticker);
    this.sid(f.sid).tickers.add(ticker);
    this.resync.get(f.sid)?.delete(ticker);
    out.push({ type: 'book_snapshot', venue: this.venue, timestamp: local, localTimestamp: local, marketId: b.marketId, instrument: b.ticker, bids, asks });
    if (wasWaiting) out.push(this.feed('resynced', local, `snapshot on sid ${f.sid}`, ticker));
  }

  private delta(f: WsOrderbookDelta, local: number, out: NormalizedEvent[]): void {
    const m = f.msg;
    const ticker = m.market_ticker;
    const b = this.books.get(ticker);
    if (!b) {
      this.resetMarket(ticker, f.sid, 'delta before snapshot', local, out);
      return;
    }
    if (!b.live || b.sid !== f.sid) {
      // Waiting for a snapshot, or a late frame of a subscription this market has moved away from.
      this.stats.ignored++;
      return;
    }
    const price = priceOf(m.price_dollars, m.price);
    const delta = sizeOf(m.delta_fp, m.delta);
    if (price === undefined || price === null || !(price > 0 && price < PAYOUT) || delta === undefined || delta === null) {
      this.stats.malformedFrame('orderbook_delta', `invalid price or delta for ${ticker}`, f);
      this.resetMarket(ticker, f.sid, 'malformed delta', local, out);
      return;
    }
    if (delta === 0) {
      this.stats.ignored++;
      return;
    }
    const yes = m.side === 'yes';
    const at = yes ? price : PAYOUT - price;
    const next = roundSize(b.sizeOf(yes, at) + delta);
    if (next < 0) {
      this.resetMarket(ticker, f.sid, `delta ${m.delta_fp ?? m.delta} at ${m.side} ${m.price_dollars ?? m.price} leaves size ${next}`, local, out);
      return;
    }
    b.put(yes, at, next);
    out.push(this.bookDelta(b, yes, price, next, frameTime(m, local), local));
  }

  /**
   * The hot path of the feed (see Mapper.mapText): an `orderbook_delta` frame read in place, when
   * it is the next of its sid, its market's book is live on that sid, and the delta is valid and
   * leaves a size of zero or more. Anything else is left to `map`, untouched.
   */
  mapText(text: string, local: number, emit: (e: NormalizedEvent) => void): boolean {
    const d = this.scanned;
    if (!scanDelta(text, d)) return false;
    const st = this.sids.get(d.sid);
    if (st === undefined || st.lastSeq === undefined || d.seq !== st.lastSeq + 1) return false;
    const b = this.books.get(d.ticker);
    if (b === undefined || !b.live || b.sid !== d.sid) return false;
    const price = parseDollarsAt(text, d.priceStart, d.priceEnd);
    const delta = parseSizeAt(text, d.deltaStart, d.deltaEnd);
    if (!(price > 0 && price < PAYOUT) || Number.isNaN(delta) || delta === 0) return false;
    const at = d.yes ? price : PAYOUT - price;
    const next = roundSize(b.sizeOf(d.yes, at) + delta);
    if (next < 0) return false;
    this.stats.frames++;
    this.stats.lastFrameAt = local;
    st.lastSeq = d.seq;
    b.put(d.yes, at, next);
    this.stats.events++;
    emit(this.bookDelta(b, d.yes, price, next, d.tsMs, local));
    return true;
  }

  /** The absolute change of one level, in YES perspective (a NO bid at p is a YES ask at 100 − p). */
  private bookDelta(b: MarketBook, yes: boolean, price: number, size: number, timestamp: number, local: number): NormalizedEvent {
    return {
      type: 'book_delta',
      venue: this.venue,
      timestamp,
      localTimestamp: local,
      marketId: b.marketId,
      instrument: b.ticker,
      changes: [yes ? ['bid', price, size] : ['ask', PAYOUT - price, size]],
    };
  }

  private ticker(f: WsTicker, local: number, out: NormalizedEvent[]): void {
    const m = f.msg;
    const bid = priceOf(m.yes_bid_dollars, m.yes_bid);
    const ask = priceOf(m.yes_ask_dollars, m.yes_ask);
    const last = priceOf(m.price_dollars, m.price);
    const volume = sizeOf(m.volume_fp, m.volume);
    const oi = sizeOf(m.open_interest_fp, m.open_interest);
    if (bid === null || ask === null || last === null || volume === null || oi === null) {
      this.stats.malformedFrame('ticker', `invalid price or count for ${m.market_ticker}`, f);
      return;
    }
    out.push(
      without<Quote>({
        type: 'quote',
        venue: this.venue,
        timestamp: frameTime(m, local),
        localTimestamp: local,
        marketId: this.id(m.market_ticker),
        yesBid: bid === 0 ? undefined : bid,
        yesAsk: ask === PAYOUT ? undefined : ask,
        lastPrice: last === 0 ? undefined : last,
        volume,
        openInterest: oi,
      }),
    );
  }

  /** Legacy ticker_v2: absolute prices only; its volume / open interest are deltas and are not used. */
  private tickerV2(f: WsTickerV2, local: number, out: NormalizedEvent[]): void {
    const m = f.msg;
    const bid = priceOf(m.yes_bid_dollars, m.yes_bid);
    const ask = priceOf(m.yes_ask_dollars, m.yes_ask);
    const last = priceOf(m.price_dollars, m.price);
    if (bid === null || ask === null || last === null) {
      this.stats.malformedFrame('ticker_v2', `invalid price for ${m.market_ticker}`, f);
      return;
    }
    if (bid === undefined && ask === undefined && last === undefined) {
      this.stats.ignored++;
      return;
    }
    out.push(
      without<Quote>({
        type: 'quote',
        venue: this.venue,
        timestamp: frameTime(m, local),
        localTimestamp: local,
        marketId: this.id(m.market_ticker),
        yesBid: bid === 0 ? undefined : bid,
        yesAsk: ask === PAYOUT ? undefined : ask,
        lastPrice: last === 0 ? undefined : last,
      }),
    );
  }

  private trade(f: WsTrade, local: number, out: NormalizedEvent[]): void {
    const m = f.msg;
    const yesPrice = priceOf(m.yes_price_dollars, m.yes_price);
    const size = sizeOf(m.count_fp, m.count);
    if (yesPrice === undefined || yesPrice === null || size === undefined || size === null || size < 0) {
      this.stats.malformedFrame('trade', `invalid price or count in trade ${m.trade_id}`, f);
      return;
    }
    const takerSide = m.taker_outcome_side ?? m.taker_side ?? (m.taker_book_side === 'bid' ? 'yes' : m.taker_book_side === 'ask' ? 'no' : undefined);
    out.push(
      without<Trade>({
        type: 'trade',
        venue: this.venue,
        timestamp: frameTime(m, local),
        localTimestamp: local,
        marketId: this.id(m.market_ticker),
        instrument: m.market_ticker,
        tradeId: m.trade_id,
        price: yesPrice,
        yesPrice,
        size,
        // The instrument is the YES book: a taker buying YES lifts it, a taker buying NO hits it.
        side: takerSide === 'yes' ? 'buy' : takerSide === 'no' ? 'sell' : undefined,
        takerSide,
      }),
    );
  }

  private lifecycle(f: WsMarketLifecycle, local: number, out: NormalizedEvent[]): void {
    const m = f.msg;
    const ticker = m.market_ticker;
    const status = (s: MarketStatus, extra: Partial<MarketStatusChange> = {}): void => {
      this.statuses.set(ticker, s);
      out.push(
        without<MarketStatusChange>({
          type: 'market_status',
          venue: this.venue,
          timestamp: local,
          localTimestamp: local,
          marketId: this.id(ticker),
          status: s,
          ...extra,
        }),
      );
    };
    switch (m.event_type) {
      case 'created':
        out.push(this.created(f, local));
        return;
      case 'activated':
        status('active');
        return;
      case 'deactivated':
        status(m.is_deactivated === false ? 'active' : 'closed');
        return;
      case 'close_date_updated': {
        const closeTime = m.close_ts === undefined ? undefined : m.close_ts * 1000;
        const known = this.statuses.get(ticker);
        const s: MarketStatus | undefined =
          closeTime !== undefined && closeTime <= local && (known === undefined || known === 'active' || known === 'initialized') ? 'closed' : known;
        if (s === undefined || closeTime === undefined) this.stats.ignored++;
        else status(s, { closeTime });
        return;
      }
      case 'determined':
      case 'settled': {
        const result = m.result ? m.result : undefined;
        const sv = typeof m.settlement_value === 'number' ? unitsFromIntCents(m.settlement_value) : priceOf(m.settlement_value, undefined);
        let settlementValue = sv === null || Number.isNaN(sv) ? undefined : sv;
        if (settlementValue === undefined && result === 'yes') settlementValue = PAYOUT;
        if (settlementValue === undefined && result === 'no') settlementValue = 0;
        status(m.event_type === 'determined' ? 'determined' : 'finalized', { result, settlementValue });
        return;
      }
      case 'price_level_structure_updated':
      case 'metadata_updated':
        this.stats.ignored++;
        return;
      default:
        this.stats.unknownFrame(`${f.type}:${m.event_type}`);
    }
  }

  private created(f: WsMarketLifecycle, local: number): MarketUpsert {
    const m = f.msg;
    const meta = m.additional_metadata ?? {};
    const eventTicker = meta.event_ticker;
    const ev = eventTicker ? this.events.get(eventTicker) : undefined;
    const seriesId = ev?.series_ticker ?? (eventTicker ? seriesOfEvent(eventTicker) : undefined);
    const series = seriesId ? this.series.get(seriesId) : undefined;
    const openTime = m.open_ts === undefined ? undefined : m.open_ts * 1000;
    const status: MarketStatus = openTime !== undefined && openTime > local ? 'initialized' : 'active';
    this.statuses.set(m.market_ticker, status);
    return without<MarketUpsert>({
      type: 'market',
      venue: this.venue,
      timestamp: local,
      localTimestamp: local,
      marketId: this.id(m.market_ticker),
      title: meta.title || meta.yes_sub_title || m.market_ticker,
      // `name` reads as the event's title in the AsyncAPI example; a REST refresh overwrites it.
      eventTitle: ev?.title || meta.name || undefined,
      seriesTitle: series?.title || undefined,
      eventId: eventTicker,
      seriesId,
      outcome: meta.yes_sub_title || undefined,
      category: series?.category || ev?.category || undefined,
      tags: series?.tags ?? undefined,
      status,
      openTime,
      closeTime: m.close_ts === undefined ? undefined : m.close_ts * 1000,
      url: eventTicker ? marketUrl(this.config, seriesId, eventTicker, m.market_ticker) : undefined,
      yesInstrument: m.market_ticker,
      extra: without({
        rules_primary: meta.rules_primary,
        rules_secondary: meta.rules_secondary,
        open_time: isoOf(m.open_ts),
        close_time: isoOf(m.close_ts),
        expected_expiration_time: isoOf(meta.expected_expiration_ts),
        can_close_early: meta.can_close_early,
        price_level_structure: m.price_level_structure,
        combo: f.type === 'multivariate_market_lifecycle',
        strike_type: meta.strike_type,
        floor_strike: meta.floor_strike,
        cap_strike: meta.cap_strike,
        fee_type: series?.fee_type ?? undefined,
        fee_multiplier: series?.fee_multiplier ?? undefined,
        frequency: series?.frequency ?? undefined,
      }),
    });
  }

  // ---- REST documents -------------------------------------------------------------------------

  private rest(doc: Record<string, unknown>, local: number, out: NormalizedEvent[]): void {
    if ('series' in doc) {
      const r = kalshiSeriesListSchema.safeParse(doc);
      if (!r.success) this.stats.malformedFrame('rest_series', issue(r.error), doc);
      else this.learnSeries(r.data.series ?? []);
      this.stats.ignored++;
      return;
    }
    if ('events' in doc) {
      const list = doc['events'];
      if (!Array.isArray(list)) {
        this.stats.malformedFrame('rest_events', 'events is not an array', doc);
        return;
      }
      for (const e of list) this.event(e, undefined, local, out);
      return;
    }
    if ('event' in doc) {
      this.event(doc['event'], doc['markets'], local, out);
      return;
    }
    if ('markets' in doc) {
      const r = kalshiMarketsPageShellSchema.safeParse(doc);
      if (!r.success) {
        this.stats.malformedFrame('rest_markets', issue(r.error), doc);
        return;
      }
      for (const m of r.data.markets ?? []) this.market(m, undefined, local, out);
      return;
    }
    if ('market' in doc) {
      this.market(doc['market'], undefined, local, out);
      return;
    }
    if ('orderbooks' in doc) {
      const r = kalshiOrderbooksSchema.safeParse(doc);
      if (!r.success) this.stats.malformedFrame('rest_orderbooks', issue(r.error), doc);
      else out.push(...mapRestOrderbooks(this.config, r.data, local, local, this.stats));
      return;
    }
    if ('exchange_active' in doc) {
      this.stats.ignored++;
      return;
    }
    this.stats.malformedFrame('unknown_document', 'neither a frame (no type) nor a known REST document', doc);
  }

  private event(raw: unknown, topMarkets: unknown, local: number, out: NormalizedEvent[]): void {
    const r = kalshiEventSchema.safeParse(raw);
    if (!r.success) {
      this.stats.malformedFrame('rest_event', issue(r.error), raw);
      return;
    }
    const e = r.data;
    this.learnEvent(e);
    const markets = [...(e.markets ?? []), ...(Array.isArray(topMarkets) ? topMarkets : [])];
    for (const m of markets) this.market(m, e, local, out);
  }

  private market(raw: unknown, event: KalshiEvent | undefined, local: number, out: NormalizedEvent[]): void {
    const r = kalshiMarketSchema.safeParse(raw);
    if (!r.success) {
      this.stats.malformedFrame('rest_market', issue(r.error), raw);
      return;
    }
    const m = r.data;
    const ev = event ?? this.events.get(m.event_ticker);
    const seriesId = m.series_ticker || ev?.series_ticker || seriesOfEvent(m.event_ticker);
    const up = mapRestMarket(this.config, m, { event: ev, series: this.series.get(seriesId) }, local, local, this.stats);
    this.statuses.set(m.ticker, up.status);
    out.push(up);
  }

  private id(ticker: string): string {
    return apiMarketId(this.config, ticker);
  }

  private feed(state: FeedEvent['state'], local: number, detail?: string, instrument?: string): FeedEvent {
    return without<FeedEvent>({ type: 'feed', venue: this.venue, timestamp: local, localTimestamp: local, state, detail, instrument });
  }
}

/** Parses WebSocket levels of any wire version; undefined when any level is invalid. */
function levelsOf(levels: readonly WsLevel[] | null | undefined): Map<number, number> | undefined {
  const out = new Map<number, number>();
  for (const [p, q] of levels ?? []) {
    const price = typeof p === 'string' ? priceOf(p, undefined) : priceOf(undefined, p);
    const size = typeof q === 'string' ? sizeOf(q, undefined) : sizeOf(undefined, q);
    if (price === undefined || price === null || !(price > 0 && price < PAYOUT)) return undefined;
    if (size === undefined || size === null || size < 0) return undefined;
    if (size > 0) out.set(price, size);
  }
  return out;
}

/** A fresh Kalshi mapper for `venue` (also what `crossbook normalize --protocol kalshi` uses). */
export function createKalshiMapper(venue: VenueConfig, log?: Logger): KalshiMapper {
  return new KalshiMapper(venue, log);
}
