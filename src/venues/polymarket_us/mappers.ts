import type { VenueConfig } from '../../config/schema.js';
import type { Logger } from '../../core/log.js';
import { parseProbabilityDollars, parseSize } from '../../core/price.js';
import type { BookSnapshot, FeedEvent, MarketStatus, MarketUpsert, NormalizedEvent, Quote, VenueLabel } from '../../core/types.js';
import type { Mapper } from '../common/mapper.js';
import { FeedStats } from '../common/stats.js';
// The level ordering rule is the same as on the international venue (any order in, best first out).
import { parseLevels } from '../polymarket/mappers.js';
import { apiMarketId } from '../protocol.js';
import {
  isMarketBook,
  isMarketDataLite,
  isObject,
  usEventsResponseSchema,
  usMarketBookSchema,
  usMarketsResponseSchema,
  type Amount,
  type MarketBook,
  type UsEvent,
  type UsMarket,
  type WsLevel,
} from './raw.js';

/**
 * Polymarket US → normalized events. One market per slug, one YES-only book per market:
 * instrument = slug, marketId = apiMarketId(venue, slug) (`venue_g_<slug>`).
 */

/** Our status of a market state; undefined for a state we do not know. */
export function statusOfState(state: string): MarketStatus | undefined {
  switch (state) {
    case 'MARKET_STATE_OPEN':
    case 'MARKET_STATE_MATCH_AND_CLOSE_AUCTION':
      return 'active';
    case 'MARKET_STATE_PREOPEN':
      return 'initialized';
    // Not tradeable now; OPEN again brings it back to active.
    case 'MARKET_STATE_SUSPENDED':
    case 'MARKET_STATE_HALTED':
    case 'MARKET_STATE_EXPIRED':
      return 'closed';
    case 'MARKET_STATE_TERMINATED':
      return 'finalized';
    default:
      return undefined;
  }
}

/**
 * The Polymarket US mapper. `map()` takes a parsed WebSocket message and, for
 * `crossbook normalize`, the REST documents (`{markets:[…]}`, `{events:[…]}`, a MarketBook).
 *
 * State: `status` (slug → last status told, seeded by learn() from REST upserts) so that a
 * `state` change in a book message becomes one `market_status`, not one per message; kept across
 * reset() (catalog knowledge). `stats` (slug → last stats signature) so that a quote is emitted only
 * when last price / volume / open interest change; cleared by reset() so a reconnect re-tells them.
 */
export class PolymarketUsMapper implements Mapper {
  readonly venue: VenueLabel;
  readonly stats: FeedStats;
  private readonly status = new Map<string, MarketStatus>();
  private readonly lastStats = new Map<string, string>();

  constructor(
    readonly config: VenueConfig,
    log?: Logger,
    stats?: FeedStats,
  ) {
    this.venue = config.label;
    this.stats = stats ?? new FeedStats(log);
  }

  /** Remembers the status of a market upsert mapped from REST. */
  learn(u: MarketUpsert): void {
    if (u.yesInstrument) this.status.set(u.yesInstrument, u.status);
  }

  reset(): void {
    this.lastStats.clear();
  }

  map(raw: unknown, localTimestamp: number): Iterable<NormalizedEvent> {
    // The market data stream's frame, mapped into an array (the frame path's plain loop) rather
    // than through the generators below; the same events and counts either way.
    if (isObject(raw) && 'marketData' in raw && isMarketBook(raw['marketData'])) {
      this.stats.frames++;
      this.stats.lastFrameAt = localTimestamp;
      const out = this.book(raw['marketData'], localTimestamp, []);
      this.stats.events += out.length;
      return out;
    }
    return this.frames(raw, localTimestamp);
  }

  private *frames(raw: unknown, localTimestamp: number): Iterable<NormalizedEvent> {
    this.stats.frames++;
    this.stats.lastFrameAt = localTimestamp;
    for (const e of this.one(raw, localTimestamp)) {
      this.stats.events++;
      yield e;
    }
  }

