import type { FeeRule, FeeSchedule } from '../config/schema.js';
import { PAYOUT } from '../core/price.js';

/** What a fee rule can depend on: whether the game is live, its league, whether it is a futures market. */
export interface FeeContext {
  readonly live?: boolean | undefined;
  readonly league?: string | undefined;
  readonly futures?: boolean | undefined;
}

/** The rule of a schedule that applies (first match wins), or undefined for fee-free schedules. */
export function feeRule(s: FeeSchedule, ctx: FeeContext = {}): FeeRule | undefined {
  if (s.kind !== 'taker_quadratic') return undefined;
  for (const r of s.rules) {
    const w = r.when;
    if (!w) return r;
    if (w.live !== undefined && w.live !== (ctx.live ?? false)) continue;
    if (w.futures !== undefined && w.futures !== (ctx.futures ?? false)) continue;
    if (w.leagues !== undefined && !(ctx.league !== undefined && w.leagues.includes(ctx.league))) continue;
    return r;
  }
  return undefined;
}

/**
 * Taker fee of buying `contracts` at `price` (units) on one fill, in units (10_000 = $1), exact:
 * - taker_quadratic: rate × C × P × (1 − P) dollars; with round "ceil_cent" rounded up to the
 *   next cent (Kalshi: ceil(0.07 × C × P × (1 − P)) to the cent), computed in integers so that
 *   0.07 × 100 × 0.5 × 0.5 = $1.75 exactly, not 1.7500000000000002 → $1.76.
 * - profit_share: rate × C × (1 − P): the share of the profit if this leg wins (charged only then;
 *   arbitrage and EV count it in full, which is the conservative side).
 * - none: 0.
 */
export function takerFee(s: FeeSchedule, price: number, contracts: number, ctx: FeeContext = {}): number {
  if (contracts <= 0) return 0;
  if (s.kind === 'none') return 0;
  if (s.kind === 'profit_share') return s.rate * contracts * (PAYOUT - price);
  const r = feeRule(s, ctx);
  if (!r || r.rate === 0) return 0;
  // rate as an integer of 1e-6 (0.07 → 70_000), P and 1 − P in units: the product is exact for
  // integer contract counts; units² / 1e4 → units.
  const rateMicro = Math.round(r.rate * 1e6);
  const raw = (rateMicro * contracts * price * (PAYOUT - price)) / 1e6 / PAYOUT; // units
  if (raw <= 0) return 0;
  if (r.round === 'ceil_cent') {
    const cents = Math.ceil(raw / 100 - 1e-9);
    return cents * 100;
  }
  return raw;
}
