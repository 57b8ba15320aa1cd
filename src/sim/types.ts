import type { Protocol, VenueConfig } from '../config/schema.js';
import type { BookSideName, MarketStatus, VenueLabel } from '../core/types.js';
import type { FeedEndpoints } from '../venues/protocol.js';
import type { SimBook } from './book.js';

/**
 * The simulator's world: real-world events and propositions with a fair probability that walks,
 * and each venue's listings of them (own ids, title phrasing, status, YES-perspective book).
 * Everything here is synthetic and seeded: SYNTHETIC DATA, from the simulator only.
 */

export type SimCategory = 'sports' | 'politics' | 'economics' | 'crypto' | 'entertainment';

export interface SimTeam {
  /** "Seattle Seahawks" */
  readonly name: string;
  /** "Seattle" */
  readonly city: string;
  /** "Seahawks" */
  readonly nick: string;
  /** "SEA" */
  readonly abbr: string;
}

export interface SimEvent {
  readonly id: string;
  readonly category: SimCategory;
  /** Canonical title, e.g. "New England Patriots at Seattle Seahawks", "2028 US Presidential Election". */
  readonly title: string;
  readonly sport?: string | undefined;
  /** League code: NFL, NBA, MLB, NHL, EPL, NCAAF, LOL, CS2 … */
  readonly league?: string | undefined;
  readonly home?: SimTeam | undefined;
  readonly away?: SimTeam | undefined;
  /** Game start / event date, ms. */
  readonly startTime: number;
  /** When markets on it close, ms. */
  readonly closeTime: number;
  state: 'scheduled' | 'live' | 'final';
  /** Futures (season winner, championship) rather than a single game. */
  readonly futures: boolean;
  readonly props: SimProposition[];
}

export interface SimProposition {
  readonly id: string;
  readonly event: SimEvent;
  readonly marketClass: 'moneyline' | 'spread' | 'total' | 'player_prop' | 'other' | null;
  /** moneyline, spread, total, player_points, btc_above, fed_rate, election_winner, … */
  readonly marketType: string;
  readonly period: 'full' | '1H' | null;
  readonly line: number | null;
  readonly side: 'home' | 'away' | 'over' | 'under' | null;
  readonly player?: string | undefined;
  readonly team?: SimTeam | undefined;
  /** The team/candidate/asset/country the proposition is about. */
  readonly subject: string;
  /** Plain English statement of YES, e.g. "Seattle Seahawks win by more than 2.5 points". */
  readonly statement: string;
  /** Fair probability of YES, integer units (0..10_000). Walks over time. */
  fair: number;
  resolved?: 'yes' | 'no' | undefined;
}

export interface SimListing {
  readonly venue: VenueLabel;
  readonly protocol: Protocol;
  /** The venue-native market id (Kalshi market ticker, Polymarket condition id, …, no API prefix). */
  readonly id: string;
  readonly prop: SimProposition;
  readonly event: SimEvent;
  /** This listing's YES is the proposition's NO (the same market phrased as its complement). */
  readonly inverted: boolean;
  readonly title: string;
  readonly eventTitle: string;
  readonly seriesTitle?: string | undefined;
  /** Outcome label (team, candidate, "Yes"). */
  readonly outcome?: string | undefined;
  readonly category: string;
  readonly tags: readonly string[];
  status: MarketStatus;
  readonly createdAt: number;
  readonly openTime: number;
  readonly closeTime: number;
  /** YES perspective of this listing (already inverted when `inverted`). */
  readonly book: SimBook;
  /** Last trade price, YES units of this listing. */
  last?: number | undefined;
  volume: number;
  openInterest: number;
  /** Protocol-specific ids and fields, see src/sim/phrasing/ for the keys each protocol gets. */
  readonly ids: Readonly<Record<string, string>>;
  /** Per-listing monotonically increasing change counter (sim servers use it for seq). */
  version: number;
}

export interface SimTrade {
  readonly id: string;
  readonly listing: SimListing;
  /** YES price of the listing, units. */
  readonly price: number;
  readonly size: number;
  /** The outcome the taker bought. */
  readonly takerSide: 'yes' | 'no';
  readonly maker: string;
  readonly taker: string;
  readonly timestamp: number;
}

export type SimChange =
  | {
      readonly type: 'book';
      readonly listing: SimListing;
      /** Absolute new size and the size before, so relative-delta protocols can send the difference. */
      readonly changes: readonly (readonly [side: BookSideName, price: number, size: number, prevSize: number])[];
      readonly timestamp: number;
    }
  | { readonly type: 'trade'; readonly trade: SimTrade }
  | { readonly type: 'status'; readonly listing: SimListing; readonly timestamp: number }
  | { readonly type: 'listing'; readonly listing: SimListing; readonly timestamp: number };

/** What a protocol server can be told to do wrong (tests and the fault suite). */
export type SimFault =
  /** Close every client connection abruptly. */
  | { readonly kind: 'disconnect' }
  /** Skip one sequence number on every stream that has them. */
  | { readonly kind: 'gap' }
  /** Send `count` frames that are not valid for the protocol (bad JSON, wrong types, truncated). */
  | { readonly kind: 'malformed'; readonly count?: number }
  /** Stop sending anything (and stop answering pings) for `ms`, without closing. */
  | { readonly kind: 'stall'; readonly ms: number }
  /** Send the current snapshot again for every subscribed instrument. */
  | { readonly kind: 'duplicate_snapshot' }
  /**
   * Out-of-order frames: on every connection the next sequenced frame is held back and sent after
   * the one that follows it on the same sequence (or after 250 ms). Sequenced protocols only
   * (kalshi, exchange); a no-op where every message is a full book or a poll.
   */
  | { readonly kind: 'reorder' }
  /**
   * A venue sending garbage for a while: `perSecond` (default 50) malformed frames a second for
   * `ms`, interleaved with the real stream (applied by `withGarbage`, which startSim puts on every
   * server, on top of each protocol's `malformed`).
   */
  | { readonly kind: 'garbage'; readonly ms: number; readonly perSecond?: number };

export interface SimWorldApi {
  readonly seed: number;
  /** Listings of one venue (by label). */
  listings(venue: VenueLabel): readonly SimListing[];
  listing(venue: VenueLabel, id: string): SimListing | undefined;
  readonly events: readonly SimEvent[];
  /** Registers a change listener; returns the unsubscribe function. */
  onChange(fn: (c: SimChange) => void): () => void;
  /** Recent trades of a venue, oldest first (data-api style history). */
  trades(venue: VenueLabel): readonly SimTrade[];
  now(): number;
}

/** A running protocol server of the simulator, on loopback. */
export interface SimServer {
  readonly venue: VenueConfig;
  readonly endpoints: FeedEndpoints;
  /** Bad frames the `garbage` fault has sent to each connection so far (servers that take it). */
  readonly garbageFrames?: number;
  fault(f: SimFault): void;
  close(): Promise<void>;
}

export interface SimServerOptions {
  readonly host: string;
  /** 0 = any free port. */
  readonly port: number;
}

/** What each src/sim/protocols/<protocol>.ts exports as `serve`. */
export type SimServerFactory = (world: SimWorldApi, venue: VenueConfig, opts: SimServerOptions) => Promise<SimServer>;