  private *one(m: unknown, local: number): Iterable<NormalizedEvent> {
    if (!isObject(m)) return this.stats.malformedFrame('frame', 'not an object', m);
    if ('marketData' in m) {
      const b = m['marketData'];
      if (isMarketBook(b)) yield* this.book(b, local, []);
      else this.stats.malformedFrame('marketData', 'bad shape', m);
    } else if ('heartbeat' in m) this.stats.ignored++;
    else if ('marketDataLite' in m) {
      const l = m['marketDataLite'];
      if (isMarketDataLite(l)) yield* this.lite(l, local);
      else this.stats.malformedFrame('marketDataLite', 'bad shape', m);
    } else if ('error' in m) {
      const f: FeedEvent = {
        type: 'feed',
        venue: this.venue,
        timestamp: local,
        localTimestamp: local,
        state: 'error',
        detail: `${typeof m['requestId'] === 'string' ? `${m['requestId']}: ` : ''}${String(m['error'])}`,
      };
      yield f;
    } else if ('trade' in m) {
      // venue_g is not covered by trade feeds (spec 2.2); the feed does not subscribe to them.
      this.stats.ignored++;
    } else if ('subscribe' in m || 'unsubscribe' in m)
      this.stats.ignored++; // our own requests in a recording
    else if (Array.isArray(m['markets']) || Array.isArray(m['events'])) yield* this.rest(m, local);
    else if ('marketSlug' in m && 'bids' in m && 'offers' in m) {
      const r = usMarketBookSchema.safeParse(m);
      if (r.success) yield* this.book(r.data, local, []);
      else this.stats.malformedFrame('market_book', r.error.issues[0]?.message ?? 'invalid', m);
    } else this.stats.unknownFrame(Object.keys(m).slice(0, 3).join(',') || 'empty');
  }

  /** A market data book's events appended to `out` (and `out` returned). */
  private book(b: MarketBook, local: number, out: NormalizedEvent[]): NormalizedEvent[] {
    const ts = b.transactTime === undefined ? local : Date.parse(b.transactTime);
    const bids = levels(b.bids, true);
    const asks = levels(b.offers, false);
    const status = statusOfState(b.state);
    const st = b.stats;
    const last = st?.lastTradePx === undefined ? undefined : price(st.lastTradePx);
    const volume = st?.sharesTraded === undefined ? undefined : parseSize(st.sharesTraded);
    const oi = st?.openInterest === undefined ? undefined : parseSize(st.openInterest);
    if (Number.isNaN(ts) || !bids || !asks || Number.isNaN(last) || Number.isNaN(volume) || Number.isNaN(oi)) {
      this.stats.malformedFrame('marketData', 'bad price, size or time', b);
      return out;
    }
    if (status === undefined) this.stats.unknownFrame(`state:${b.state}`);
    const slug = b.marketSlug;
    const marketId = apiMarketId(this.config, slug);
    const snap: BookSnapshot = {
      type: 'book_snapshot',
      venue: this.venue,
      timestamp: ts,
      localTimestamp: local,
      marketId,
      instrument: slug,
      bids,
      asks,
    };
    out.push(snap);
    if (status !== undefined && this.status.get(slug) !== status) {
      this.status.set(slug, status);
      out.push({ type: 'market_status', venue: this.venue, timestamp: ts, localTimestamp: local, marketId, status });
    }
    if (st !== undefined) {
      const sig = `${last}|${volume}|${oi}`;
      if (this.lastStats.get(slug) !== sig) {
        this.lastStats.set(slug, sig);
        const q: Quote = { type: 'quote', venue: this.venue, timestamp: ts, localTimestamp: local, marketId, lastPrice: last, volume, openInterest: oi };
        out.push(q);
      }
    }
    return out;
  }

