/**
 * Normalized, venue-neutral events. Every mapper yields these; every state store consumes them.
 * Discriminated by a snake_case `type` and carrying the venue's `timestamp` and our
 * `localTimestamp` (ms since epoch), after tardis-node.
 *
 * Prices are integer units (see price.ts): 10_000 = 1 dollar = 100 cents.
 */

/** The label of a venue in the registry (venue_a … venue_h by default). */
export type VenueLabel = string;

/** Our status vocabulary for a market, venue-independent. */
export type MarketStatus = 'initialized' | 'active' | 'closed' | 'determined' | 'finalized';

/** One price level: [price units, size in contracts]. */
export type Level = readonly [price: number, size: number];

/** Which side of a YES-perspective book. */
export type BookSideName = 'bid' | 'ask';

/**
 * When an update happened: the venue's own time (`timestamp`; our receive time when the venue gives
 * none) and when the frame that carried it arrived (`localTimestamp`, stamped by the socket on
 * arrival), ms since epoch. Every normalized event carries both; WebSocket messages pass them on
 * as `venue_ts` and `recv_ts`.
 */
export interface FrameTimes {
  readonly timestamp: number;
  readonly localTimestamp: number;
}

interface Base {
  readonly venue: VenueLabel;
  /** Venue time in ms since epoch (our receive time when the venue gives none). */
  readonly timestamp: number;
  /** When we received the frame, ms since epoch. */
  readonly localTimestamp: number;
}

/** A market listed by a venue, full record (an upsert of the catalog). */
export interface MarketUpsert extends Base {
  readonly type: 'market';
  readonly marketId: string;
  readonly title: string;
  readonly eventTitle?: string | undefined;
  readonly seriesTitle?: string | undefined;
  /** The venue's event id (Kalshi event ticker, Gamma event id, …). */
  readonly eventId?: string | undefined;
  readonly seriesId?: string | undefined;
  /** The outcome this market's YES stands for, when the venue names it (a team, a candidate). */
  readonly outcome?: string | undefined;
  readonly category?: string | undefined;
  readonly tags?: readonly string[] | undefined;
  readonly status: MarketStatus;
  /** ms since epoch. */
  readonly openTime?: number | undefined;
  readonly closeTime?: number | undefined;
  readonly url?: string | undefined;
  /**
   * Book instruments of this market: for venues with one book per outcome token (Polymarket)
   * the YES and NO token ids; for one-book venues just the market id.
   */
  readonly yesInstrument?: string | undefined;
  readonly noInstrument?: string | undefined;
  /** Settlement: 'yes' | 'no' | other venue result string. */
  readonly result?: string | undefined;
  readonly settlementValue?: number | undefined;
  readonly volume?: number | undefined;
  readonly openInterest?: number | undefined;
  readonly liquidity?: number | undefined;
  /**
   * Venue-specific extra fields for venue-specific endpoints (rules, times as the venue wrote them, …). The catalog keeps
   * only the keys something reads (`READ_EXTRA` in src/state/catalog.ts, and those the venue's `web.marketUrl` names).
   */
  readonly extra?: Readonly<Record<string, unknown>> | undefined;
}

/** A status change of a known market. */
export interface MarketStatusChange extends Base {
  readonly type: 'market_status';
  readonly marketId: string;
  readonly status: MarketStatus;
  readonly result?: string | undefined;
  readonly settlementValue?: number | undefined;
  readonly closeTime?: number | undefined;
}

/**
 * Top of book and last price as a venue publishes it (Kalshi ticker, PredictIt/Manifold
 * listings). Missing values are undefined, never 0 (spec 2.1: a stored zero is a real zero).
 */
export interface Quote extends Base {
  readonly type: 'quote';
  readonly marketId: string;
  readonly yesBid?: number | undefined;
  readonly yesAsk?: number | undefined;
  readonly lastPrice?: number | undefined;
  readonly volume?: number | undefined;
  readonly openInterest?: number | undefined;
  readonly liquidity?: number | undefined;
}

/**
 * A full L2 book of one instrument, YES perspective of that instrument, replacing what was there.
 * `instrument` is the venue's own book key (Kalshi ticker, Polymarket asset id).
 */
export interface BookSnapshot extends Base {
  readonly type: 'book_snapshot';
  readonly marketId: string;
  readonly instrument: string;
  /** Best first. */
  readonly bids: readonly Level[];
  /** Best first. */
  readonly asks: readonly Level[];
}

/** Absolute level changes to one instrument's book: size 0 deletes. */
export interface BookDelta extends Base {
  readonly type: 'book_delta';
  readonly marketId: string;
  readonly instrument: string;
  readonly changes: readonly (readonly [side: BookSideName, price: number, size: number])[];
}

/** One executed trade. */
export interface Trade extends Base {
  readonly type: 'trade';
  readonly marketId: string;
  readonly instrument?: string | undefined;
  readonly tradeId: string;
  /** Price of the instrument traded, units. */
  readonly price: number;
  /** YES-perspective price of the market, units. */
  readonly yesPrice: number;
  readonly size: number;
  /** 'buy' | 'sell' from the taker's perspective on `instrument`. */
  readonly side?: 'buy' | 'sell' | undefined;
  /** Which outcome the taker bought: 'yes' | 'no'. */
  readonly takerSide?: 'yes' | 'no' | undefined;
  readonly maker?: string | undefined;
  readonly taker?: string | undefined;
  /** The taker's public profile as the venue shows it on the trade (venue_b data-api), when set. */
  readonly takerName?: string | undefined;
  readonly takerPseudonym?: string | undefined;
  readonly outcome?: string | undefined;
}

/** Something about the feed itself rather than a market. */
export interface FeedEvent extends Base {
  readonly type: 'feed';
  /**
   * connected / disconnected: the stream; gap: a sequence gap or book integrity failure (books of
   * `instrument`, or all, reset until resynced); resynced: fresh snapshots after a gap; stalled: no
   * frames for too long; error: a failure worth surfacing; catalog: a REST catalog refresh
   * succeeded (drives /status freshness); degraded: the venue is sending malformed frames (they
   * are dropped; books stay consistent); recovered: none for a while (both from HealthStore).
   */
  readonly state: 'connected' | 'disconnected' | 'gap' | 'resynced' | 'stalled' | 'error' | 'catalog' | 'degraded' | 'recovered';
  readonly detail?: string | undefined;
  /** The instrument or subscription concerned, when the event is narrower than the venue. */
  readonly instrument?: string | undefined;
}

export type NormalizedEvent = MarketUpsert | MarketStatusChange | Quote | BookSnapshot | BookDelta | Trade | FeedEvent;

export type NormalizedType = NormalizedEvent['type'];
