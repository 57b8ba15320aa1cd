import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { VenueConfig } from '../../config/schema.js';
import type { Logger } from '../../core/log.js';
import { PAYOUT, parseProbabilityDollars, parseSize, roundSize, unitsFromProbability } from '../../core/price.js';
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
  Quote,
  Trade,
  VenueLabel,
} from '../../core/types.js';
import type { Mapper } from '../common/mapper.js';
import { FeedStats } from '../common/stats.js';
import { BookTops } from '../common/tops.js';
import { apiMarketId } from '../protocol.js';
import {
  clobBookSchema,
  dataTradeSchema,
  gammaEventSchema,
  gammaMarketSchema,
  isObject,
  isWsBestBidAsk,
  isWsBook,
  isWsLastTradePrice,
  isWsLegacyPriceChange,
  isWsMarketResolved,
  isWsNewMarket,
  isWsPriceChange,
  isWsTickSizeChange,
  WS_PONG,
  type ClobBook,
  type DataTrade,
  type GammaEventRef,
  type GammaMarket,
  type WsLevel,
  type WsMarketResolved,
  type WsNewMarket,
  type WsPriceChangeEntry,
} from './raw.js';

/**
 * Polymarket → normalized events.
 *
 * Instruments are outcome tokens (asset ids). Each token has its own book in its own perspective:
 * the YES token's book is the market's YES book, the NO token's book is its mirror (NO bids at
 * 1 − YES asks). Books are emitted per token as the venue sends them, never converted.
 */

/** What the mapper knows of one outcome token. */
export interface TokenInfo {
  /**
   * The token id as the catalog's upsert named it: the one string the mapper's check book, the
   * events it maps and so the state's book of the token hold, where each would otherwise keep the
   * copy its first frame parsed (a 77-digit id, ~100 bytes, per token and per holder: 108k tokens).
   */
  readonly asset: string;
  /** The API market id (the condition id, apiMarketId applied). */
  readonly marketId: string;
  /** Whether this token is the market's YES (first outcome) or NO (second outcome). */
  readonly side: 'yes' | 'no';
  /** The venue's label of this token's outcome ("Yes", "Up", a team). */
  readonly outcome?: string | undefined;
}

/** The options a replay makes the mapper with, as a live mapper's `replayOptions` recorded them. */
export const polymarketReplayOptions = z
  .object({ lastTradeAs: z.enum(['trade', 'quote']).optional(), untrackedTrades: z.enum(['drop', 'token']).optional() })
  .strict();

export interface PolymarketMapperOptions {
  /**
   * How a `last_trade_price` frame is emitted. `trade` (default, used by `crossbook normalize`):
   * a Trade. `quote`: a Quote carrying only `lastPrice`, for a feed that takes the trades
   * themselves from the data-api (which has wallets and transaction hashes) and must not count
   * each trade twice.
   */
  readonly lastTradeAs?: 'trade' | 'quote';
  /**
   * A `last_trade_price` of a token the mapper knows no market of: `drop` it (default: its YES
   * price is unknowable, and the live feed learns every token from Gamma first), or emit it as a
   * `token` trade: in the token's own terms, `yesPrice` NaN and `takerSide` absent (the YES/NO side
   * is unknown). `crossbook normalize` uses `token`, so a recording without its market list still
   * shows its trades.
   */
  readonly untrackedTrades?: 'drop' | 'token';
  /** Counters to share with the feed; a fresh FeedStats when omitted. */
  readonly stats?: FeedStats;
}

/**
 * The Polymarket mapper. `map()` takes one parsed WebSocket frame (an object or an array of
 * objects) and, for `crossbook normalize`, also the REST shapes: a Gamma market or event, a CLOB
 * `/book` response, a data-api trade (or arrays of them). REST shapes are validated with zod, frames
 * with guards.
 *
 * State it keeps, and why:
 * - `tokens`: which token is the YES and which the NO of which market. Frames name only the asset
 *   and the condition id, so a trade's YES price, a NO token's last price and a resolution's result
 *   need it. Learned from every market it maps (Gamma upserts via `learn()`, `new_market`,
 *   `market_resolved`). Catalog knowledge, not connection state: `reset()` keeps it.
 * - `books`: a check copy of each token's book, only to compare with the `best_bid` / `best_ask`
 *   each `price_change` entry carries. The market channel has no sequence numbers, so this is the
 *   only way to notice a lost update, and it works only when the lost update moved the top of the
 *   book. Connection state: `reset()` clears it.
 * - `suspects`: tokens whose venue best price disagrees with the check book. Around a trade the
 *   venue's `best_bid`/`best_ask` can lead the level updates (it reports the post-trade best while
 *   the levels the trade took are removed by the next frames), so a disagreement is a warning: the
 *   changes are still applied and passed on, and only a disagreement that persists through
 *   `SUSPECT_FRAMES` further frames of the token, or is still there `SUSPECT_MS` of venue time
 *   later, is a gap (the feed resyncs the token). Connection state too.
 */
