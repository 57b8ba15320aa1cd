import type { VenueConfig } from '../../config/schema.js';
import type { Logger } from '../../core/log.js';
import { complement, unitsFromProbability } from '../../core/price.js';
import type { MarketStatus, MarketStatusChange, MarketUpsert, NormalizedEvent, Quote } from '../../core/types.js';
import type { Mapper } from '../common/mapper.js';
import { FeedStats } from '../common/stats.js';
import { apiMarketId } from '../protocol.js';
import {
  NO_DATE,
  parsePredictItTime,
  predictItAllShellSchema,
  predictItContractSchema,
  predictItMarketShellSchema,
  type PredictItContract,
  type PredictItMarketShell,
} from './raw.js';
import { UpsertChanges } from '../common/frames.js';
import { without, issue } from '../common/util.js';

/**
 * PredictIt → normalized events. Each CONTRACT is one of our markets (a binary YES/NO on one
 * outcome of the PredictIt market):
 *
 * - marketId = contract id; eventId = PredictIt market id; eventTitle = market name;
 *   title = contract name, or the market name when the market has a single contract (its contract
 *   name is then usually a shortened copy of the question); outcome = contract name.
 * - Quote: yesAsk = bestBuyYesCost (the cheapest YES offer); yesBid = 1 − bestBuyNoCost (a NO
 *   offer at q is a YES bid at 1 − q on PredictIt's linked book), falling back to bestSellYesCost
 *   and, for the ask, to 1 − bestSellNoCost when the primary field is null. lastPrice =
 *   lastTradePrice. Null prices are undefined, never 0. Dollar numbers become units with
 *   unitsFromProbability, exact for PredictIt's whole-cent prices.
 */

/** Our status for a PredictIt contract status ("Open" trades; anything else does not). */
function statusOf(contract: string, market: string, stats?: FeedStats): MarketStatus {
  if (contract !== 'Open' && contract !== 'Closed') stats?.unknownFrame(`status:${contract}`);
  return contract === 'Open' && market === 'Open' ? 'active' : 'closed';
}

/** A dollar number (already range-checked by the schema) to units; null/absent → undefined. */
function units(p: number | null | undefined): number | undefined {
  if (p === null || p === undefined) return undefined;
  const u = unitsFromProbability(p);
  return Number.isNaN(u) ? undefined : u;
}

/** The catalog record of one contract (pure). */
export function contractUpsert(
  venue: VenueConfig,
  market: PredictItMarketShell,
  contract: PredictItContract,
  single: boolean,
  timestamp: number,
  localTimestamp: number,
  stats?: FeedStats,
): MarketUpsert {
  let closeTime: number | undefined;
  if (contract.dateEnd !== NO_DATE) {
    const t = parsePredictItTime(contract.dateEnd);
    if (Number.isNaN(t)) stats?.malformedFrame('dateEnd', 'unparseable dateEnd; close time left unset', contract.dateEnd);
    else closeTime = t;
  }
  return without<MarketUpsert>({
    type: 'market',
    venue: venue.label,
    timestamp,
    localTimestamp,
    marketId: apiMarketId(venue, String(contract.id)),
    title: single ? market.name : contract.name,
    eventTitle: market.name,
    eventId: String(market.id),
    outcome: contract.name,
    status: statusOf(contract.status, market.status, stats),
    closeTime,
    url: market.url,
    extra: without({ contractShortName: contract.shortName, marketShortName: market.shortName, displayOrder: contract.displayOrder }),
  });
}

/** The quote of one contract (pure). */
export function contractQuote(venue: VenueConfig, contract: PredictItContract, timestamp: number, localTimestamp: number): Quote {
  const noAsk = units(contract.bestBuyNoCost);
  const noBid = units(contract.bestSellNoCost);
  const yesAsk = units(contract.bestBuyYesCost) ?? (noBid === undefined ? undefined : complement(noBid));
  const yesBid = noAsk === undefined ? units(contract.bestSellYesCost) : complement(noAsk);
  return without<Quote>({
    type: 'quote',
    venue: venue.label,
    timestamp,
    localTimestamp,
    marketId: apiMarketId(venue, String(contract.id)),
    yesBid,
    yesAsk,
    lastPrice: units(contract.lastTradePrice),
  });
}

/**
 * Maps one market document (validated shell + raw contracts) to events, without change
 * detection. Bad contracts are counted and skipped. Returns the marketIds of the valid contracts.
 */
