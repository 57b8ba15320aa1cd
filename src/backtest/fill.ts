import type { FeeSchedule } from '../config/schema.js';
import { PAYOUT } from '../core/price.js';
import type { Level } from '../core/types.js';
import { takerFee, type FeeContext } from '../signals/fees.js';

/** What a taker's order of one leg is allowed to do. */
export interface LegOrder {
  /** Worst price (units) the order accepts: a buy takes asks up to it; Infinity for none. */
  readonly limit: number;
  /** Contracts wanted. */
  readonly contracts: number;
  /** Units the leg may spend, price and fee together (max_usd's share of the leg). */
  readonly budget: number;
  readonly fees: FeeSchedule;
  readonly fee: FeeContext;
}

/** What walking a book side gave (units; contracts may be fractional where the venue's sizes are). */
export interface Walk {
  readonly contracts: number;
  /** Σ price × contracts over the levels taken, fee excluded. */
  readonly spent: number;
  /** Σ taker fee, charged per level (per fill) as the venue charges it. */
  readonly fee: number;
  /** Worst price taken (units); 0 when nothing was. */
  readonly worst: number;
}

const EPS = 1e-9;

/**
 * A taker buying against `asks` (best first, units): walks the levels while their price is within
 * the limit, takes up to the contracts wanted and never spends more than the budget (price plus fee,
 * the fee charged per level). Depth, not the top price: a leg can fill fully, partly or not at all.
 */
export function walkBuy(asks: readonly Level[], o: LegOrder): Walk {
  let contracts = 0;
  let spent = 0;
  let fee = 0;
  let worst = 0;
  for (let i = 0; i < asks.length; i++) {
    const [p, size] = asks[i]!;
    const want = o.contracts - contracts;
    if (p > o.limit || want <= EPS) break;
    let c = Math.min(size, want);
    const left = o.budget - spent - fee;
    if (c * p + takerFee(o.fees, p, c, o.fee) > left + EPS) {
      // The budget ends inside this level: whole contracts only, as many as it pays for with their fee.
      c = Math.floor(left / (p + takerFee(o.fees, p, 1, o.fee)));
      while (c > 0 && c * p + takerFee(o.fees, p, c, o.fee) > left + EPS) c--;
      if (c <= 0) break;
      take(c, p);
      break;
    }
    take(c, p);
  }
  return { contracts, spent, fee, worst };

  function take(c: number, p: number): void {
    contracts += c;
    spent += c * p;
    fee += takerFee(o.fees, p, c, o.fee);
    worst = p;
  }
}

/** What selling into `bids` (best first) gave: contracts sold, proceeds and fees (units). */
export interface Sale {
  readonly contracts: number;
  readonly proceeds: number;
  readonly fee: number;
}

/**
 * Unwinding: sells up to `contracts` into `bids` (best first, units) at any price, paying the taker
 * fee of each level (the venue's schedule at the price sold; a profit-share venue is charged on the
 * sale as if it were a buy at that price, the conservative side).
 */
export function walkSell(bids: readonly Level[], contracts: number, fees: FeeSchedule, ctx: FeeContext): Sale {
  let sold = 0;
  let proceeds = 0;
  let fee = 0;
  for (let i = 0; i < bids.length && contracts - sold > EPS; i++) {
    const [p, size] = bids[i]!;
    const c = Math.min(size, contracts - sold);
    sold += c;
    proceeds += c * p;
    fee += takerFee(fees, p, c, ctx);
  }
  return { contracts: sold, proceeds, fee };
}

/** The book of one market in its own YES terms (bids and asks best first, units). */
export interface MarketLadder {
  readonly bids: readonly Level[];
  readonly asks: readonly Level[];
}

/** Asks to buy `side` of a market: its YES asks, or for NO the complement of its YES bids (NO ask = 100 − YES bid). */
export function buyLadder(book: MarketLadder, side: 'yes' | 'no'): readonly Level[] {
  return side === 'yes' ? book.asks : book.bids.map(([p, s]) => [PAYOUT - p, s] as const);
}