/** The fields of a `last_trade_price` frame the mapper reads. */
type WsLastTrade = {
  asset_id: string;
  market: string;
  price: string;
  side: 'BUY' | 'SELL';
  size: string;
  timestamp?: string | number;
  transaction_hash?: string;
};

/** Further `price_change` frames of a token through which a best-price disagreement may last before it is a gap. */
export const SUSPECT_FRAMES = 3;
/** Venue time a best-price disagreement may last before the next frame that still shows it makes it a gap. */
export const SUSPECT_MS = 5_000;

/** A best-price disagreement under watch. */
interface Suspect {
  /** Venue time of the frame that first showed it. */
  readonly since: number;
  /** Frames of the token since then that still showed one. */
  frames: number;
}

export class PolymarketMapper implements Mapper {
  readonly venue: VenueLabel;
  readonly stats: FeedStats;
  private readonly tokens = new Map<string, TokenInfo>();
  /** asset → check book (its level prices); `null` = a gap was seen, deltas are dropped until the next `book`. */
  private readonly books = new Map<string, BookTops | null>();
  private readonly suspects = new Map<string, Suspect>();
  private readonly lastTradeAs: 'trade' | 'quote';
  private readonly untrackedTrades: 'drop' | 'token';
  readonly replayOptions: { readonly lastTradeAs: 'trade' | 'quote'; readonly untrackedTrades: 'drop' | 'token' };
  private readonly why = new Map<string, number>();
  /** Best-price disagreements seen (each a warning; `stats.gaps` counts those that persisted). */
  bestPriceWarnings = 0;

  constructor(
    readonly config: VenueConfig,
    log?: Logger,
    opts: PolymarketMapperOptions = {},
  ) {
    this.venue = config.label;
    this.stats = opts.stats ?? new FeedStats(log);
    this.lastTradeAs = opts.lastTradeAs ?? 'trade';
    this.untrackedTrades = opts.untrackedTrades ?? 'drop';
    this.replayOptions = { lastTradeAs: this.lastTradeAs, untrackedTrades: this.untrackedTrades };
  }

  /** The server's answer to our keep-alive `PING`: the text `PONG`, not JSON (live and in a replay). */
  isControl(text: string): boolean {
    return text === WS_PONG;
  }

  /**
   * Frames ignored or mapped with less than full knowledge, by reason (for `crossbook normalize`'s
   * report); the totals are also in `stats`.
   */
  reasons(): Record<string, number> {
    return Object.fromEntries(this.why);
  }

  /** Counts a frame ignored for `reason` (stats.ignored and the reason). */
  private ignore(reason: string): void {
    this.stats.ignored++;
    this.note(reason);
  }

  private note(reason: string): void {
    this.why.set(reason, (this.why.get(reason) ?? 0) + 1);
  }

  /** The token table entry of an asset, when known. */
  token(assetId: string): TokenInfo | undefined {
    return this.tokens.get(assetId);
  }

  /** Records the YES/NO tokens of a market upsert (call it for every upsert mapped from REST). */
  learn(m: MarketUpsert): void {
    const outcomes = m.extra?.['outcomes'];
    const labels = Array.isArray(outcomes) ? (outcomes as unknown[]) : [];
    const label = (i: number): string | undefined => (typeof labels[i] === 'string' ? (labels[i] as string) : undefined);
    if (m.yesInstrument) this.learnToken(m.yesInstrument, m.marketId, 'yes', label(0));
    if (m.noInstrument) this.learnToken(m.noInstrument, m.marketId, 'no', label(1));
  }

  /**
   * Records one token. A token known as it is keeps its record (and so the strings first learned,
   * which the catalog and the state's book hold too: every catalog walk parses fresh copies); one
   * that changed keeps its first `asset` string.
   */
  private learnToken(asset: string, marketId: string, side: 'yes' | 'no', outcome: string | undefined): void {
    const had = this.tokens.get(asset);
    if (had !== undefined && had.marketId === marketId && had.side === side && had.outcome === outcome) return;
    this.tokens.set(asset, { asset: had?.asset ?? asset, marketId, side, outcome });
  }

