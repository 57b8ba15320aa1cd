import type { ArbOpportunity } from '../arb.js';
import type { EvOpportunity } from '../ev.js';

/** The two kinds of opportunity the signal engine computes. */
export type OpportunityKind = 'arb' | 'ev';

/** Why an opportunity left its group's list, most specific first. */
export const CLOSE_REASONS = ['group_changed', 'market_closed', 'fee_change', 'size_gone', 'book_moved'] as const;
export type CloseReason = (typeof CLOSE_REASONS)[number];

/** An arbitrage opportunity with the id of its lifetime (absent when no tracker runs or it is full). */
export type TrackedArb = ArbOpportunity & { readonly opportunity_id?: string };
/** An EV opportunity with the id of its lifetime. */
export type TrackedEv = EvOpportunity & { readonly opportunity_id?: string };

/** A leg as the history keeps it: where, and which side of the market was bought. */
export interface OpportunityLeg {
  readonly platform: string;
  readonly source: string;
  readonly market_id: string;
  readonly side: 'yes' | 'no';
}

/** A closed opportunity, as persisted (times in ms since epoch). */
export interface OpportunityRecord {
  readonly opportunity_id: string;
  readonly kind: OpportunityKind;
  readonly group_id: number;
  readonly title: string;
  readonly category: string | null;
  /** EV: the group side bought; arbitrage buys both, null. */
  readonly side: 'yes' | 'no' | null;
  readonly legs: readonly OpportunityLeg[];
  /** The legs' venues (slugs), sorted, without repeats. */
  readonly platforms: readonly string[];
  readonly first_seen: number;
  /** The last recompute at which it was still listed. */
  readonly last_seen: number;
  /** The recompute at which it was gone. */
  readonly closed_at: number;
  readonly duration_ms: number;
  readonly close_reason: CloseReason;
  /** Net ROI percent (fees included) when it opened, at its best, and when last listed. */
  readonly open_roi: number;
  readonly peak_roi: number;
  readonly last_roi: number;
  /** Largest executable size (contracts) seen. */
  readonly peak_size: number;
  /** Executable size averaged over its life, weighted by ROI × time held (the size worth taking). */
  readonly roi_weighted_size: number;
  /** Recomputes at which its ROI or size changed. */
  readonly updates: number;
}

/** What the engine knows now about a leg of a vanished opportunity, to say why it vanished. */
export interface LegState {
  /** The leg's market is still a member of the group. */
  readonly member: boolean;
  /** The market is listed and active. */
  readonly active: boolean;
  /** The fee context of the market (live game, league, futures), as a comparable string. */
  readonly feeKey: string;
  /** Contracts at the best price of the side the leg buys (0 when that side is empty). */
  readonly depth: number;
}

/**
 * The close reason of an opportunity from the present state of its legs and the fee contexts they
 * had when it opened: the group lost a leg's market, a market closed, a fee changed, a leg has no
 * size left on its side, or else the book moved it out of profit.
 */
export function closeReason(legs: readonly LegState[], feeKeysAtOpen: readonly string[]): CloseReason {
  let worst = CLOSE_REASONS.length - 1;
  for (let i = 0; i < legs.length; i++) {
    const l = legs[i]!;
    const r = !l.member ? 0 : !l.active ? 1 : l.feeKey !== feeKeysAtOpen[i] ? 2 : l.depth <= 0 ? 3 : 4;
    if (r < worst) worst = r;
  }
  return CLOSE_REASONS[worst]!;
}

/** The API and stream form of a closed opportunity: ISO times beside the milliseconds of duration. */
export function recordJson(r: OpportunityRecord): Record<string, unknown> {
  return {
    ...r,
    first_seen: new Date(r.first_seen).toISOString(),
    last_seen: new Date(r.last_seen).toISOString(),
    closed_at: new Date(r.closed_at).toISOString(),
  };
}

/** JSON Schema of `recordJson`, for the OpenAPI document. */
export const RECORD_SCHEMA: Record<string, unknown> = {
  type: 'object',
  required: ['opportunity_id', 'kind', 'group_id', 'first_seen', 'last_seen', 'closed_at', 'duration_ms', 'close_reason', 'peak_roi'],
  properties: {
    opportunity_id: { type: 'string' },
    kind: { type: 'string', enum: ['arb', 'ev'] },
    group_id: { type: 'integer' },
    title: { type: 'string' },
    category: { type: ['string', 'null'] },
    side: { type: ['string', 'null'], enum: ['yes', 'no', null] },
    legs: {
      type: 'array',
      items: {
        type: 'object',
        properties: { platform: { type: 'string' }, source: { type: 'string' }, market_id: { type: 'string' }, side: { type: 'string', enum: ['yes', 'no'] } },
      },
    },
    platforms: { type: 'array', items: { type: 'string' } },
    first_seen: { type: 'string', format: 'date-time' },
    last_seen: { type: 'string', format: 'date-time' },
    closed_at: { type: 'string', format: 'date-time' },
    duration_ms: { type: 'integer', minimum: 0 },
    close_reason: { type: 'string', enum: [...CLOSE_REASONS] },
    open_roi: { type: 'number', description: 'net ROI percent (fees included) when it opened' },
    peak_roi: { type: 'number', description: 'best net ROI percent over its life' },
    last_roi: { type: 'number' },
    peak_size: { type: 'number', description: 'largest executable size, contracts' },
    roi_weighted_size: { type: 'number', description: 'executable size averaged over its life, weighted by ROI × time' },
    updates: { type: 'integer' },
  },
};
