import type { VenueConfig } from '../../config/schema.js';
import type { MarketRecord } from '../../state/catalog.js';
import type { EngineState } from '../../state/engine.js';
import { nativeId } from '../../venues/directory.js';
import { cents, noCents } from '../../views/market.js';
import type { ApiContext } from '../context.js';
import { z } from 'zod';
import { centsOrNull, strOrNull, time } from '../../views/schemas.js';
import { ci } from '../../access/params.js';

/** The venue_a market record (spec 2.11). */
export const VenueAMarket = z
  .object({
    ticker: z.string().describe('full market ticker'),
    event_ticker: strOrNull('event ticker'),
    series_ticker: strOrNull('series ticker'),
    title: z.string(),
    subtitle: strOrNull('outcome subtitle'),
    category: z.string().optional().describe('series category (markets of catalogued series only)'),
    tags: z.array(z.string()).optional().describe('series tags (markets of catalogued series only)'),
    status: z.enum(['initialized', 'active', 'closed', 'determined', 'finalized']),
    result: strOrNull('settlement result'),
    settlement_value_dollars: strOrNull('settlement value of YES, decimal dollars'),
    yes_bid: centsOrNull('best YES bid'),
    yes_ask: centsOrNull('best YES ask'),
    no_bid: centsOrNull('best NO bid'),
    no_ask: centsOrNull('best NO ask'),
    last_price: centsOrNull('last trade'),
    volume_fp: strOrNull('volume, contracts, fixed-point string'),
    open_interest_fp: strOrNull('open interest, contracts, fixed-point string'),
    volume: z.number().optional().describe('volume, contracts, as the venue reports it'),
    open_interest: z.number().optional().describe('open interest, contracts'),
    first_seen_at: time('first observed by this instance'),
    created_time: strOrNull('created, ISO 8601 as the venue gives it'),
    open_time: strOrNull('opens, ISO 8601 as the venue gives it'),
    close_time: strOrNull('closes, ISO 8601 as the venue gives it'),
    expiration_time: strOrNull('expires, ISO 8601 as the venue gives it'),
    updated_time: strOrNull('last venue update, ISO 8601 as the venue gives it'),
    settlement_ts: strOrNull('settled, ISO 8601 as the venue gives it'),
    is_combo: z.boolean().describe('combo/parlay market'),
    rules: z
      .object({ primary: strOrNull('primary rules'), secondary: strOrNull('secondary rules') })
      .optional()
      .describe('with include=rules, and always on the single-market route'),
  })
  .describe('VenueAMarket');

/** The pattern of the categories a venue lists, any letter case (the category filters' accepted values). */
export function categoryPattern(categories: readonly string[]): string {
  return categories.length ? `^(${categories.map(ci).join('|')})$` : '^(?!)$';
}

/** A series of the catalog, as /<slug>/series serves it. */
export interface Series {
  ticker: string;
  title: string | null;
  category: string | null;
  tags: readonly string[];
  frequency: string | null;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * The market's series is in the series catalog (its title came from it): only then does the
 * record carry category and tags, and only then can a category filter select it (spec 2.11). An
 * event-level category alone does not count.
 */
export const inSeriesCatalog = (m: MarketRecord): boolean => m.seriesId !== undefined && m.seriesTitle !== undefined && m.category !== undefined;

/** What every venue_a route group reads: the venue (the registry entry with `catalog`), its markets and series. */
export class VenueA {
  readonly label: string;
  readonly slug: string;
  readonly state: EngineState;

  constructor(
    readonly ctx: ApiContext,
    readonly venue: VenueConfig,
  ) {
    this.label = venue.label;
    this.slug = venue.slug;
    this.state = ctx.state;
  }

  /** The venue's native ticker of a market id. */
  ticker(marketId: string): string {
    return nativeId(this.venue, marketId);
  }

  /** Every series in the series catalog, by ticker. */
  seriesIndex(): Map<string, Series> {
    const out = new Map<string, Series>();
    for (const m of this.state.catalog.venue(this.label).values()) {
      if (!inSeriesCatalog(m) || out.has(m.seriesId!)) continue;
      out.set(m.seriesId!, {
        ticker: m.seriesId!,
        title: m.seriesTitle ?? null,
        category: m.category!,
        tags: m.tags ?? [],
        frequency: str(m.extra?.['frequency']) ?? null,
      });
    }
    return out;
  }