  reset(): void {
    this.books.clear();
    this.suspects.clear();
  }

  /** Like reset(), for the assets of one connection when a feed spreads assets over several. */
  resetInstruments(assets: Iterable<string>): void {
    for (const a of assets) {
      this.books.delete(a);
      this.suspects.delete(a);
    }
  }

  map(raw: unknown, localTimestamp: number): Iterable<NormalizedEvent> {
    // The market channel's most frequent frame, mapped into an array (the frame path's plain loop)
    // rather than through the generators below; the same events and counts either way.
    if (isObject(raw) && raw['event_type'] === 'price_change' && isWsPriceChange(raw)) {
      this.stats.frames++;
      this.stats.lastFrameAt = localTimestamp;
      const out: NormalizedEvent[] = [];
      this.priceChange(raw.market, raw.price_changes, raw.timestamp, localTimestamp, out);
      this.stats.events += out.length;
      return out;
    }
    return this.frames(raw, localTimestamp);
  }

  private *frames(raw: unknown, localTimestamp: number): Iterable<NormalizedEvent> {
    this.stats.frames++;
    this.stats.lastFrameAt = localTimestamp;
    if (Array.isArray(raw)) {
      if (raw.length === 0) this.ignore('empty frame array');
      for (const item of raw) yield* this.counted(this.one(item, localTimestamp));
    } else yield* this.counted(this.one(raw, localTimestamp));
  }

  private *counted(events: Iterable<NormalizedEvent>): Iterable<NormalizedEvent> {
    for (const e of events) {
      this.stats.events++;
      yield e;
    }
  }

  private *one(m: unknown, local: number): Iterable<NormalizedEvent> {
    if (!isObject(m)) {
      this.stats.malformedFrame('frame', 'not an object', m);
      return;
    }
    const type = m['event_type'];
    if (type === undefined) {
      yield* this.rest(m, local);
      return;
    }
    switch (type) {
      case 'book':
        if (isWsBook(m)) yield* this.book(m, local);
        else this.stats.malformedFrame('book', 'bad shape', m);
        return;
      case 'price_change':
        if (isWsPriceChange(m)) yield* this.priceChange(m.market, m.price_changes, m.timestamp, local, []);
        else if (isWsLegacyPriceChange(m))
          yield* this.priceChange(
            m.market,
            m.changes.map((c) => ({ asset_id: m.asset_id, price: c.price, size: c.size, side: c.side })),
            m.timestamp,
            local,
            [],
          );
        else this.stats.malformedFrame('price_change', 'bad shape', m);
        return;
      case 'last_trade_price':
        if (isWsLastTradePrice(m)) yield* this.lastTrade(m, local);
        else this.stats.malformedFrame('last_trade_price', 'bad shape', m);
        return;
      case 'tick_size_change':
        // A tick change does not move any level already in the book, and prices are integer units
        // fine enough for every tick, so there is nothing to emit.
        if (isWsTickSizeChange(m)) this.ignore('tick_size_change (levels unchanged)');
        else this.stats.malformedFrame('tick_size_change', 'bad shape', m);
        return;
      case 'best_bid_ask':
        // Ignored on purpose: the `book` / `price_change` stream already carries the top of book,
        // and a second top-of-book source could disagree transiently with the book it summarizes.
        if (isWsBestBidAsk(m)) this.ignore('best_bid_ask (the book carries the top)');
        else this.stats.malformedFrame('best_bid_ask', 'bad shape', m);
        return;
      case 'new_market':
        if (isWsNewMarket(m)) yield* this.newMarket(m, local);
        else this.stats.malformedFrame('new_market', 'bad shape', m);
        return;
      case 'market_resolved':
        if (isWsMarketResolved(m)) yield* this.resolved(m, local);
        else this.stats.malformedFrame('market_resolved', 'bad shape', m);
        return;
      default:
        this.stats.unknownFrame(typeof type === 'string' ? type : `event_type:${typeof type}`);
    }
  }

