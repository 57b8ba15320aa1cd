import type { VenueConfig } from '../config/schema.js';
import { PAYOUT } from '../core/price.js';
import type { Level } from '../core/types.js';
import { takerFee, type FeeContext } from './fees.js';
import type { TrackedArb } from './lifecycle/record.js';

/** One market of a match group as the signal engines see it. */
export interface GroupMember {
  readonly venue: VenueConfig;
  readonly marketId: string;
  /** This market's YES is the group's NO. */
  readonly inverted: boolean;
  readonly fee: FeeContext;
  readonly url?: string | undefined;
}

/** A member's book in the GROUP's perspective: asks to buy group-YES and to buy group-NO, best first. */
export interface MemberLadders {
  readonly member: GroupMember;
  /** Asks for the group's YES outcome, units, best (lowest) first. */
  readonly yesAsks: readonly Level[];
  /** Asks for the group's NO outcome, units, best first. */
  readonly noAsks: readonly Level[];
}

/**
 * Ladders of a member from its own YES-perspective book. Buying NO costs 100 − the YES bid (NO
 * ask = 100 − best YES bid, spec 2.1), on every venue: where NO is not quoted (yes-only venues)
 * that is still what selling YES pays. An inverted member swaps the two.
 */
export function ladders(member: GroupMember, bids: readonly Level[], asks: readonly Level[]): MemberLadders {
  const ownYes = asks;
  const ownNo = bids.map(([p, s]) => [PAYOUT - p, s] as const);
  return member.inverted ? { member, yesAsks: ownNo, noAsks: ownYes } : { member, yesAsks: ownYes, noAsks: ownNo };
}

/**
 * A leg of an opportunity. Spec 2.15 names `platform` and `source`; the other names are ours where
 * the spec is silent, with the names clients of the hosted API read beside them (README "Clients of
 * the hosted API"): `source_url` = `url`, `fee_usd` = `fee`.
 */
export interface ArbLeg {
  readonly platform: string;
  /** The venue slug the quote came from (spec 2.15: legs carry a source). */
  readonly source: string;
  readonly market_id: string;
  /** The side bought on this market, in the market's own terms. */
  readonly side: 'yes' | 'no';
  /** Best price of the leg and the size-weighted average over the size taken, cents. */
  readonly price: number;
  readonly avg_price: number;
  readonly size: number;
  /** Taker fee of the leg, dollars. */
  readonly fee: number;
  readonly fee_usd: number;
  /** Dollars the leg spends on the levels it takes (avg_price × size), fee excluded. */
  readonly liquidity_usd: number;
  /** The market's page (its record's URL, else the venue's URL template); null when neither gives one. */
  readonly url: string | null;
  readonly source_url: string | null;
}

/** An arbitrage opportunity; `roi_pct` = `roi`, `total_cost` = `cost` (README "Clients of the hosted API"). */
export interface ArbOpportunity {
  readonly group_id: number;
  /** Net ROI in percent: profit / cost × 100, fees included. */
  readonly roi: number;
  readonly roi_pct: number;
  /** Contracts per leg available at a positive net ROI. */
  readonly size: number;
  /** Dollars paid for both legs including fees. */
  readonly cost: number;
  readonly total_cost: number;
  /**
   * The most dollars worth wagering: the cost at `size`, the size that maximizes profit (a deeper
   * level would add contracts that no longer pay).
   */
  readonly max_wager_usd: number;
  /** Guaranteed payout in dollars (one leg pays $1 per contract whatever happens). */
  readonly payout: number;
  readonly profit: number;
  readonly legs: readonly [ArbLeg, ArbLeg];
}

/**
 * Walks two ladders (buy group-YES on one market, group-NO on another) level by level while the
 * next contracts still cost less than their $1 payout after both legs' fees, and returns the
 * opportunity at the size that maximizes total profit, or undefined when even the first contract
 * loses money. Fees are computed per fill (per level) with each venue's exact schedule. An
 * opportunity of `previous` (the group's list as last published) that the lifecycle tracker
 * identified (it carries an opportunity_id, which the tracker sets again to the same) and that
 * reads exactly as the one computed is returned in its place rather than built again.
 */
