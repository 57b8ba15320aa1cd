import type { VenueConfig } from '../config/schema.js';
import { PAYOUT, toCents } from '../core/price.js';
import type { MarketRecord } from '../state/catalog.js';
import type { QuoteRecord } from '../state/quotes.js';
import { marketUrl, nativeId } from '../venues/directory.js';
import { PROTOCOL_MODULES } from '../venues/index.js';

/** cents from units, or null when missing (spec 2.1: a stored zero is 0, missing is null). */
export function cents(u: number | undefined): number | null {
  return u === undefined ? null : toCents(u);
}

/**
 * NO-side cents of a YES price in units (100 − YES), or null when missing. Complemented in integer
 * units before dividing: 100 − 48.1 in floating point is 51.900000000000006, not 51.9.
 */
export function noCents(u: number | undefined): number | null {
  return u === undefined ? null : toCents(PAYOUT - u);
}

export interface QuotePrices {
  yes_bid: number | null;
  yes_ask: number | null;
  no_bid: number | null;
  no_ask: number | null;
  last_price: number | null;
}

/**
 * The price fields of a quote in cents, the same on every endpoint and the WebSocket: NO prices
 * derive from the YES book (NO bid = 100 − YES ask), and where the protocol says so (venue_b, spec 2.3
 * rule 2: "always") last_price is clamped into the YES bid–ask band.
 */
export function quotePrices(v: VenueConfig, q: QuoteRecord | undefined): QuotePrices {
  const yesBid = q?.yesBid;
  const yesAsk = q?.yesAsk;
  let last = q?.lastPrice;
  if (PROTOCOL_MODULES[v.protocol].traits.lastPriceInBand && last !== undefined) {
    if (yesBid !== undefined && last < yesBid) last = yesBid;
    if (yesAsk !== undefined && last > yesAsk) last = yesAsk;
  }
  return { yes_bid: cents(yesBid), yes_ask: cents(yesAsk), no_bid: noCents(yesAsk), no_ask: noCents(yesBid), last_price: cents(last) };
}

/** The API's simple status of a market: the /markets filter vocabulary (active, closed) plus upcoming. */
export function apiStatus(m: MarketRecord): 'active' | 'closed' | 'upcoming' {
  return m.status === 'active' ? 'active' : m.status === 'initialized' ? 'upcoming' : 'closed';
}

/**
 * ticker_name (spec 2.2, 2.3): for prefixed venues (venue_g, venue_h: the API id carries the slug
 * prefix) the venue's own market id: on venue_h the market the outcome belongs to (the API id is
 * the outcome's), else the unprefixed id. Elsewhere the venue's human-readable key: the market slug
 * where the venue has one (Polymarket), otherwise the ticker/id.
 */
export function tickerName(v: VenueConfig, m: MarketRecord): string {
  if (v.idPrefix) {
    const venueMarket = m.extra?.['venueMarketId'];
    return typeof venueMarket === 'string' && venueMarket !== '' ? venueMarket : nativeId(v, m.marketId);
  }
  const slug = m.extra?.['slug'];
  return typeof slug === 'string' && slug !== '' ? slug : m.marketId;
}

export interface MarketJson {
  platform: string;
  market_id: string;
  title: string;
  series_title: string | null;
  event_title: string | null;
  ticker_name: string;
  outcome: string | null;
  category: string | null;
  status: string;
  close_time: string | null;
  url: string | null;
  yes_bid: number | null;
  yes_ask: number | null;
  no_bid: number | null;
  no_ask: number | null;
  last_price: number | null;
  volume: number | null;
  liquidity: number | null;
  updated_at: string | null;
  /** = market_id (README "Clients of the hosted API"). */
  id: string;
  /** = url. */
  source_url: string | null;
  /** = close_time. */
  expiration_date: string | null;
  /** The venue's open time of the market, else when crossbook first saw it. */
  created_at: string;
  /** The price fields again, grouped (cents; volume and liquidity as the venue reports them). */
  price: QuotePrices & { volume: number | null; liquidity: number | null };
  rules?: { primary: string | null; secondary: string | null } | undefined;
}

/**
 * The market record of the API (spec 2.3), prices from `quotePrices`. For yes-only venues the
 * NO price derived from the YES book is still the honest NO price of the contract, so it is shown.
 */
export function marketJson(v: VenueConfig, m: MarketRecord, q: QuoteRecord | undefined, withRules = false): MarketJson {
  const prices = quotePrices(v, q);
  const volume = q?.volume ?? m.volume ?? null;
  const liquidity = q?.liquidity ?? m.liquidity ?? null;
  const closeTime = m.closeTime !== undefined ? new Date(m.closeTime).toISOString() : null;
  const url = m.url ?? marketUrl(v, nativeId(v, m.marketId), m.extra) ?? null;
  const out: MarketJson = {
    platform: v.slug,
    market_id: m.marketId,
    title: m.title,
    series_title: m.seriesTitle ?? null,
    event_title: m.eventTitle ?? null,
    ticker_name: tickerName(v, m),
    outcome: m.outcome ?? null,
    category: m.category ?? null,
    status: apiStatus(m),
    close_time: closeTime,
    url,
    ...prices,
    volume,
    liquidity,
    updated_at: q && q.updatedAt > 0 ? new Date(q.updatedAt).toISOString() : null,
    // The names clients of the hosted API read, beside crossbook's own (README "Clients of the hosted API").
    id: m.marketId,
    source_url: url,
    expiration_date: closeTime,
    created_at: new Date(m.openTime ?? m.firstSeenAt).toISOString(),
    price: { ...prices, volume, liquidity },
  };
  if (withRules) {
    const primary = m.extra?.['rules_primary'];
    const secondary = m.extra?.['rules_secondary'];
    out.rules = { primary: typeof primary === 'string' ? primary : null, secondary: typeof secondary === 'string' ? secondary : null };
  }
  return out;
}

/**
 * Per-market JSON fragments, rebuilt only when the market or its quote changed: list endpoints
 * join fragments instead of stringifying every market on every request.
 */
export class FragmentCache {
  private readonly cache = new Map<string, { catalogAt: number; quoteVersion: number; json: string }>();

  get(key: string, v: VenueConfig, m: MarketRecord, q: QuoteRecord | undefined, withRules: boolean): string {
    if (withRules) return JSON.stringify(marketJson(v, m, q, true));
    const qv = q?.version ?? -1;
    const hit = this.cache.get(key);
    if (hit && hit.catalogAt === m.updatedAt && hit.quoteVersion === qv) return hit.json;
    const json = JSON.stringify(marketJson(v, m, q));
    this.cache.set(key, { catalogAt: m.updatedAt, quoteVersion: qv, json });
    return json;
  }
}