  private *book(
    m: {
      asset_id: string;
      market: string;
      bids: readonly WsLevel[];
      asks: readonly WsLevel[];
      timestamp?: string | number;
      last_trade_price?: string | null | undefined;
    },
    local: number,
  ): Iterable<NormalizedEvent> {
    const ts = parseTimestamp(m.timestamp, local);
    const bids = parseLevels(m.bids, true);
    const asks = parseLevels(m.asks, false);
    if (Number.isNaN(ts) || bids === undefined || asks === undefined) {
      this.stats.malformedFrame('book', 'bad price, size or timestamp', m);
      return;
    }
    let ltp = NaN;
    if (m.last_trade_price !== undefined && m.last_trade_price !== null && m.last_trade_price !== '') {
      ltp = parseProbabilityDollars(m.last_trade_price);
      if (Number.isNaN(ltp)) {
        this.stats.malformedFrame('book', 'bad last_trade_price', m);
        return;
      }
    }
    const marketId = apiMarketId(this.config, m.market);
    // The catalog's string of the token when it is known (TokenInfo.asset): the check book's key and the snapshot's instrument, kept by the state's book.
    const asset = this.tokens.get(m.asset_id)?.asset ?? m.asset_id;
    const check = this.books.get(asset) ?? new BookTops();
    check.snapshot(bids, asks);
    this.books.set(asset, check);
    this.suspects.delete(asset);
    const snap: BookSnapshot = {
      type: 'book_snapshot',
      venue: this.venue,
      timestamp: ts,
      localTimestamp: local,
      marketId,
      instrument: asset,
      bids,
      asks,
    };
    yield snap;
    // Only the YES token's last price becomes the market's: both tokens' books carry one, from
    // possibly different trades, and the spec's last_price is the YES side.
    if (!Number.isNaN(ltp) && this.tokens.get(m.asset_id)?.side === 'yes') {
      const q: Quote = { type: 'quote', venue: this.venue, timestamp: ts, localTimestamp: local, marketId, lastPrice: ltp };
      yield q;
    }
  }

  /** A price_change's events appended to `out` (and `out` returned): a delta per asset, or a gap. */
  private priceChange(
    market: string,
    entries: readonly WsPriceChangeEntry[],
    timestamp: string | number | undefined,
    local: number,
    out: NormalizedEvent[],
  ): NormalizedEvent[] {
    const ts = parseTimestamp(timestamp, local);
    if (Number.isNaN(ts)) {
      this.stats.malformedFrame('price_change', 'bad timestamp', entries);
      return out;
    }
    // Parse everything first: a frame is applied whole or not at all.
    const byAsset = new Map<string, { changes: [BookSideName, number, number][]; bestBid?: number; bestAsk?: number }>();
    for (const e of entries) {
      const price = parseProbabilityDollars(e.price);
      const size = parseSize(e.size);
      if (Number.isNaN(price) || !(size >= 0)) {
        this.stats.malformedFrame('price_change', `bad level ${e.price} x ${e.size}`, e);
        return out;
      }
      let g = byAsset.get(e.asset_id);
      if (!g) byAsset.set(e.asset_id, (g = { changes: [] }));
      g.changes.push([e.side === 'BUY' ? 'bid' : 'ask', price, size]);
      if (e.best_bid !== undefined || e.best_ask !== undefined) {
        const bb = e.best_bid === undefined ? undefined : parseProbabilityDollars(e.best_bid);
        const ba = e.best_ask === undefined ? undefined : parseProbabilityDollars(e.best_ask);
        if (Number.isNaN(bb) || Number.isNaN(ba)) {
          this.stats.malformedFrame('price_change', 'bad best_bid/best_ask', e);
          return out;
        }
        g.bestBid = bb;
        g.bestAsk = ba;
      }
    }
    if (byAsset.size === 0) {
      this.ignore('price_change without changes');
      return out;
    }
    const marketId = apiMarketId(this.config, market);
    for (const [asset, g] of byAsset) {
      const check = this.books.get(asset);
      if (check === null) {
        // After a detected gap nothing is applied until the server's next `book`.
        this.ignore('price_change of a token awaiting a fresh book after a gap');
        continue;
      }
      if (check !== undefined) {
        check.apply(g.changes);
        const gap = this.persistentMismatch(asset, this.checkTop(check, g.bestBid, g.bestAsk), ts);
        if (gap !== undefined) {
          this.books.set(asset, null);
          this.suspects.delete(asset);
          this.stats.gaps++;
          const f: FeedEvent = {
            type: 'feed',
            venue: this.venue,
            timestamp: ts,
            localTimestamp: local,
            state: 'gap',
            instrument: asset,
            detail: gap,
          };
          out.push(f);
          continue;
        }
      }
      const d: BookDelta = {
        type: 'book_delta',
        venue: this.venue,
        timestamp: ts,
        localTimestamp: local,
        marketId,
        instrument: asset,
        changes: g.changes,
      };
      out.push(d);
    }
    return out;
  }