  /** Every category of the series catalog, sorted. */
  categories(): string[] {
    return [...new Set([...this.seriesIndex().values()].map((s) => s.category!))].sort();
  }

  /** A category parameter as the catalog spells it (case-insensitive match), or the message of an unknown one. */
  checkCategory(c: string | undefined): string | undefined | { error: string } {
    if (c === undefined) return undefined;
    const all = this.categories();
    const hit = all.find((x) => x.toLowerCase() === c.toLowerCase());
    return hit ?? { error: `invalid parameter "category": "${c}" is not a category; accepted: ${all.join(', ') || '(none known yet)'}` };
  }

  /** The venue's catalog is not known to be current: feed down, never listed, or its last listing too old. */
  degraded(): boolean {
    const h = this.state.health.get(this.label);
    const now = this.ctx.clock.now();
    return !h || !h.connected || h.lastCatalogAt === 0 || now - h.lastCatalogAt > this.venue.freshness.catalogMaxAgeSec * 1000;
  }

  /** The venue's markets in market id order (the order of catalog pages). */
  sortedMarkets(): MarketRecord[] {
    const keys = this.ctx.marketKeys();
    const recs = this.ctx.marketRecords();
    const prefix = `${this.label}:`;
    const out: MarketRecord[] = [];
    for (let i = 0; i < keys.length; i++) if (keys[i]!.startsWith(prefix)) out.push(recs[i]!);
    return out;
  }

  /** A market as the catalog serves it (record 2.11), live prices included; rules on request. */
  record(m: MarketRecord, withRules: boolean): z.output<typeof VenueAMarket> {
    const q = this.state.quotes.get(this.label, m.marketId);
    const x = m.extra ?? {};
    const out: z.output<typeof VenueAMarket> = {
      ticker: this.ticker(m.marketId),
      event_ticker: m.eventId ?? null,
      series_ticker: m.seriesId ?? null,
      title: m.title,
      subtitle: m.outcome ?? null,
      ...(inSeriesCatalog(m) ? { category: m.category, tags: [...(m.tags ?? [])] } : {}),
      status: m.status,
      result: m.result ?? null,
      settlement_value_dollars:
        str(x['settlement_value_dollars']) ??
        (m.settlementValue !== undefined && (m.status === 'determined' || m.status === 'finalized') ? (m.settlementValue / 10_000).toFixed(4) : null),
      yes_bid: cents(q?.yesBid),
      yes_ask: cents(q?.yesAsk),
      no_bid: noCents(q?.yesAsk),
      no_ask: noCents(q?.yesBid),
      last_price: cents(q?.lastPrice),
      volume_fp: str(x['volume_fp']) ?? (m.volume !== undefined ? m.volume.toFixed(2) : null),
      open_interest_fp: str(x['open_interest_fp']) ?? (m.openInterest !== undefined ? m.openInterest.toFixed(2) : null),
      ...(typeof x['volume'] === 'number' ? { volume: x['volume'] } : {}),
      ...(typeof x['open_interest'] === 'number' ? { open_interest: x['open_interest'] } : {}),
      first_seen_at: new Date(m.firstSeenAt).toISOString(),
      created_time: str(x['created_time']) ?? null,
      open_time: str(x['open_time']) ?? (m.openTime !== undefined ? new Date(m.openTime).toISOString() : null),
      close_time: str(x['close_time']) ?? (m.closeTime !== undefined ? new Date(m.closeTime).toISOString() : null),
      expiration_time: str(x['expiration_time']) ?? null,
      updated_time: str(x['updated_time']) ?? null,
      settlement_ts: str(x['settlement_ts']) ?? null,
      is_combo: x['combo'] === true,
    };
    if (withRules) out.rules = { primary: str(x['rules_primary']) ?? null, secondary: str(x['rules_secondary']) ?? null };
    return out;
  }
}