export function bestArb(groupId: number, y: MemberLadders, n: MemberLadders, maxLevels = 50, previous?: readonly TrackedArb[]): ArbOpportunity | undefined {
  const ya = y.yesAsks;
  const na = n.noAsks;
  if (ya.length === 0 || na.length === 0) return undefined;
  const vy = y.member.venue;
  const vn = n.member.venue;
  // Greedy walk in contract chunks bounded by the smaller remaining level. Every chunk taken
  // raises the profit (the walk stops at the first that would not), so the best size is where the
  // walk stops; each leg's spend and per-fill fees are summed in fill order as the walk goes.
  let i = 0;
  let j = 0;
  let ry = ya[0]![1];
  let rn = na[0]![1];
  let size = 0;
  let spentY = 0;
  let spentN = 0;
  let fY = 0;
  let fN = 0;
  let steps = 0;
  while (i < ya.length && j < na.length && steps++ < maxLevels * 2) {
    const py = ya[i]![0];
    const pn = na[j]![0];
    const c = Math.min(ry, rn);
    if (c <= 0) break;
    const feeY = takerFee(vy.fees, py, c, y.member.fee);
    const feeN = takerFee(vn.fees, pn, c, n.member.fee);
    const chunkCost = (py + pn) * c + feeY + feeN;
    if (chunkCost >= PAYOUT * c) break; // these contracts no longer pay; deeper levels cost more
    size += c;
    spentY += py * c;
    spentN += pn * c;
    fY += feeY;
    fN += feeN;
    ry -= c;
    rn -= c;
    if (ry <= 1e-9 && ++i < ya.length) ry = ya[i]![1];
    if (rn <= 1e-9 && ++j < na.length) rn = na[j]![1];
  }
  if (size === 0) return undefined;
  // Exact fees over the fills taken (per-fill rounding), as a venue would charge them.
  const totalCost = spentY + spentN + fY + fN;
  const payout = PAYOUT * size;
  if (totalCost >= payout) return undefined;
  const roi = round4(((payout - totalCost) / totalCost) * 100);
  const costUsd = round4(totalCost / PAYOUT);
  const payoutUsd = round4(payout / PAYOUT);
  const profit = round4((payout - totalCost) / PAYOUT);
  if (previous)
    for (let k = 0; k < previous.length; k++) {
      const p = previous[k]!;
      // The tracker's identity: both legs' market, venue and side bought.
      if (p.opportunity_id === undefined || !sameLegIdentity(p.legs[0], y, 'yes') || !sameLegIdentity(p.legs[1], n, 'no')) continue;
      const same =
        p.group_id === groupId &&
        p.roi === roi &&
        p.roi_pct === roi &&
        p.size === size &&
        p.cost === costUsd &&
        p.total_cost === costUsd &&
        p.max_wager_usd === costUsd &&
        p.payout === payoutUsd &&
        p.profit === profit &&
        p.legs.length === 2 &&
        sameLeg(p.legs[0], y, ya[0]![0], size, spentY, fY) &&
        sameLeg(p.legs[1], n, na[0]![0], size, spentN, fN);
      if (same) return p;
      break;
    }
  return {
    group_id: groupId,
    roi,
    roi_pct: roi,
    size,
    cost: costUsd,
    total_cost: costUsd,
    max_wager_usd: costUsd,
    payout: payoutUsd,
    profit,
    legs: [arbLeg(y, ya[0]![0], size, spentY, fY, 'yes'), arbLeg(n, na[0]![0], size, spentN, fN, 'no')],
  };
}

/** Whether `leg` is the leg `arbLeg` gives for `l` buying the group's `groupSide`, by the tracker's identity (market, venue, side). */
function sameLegIdentity(leg: ArbLeg, l: MemberLadders, groupSide: 'yes' | 'no'): boolean {
  return leg.market_id === l.member.marketId && leg.source === l.member.venue.slug && leg.side === ((groupSide === 'yes') !== l.member.inverted ? 'yes' : 'no');
}

/** Whether the rest of `leg` reads as `arbLeg` would build it from these figures. */
function sameLeg(leg: ArbLeg, l: MemberLadders, first: number, size: number, spent: number, fee: number): boolean {
  const url = l.member.url ?? null;
  const feeUsd = round4(fee / PAYOUT);
  return (
    leg.platform === l.member.venue.slug &&
    leg.price === round2(first / 100) &&
    leg.avg_price === round4(spent / size / 100) &&
    leg.size === size &&
    leg.fee === feeUsd &&
    leg.fee_usd === feeUsd &&
    leg.liquidity_usd === round4(spent / PAYOUT) &&
    leg.url === url &&
    leg.source_url === url
  );
}

/** One leg of an arbitrage: `first` is the best price taken, `spent` and `fee` its totals over `size` contracts (units). */
function arbLeg(l: MemberLadders, first: number, size: number, spent: number, fee: number, groupSide: 'yes' | 'no'): ArbLeg {
  const url = l.member.url ?? null;
  return {
    platform: l.member.venue.slug,
    source: l.member.venue.slug,
    market_id: l.member.marketId,
    side: (groupSide === 'yes') !== l.member.inverted ? 'yes' : 'no',
    price: round2(first / 100),
    avg_price: round4(spent / size / 100),
    size,
    fee: round4(fee / PAYOUT),
    fee_usd: round4(fee / PAYOUT),
    liquidity_usd: round4(spent / PAYOUT),
    url,
    source_url: url,
  };
}

/** Every two-leg opportunity of a group: each ordered pair of members on different venues (`previous` as for `bestArb`). */
export function groupArbs(groupId: number, members: readonly MemberLadders[], previous?: readonly TrackedArb[]): ArbOpportunity[] {
  const out: ArbOpportunity[] = [];
  for (const y of members)
    for (const n of members) {
      if (y === n || y.member.venue.label === n.member.venue.label) continue;
      const o = bestArb(groupId, y, n, undefined, previous);
      // The same previous opportunity twice (a market listed twice in a group) is built the second time.
      if (o) out.push(previous !== undefined && out.includes(o) ? bestArb(groupId, y, n)! : o);
    }
  return sortByRoi(out);
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
function round4(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}

/**
 * Sorts `list` best ROI first, in place, keeping the order of equal ROIs (as `Array.sort` does).
 * The lists of a group are short, and `Array.sort` allocates its work space even for two.
 */
export function sortByRoi<T extends { readonly roi: number }>(list: T[]): T[] {
  if (list.length > 16) return list.sort((a, b) => b.roi - a.roi);
  for (let i = 1; i < list.length; i++) {
    const x = list[i]!;
    let j = i;
    for (; j > 0 && list[j - 1]!.roi < x.roi; j--) list[j] = list[j - 1]!;
    list[j] = x;
  }
  return list;
}