  /**
   * Follows a token's best-price disagreement (`mismatch`, from checkTop) across frames; returns
   * it once it has persisted (SUSPECT_FRAMES further frames, or SUSPECT_MS of venue time).
   */
  private persistentMismatch(asset: string, mismatch: string | undefined, ts: number): string | undefined {
    if (mismatch === undefined) {
      this.suspects.delete(asset);
      return undefined;
    }
    const s = this.suspects.get(asset);
    if (!s) {
      this.suspects.set(asset, { since: ts, frames: 0 });
      this.bestPriceWarnings++;
      this.note('best_bid/best_ask ahead of the levels (a warning; a gap only if it persists)');
      return undefined;
    }
    s.frames++;
    if (s.frames < SUSPECT_FRAMES && ts - s.since < SUSPECT_MS) return undefined;
    return `${mismatch} through ${s.frames} frames (${ts - s.since} ms)`;
  }

  /** Compares the check book's top with the venue's; returns a description when they differ. */
  private checkTop(book: BookTops, bestBid: number | undefined, bestAsk: number | undefined): string | undefined {
    // The venue writes an empty bid side as "0" and an empty ask side as "1".
    const ourBid = book.bestBid() ?? 0;
    const ourAsk = book.bestAsk() ?? PAYOUT;
    if (bestBid !== undefined && bestBid !== ourBid) return `best bid ${ourBid} != venue ${bestBid}`;
    if (bestAsk !== undefined && bestAsk !== ourAsk) return `best ask ${ourAsk} != venue ${bestAsk}`;
    return undefined;
  }

  private *lastTrade(m: WsLastTrade, local: number): Iterable<NormalizedEvent> {
    const ts = parseTimestamp(m.timestamp, local);
    const price = parseProbabilityDollars(m.price);
    const size = parseSize(m.size);
    if (Number.isNaN(ts) || Number.isNaN(price) || !(size >= 0)) {
      this.stats.malformedFrame('last_trade_price', 'bad price, size or timestamp', m);
      return;
    }
    const tok = this.tokens.get(m.asset_id);
    if (!tok) {
      // Without the token table the YES price is unknowable (this asset could be either side).
      if (this.lastTradeAs === 'trade' && this.untrackedTrades === 'token') {
        this.note('last_trade_price of a token of no known market: emitted in its own terms, YES/NO side unknown');
        yield { ...this.tradeOf(m, ts, local, price, size, apiMarketId(this.config, m.market)), yesPrice: NaN };
      } else this.stats.unknownFrame('last_trade_price(untracked asset)');
      return;
    }
    const yesPrice = tok.side === 'yes' ? price : PAYOUT - price;
    if (this.lastTradeAs === 'quote') {
      const q: Quote = { type: 'quote', venue: this.venue, timestamp: ts, localTimestamp: local, marketId: tok.marketId, lastPrice: yesPrice };
      yield q;
      return;
    }
    const t: Trade = {
      ...this.tradeOf(m, ts, local, price, size, tok.marketId),
      yesPrice,
      takerSide: takerSide(tok.side, m.side === 'BUY'),
      outcome: tok.outcome,
    };
    yield t;
  }

  /** A `last_trade_price` as a trade in the token's own terms (yesPrice and takerSide for the caller to set). */
  private tradeOf(m: WsLastTrade, ts: number, local: number, price: number, size: number, marketId: string): Trade {
    return {
      type: 'trade',
      venue: this.venue,
      timestamp: ts,
      localTimestamp: local,
      marketId,
      instrument: m.asset_id,
      tradeId: m.transaction_hash ? `${m.transaction_hash}:${m.asset_id}` : `${m.asset_id}:${String(m.timestamp ?? ts)}:${m.side}:${m.price}:${m.size}`,
      price,
      yesPrice: price,
      size,
      side: m.side === 'BUY' ? 'buy' : 'sell',
    };
  }

  private learnFromFrame(m: WsNewMarket | WsMarketResolved): string {
    const marketId = apiMarketId(this.config, m.market);
    const [yes, no] = m.assets_ids;
    if (yes !== undefined) this.learnToken(yes, marketId, 'yes', m.outcomes[0]);
    if (no !== undefined) this.learnToken(no, marketId, 'no', m.outcomes[1]);
    return marketId;
  }

