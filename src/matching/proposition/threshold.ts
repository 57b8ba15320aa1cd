/** Comparisons a title states about a number (a rate, a price, a count), and Kalshi's strike codes. */
import { parseAmount } from '../text.js';
import type { Ctx } from './context.js';
import type { Comparator, Draft } from './types.js';

/** A stated comparison: `high` is the top of a range. */
export interface Cmp {
  readonly cmp: Comparator;
  readonly value: number;
  readonly high?: number | undefined;
}

/** The patterns of each comparison, for one kind of number. */
interface CmpPatterns {
  readonly between: RegExp;
  readonly to: RegExp | undefined;
  readonly ge: RegExp;
  readonly le: RegExp;
  readonly gt: RegExp;
  readonly lt: RegExp;
  readonly eq: RegExp | undefined;
}

function cmpPatterns(num: string, dollars: boolean): CmpPatterns {
  return {
    between: new RegExp(`\\bbetween ${num} and ${num}`),
    to: dollars ? new RegExp(`${num} to ${num}`) : undefined,
    ge: new RegExp(`(?:>=|\\bat least|\\bno less than)\\s?${num}|${num}\\s?(?:\\+|or (?:more|higher|above|greater))`),
    le: new RegExp(`(?:<=|\\bat most|\\bno more than)\\s?${num}|${num}\\s?or (?:less|lower|below|fewer)`),
    gt: new RegExp(`(?:>|\\babove|\\bmore than|\\bover|\\bgreater than|\\bhigher than|\\bexceeds?|\\bexceeding)\\s?${num}`),
    lt: new RegExp(`(?:<|\\bbelow|\\bless than|\\bunder|\\blower than)\\s?${num}`),
    eq: dollars ? undefined : new RegExp(num),
  };
}

/** A dollar amount: "$139,999.99", "45000", "140k". */
export const MONEY = '\\$?\\s?(\\d{1,3}(?:,\\d{3})+(?:\\.\\d+)?|\\d+(?:\\.\\d+)?(?:k|m)?)';
const CMP_PCT = cmpPatterns('(-?\\d+(?:\\.\\d+)?)\\s?%', false);
const CMP_USD = cmpPatterns(MONEY, true);

/**
 * The comparison a title states about a number with `unit` ("%" or "$"): "above 2.4%" (>),
 * "≥4.7%" / "4.7% or higher" / "25+" (>=), "below" (<), "at most" (<=), "between X and Y"
 * (range), a bare number (= exact bucket: "increase by 2.4%").
 */
export function comparison(t: string, unit: '%' | '$'): Cmp | undefined {
  const p = unit === '%' ? CMP_PCT : CMP_USD;
  const between = p.between.exec(t) ?? p.to?.exec(t);
  if (between) return { cmp: 'range', value: amount(between[1]!), high: amount(between[2]!) };
  const ge = p.ge.exec(t);
  if (ge) return { cmp: '>=', value: amount(ge[1] ?? ge[2]!) };
  const le = p.le.exec(t);
  if (le) return { cmp: '<=', value: amount(le[1] ?? le[2]!) };
  const gt = p.gt.exec(t);
  if (gt) return { cmp: '>', value: amount(gt[1]!) };
  const lt = p.lt.exec(t);
  if (lt) return { cmp: '<', value: amount(lt[1]!) };
  const eq = p.eq?.exec(t);
  if (eq) return { cmp: '=', value: amount(eq[1]!) };
  return undefined;
}

/** A matched number or dollar amount as a number. */
export function amount(s: string): number {
  const v = parseAmount(s.replace(/^\$/, '').trim());
  return Number.isFinite(v) ? v : Number(s);
}

/** Kalshi strike from the market part of a ticker: T = above, B = bucket. */
export function tickerStrike(ctx: Ctx): Cmp | undefined {
  const mk = ctx.kt?.market;
  if (!mk) return undefined;
  const m = /^([TB])?(-?\d+(?:\.\d+)?)$/.exec(mk);
  if (!m) return undefined;
  const v = Number(m[2]);
  if (m[1] === 'B') return { cmp: 'range', value: v, high: undefined };
  return { cmp: '>', value: v };
}

/** Writes a comparison and its unit into the draft. */
export function setThreshold(d: Draft, c: Cmp, unit: string): void {
  d.comparator = c.cmp;
  d.threshold = c.value;
  d.thresholdHigh = c.high ?? null;
  d.unit = unit;
}
