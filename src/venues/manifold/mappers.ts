import type { VenueConfig } from '../../config/schema.js';
import type { Logger } from '../../core/log.js';
import { PAYOUT, roundSize, unitsFromProbability } from '../../core/price.js';
import type { MarketStatus, MarketUpsert, NormalizedEvent, Quote } from '../../core/types.js';
import type { Mapper } from '../common/mapper.js';
import { FeedStats } from '../common/stats.js';
import { apiMarketId } from '../protocol.js';
import { manifoldAnswerSchema, manifoldMarketShellSchema, MULTI_ANSWER_TYPES, UNLISTED_TYPES, type ManifoldAnswer, type ManifoldMarketShell } from './raw.js';
import { UpsertChanges } from '../common/frames.js';
import { without, issue } from '../common/util.js';

/**
 * Manifold → normalized events.
 *
 * - BINARY market → one market: marketId = contract id, title = eventTitle = the question,
 *   eventId = contract id.
 * - MULTIPLE_CHOICE / FREE_RESPONSE → one market per answer: marketId = `<contractId>:<answerId>`
 *   (answer ids of old dpm-2 markets are "1", "2", … and only unique inside their contract, so
 *   the contract id is part of the key; neither id contains ':'). title = outcome = the answer
 *   text, the clean outcome label (spec 2.3 rule 1); eventTitle = the question; eventId = the
 *   contract id.
 * - Quote: lastPrice = the probability in units. Manifold has no book, so yesBid and yesAsk are
 *   never set (an AMM has no resting bid or ask to report; inventing a spread around the
 *   probability would be made-up data). volume and liquidity are in the market's token (mana or
 *   CASH), rounded to 1e-6.
 * - Status: finalized once resolved; closed once `closeTime` has passed (by our receive time);
 *   active otherwise. Results: YES → 'yes' (settlement 10_000), NO → 'no' (0), MKT → 'MKT' with
 *   the resolution probability when given, CANCEL → 'CANCEL'. A multi-answer market resolved to
 *   one answer id is 'yes' for that answer and 'no' for the others.
 * - timestamp = `lastUpdatedTime` (the venue's time of the last change), else our receive time.
 */

function units(p: number | undefined): number | undefined {
  if (p === undefined) return undefined;
  const u = unitsFromProbability(p);
  return Number.isNaN(u) ? undefined : u;
}

/** Settlement of a YES/NO resolution string. */
function settle(resolution: string, resolutionProbability: number | undefined): { result: string; settlementValue?: number } {
  switch (resolution) {
    case 'YES':
      return { result: 'yes', settlementValue: PAYOUT };
    case 'NO':
      return { result: 'no', settlementValue: 0 };
    case 'MKT': {
      const v = units(resolutionProbability);
      return v === undefined ? { result: 'MKT' } : { result: 'MKT', settlementValue: v };
    }
    default:
      return { result: resolution };
  }
}

function openStatus(closeTime: number | undefined, now: number): MarketStatus {
  return closeTime !== undefined && closeTime <= now ? 'closed' : 'active';
}

function common(venue: VenueConfig, m: ManifoldMarketShell, local: number): Omit<MarketUpsert, 'marketId' | 'title' | 'status'> {
  const url = m.url ?? (m.slug === undefined ? undefined : `https://manifold.markets/${m.creatorUsername}/${m.slug}`);
  return {
    type: 'market',
    venue: venue.label,
    timestamp: m.lastUpdatedTime ?? local,
    localTimestamp: local,
    eventTitle: m.question,
    eventId: m.id,
    closeTime: m.closeTime,
    url,
    tags: m.groupSlugs,
    extra: without({
      outcomeType: m.outcomeType,
      mechanism: m.mechanism,
      token: m.token,
      creatorUsername: m.creatorUsername,
      slug: m.slug,
      siblingContractId: m.siblingContractId,
    }),
  };
}

/** Market and quote of a BINARY market (pure). Undefined when it carries no probability. */
export function mapBinary(venue: VenueConfig, m: ManifoldMarketShell, local: number): [MarketUpsert, Quote] | undefined {
  const lastPrice = units(m.probability);
  if (lastPrice === undefined) return undefined;
  const marketId = apiMarketId(venue, m.id);
  const resolved = m.isResolved && m.resolution ? settle(m.resolution, m.resolutionProbability) : {};
  const upsert = without<MarketUpsert>({
    ...common(venue, m, local),
    marketId,
    title: m.question,
    status: m.isResolved ? 'finalized' : openStatus(m.closeTime, local),
    openTime: m.createdTime,
    ...resolved,
  });
  const quote = without<Quote>({
    type: 'quote',
    venue: venue.label,
    timestamp: m.lastUpdatedTime ?? local,
    localTimestamp: local,
    marketId,
    lastPrice,
    volume: roundSize(m.volume),
    liquidity: m.totalLiquidity === undefined ? undefined : roundSize(m.totalLiquidity),
  });
  return [upsert, quote];
}