  private *newMarket(m: WsNewMarket, local: number): Iterable<NormalizedEvent> {
    const ts = parseTimestamp(m.timestamp, local);
    if (Number.isNaN(ts) || m.assets_ids.length !== 2 || m.outcomes.length !== 2) {
      this.stats.malformedFrame('new_market', 'bad timestamp or not two outcomes', m);
      return;
    }
    const marketId = this.learnFromFrame(m);
    const ev = m.event_message;
    const u: MarketUpsert = {
      type: 'market',
      venue: this.venue,
      timestamp: ts,
      localTimestamp: local,
      marketId,
      title: m.question,
      eventTitle: ev?.title,
      eventId: ev?.id,
      outcome: outcomeLabel(m.outcomes, undefined),
      // A market announced on the CLOB channel has an order book: it is open for orders.
      status: 'active',
      url: marketUrl(this.config, ev?.slug, m.slug),
      yesInstrument: m.assets_ids[0],
      noInstrument: m.assets_ids[1],
      extra: compact({ slug: m.slug, eventSlug: ev?.slug, gammaId: m.id, outcomes: [...m.outcomes] }),
    };
    yield u;
  }

  private *resolved(m: WsMarketResolved, local: number): Iterable<NormalizedEvent> {
    const ts = parseTimestamp(m.timestamp, local);
    const idx = m.assets_ids.indexOf(m.winning_asset_id);
    if (Number.isNaN(ts) || m.assets_ids.length !== 2 || idx < 0) {
      this.stats.malformedFrame('market_resolved', 'bad timestamp or winning asset not among assets_ids', m);
      return;
    }
    const marketId = this.learnFromFrame(m);
    const s: MarketStatusChange = {
      type: 'market_status',
      venue: this.venue,
      timestamp: ts,
      localTimestamp: local,
      marketId,
      status: 'finalized',
      result: idx === 0 ? 'yes' : 'no',
      settlementValue: idx === 0 ? PAYOUT : 0,
    };
    yield s;
  }

  /** REST shapes given to map() (normalize CLI): Gamma market/event, CLOB book, data-api trade. */
  private *rest(m: Record<string, unknown>, local: number): Iterable<NormalizedEvent> {
    if ('conditionId' in m && 'question' in m) {
      const r = gammaMarketSchema.safeParse(m);
      if (!r.success) return this.stats.malformedFrame('gamma_market', r.error.issues[0]?.message ?? 'invalid', m);
      const u = gammaMarketToUpsert(this.config, r.data, undefined, local);
      if (!u) return this.stats.malformedFrame('gamma_market', 'not a two-outcome market', m);
      this.learn(u);
      yield u;
    } else if (Array.isArray(m['markets']) && 'title' in m) {
      const r = gammaEventSchema.safeParse(m);
      if (!r.success) return this.stats.malformedFrame('gamma_event', r.error.issues[0]?.message ?? 'invalid', m);
      for (const gm of r.data.markets ?? []) {
        const u = gammaMarketToUpsert(this.config, gm, r.data, local);
        if (!u) {
          this.stats.malformedFrame('gamma_market', 'not a two-outcome market', gm);
          continue;
        }
        this.learn(u);
        yield u;
      }
    } else if ('proxyWallet' in m && 'transactionHash' in m) {
      const r = dataTradeSchema.safeParse(m);
      if (!r.success) return this.stats.malformedFrame('data_trade', r.error.issues[0]?.message ?? 'invalid', m);
      yield dataTradeToTrade(this.config, r.data, local, this.tokens.get(r.data.asset));
    } else if ('asset_id' in m && 'bids' in m && 'asks' in m) {
      const r = clobBookSchema.safeParse(m);
      if (!r.success) return this.stats.malformedFrame('clob_book', r.error.issues[0]?.message ?? 'invalid', m);
      yield* this.book(r.data, local);
    } else if (Array.isArray(m['assets_ids']) && ('type' in m || 'operation' in m)) {
      // Our own subscribe / update message, as found in recorded sessions: nothing to map.
      this.ignore('subscribe message');
    } else this.stats.unknownFrame('no event_type');
  }
}

// ---------------------------------------------------------------------------------------------
// Pure REST mappers
// ---------------------------------------------------------------------------------------------

/**
 * A Gamma market → market upsert. `parent` is the event it was listed under (`GET /events`);
 * without it the first of the market's own `events[]` is used. Returns undefined for a market
 * that is not two-outcome (the CLOB only lists binary markets; anything else is not ours to map).
 *
 * - marketId = conditionId; yes/no instruments = clobTokenIds[0] / [1].
 * - outcome: the first outcome when it is named ("Up", a team); for "Yes"/"No" markets inside a
 *   multi-market event, the `groupItemTitle` (the candidate); otherwise none.
 * - status: see gammaStatus.
 */
