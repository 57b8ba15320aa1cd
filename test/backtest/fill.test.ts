import { describe, expect, it } from 'vitest';
import { arbNet, buyLadder, evNet, matchLegs, maxFeePerContract, planOrders, sellLadder, walkBuy, walkSell, type LegOrder } from '../../src/backtest/fill.js';
import { loadConfig } from '../../src/config/load.js';
import type { FeeSchedule } from '../../src/config/schema.js';
import { takerFee } from '../../src/signals/fees.js';

/** The default config's venue schedules: venue_a is Kalshi's (0.07 × C × P × (1 − P), ceil to the cent), venue_b none. */
const venues = loadConfig({ env: {} }).venues;
const kalshi = venues.find((v) => v.label === 'venue_a')!.fees;
const free: FeeSchedule = venues.find((v) => v.label === 'venue_b')!.fees;
const order = (o: Partial<LegOrder>): LegOrder => ({ limit: Infinity, contracts: Infinity, budget: Infinity, fees: kalshi, fee: {}, ...o });

describe('walkBuy: a taker walks the depth, not the top price', () => {
  const asks = [
    [4_000, 100],
    [4_100, 50],
    [4_500, 200],
  ] as const;

  it('takes several levels and pays the fee of each level (per fill, ceil to the cent)', () => {
    const w = walkBuy(asks, order({ contracts: 120 }));
    expect(w.contracts).toBe(120);
    expect(w.spent).toBe(100 * 4_000 + 20 * 4_100);
    expect(w.fee).toBe(takerFee(kalshi, 4_000, 100) + takerFee(kalshi, 4_100, 20));
    // Kalshi: ceil(0.07 × 100 × 0.40 × 0.60) = $1.68 exactly; 20 at 41¢: ceil(0.3386) = $0.34.
    expect(w.fee).toBe(16_800 + 3_400);
    expect(w.worst).toBe(4_100);
  });

  it('stops at the limit price: a partial fill', () => {
    const w = walkBuy(asks, order({ contracts: 300, limit: 4_100 }));
    expect(w.contracts).toBe(150);
    expect(w.worst).toBe(4_100);
  });

  it('fills nothing when the best ask is above the limit, or the book is empty', () => {
    expect(walkBuy(asks, order({ contracts: 10, limit: 3_999 })).contracts).toBe(0);
    expect(walkBuy([], order({ contracts: 10 })).contracts).toBe(0);
  });

  it('never spends more than the budget, fee included (max_usd)', () => {
    const budget = 50 * 10_000; // $50
    const w = walkBuy(asks, order({ budget }));
    expect(w.spent + w.fee).toBeLessThanOrEqual(budget);
    // $41.68 on the first level (100 at 40¢ and $1.68 fee); of the $8.32 left, 19 at 41¢ with their
    // $0.33 fee fit ($8.12) and 20 with $0.34 do not ($8.54).
    expect(w.contracts).toBe(119);
    expect(w.fee).toBe(16_800 + takerFee(kalshi, 4_100, 19));
    expect(100 * 4_000 + 16_800 + 20 * 4_100 + takerFee(kalshi, 4_100, 20)).toBeGreaterThan(budget);
  });
});

describe('ladders of a market in its own terms', () => {
  const book = {
    bids: [
      [4_800, 10],
      [4_700, 20],
    ],
    asks: [
      [5_100, 5],
      [5_300, 7],
    ],
  } as const;
  it('buys NO at 100 − the YES bid and sells NO into 100 − the YES ask', () => {
    expect(buyLadder(book, 'yes')).toEqual(book.asks);
    expect(buyLadder(book, 'no')).toEqual([
      [5_200, 10],
      [5_300, 20],
    ]);
    expect(sellLadder(book, 'yes')).toEqual(book.bids);
    expect(sellLadder(book, 'no')).toEqual([
      [4_900, 5],
      [4_700, 7],
    ]);
  });
});

