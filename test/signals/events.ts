import type { BookSnapshot, MarketStatusChange, MarketUpsert, Trade } from '../../src/core/types.js';

/**
 * Hand-built normalized events for ledger and alert tests: each test states exactly which trades
 * and books the ledger sees. Ids have the real venue_b shapes (decimal token ids, 0x condition
 * ids, 0x wallet addresses) so the same events drive the API tests.
 */

export const VB = 'venue_b';
export const VA = 'venue_a';

/** A condition id made of one repeated hex digit. */
export const cond = (d: string): string => `0x${d.repeat(64)}`;
/** Outcome token ids: YES and NO of a market numbered n. */
export const yesTok = (n: number): string => `${n}${'1'.repeat(70)}`;
export const noTok = (n: number): string => `${n}${'2'.repeat(70)}`;
/** A wallet address made of one repeated hex digit (mixed case on purpose: the ledger lower-cases). */
export const addr = (d: string): string => `0x${d.toUpperCase().repeat(40)}`;

export function market(marketId: string, n: number, ts: number, venue = VB, extra: Partial<MarketUpsert> = {}): MarketUpsert {
  return {
    type: 'market',
    venue,
    marketId,
    title: `Market ${n}?`,
    status: 'active',
    ...(venue === VB ? { yesInstrument: yesTok(n), noInstrument: noTok(n) } : {}),
    timestamp: ts,
    localTimestamp: ts,
    ...extra,
  };
}

/** The market's YES book with one level each side: bid and ask in cents. */
export function book(marketId: string, instrument: string, bidCents: number, askCents: number, ts: number, venue = VB): BookSnapshot {
  return {
    type: 'book_snapshot',
    venue,
    marketId,
    instrument,
    bids: [[bidCents * 100, 1_000]],
    asks: [[askCents * 100, 1_000]],
    timestamp: ts,
    localTimestamp: ts,
  };
}

let n = 0;

/**
 * A taker buy as the venue_b data-api reports it: side buy of the bought outcome's token at that
 * token's price (cents). `venue_a` trades have no wallets and no token.
 */
export function buy(o: {
  marketId: string;
  n: number;
  wallet?: string;
  outcome: 'yes' | 'no';
  cents: number;
  size: number;
  ts: number;
  venue?: string;
  maker?: string;
}): Trade {
  const price = o.cents * 100;
  const venue = o.venue ?? VB;
  return {
    type: 'trade',
    venue,
    marketId: o.marketId,
    instrument: venue === VB ? (o.outcome === 'yes' ? yesTok(o.n) : noTok(o.n)) : o.marketId,
    tradeId: `t${++n}`,
    price,
    yesPrice: o.outcome === 'yes' ? price : 10_000 - price,
    size: o.size,
    side: 'buy',
    takerSide: o.outcome,
    ...(o.wallet ? { taker: o.wallet } : {}),
    ...(o.maker ? { maker: o.maker } : {}),
    timestamp: o.ts,
    localTimestamp: o.ts,
  };
}

/** A taker sale of `outcome` shares at that outcome's price (cents). */
/**
 * A wallet's entry the ledger scores: 100 YES of market `n` bought at 41¢ a second after `at`, and
 * the YES book moved 9¢ its way (`good`) or against it 30 s after `at`, within the horizon.
 */
export function entry(marketId: string, n: number, wallet: string, good: boolean, at: number): [Trade, BookSnapshot] {
  return [
    buy({ marketId, n, wallet, outcome: 'yes', cents: 41, size: 100, ts: at + 1_000 }),
    good ? book(marketId, yesTok(n), 49, 51, at + 30_000) : book(marketId, yesTok(n), 31, 33, at + 30_000),
  ];
}

export function sell(o: { marketId: string; n: number; wallet: string; outcome: 'yes' | 'no'; cents: number; size: number; ts: number }): Trade {
  const price = o.cents * 100;
  return {
    type: 'trade',
    venue: VB,
    marketId: o.marketId,
    instrument: o.outcome === 'yes' ? yesTok(o.n) : noTok(o.n),
    tradeId: `t${++n}`,
    price,
    yesPrice: o.outcome === 'yes' ? price : 10_000 - price,
    size: o.size,
    side: 'sell',
    takerSide: o.outcome === 'yes' ? 'no' : 'yes',
    taker: o.wallet,
    timestamp: o.ts,
    localTimestamp: o.ts,
  };
}

export function settle(marketId: string, yesValueCents: number, ts: number, venue = VB): MarketStatusChange {
  return {
    type: 'market_status',
    venue,
    marketId,
    status: 'finalized',
    result: yesValueCents >= 50 ? 'yes' : 'no',
    settlementValue: yesValueCents * 100,
    timestamp: ts,
    localTimestamp: ts,
  };
}