/** Market and quote of one answer of a multi-answer market (pure). */
export function mapAnswer(venue: VenueConfig, m: ManifoldMarketShell, a: ManifoldAnswer, local: number): [MarketUpsert, Quote] {
  const marketId = apiMarketId(venue, `${m.id}:${a.id}`);
  let status: MarketStatus = openStatus(m.closeTime, local);
  let resolved: { result?: string; settlementValue?: number } = {};
  if (a.resolution) {
    status = 'finalized';
    resolved = settle(a.resolution, a.resolutionProbability);
  } else if (m.isResolved) {
    status = 'finalized';
    const r = m.resolution ?? '';
    if (r === a.id) resolved = { result: 'yes', settlementValue: PAYOUT };
    else if (r === 'MKT' || r === 'CANCEL' || r === '') resolved = r === '' ? {} : { result: r };
    else resolved = { result: 'no', settlementValue: 0 };
  }
  const upsert = without<MarketUpsert>({
    ...common(venue, m, local),
    marketId,
    title: a.text,
    outcome: a.text,
    status,
    openTime: a.createdTime ?? m.createdTime,
    ...resolved,
    extra: { ...common(venue, m, local).extra, answerId: a.id },
  });
  const quote = without<Quote>({
    type: 'quote',
    venue: venue.label,
    timestamp: m.lastUpdatedTime ?? local,
    localTimestamp: local,
    marketId,
    lastPrice: unitsFromProbability(a.probability),
    volume: a.volume === undefined ? undefined : roundSize(a.volume),
    liquidity: a.totalLiquidity === undefined ? undefined : roundSize(a.totalLiquidity),
  });
  return [upsert, quote];
}

/** True when this market's prices live in answers the document does not carry (a LiteMarket). */
export function needsFullMarket(m: ManifoldMarketShell): boolean {
  return MULTI_ANSWER_TYPES.has(m.outcomeType) && m.answers === undefined;
}

function quoteKey(q: Quote): string {
  return `${q.lastPrice},${q.volume},${q.liquidity}`;
}

/**
 * The Manifold mapper. Input: a market (LiteMarket or FullMarket), or an array of them (a
 * `/markets` page, the `/slug` fixture). Manifold is polled, so the mapper remembers what it last
 * emitted per market and emits a `market` only when the record changed and a `quote` only when
 * price, volume or liquidity changed. Multi-answer LiteMarkets (no `answers`) yield nothing here:
 * the feed fetches their FullMarket. `reset()` forgets, so the next poll re-emits everything.
 */
export class ManifoldMapper implements Mapper {
  private readonly upserts = new UpsertChanges();
  private readonly quotes = new Map<string, string>();

  constructor(
    private readonly venueConfig: VenueConfig,
    readonly stats: FeedStats,
  ) {}

  get venue(): string {
    return this.venueConfig.label;
  }

  map(raw: unknown, localTimestamp: number): NormalizedEvent[] {
    this.stats.frames++;
    this.stats.lastFrameAt = localTimestamp;
    const out: NormalizedEvent[] = [];
    if (Array.isArray(raw)) for (const r of raw) this.market(r, localTimestamp, out);
    else this.market(raw, localTimestamp, out);
    this.stats.events += out.length;
    return out;
  }

  reset(): void {
    this.upserts.clear();
    this.quotes.clear();
  }

  private market(raw: unknown, local: number, out: NormalizedEvent[]): void {
    const parsed = manifoldMarketShellSchema.safeParse(raw);
    if (!parsed.success) {
      this.stats.malformedFrame('market', issue(parsed.error), raw);
      return;
    }
    const m = parsed.data;
    if (m.outcomeType === 'BINARY') {
      const pair = mapBinary(this.venueConfig, m, local);
      if (pair === undefined) this.stats.malformedFrame('market', 'BINARY market without probability', raw);
      else this.emit(pair, out);
      return;
    }
    if (MULTI_ANSWER_TYPES.has(m.outcomeType)) {
      if (m.answers === undefined) {
        this.stats.ignored++;
        return;
      }
      for (const rawAnswer of m.answers) {
        const a = manifoldAnswerSchema.safeParse(rawAnswer);
        if (!a.success) this.stats.malformedFrame('answer', issue(a.error), rawAnswer);
        else this.emit(mapAnswer(this.venueConfig, m, a.data, local), out);
      }
      return;
    }
    if (UNLISTED_TYPES.has(m.outcomeType)) this.stats.ignored++;
    else this.stats.unknownFrame(`outcomeType:${m.outcomeType}`);
  }

  private emit([upsert, quote]: [MarketUpsert, Quote], out: NormalizedEvent[]): void {
    if (this.upserts.changed(upsert)) out.push(upsert);
    const qk = quoteKey(quote);
    if (this.quotes.get(quote.marketId) !== qk) {
      this.quotes.set(quote.marketId, qk);
      out.push(quote);
    }
  }
}

/** A fresh Manifold mapper for `venue` (also what `crossbook normalize --protocol manifold` uses). */
export function createManifoldMapper(venue: VenueConfig, log?: Logger): ManifoldMapper {
  return new ManifoldMapper(venue, new FeedStats(log?.child({ venue: venue.label })));
}
