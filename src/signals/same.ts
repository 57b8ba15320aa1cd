import type { ArbLeg } from './arb.js';
import type { EvLeg } from './ev.js';
import type { TrackedArb, TrackedEv } from './lifecycle/record.js';

/**
 * Whether a recomputed arbitrage reads exactly as `p` (the same opportunity as published) did:
 * every field the computation and the tracker set, legs compared field by field. Fields are named
 * one by one rather than walked as keys (this runs on every recompute); test/signals/same.test.ts
 * fails when an opportunity gains a field this does not compare.
 */
export function sameArb(o: TrackedArb, p: TrackedArb): boolean {
  return (
    o === p ||
    (o.opportunity_id === p.opportunity_id &&
      o.group_id === p.group_id &&
      o.roi === p.roi &&
      o.roi_pct === p.roi_pct &&
      o.size === p.size &&
      o.cost === p.cost &&
      o.total_cost === p.total_cost &&
      o.max_wager_usd === p.max_wager_usd &&
      o.payout === p.payout &&
      o.profit === p.profit &&
      o.legs.length === p.legs.length &&
      sameArbLeg(o.legs[0], p.legs[0]) &&
      sameArbLeg(o.legs[1], p.legs[1]))
  );
}

function sameArbLeg(a: ArbLeg, b: ArbLeg): boolean {
  return (
    a === b ||
    (a.platform === b.platform &&
      a.source === b.source &&
      a.market_id === b.market_id &&
      a.side === b.side &&
      a.price === b.price &&
      a.avg_price === b.avg_price &&
      a.size === b.size &&
      a.fee === b.fee &&
      a.fee_usd === b.fee_usd &&
      a.liquidity_usd === b.liquidity_usd &&
      a.url === b.url &&
      a.source_url === b.source_url)
  );
}

/** Whether a recomputed EV opportunity reads exactly as `p` did (as `sameArb`, with the consensus sources compared by value). */
export function sameEv(o: TrackedEv, p: TrackedEv): boolean {
  return (
    o === p ||
    (o.opportunity_id === p.opportunity_id &&
      o.group_id === p.group_id &&
      o.side === p.side &&
      o.roi === p.roi &&
      o.roi_pct === p.roi_pct &&
      o.ev_per_dollar === p.ev_per_dollar &&
      o.ev_usd_per_dollar === p.ev_usd_per_dollar &&
      o.consensus === p.consensus &&
      o.consensus_probability === p.consensus_probability &&
      sameStrings(o.consensus_sources, p.consensus_sources) &&
      o.price === p.price &&
      o.size === p.size &&
      o.fee === p.fee &&
      o.legs.length === p.legs.length &&
      sameEvLeg(o.legs[0], p.legs[0]))
  );
}

function sameEvLeg(a: EvLeg, b: EvLeg): boolean {
  return (
    a === b ||
    (a.platform === b.platform &&
      a.source === b.source &&
      a.market_id === b.market_id &&
      a.side === b.side &&
      a.price === b.price &&
      a.size === b.size &&
      a.fee === b.fee &&
      a.fee_usd === b.fee_usd &&
      a.roi_pct === b.roi_pct &&
      a.ev_usd_per_dollar === b.ev_usd_per_dollar &&
      a.url === b.url &&
      a.source_url === b.source_url)
  );
}

function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
