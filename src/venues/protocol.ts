import type { Clock } from '../core/clock.js';
import type { Observable } from 'rxjs';
import type { Config, Protocol, VenueConfig } from '../config/schema.js';
import type { CaptureSink } from '../capture/sink.js';
import type { Logger } from '../core/log.js';
import type { MarketUpsert, NormalizedEvent } from '../core/types.js';
import type { Mapper } from './common/mapper.js';
import type { PollStarts } from './common/polls.js';
import type { FeedStats } from './common/stats.js';

/** Where a feed connects: the simulator's loopback URLs or the real venue's. */
export interface FeedEndpoints {
  /** REST base URL (Kalshi `…/trade-api/v2`, Polymarket CLOB, PredictIt `…/api/marketdata`, …). */
  readonly rest: string;
  /** WebSocket URL, for protocols that stream. */
  readonly ws?: string | undefined;
  /** Other bases a protocol needs, by name (Polymarket: `gamma`, `data`). */
  readonly extra?: Readonly<Record<string, string>> | undefined;
}

export interface FeedContext {
  readonly venue: VenueConfig;
  readonly endpoints: FeedEndpoints;
  readonly ingest: Config['ingest'];
  readonly log: Logger;
  /** Where the runtime appends every frame it receives before parsing it (absent: capture off). */
  readonly capture?: CaptureSink | undefined;
  /** The engine's clock: receive stamps are read from it (default: wall time). */
  readonly clock?: Clock | undefined;
  /** Where the polls of every feed of the service claim their starts, so no two start in the same turn (default: one per feed). */
  readonly polls?: PollStarts | undefined;
}

/**
 * A live connection to one venue. `events$` is cold: subscribing discovers the catalog over REST,
 * connects the stream (or starts polling), subscribes, and emits normalized events for as long as
 * it is subscribed, reconnecting with backoff and resyncing books after a disconnect or sequence
 * gap (emitting `feed` events for each). Unsubscribing closes everything.
 */
export interface VenueFeed {
  readonly venue: VenueConfig;
  readonly stats: FeedStats;
  readonly events$: Observable<NormalizedEvent>;
}

/**
 * What the rest of the service needs to know about a protocol's markets, so that no module outside
 * src/venues names a protocol.
 */
export interface ProtocolTraits {
  /** The venue's last trade can sit outside the quoted band: last_price is shown clamped into it (spec 2.3 rule 2). */
  readonly lastPriceInBand: boolean;
  /**
   * The id the matcher reads for a market, when it is not the market id: Polymarket slugs carry
   * league, teams and date ("nfl-ne-sea-2026-09-09") where a condition id says nothing.
   */
  matchId?(marketId: string, extra: Readonly<Record<string, unknown>> | undefined): string;
}

/** The fields of a catalog market that a URL grammar selects on. */
export type UrlCandidate = Pick<MarketUpsert, 'marketId' | 'eventId' | 'seriesId' | 'extra'>;

/**
 * One way to find the markets a market page URL names: an exact market id (as the API serves it),
 * or every market of the venue a predicate accepts.
 */
export type MarketUrlLookup = { readonly marketId: string } | { readonly where: (m: UrlCandidate) => boolean };

/** What each folder under src/venues/<protocol>/ exports as `protocol` from its index.ts. */
export interface ProtocolModule {
  readonly protocol: Protocol;
  readonly traits: ProtocolTraits;
  /**
   * A fresh mapper for one venue speaking this protocol (also used by `crossbook normalize`), made
   * as a live mapper's `replayOptions` say when given them (a replay of the capture); options it
   * does not know or cannot take throw, with what was wrong.
   */
  createMapper(venue: VenueConfig, log?: Logger, options?: Readonly<Record<string, unknown>>): Mapper;
  createFeed(ctx: FeedContext): VenueFeed;
  /**
   * The URL grammar of the venue's market pages (spec 4.3): the percent-decoded path segments of a
   * page URL (a deep link's host first) → lookups, tried in order until one finds a market. A
   * protocol without one reads the last segment as the market id.
   */
  parseMarketUrl?(segments: readonly string[]): readonly MarketUrlLookup[];
}

/** Serves a market id as the API shows it: `<slug>_<venue id>` for prefixed venues (spec 2.2). */
export function apiMarketId(venue: VenueConfig, venueId: string): string {
  return venue.idPrefix ? `${venue.slug}_${venueId}` : venueId;
}

/** The venue's own id of an API market id (inverse of apiMarketId); undefined if the prefix is wrong. */
export function venueMarketId(venue: VenueConfig, marketId: string): string | undefined {
  if (!venue.idPrefix) return marketId;
  const p = `${venue.slug}_`;
  return marketId.startsWith(p) ? marketId.slice(p.length) : undefined;
}

/** The `createMapper` of a protocol whose mappers take no options: refuses any it is given. */
export function optionless(protocol: Protocol, create: (venue: VenueConfig, log?: Logger) => Mapper): ProtocolModule['createMapper'] {
  return (venue, log, options) => {
    const keys = Object.keys(options ?? {});
    if (keys.length > 0) throw new Error(`${protocol} mappers take no options (given: ${keys.join(', ')})`);
    return create(venue, log);
  };
}