export function gammaMarketToUpsert(venue: VenueConfig, m: GammaMarket, parent: GammaEventRef | undefined, localTimestamp: number): MarketUpsert | undefined {
  const outcomes = m.outcomes ?? ['Yes', 'No'];
  if (outcomes.length !== 2) return undefined;
  const tokens = m.clobTokenIds ?? [];
  if (tokens.length !== 0 && tokens.length !== 2) return undefined;
  const ev = parent ?? m.events?.[0] ?? undefined;
  const { status, result } = gammaStatus(m);
  const tags = (m.tags ?? ev?.tags ?? []).map((t) => t.label).filter((l): l is string => typeof l === 'string' && l.length > 0);
  const series = ev?.series?.[0];
  return {
    type: 'market',
    venue: venue.label,
    // Gamma records carry no event time (updatedAt is an edit time), so this is when we saw it.
    timestamp: localTimestamp,
    localTimestamp,
    marketId: apiMarketId(venue, m.conditionId),
    title: m.question,
    eventTitle: ev?.title ?? undefined,
    eventId: ev?.id,
    seriesTitle: series?.title ?? undefined,
    seriesId: series?.id ?? undefined,
    outcome: outcomeLabel(outcomes, m.groupItemTitle ?? undefined),
    category: m.category ?? ev?.category ?? undefined,
    tags: tags.length ? tags : undefined,
    status,
    result,
    settlementValue: result === 'yes' ? PAYOUT : result === 'no' ? 0 : undefined,
    openTime: isoMs(m.startDate),
    closeTime: isoMs(m.endDate),
    url: marketUrl(venue, ev?.slug ?? undefined, m.slug ?? undefined),
    yesInstrument: tokens[0],
    noInstrument: tokens[1],
    volume: m.volumeNum ?? numeric(m.volume),
    liquidity: m.liquidityNum ?? numeric(m.liquidity),
    extra: compact({
      slug: m.slug,
      eventSlug: ev?.slug,
      gammaId: m.id,
      questionId: m.questionID,
      negRisk: m.negRisk,
      tickSize: m.orderPriceMinTickSize,
      acceptingOrders: m.acceptingOrders,
      outcomes: [...outcomes],
    }),
  };
}

/**
 * Our status of a Gamma market:
 * - closed and resolved (umaResolutionStatus "resolved", or outcomePrices exactly 1/0) → finalized,
 *   with the result;
 * - closed with a resolution proposed (umaResolutionStatus "proposed") → determined;
 * - closed → closed;
 * - not active, or not yet accepting orders (acceptingOrders false and never accepted) → initialized;
 * - else active. A market that stopped accepting orders after it had started is closed.
 */
export function gammaStatus(m: GammaMarket): { status: MarketStatus; result?: 'yes' | 'no' | undefined } {
  if (m.closed) {
    const prices = m.outcomePrices;
    let result: 'yes' | 'no' | undefined;
    if (prices?.length === 2) {
      const a = parseProbabilityDollars(prices[0]!);
      const b = parseProbabilityDollars(prices[1]!);
      if (a === PAYOUT && b === 0) result = 'yes';
      else if (a === 0 && b === PAYOUT) result = 'no';
    }
    const uma = m.umaResolutionStatus ?? undefined;
    if (uma === 'resolved' || (uma === undefined && result !== undefined)) return { status: 'finalized', result };
    if (uma === 'proposed') return { status: 'determined', result };
    return { status: 'closed' };
  }
  if (m.active === false) return { status: 'initialized' };
  if (m.acceptingOrders === false) return { status: m.acceptingOrdersTimestamp ? 'closed' : 'initialized' };
  return { status: 'active' };
}

/**
 * A CLOB `GET /book` response → book snapshot of that token. Undefined when a level is invalid.
 * Levels come out best first whatever order the venue used.
 */
export function clobBookToSnapshot(venue: VenueConfig, b: ClobBook, localTimestamp: number): BookSnapshot | undefined {
  const ts = parseTimestamp(b.timestamp, localTimestamp);
  const bids = parseLevels(b.bids, true);
  const asks = parseLevels(b.asks, false);
  if (Number.isNaN(ts) || !bids || !asks) return undefined;
  return {
    type: 'book_snapshot',
    venue: venue.label,
    timestamp: ts,
    localTimestamp,
    marketId: apiMarketId(venue, b.market),
    instrument: b.asset_id,
    bids,
    asks,
  };
}

/**
 * The trade id of a data-api trade. The API has none; one transaction can fill several orders,
 * so the hash is qualified by a short digest of what tells fills apart.
 */