describe('planOrders: what the taker sends, fixed at the signal', () => {
  const a = { asks: [[4_000, 100] as const, [4_200, 100] as const], fees: kalshi, fee: {} };
  const b = { asks: [[5_500, 300] as const], fees: free, fee: {} };

  it('limits each leg at the worst level the signal walked; the size stays when max_usd allows it', () => {
    const [oa, ob] = planOrders([a, b], 150, 10_000 * 10_000);
    expect(oa!.limit).toBe(4_200);
    expect(ob!.limit).toBe(5_500);
    expect(oa!.contracts).toBe(150);
    expect(ob!.contracts).toBe(150);
  });

  it('scales the contracts down so the worst case of both legs stays within max_usd', () => {
    const max = 50 * 10_000;
    const [oa, ob] = planOrders([a, b], 150, max);
    const perContract = 4_200 + maxFeePerContract(kalshi, {}, 4_200) + 5_500;
    expect(oa!.contracts).toBe(Math.floor(max / perContract));
    expect(oa!.budget + ob!.budget).toBeLessThanOrEqual(max);
    // Within its limits a leg's budget never binds: both fill the same.
    expect(walkBuy(a.asks, oa!).contracts).toBe(oa!.contracts);
    expect(walkBuy(b.asks, ob!).contracts).toBe(ob!.contracts);
  });

  it('sends nothing when a leg had no book at the signal', () => {
    expect(planOrders([a, { ...b, asks: [] }], 150, 1e9).map((o) => o.contracts)).toEqual([0, 0]);
  });
});

describe('arbitrage outcomes', () => {
  it('equal legs: $1 per pair less both legs and fees', () => {
    const y = walkBuy([[4_000, 100]], order({ contracts: 100 }));
    const n = walkBuy([[5_500, 100]], order({ contracts: 100, fees: free }));
    expect(matchLegs(y, n).excessLeg).toBeUndefined();
    expect(arbNet(y, n, undefined)).toBe(100 * 10_000 - 100 * 4_000 - 100 * 5_500 - y.fee);
  });

  it('a broken arb: the excess is exposure, and unwinding it into the bids costs the spread and fees', () => {
    const y = walkBuy([[4_000, 100]], order({ contracts: 100 }));
    const n = walkBuy([[5_500, 40]], order({ contracts: 100, fees: free }));
    const m = matchLegs(y, n);
    expect(m).toMatchObject({ matched: 40, excessLeg: 0, excess: 60 });
    expect(m.exposure).toBeCloseTo(((100 * 4_000 + y.fee) * 60) / 100, 6);
    const sale = walkSell(
      [
        [3_800, 50],
        [3_700, 100],
      ],
      m.excess,
      kalshi,
      {},
    );
    expect(sale).toEqual({ contracts: 60, proceeds: 50 * 3_800 + 10 * 3_700, fee: takerFee(kalshi, 3_800, 50) + takerFee(kalshi, 3_700, 10) });
    expect(arbNet(y, n, sale)).toBe(40 * 10_000 - 100 * 4_000 - y.fee - 40 * 5_500 + sale.proceeds - sale.fee);
  });

  it('an unwind into a thin book sells what it can', () => {
    expect(walkSell([[3_000, 5]], 60, kalshi, {}).contracts).toBe(5);
    expect(walkSell([], 60, kalshi, {}).contracts).toBe(0);
  });
});

describe('EV', () => {
  it('expected net: contracts × probability × $1 less spend and fee', () => {
    const w = walkBuy([[4_000, 10]], order({ contracts: 10 }));
    expect(evNet(w, 0.5)).toBeCloseTo(10 * 5_000 - 40_000 - w.fee, 6);
  });
});

describe('more latency never fills more on a book that only worsens', () => {
  it('walks a sequence of ever-thinner, ever-dearer books', () => {
    const start = [
      [4_000, 100],
      [4_100, 100],
      [4_200, 100],
    ] as const;
    const o = planOrders([{ asks: start, fees: kalshi, fee: {} }], 250, 1e9)[0]!;
    let prev = Infinity;
    for (let k = 0; k < 8; k++) {
      // Each later book: every level 50¢/8 dearer and 10% thinner than the one before.
      const book = start.map(([p, s]) => [p + k * 60, Math.floor(s * 0.9 ** k)] as const);
      const got = walkBuy(book, o).contracts;
      expect(got).toBeLessThanOrEqual(prev);
      prev = got;
    }
    expect(prev).toBe(0);
  });
});
