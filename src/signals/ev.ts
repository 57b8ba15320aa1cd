import { PAYOUT } from '../core/price.js';
import { sortByRoi, type MemberLadders } from './arb.js';
import { takerFee } from './fees.js';
import type { TrackedEv } from './lifecycle/record.js';

const SIDES = ['yes', 'no'] as const;

/** Quotes wider than this are not used for the consensus (the same 20-cent rule as /search). */
const MAX_SPREAD = 2_000;

export interface Consensus {
  /** Probability of the group's YES, 0..1. */
  readonly probability: number;
  /** Members that contributed, by venue label. */
  readonly sources: readonly string[];
}

/**
 * The consensus probability of a group's YES: the average of member mids (in group terms), each
 * weighted by the contracts resting at its best bid and ask (depth you could trade against), over
 * members with a two-sided quote no wider than 20 cents, and at least two of them. `exclude` leaves
 * one venue out, so a venue's price is never judged against a consensus it is part of.
 */
export function consensus(members: readonly MemberLadders[], exclude?: string): Consensus | undefined {
  const probability = consensusProbability(members, exclude);
  return probability === undefined ? undefined : { probability, sources: consensusSources(members, exclude) };
}

/** A member's mid and weight count towards the consensus: a two-sided quote no wider than 20 cents. */
function counts(m: MemberLadders, exclude: string | undefined): boolean {
  if (m.member.venue.label === exclude) return false;
  const ya = m.yesAsks[0];
  const na = m.noAsks[0];
  if (!ya || !na) return false;
  const yesBid = PAYOUT - na[0];
  return !(ya[0] - yesBid > MAX_SPREAD || ya[0] < yesBid);
}

/** The probability `consensus` gives, without its list of sources (built only for an opportunity that names them). */
function consensusProbability(members: readonly MemberLadders[], exclude: string | undefined): number | undefined {
  let w = 0;
  let sum = 0;
  let n = 0;
  for (let i = 0; i < members.length; i++) {
    const m = members[i]!;
    if (!counts(m, exclude)) continue;
    const ya = m.yesAsks[0]!;
    const na = m.noAsks[0]!;
    const weight = Math.max(1, ya[1] + na[1]);
    const yesBid = PAYOUT - na[0];
    sum += ((ya[0] + yesBid) / 2) * weight;
    w += weight;
    n++;
  }
  // One other venue is a quote, not a consensus.
  return n < 2 ? undefined : sum / w / PAYOUT;
}

/** The venues (slugs) of the members `consensus` averages, in member order. */
function consensusSources(members: readonly MemberLadders[], exclude: string | undefined): string[] {
  // Sized first: a list grown by push reserves room for 17.
  let n = 0;
  for (let i = 0; i < members.length; i++) if (counts(members[i]!, exclude)) n++;
  const sources = new Array<string>(n);
  n = 0;
  for (let i = 0; i < members.length; i++) if (counts(members[i]!, exclude)) sources[n++] = members[i]!.member.venue.slug;
  return sources;
}

/**
 * The leg of an EV opportunity. Spec 2.15 names `platform` and `source`; beside our names, those
 * clients of the hosted API read (README "Clients of the hosted API"): `source_url` = `url`,
 * `fee_usd` = `fee`, and the opportunity's `roi_pct` and `ev_usd_per_dollar` on the leg.
 */
export interface EvLeg {
  readonly platform: string;
  /** The venue slug the quote came from. */
  readonly source: string;
  readonly market_id: string;
  readonly side: 'yes' | 'no';
  /** Best ask, cents. */
  readonly price: number;
  readonly size: number;
  readonly fee: number;
  readonly fee_usd: number;
  readonly roi_pct: number;
  readonly ev_usd_per_dollar: number;
  readonly url: string | null;
  readonly source_url: string | null;
}

/** An EV opportunity; `consensus_probability` = `consensus`, `roi_pct` = `roi`, `ev_usd_per_dollar` = `ev_per_dollar`. */
export interface EvOpportunity {
  readonly group_id: number;
  readonly side: 'yes' | 'no';
  /** Net ROI percent: expected profit per dollar spent × 100, fee included. EV gain per dollar = roi / 100. */
  readonly roi: number;
  readonly roi_pct: number;
  readonly ev_per_dollar: number;
  readonly ev_usd_per_dollar: number;
  readonly consensus: number;
  readonly consensus_probability: number;
  readonly consensus_sources: readonly string[];
  readonly price: number;
  readonly size: number;
  readonly fee: number;
  readonly legs: readonly [EvLeg];
}