  private *lite(l: { marketSlug: string; bestBid?: Amount; bestAsk?: Amount; lastTradePx?: Amount }, local: number): Iterable<NormalizedEvent> {
    const bid = l.bestBid === undefined ? undefined : price(l.bestBid);
    const ask = l.bestAsk === undefined ? undefined : price(l.bestAsk);
    const last = l.lastTradePx === undefined ? undefined : price(l.lastTradePx);
    if (Number.isNaN(bid) || Number.isNaN(ask) || Number.isNaN(last)) {
      this.stats.malformedFrame('marketDataLite', 'bad price', l);
      return;
    }
    const q: Quote = {
      type: 'quote',
      venue: this.venue,
      timestamp: local,
      localTimestamp: local,
      marketId: apiMarketId(this.config, l.marketSlug),
      yesBid: bid,
      yesAsk: ask,
      lastPrice: last,
    };
    yield q;
  }

  private *rest(m: Record<string, unknown>, local: number): Iterable<NormalizedEvent> {
    if (Array.isArray(m['events'])) {
      const r = usEventsResponseSchema.safeParse(m);
      if (!r.success) return this.stats.malformedFrame('events', r.error.issues[0]?.message ?? 'invalid', m);
      for (const ev of r.data.events)
        for (const mk of ev.markets ?? []) {
          const u = usMarketToUpsert(this.config, { ...mk, eventSlug: mk.eventSlug ?? ev.slug }, ev, local);
          this.learn(u);
          yield u;
        }
      return;
    }
    const r = usMarketsResponseSchema.safeParse(m);
    if (!r.success) return this.stats.malformedFrame('markets', r.error.issues[0]?.message ?? 'invalid', m);
    for (const mk of r.data.markets) {
      const u = usMarketToUpsert(this.config, mk, undefined, local);
      this.learn(u);
      yield u;
    }
  }
}

/**
 * A REST market (with its event, when known) → market upsert. Status: closed → closed; not active →
 * initialized; else active (the WebSocket `state` refines it later).
 */
export function usMarketToUpsert(venue: VenueConfig, m: UsMarket, ev: UsEvent | undefined, localTimestamp: number): MarketUpsert {
  const status: MarketStatus = m.closed ? 'closed' : !m.active ? 'initialized' : 'active';
  const tags = (ev?.tags ?? []).map((t) => t.label).filter((l): l is string => typeof l === 'string' && l.length > 0);
  const close = m.endDate ?? ev?.endTime ?? undefined;
  const closeTime = close ? Date.parse(close) : NaN;
  const openTime = ev?.startTime ? Date.parse(ev.startTime) : NaN;
  return {
    type: 'market',
    venue: venue.label,
    timestamp: localTimestamp,
    localTimestamp,
    marketId: apiMarketId(venue, m.slug),
    title: m.title,
    eventTitle: ev?.title,
    eventId: ev ? String(ev.id) : undefined,
    seriesTitle: ev?.series?.title ?? undefined,
    seriesId: ev?.series?.id === undefined || ev.series.id === null ? undefined : String(ev.series.id),
    outcome: m.outcome ?? undefined,
    category: m.category ?? undefined,
    tags: tags.length ? tags : undefined,
    status,
    openTime: Number.isNaN(openTime) ? undefined : openTime,
    closeTime: Number.isNaN(closeTime) ? undefined : closeTime,
    url: venue.web.marketUrl.includes('{slug}') ? venue.web.marketUrl.replace('{slug}', encodeURIComponent(m.slug)) : undefined,
    // YES-only venue: one book per market, keyed by slug; no NO instrument.
    yesInstrument: m.slug,
    volume: m.volume ?? undefined,
    liquidity: m.liquidity ?? undefined,
    extra: { slug: m.slug, id: m.id, ...(m.eventSlug ? { eventSlug: m.eventSlug } : {}) },
  };
}

/** An Amount in dollars → units; NaN unless USD (or unstated) and inside [0, 1]. */
function price(a: Amount): number {
  if (a.currency !== undefined && a.currency !== 'USD') return NaN;
  return parseProbabilityDollars(a.value);
}

function levels(ls: readonly WsLevel[], descending: boolean): ReturnType<typeof parseLevels> {
  for (const l of ls) if (l.px.currency !== undefined && l.px.currency !== 'USD') return undefined;
  return parseLevels(
    ls.map((l) => ({ price: l.px.value, size: l.qty })),
    descending,
  );
}
