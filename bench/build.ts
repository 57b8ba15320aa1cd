/**
 * Builds an EngineState of many markets the way the service does: catalog pages and book frames
 * in the venues' wire formats, through the protocol mappers, applied with applyEvent. Used by the
 * memory and restart benches. Synthetic, seeded (bench/gen.ts).
 */
import type { VenueConfig } from '../src/config/schema.js';
import { PAYOUT } from '../src/core/price.js';
import type { Trade } from '../src/core/types.js';
import { applyEvent, EngineState } from '../src/state/engine.js';
import type { StoredTrade } from '../src/state/trades.js';
import type { Mapper } from '../src/venues/common/mapper.js';
import { KalshiMapper } from '../src/venues/kalshi/mappers.js';
import { PolymarketMapper } from '../src/venues/polymarket/mappers.js';
import {
  gammaMarket,
  hex,
  kalshiRestMarket,
  kalshiSnapshotFrame,
  kalshiTickerFrame,
  kalshiTickers,
  polyBookFrame,
  polyIds,
  seedModel,
  T0,
  uuid,
  venueOf,
  type Rand,
} from './gen.js';
import { rng } from './lib.js';

export interface Built {
  readonly state: EngineState;
  /** The mappers, holding their per-market book state as they would in the running service. */
  mappers: Mapper[];
  readonly kalshi: number;
  readonly polymarket: number;
  /** Events applied while building. */
  readonly events: number;
}

function apply(state: EngineState, mapper: Mapper, text: string, local: number): number {
  let n = 0;
  for (const ev of mapper.map(JSON.parse(text), local)) {
    applyEvent(state, ev);
    n++;
  }
  return n;
}

/**
 * Half the markets on the Kalshi venue (a `/markets` page per 1,000, then per market an
 * `orderbook_snapshot` and a `ticker` frame), half on the Polymarket venue (Gamma `/markets`
 * pages of 500, then the YES token's `book` frame). One book per market with `levels` levels on
 * each side, at a 1-cent tick.
 */
export function buildState(venues: readonly VenueConfig[], opts: { markets: number; levels: number; seed: number }): Built {
  const r = rng(opts.seed);
  const state = new EngineState(venues);
  const kv = venueOf(venues, 'kalshi');
  const pv = venueOf(venues, 'polymarket');
  const km = new KalshiMapper(kv);
  const pm = new PolymarketMapper(pv);
  const nk = Math.ceil(opts.markets / 2);
  const np = opts.markets - nk;
  let events = 0;

  const kids = kalshiTickers(r, nk);
  const SIDS = 8;
  const seq = new Array<number>(SIDS + 1).fill(0);
  for (let i = 0; i < nk; i += 1000) {
    const slice = kids.slice(i, i + 1000);
    const page = JSON.stringify({ cursor: '', markets: slice.map((m, j) => kalshiRestMarket(r, i + j, m.ticker, m.event)) });
    events += apply(state, km, page, T0 - 60_000);
    slice.forEach((m, j) => {
      const sid = 1 + ((i + j) % SIDS);
      const b = seedModel(r, opts.levels, 100);
      events += apply(state, km, kalshiSnapshotFrame(sid, ++seq[sid]!, m.ticker, m.uuid, b), T0 - 1000);
      events += apply(state, km, kalshiTickerFrame(r, 100 + sid, m.ticker, m.uuid, b, T0 - 500), T0 - 500);
    });
  }

  const pids = polyIds(r, np);
  for (let i = 0; i < np; i += 500) {
    const slice = pids.slice(i, i + 500);
    events += apply(state, pm, JSON.stringify(slice.map((m, j) => gammaMarket(r, i + j, m))), T0 - 60_000);
    for (const m of slice) events += apply(state, pm, polyBookFrame(m, m.yes, seedModel(r, opts.levels, 100), T0 - 1000, r), T0 - 1000);
  }
  return { state, mappers: [km, pm], kalshi: nk, polymarket: np, events };
}

/** The market ids the builder used, to draw trades from (same seed → same ids). */
function tradeOf(
  r: Rand,
  seq: number,
  kalshi: VenueConfig,
  poly: VenueConfig,
  tickers: readonly string[],
  tokens: readonly { condition: string; yes: string }[],
): StoredTrade {
  const ts = T0 + seq * 10;
  const price = 100 * (1 + Math.floor(r() * 98));
  const size = Math.round((1 + r() * 500) * 100) / 100;
  if (seq % 2 === 0) {
    const t = tickers[Math.floor(r() * tickers.length)]!;
    const taker = r() < 0.5 ? 'yes' : 'no';
    const tr: Trade = {
      type: 'trade',
      venue: kalshi.label,
      timestamp: ts,
      localTimestamp: ts + 3,
      marketId: t,
      instrument: t,
      tradeId: uuid(r),
      price: taker === 'yes' ? price : PAYOUT - price,
      yesPrice: price,
      size,
      takerSide: taker,
    };
    return { ...tr, seq };
  }
  const m = tokens[Math.floor(r() * tokens.length)]!;
  const buy = r() < 0.5;
  const tr: Trade = {
    type: 'trade',
    venue: poly.label,
    timestamp: ts,
    localTimestamp: ts + 3,
    marketId: m.condition,
    instrument: m.yes,
    tradeId: `0x${hex(r, 64)}:${hex(r, 12)}`,
    price,
    yesPrice: price,
    size,
    side: buy ? 'buy' : 'sell',
    takerSide: buy ? 'yes' : 'no',
    maker: `0x${hex(r, 40)}`,
    taker: `0x${hex(r, 40)}`,
    outcome: 'Yes',
  };
  return { ...tr, seq };
}

/**
 * A generator of `count` trades over the built markets, in batches (so 1M trades never sit in
 * memory at once): Kalshi trades (uuid ids, taker side) and Polymarket data-api trades (hash ids,
 * wallets), alternating.
 */
export function* tradeBatches(venues: readonly VenueConfig[], built: Built, count: number, batch: number, seed: number): Generator<StoredTrade[]> {
  const r = rng(seed);
  const kalshi = venueOf(venues, 'kalshi');
  const poly = venueOf(venues, 'polymarket');
  const tickers: string[] = [];
  const tokens: { condition: string; yes: string }[] = [];
  for (const m of built.state.catalog.all()) {
    if (m.venue === kalshi.label) tickers.push(m.marketId);
    else if (m.venue === poly.label && m.yesInstrument) tokens.push({ condition: m.marketId, yes: m.yesInstrument });
  }
  for (let s = 1; s <= count; s += batch) {
    const out: StoredTrade[] = [];
    for (let q = s; q < s + batch && q <= count; q++) out.push(tradeOf(r, q, kalshi, poly, tickers, tokens));
    yield out;
  }
}
