import type { VenueConfig } from '../../config/schema.js';
import { UNITS_PER_CENT } from '../../core/price.js';
import { formatPredictItTime, NO_DATE, type PredictItContract, type PredictItMarket } from '../../venues/predictit/raw.js';
import { createSimHttp, HttpError } from '../server-kit.js';
import type { SimFault, SimListing, SimServer, SimServerFactory, SimWorldApi } from '../types.js';

/**
 * Simulated PredictIt marketdata (SYNTHETIC DATA): `GET /api/marketdata/all` and
 * `GET /api/marketdata/markets/:id`, built on request from the world's listings of the venue.
 * Listings are grouped into PredictIt markets by `ids.market_id`; each listing is one contract.
 *
 * Prices come from the top of the listing's YES book, in whole cents as PredictIt trades:
 * bestBuyYesCost = best ask (rounded up to a cent), bestSellYesCost = best bid (rounded down),
 * bestBuyNoCost = 1 − best bid, bestSellNoCost = 1 − best ask; null when that side is empty.
 * Finalized listings leave `/all` (PredictIt drops markets that stop trading) but still answer
 * on `/markets/:id`.
 *
 * Faults: `disconnect` closes every HTTP connection, `stall` holds every request for the stall,
 * `malformed` makes the next `count` `/all` responses carry invalid entries (a contract with string
 * prices, a market with a string id, or no market array at all). `gap` and `duplicate_snapshot`
 * have no meaning for a REST venue without sequence numbers or snapshots and do nothing.
 */

/** Whole cents of a YES ask: PredictIt shows the next cent up. */
function askCents(units: number): number {
  return Math.ceil(units / UNITS_PER_CENT);
}

/** Whole cents of a YES bid: the cent at or below. */
function bidCents(units: number): number {
  return Math.floor(units / UNITS_PER_CENT);
}

const dollars = (cents: number): number => cents / 100;

/** The contract record PredictIt would serve for a listing. */
export function contractOf(l: SimListing): PredictItContract {
  const bid = l.book.bids.best();
  const ask = l.book.asks.best();
  const last = l.last === undefined ? null : dollars(Math.round(l.last / UNITS_PER_CENT));
  return {
    id: Number(l.ids['contract_id'] ?? l.id),
    dateEnd: Number.isFinite(l.closeTime) ? formatPredictItTime(l.closeTime) : NO_DATE,
    image: `https://az620379.vo.msecnd.net/images/Contracts/small_${l.id}.png`,
    name: l.ids['contract_name'] ?? l.outcome ?? l.title,
    shortName: l.ids['short_name'] ?? l.ids['contract_name'] ?? l.title,
    status: l.status === 'active' ? 'Open' : 'Closed',
    lastTradePrice: last,
    bestBuyYesCost: ask === undefined ? null : dollars(askCents(ask)),
    bestBuyNoCost: bid === undefined ? null : dollars(100 - bidCents(bid)),
    bestSellYesCost: bid === undefined ? null : dollars(bidCents(bid)),
    bestSellNoCost: ask === undefined ? null : dollars(100 - askCents(ask)),
    lastClosePrice: last,
    displayOrder: 0,
  };
}

function slug(s: string): string {
  return s.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

/** Groups listings into PredictIt markets, in listing order. */
function marketsOf(listings: readonly SimListing[]): Map<string, SimListing[]> {
  const by = new Map<string, SimListing[]>();
  for (const l of listings) {
    const id = l.ids['market_id'] ?? l.id;
    const g = by.get(id);
    if (g) g.push(l);
    else by.set(id, [l]);
  }
  return by;
}

/** The market document PredictIt would serve for a group of contracts. */
export function marketOf(id: string, contracts: readonly SimListing[], now: number): PredictItMarket {
  const first = contracts[0]!;
  const name = first.ids['market_name'] ?? first.eventTitle;
  return {
    id: Number(id),
    name,
    shortName: name.length > 50 ? `${name.slice(0, 47)}...` : name,
    image: `https://az620379.vo.msecnd.net/images/Markets/${id}.png`,
    url: `https://www.predictit.org/markets/detail/${id}/${slug(name)}`,
    contracts: contracts.map((l, i) => ({ ...contractOf(l), displayOrder: i })),
    timeStamp: formatPredictItTime(now),
    status: contracts.some((l) => l.status === 'active') ? 'Open' : 'Closed',
  };
}

/** Serves the PredictIt marketdata protocol for `venue` from `world`. */
export const serve: SimServerFactory = async (world: SimWorldApi, venue: VenueConfig, opts): Promise<SimServer> => {
  const http = createSimHttp();
  let malformedLeft = 0;
  let malformedSent = 0;

  const all = (): unknown => {
    const listed = world.listings(venue.label).filter((l) => l.status !== 'finalized' && l.status !== 'initialized');
    const markets: unknown[] = [];
    for (const [id, g] of marketsOf(listed)) markets.push(marketOf(id, g, world.now()));
    if (malformedLeft > 0) {
      malformedLeft--;
      return corrupt({ markets }, malformedSent++);
    }
    return { markets };
  };

  http.get('/api/marketdata/all', all);
  http.get('/api/marketdata/markets/:id', (_q, params) => {
    const g = marketsOf(world.listings(venue.label)).get(params['id'] ?? '');
    if (!g) throw new HttpError(404, { Message: `No market found with id ${params['id']}` });
    return marketOf(params['id']!, g, world.now());
  });

  const { host, port } = await http.listen(opts.host, opts.port);
  return {
    venue,
    endpoints: { rest: `http://${host}:${port}/api/marketdata` },
    fault(f: SimFault) {
      switch (f.kind) {
        case 'disconnect':
          http.server.closeAllConnections();
          break;
        case 'stall':
          http.stallUntil = Date.now() + f.ms;
          break;
        case 'malformed':
          malformedLeft += f.count ?? 1;
          break;
        case 'gap':
        case 'duplicate_snapshot':
          break;
      }
    },
    close: () => http.close(),
  };
};

/** One of three ways an `/all` body can be wrong, in turn. */
function corrupt(doc: { markets: unknown[] }, n: number): unknown {
  const markets = structuredClone(doc.markets) as Record<string, unknown>[];
  const variant = n % 3;
  if (variant === 2 || markets.length === 0) return { markets: 'unavailable' };
  if (variant === 0) {
    const c = (markets[0]!['contracts'] as Record<string, unknown>[])[0];
    if (c) {
      c['bestBuyYesCost'] = 'NA';
      c['lastTradePrice'] = '0.5';
    }
  } else markets[0]!['id'] = String(markets[0]!['id']);
  return { markets };
}