export function mapMarket(
  venue: VenueConfig,
  market: PredictItMarketShell,
  localTimestamp: number,
  stats?: FeedStats,
): { events: (MarketUpsert | Quote)[]; ids: string[]; malformed: number; timestamp: number } {
  const ts = market.timeStamp === undefined ? NaN : parsePredictItTime(market.timeStamp);
  if (market.timeStamp !== undefined && Number.isNaN(ts)) stats?.malformedFrame('timeStamp', 'unparseable timeStamp; using local time', market.timeStamp);
  const timestamp = Number.isNaN(ts) ? localTimestamp : ts;
  const contracts: PredictItContract[] = [];
  let malformed = 0;
  for (const raw of market.contracts) {
    const c = predictItContractSchema.safeParse(raw);
    if (!c.success) {
      malformed++;
      stats?.malformedFrame('contract', issue(c.error), raw);
      continue;
    }
    contracts.push(c.data);
  }
  const single = market.contracts.length === 1;
  const events: (MarketUpsert | Quote)[] = [];
  const ids: string[] = [];
  for (const c of contracts) {
    const up = contractUpsert(venue, market, c, single, timestamp, localTimestamp, stats);
    events.push(up, contractQuote(venue, c, timestamp, localTimestamp));
    ids.push(up.marketId);
  }
  return { events, ids, malformed, timestamp };
}

function quoteKey(q: Quote): string {
  return `${q.yesBid},${q.yesAsk},${q.lastPrice}`;
}

/**
 * The PredictIt mapper. Input: a `/all` document, a single market document (`/markets/{id}`), or
 * an array of either (a recording of polls). PredictIt is polled, so the mapper keeps what it
 * last emitted per contract and emits a `market` only when the record changed and a `quote` only
 * when a price changed. A complete `/all` document also tells us which contracts left the list:
 * PredictIt drops markets that stop trading, so a contract we listed that is no longer there gets
 * one `market_status` closed (skipped when the document had malformed entries, whose ids we
 * cannot know). `reset()` forgets everything, so the next poll re-emits the full state.
 */
export class PredictItMapper implements Mapper {
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
    this.document(raw, localTimestamp, out);
    this.stats.events += out.length;
    return out;
  }

  reset(): void {
    this.upserts.clear();
    this.quotes.clear();
  }

  private document(raw: unknown, local: number, out: NormalizedEvent[]): void {
    if (Array.isArray(raw)) {
      for (const r of raw) this.document(r, local, out);
      return;
    }
    if (typeof raw === 'object' && raw !== null && 'markets' in raw) {
      const all = predictItAllShellSchema.safeParse(raw);
      if (!all.success) {
        this.stats.malformedFrame('all', issue(all.error), raw);
        return;
      }
      const present = new Set<string>();
      let malformed = 0;
      let timestamp: number | undefined;
      for (const m of all.data.markets) {
        const r = this.market(m, local, out);
        if (r === undefined) malformed++;
        else {
          malformed += r.malformed;
          for (const id of r.ids) present.add(id);
          timestamp = Math.max(timestamp ?? 0, r.timestamp);
        }
      }
      if (malformed === 0) this.vanished(present, timestamp ?? local, local, out);
      return;
    }
    this.market(raw, local, out);
  }

  private market(raw: unknown, local: number, out: NormalizedEvent[]): { ids: string[]; malformed: number; timestamp: number } | undefined {
    const shell = predictItMarketShellSchema.safeParse(raw);
    if (!shell.success) {
      this.stats.malformedFrame('market', issue(shell.error), raw);
      return undefined;
    }
    const { events, ids, malformed, timestamp } = mapMarket(this.venueConfig, shell.data, local, this.stats);
    for (const e of events) {
      if (e.type === 'market') {
        if (!this.upserts.changed(e)) continue;
      } else {
        const k = quoteKey(e);
        if (this.quotes.get(e.marketId) === k) continue;
        this.quotes.set(e.marketId, k);
      }
      out.push(e);
    }
    return { ids, malformed, timestamp };
  }

  private vanished(present: Set<string>, timestamp: number, local: number, out: NormalizedEvent[]): void {
    for (const id of [...this.upserts.markets()]) {
      if (present.has(id)) continue;
      // Forget the record so that a contract that comes back is listed again in full.
      this.upserts.forget(id);
      this.quotes.delete(id);
      const e: MarketStatusChange = { type: 'market_status', venue: this.venue, timestamp, localTimestamp: local, marketId: id, status: 'closed' };
      out.push(e);
    }
  }
}

/** A fresh PredictIt mapper for `venue` (also what `crossbook normalize --protocol predictit` uses). */
export function createPredictItMapper(venue: VenueConfig, log?: Logger): PredictItMapper {
  return new PredictItMapper(venue, new FeedStats(log?.child({ venue: venue.label })));
}