export function dataTradeId(t: DataTrade): string {
  const digest = createHash('sha1').update(`${t.asset}|${t.proxyWallet}|${t.side}|${t.price}|${t.size}|${t.timestamp}`).digest('hex').slice(0, 12);
  return `${t.transactionHash}:${digest}`;
}

/**
 * A data-api trade → trade. `proxyWallet` is the wallet of the trader the record is about (the
 * taker with the API's default takerOnly=true), so it is recorded as `taker`; the maker is not
 * given. The token's side comes from `outcomeIndex` (0 = YES), else from `token`.
 */
export function dataTradeToTrade(venue: VenueConfig, t: DataTrade, localTimestamp: number, token?: TokenInfo): Trade {
  const price = unitsFromProbability(t.price);
  const idx = t.outcomeIndex ?? (token ? (token.side === 'yes' ? 0 : 1) : 0);
  const yes = idx === 0;
  const buy = t.side === 'BUY';
  return {
    type: 'trade',
    venue: venue.label,
    timestamp: t.timestamp * 1000,
    localTimestamp,
    marketId: apiMarketId(venue, t.conditionId),
    instrument: t.asset,
    tradeId: dataTradeId(t),
    price,
    yesPrice: yes ? price : PAYOUT - price,
    size: roundSize(t.size),
    side: buy ? 'buy' : 'sell',
    takerSide: takerSide(yes ? 'yes' : 'no', buy),
    taker: t.proxyWallet,
    takerName: t.name || undefined,
    takerPseudonym: t.pseudonym || undefined,
    outcome: t.outcome ?? token?.outcome ?? undefined,
  };
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/** Buying a token takes its outcome; selling it takes the other. */
function takerSide(tokenSide: 'yes' | 'no', buy: boolean): 'yes' | 'no' {
  return (tokenSide === 'yes') === buy ? 'yes' : 'no';
}

/** A ms timestamp string or number; `local` when absent; NaN when present and not a ms integer. */
export function parseTimestamp(v: string | number | undefined | null, local: number): number {
  if (v === undefined || v === null) return local;
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? v : NaN;
  return /^\d{1,16}$/.test(v) ? Number(v) : NaN;
}

/**
 * Parses wire levels and puts them best first (`descending` for bids). The venue's own order is
 * used when it is strictly monotonic either way (captures: bids ascending, asks descending);
 * otherwise they are sorted, a repeated price keeping its last size. Size-0 levels are dropped.
 * Undefined when any price or size is invalid.
 */
export function parseLevels(levels: readonly WsLevel[], descending: boolean): Level[] | undefined {
  const out: Level[] = [];
  for (const l of levels) {
    const p = parseProbabilityDollars(l.price);
    const s = parseSize(l.size);
    if (Number.isNaN(p) || !(s >= 0)) return undefined;
    if (s > 0) out.push([p, s]);
  }
  let asc = true;
  let desc = true;
  for (let i = 1; i < out.length; i++) {
    const d = out[i]![0] - out[i - 1]![0];
    if (d <= 0) asc = false;
    if (d >= 0) desc = false;
  }
  if (descending ? desc : asc) return out;
  if (descending ? asc : desc) return out.reverse();
  const byPrice = new Map<number, number>();
  for (const [p, s] of out) byPrice.set(p, s);
  return [...byPrice].sort((a, b) => (descending ? b[0] - a[0] : a[0] - b[0]));
}

function outcomeLabel(outcomes: readonly string[], groupItemTitle: string | undefined): string | undefined {
  const first = outcomes[0];
  if (first !== undefined && first.toLowerCase() !== 'yes') return first;
  return groupItemTitle && groupItemTitle.length > 0 ? groupItemTitle : undefined;
}

/** Fills the venue's market URL template; undefined when a placeholder has no value. */
function marketUrl(venue: VenueConfig, eventSlug: string | undefined, slug: string | undefined): string | undefined {
  const vars: Record<string, string | undefined> = { eventSlug, slug };
  let missing = false;
  const u = venue.web.marketUrl.replace(/\{(\w+)\}/g, (_, k: string) => {
    const v = vars[k];
    if (v === undefined || v === '') missing = true;
    return encodeURIComponent(v ?? '');
  });
  return missing ? undefined : u;
}

function isoMs(s: string | null | undefined): number | undefined {
  if (!s) return undefined;
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : t;
}

function numeric(v: number | string | null | undefined): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v)) return Number(v);
  return undefined;
}

function compact(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined && v !== null) out[k] = v;
  return out;
}
