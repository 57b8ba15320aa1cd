import { z } from 'zod';
import type { DeepReadonly } from '../../access/api.js';
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

const isoTime = (description: string) => z.string().meta({ format: 'date-time', description });

/**
 * A closed opportunity as /arb/history, /ev/history and the arb_expired/ev_expired WebSocket
 * messages serve it (`recordJson`): the record with ISO times.
 */
export const OpportunityRecordJson = z
  .object({
    opportunity_id: z.string().describe('the id the opportunity carried while it lived'),
    kind: z.enum(['arb', 'ev']).describe('arbitrage or EV'),
    group_id: z.number().int().describe('match group of the legs'),
    title: z.string().describe('match group title'),
    category: z.string().nullable().describe('category of the match group; null when it has none'),
    side: z.enum(['yes', 'no']).nullable().describe("EV: the side of the group's YES bought; null for arbitrage (both sides)"),
    legs: z
      .array(
        z.object({
          platform: z.string().describe('venue slug'),
          source: z.string().describe('venue the quote came from'),
          market_id: z.string().describe('native market id'),
          side: z.enum(['yes', 'no']).describe("side bought, in the market's own terms"),
        }),
      )
      .describe('two for arbitrage, one for EV'),
    platforms: z.array(z.string()).describe("the legs' venues (slugs), sorted, without repeats"),
    first_seen: isoTime('the recompute at which it appeared'),
    last_seen: isoTime('the last recompute at which it was still listed'),
    closed_at: isoTime('the recompute at which it was gone'),
    duration_ms: z.number().int().min(0).describe('closed_at − first_seen, ms'),
    close_reason: z.enum(CLOSE_REASONS).describe('why it closed, most specific first'),
    open_roi: z.number().describe('net ROI percent (fees included) when it opened'),
    peak_roi: z.number().describe('best net ROI percent over its life'),
    last_roi: z.number().describe('net ROI percent when last listed'),
    peak_size: z.number().describe('largest executable size, contracts'),
    roi_weighted_size: z.number().describe('executable size averaged over its life, weighted by ROI × time held, contracts'),
    updates: z.number().int().min(0).describe('recomputes at which its ROI or size changed'),
  })
  .describe('OpportunityRecord');

/** The API and stream form of a closed opportunity: ISO times beside the milliseconds of duration. */
export function recordJson(r: OpportunityRecord): DeepReadonly<z.output<typeof OpportunityRecordJson>> {
  return {
    ...r,
    first_seen: new Date(r.first_seen).toISOString(),
    last_seen: new Date(r.last_seen).toISOString(),
    closed_at: new Date(r.closed_at).toISOString(),
  };
}