/** Bids to sell `side` back into: YES bids, or for NO the complement of the YES asks. */
export function sellLadder(book: MarketLadder, side: 'yes' | 'no'): readonly Level[] {
  return side === 'yes' ? book.bids : book.asks.map(([p, s]) => [PAYOUT - p, s] as const);
}

/**
 * The order a taker sends for each leg, fixed at signal time from the books the signal saw: per leg,
 * the worst price reached walking the opportunity's size at signal time is its limit (a taker does
 * not chase the book past what made the signal pay), and the contracts are that size, fewer when
 * the worst case (every contract at its limit with the highest fee a contract can pay below it)
 * would spend more than `maxUnits`. Each leg's budget is its worst case, so the budget never stops
 * one leg short of the other: legs fill unequally only when a book lacks the depth.
 */
export function planOrders(
  signal: readonly { readonly asks: readonly Level[]; readonly fees: FeeSchedule; readonly fee: FeeContext }[],
  size: number,
  maxUnits: number,
): LegOrder[] {
  const limits = signal.map((l) => walkBuy(l.asks, { limit: Infinity, contracts: size, budget: Infinity, fees: l.fees, fee: l.fee }).worst);
  const perContract = signal.map((l, i) => limits[i]! + maxFeePerContract(l.fees, l.fee, limits[i]!));
  const unit = perContract.reduce((a, b) => a + b, 0);
  const contracts = limits.some((p) => p <= 0) ? 0 : unit * size <= maxUnits ? size : Math.floor(maxUnits / unit);
  return signal.map((l, i) => ({ limit: limits[i]!, contracts, budget: contracts * perContract[i]!, fees: l.fees, fee: l.fee }));
}

/**
 * The most fee one contract can pay at any price up to `limit` (units): a quadratic fee is highest
 * at 50¢ (P × (1 − P)), a profit share at 0; a per-fill fee rounded up to the cent is at most the
 * rounded fee of one contract per contract.
 */
export function maxFeePerContract(fees: FeeSchedule, ctx: FeeContext, limit: number): number {
  return Math.max(takerFee(fees, Math.min(limit, PAYOUT / 2), 1, ctx), takerFee(fees, 0, 1, ctx));
}

/** An arbitrage's outcome once both legs were sent: matched pairs pay $1; the excess of one leg is exposure. */
export interface ArbOutcome {
  readonly matched: number;
  /** Index of the leg that filled more (undefined when equal). */
  readonly excessLeg: number | undefined;
  readonly excess: number;
  /** Units the excess cost, price and fee (its share of the leg's average). */
  readonly exposure: number;
}

/** Matches two legs' fills: what pays out, and what a broken arb left exposed. */
export function matchLegs(a: Walk, b: Walk): ArbOutcome {
  const matched = Math.min(a.contracts, b.contracts);
  const diff = a.contracts - b.contracts;
  if (Math.abs(diff) <= EPS) return { matched, excessLeg: undefined, excess: 0, exposure: 0 };
  const i = diff > 0 ? 0 : 1;
  const w = i === 0 ? a : b;
  const excess = Math.abs(diff);
  return { matched, excessLeg: i, excess, exposure: ((w.spent + w.fee) * excess) / w.contracts };
}

/**
 * Net of an arbitrage (units): matched pairs pay $1 each; both legs' spend and fees are paid in
 * full; an unwind's proceeds less its fees come back (excess it could not sell is worth nothing here).
 */
export function arbNet(a: Walk, b: Walk, unwind: Sale | undefined): number {
  const matched = Math.min(a.contracts, b.contracts);
  return matched * PAYOUT - a.spent - a.fee - b.spent - b.fee + (unwind ? unwind.proceeds - unwind.fee : 0);
}

/** Expected net of an EV fill (units): each contract pays $1 with the consensus probability. */
export function evNet(w: Walk, probability: number): number {
  return w.contracts * probability * PAYOUT - w.spent - w.fee;
}