/**
 * EV of buying the group's YES (or NO) at one member's best ask against the leave-one-out
 * consensus, per contract after the taker fee. Positive-EV entries only. `previous` is the group's
 * list as last published: an opportunity of it that the lifecycle tracker identified (it carries
 * an opportunity_id, which the tracker sets again to the same) and that reads exactly as the one
 * computed is returned in its place rather than built again.
 */
export function groupEv(groupId: number, members: readonly MemberLadders[], previous?: readonly TrackedEv[]): EvOpportunity[] {
  const out: EvOpportunity[] = [];
  for (const m of members) {
    const probability = consensusProbability(members, m.member.venue.label);
    if (probability === undefined) continue;
    // Shared by the member's two sides, built when the first of them is an opportunity.
    let sources: string[] | undefined;
    for (const side of SIDES) {
      const best = (side === 'yes' ? m.yesAsks : m.noAsks)[0];
      if (!best) continue;
      const [price, size] = best;
      const p = side === 'yes' ? probability : 1 - probability;
      const fee = takerFee(m.member.venue.fees, price, 1, m.member.fee); // per contract, units
      const cost = price + fee;
      const ev = p * PAYOUT - cost;
      if (ev <= 0 || cost <= 0) continue;
      const rawRoi = (ev / cost) * 100;
      const roi = Math.round(rawRoi * 10_000) / 10_000;
      const perDollar = Math.round((rawRoi / 100) * 1e6) / 1e6;
      const feeUsd = Math.round((fee / PAYOUT) * 1e4) / 1e4;
      const prob = Math.round(probability * 1e4) / 1e4;
      const url = m.member.url ?? null;
      const legSide = (side === 'yes') !== m.member.inverted ? 'yes' : 'no';
      const was = previous && unchanged(previous, groupId, m, side, legSide, roi, perDollar, prob, price / 100, size, feeUsd, url, members);
      if (was && !out.includes(was)) {
        out.push(was);
        continue;
      }
      out.push({
        group_id: groupId,
        side,
        roi,
        roi_pct: roi,
        ev_per_dollar: perDollar,
        ev_usd_per_dollar: perDollar,
        consensus: prob,
        consensus_probability: prob,
        consensus_sources: (sources ??= consensusSources(members, m.member.venue.label)),
        price: price / 100,
        size,
        fee: feeUsd,
        legs: [
          {
            platform: m.member.venue.slug,
            source: m.member.venue.slug,
            market_id: m.member.marketId,
            side: legSide,
            price: price / 100,
            size,
            fee: feeUsd,
            fee_usd: feeUsd,
            roi_pct: roi,
            ev_usd_per_dollar: perDollar,
            url,
            source_url: url,
          },
        ],
      });
    }
  }
  return sortByRoi(out);
}

/**
 * The opportunity of `previous` with the identity the tracker gives (market, side bought) of the
 * one just computed from these figures, when it carries an id and every field reads the same.
 */
function unchanged(
  previous: readonly TrackedEv[],
  groupId: number,
  m: MemberLadders,
  side: 'yes' | 'no',
  legSide: 'yes' | 'no',
  roi: number,
  perDollar: number,
  prob: number,
  price: number,
  size: number,
  feeUsd: number,
  url: string | null,
  members: readonly MemberLadders[],
): TrackedEv | undefined {
  const slug = m.member.venue.slug;
  for (let i = 0; i < previous.length; i++) {
    const p = previous[i]!;
    const l = p.legs[0];
    if (
      p.opportunity_id === undefined ||
      p.side !== side ||
      p.legs.length !== 1 ||
      l.market_id !== m.member.marketId ||
      l.source !== slug ||
      l.side !== legSide
    )
      continue;
    const same =
      p.group_id === groupId &&
      p.roi === roi &&
      p.roi_pct === roi &&
      p.ev_per_dollar === perDollar &&
      p.ev_usd_per_dollar === perDollar &&
      p.consensus === prob &&
      p.consensus_probability === prob &&
      p.price === price &&
      p.size === size &&
      p.fee === feeUsd &&
      l.platform === slug &&
      l.price === price &&
      l.size === size &&
      l.fee === feeUsd &&
      l.fee_usd === feeUsd &&
      l.roi_pct === roi &&
      l.ev_usd_per_dollar === perDollar &&
      l.url === url &&
      l.source_url === url &&
      sameSources(p.consensus_sources, members, m.member.venue.label);
    return same ? p : undefined;
  }
  return undefined;
}

/** Whether `sources` is the list `consensusSources` would build (without building it). */
function sameSources(sources: readonly string[], members: readonly MemberLadders[], exclude: string): boolean {
  let n = 0;
  for (let i = 0; i < members.length; i++) if (counts(members[i]!, exclude) && sources[n++] !== members[i]!.member.venue.slug) return false;
  return n === sources.length;
}
