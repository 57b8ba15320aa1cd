import { Subject } from 'rxjs';
import type { ArbOpportunity } from '../arb.js';
import type { EvOpportunity } from '../ev.js';
import { closeReason, type LegState, type OpportunityKind, type OpportunityLeg, type OpportunityRecord, type TrackedArb, type TrackedEv } from './record.js';

/** What the tracker asks the engine about the legs of an opportunity that left its group's list. */
export interface LegLookup {
  /** `groupSide` is the group outcome the leg buys (an arbitrage's first leg buys YES, its second NO). */
  legState(source: string, marketId: string, groupSide: 'yes' | 'no'): LegState;
  /** The fee context of a market now (compared at close with the one it had at open). */
  feeKey(source: string, marketId: string): string;
}

/** Where closed opportunities go (the LMDB log). */
export interface RecordSink {
  append(r: OpportunityRecord): void;
}

/** An opportunity still open: its record so far (nothing about its close). */
export type OpenRecord = Omit<OpportunityRecord, 'closed_at' | 'duration_ms' | 'close_reason' | 'roi_weighted_size'>;

/** A lifecycle event: an opportunity opened, or closed with its record. */
export type LifecycleEvent =
  | { readonly type: 'opened'; readonly kind: 'arb'; readonly id: string; readonly title: string; readonly opportunity: TrackedArb }
  | { readonly type: 'opened'; readonly kind: 'ev'; readonly id: string; readonly title: string; readonly opportunity: TrackedEv }
  | { readonly type: 'expired'; readonly kind: OpportunityKind; readonly record: OpportunityRecord };

export interface TrackerOptions {
  /** Open opportunities tracked at most; past it a new one goes untracked (no id) and is counted. */
  readonly maxOpen?: number;
  /** The group's category, asked once when an opportunity opens. */
  readonly categoryOf?: (groupId: number) => string | null;
}

/** One live opportunity: its identity and the running figures of its life. */
class Open {
  /** Tracker generation at which it was last listed (the sweep closes the others). */
  mark = 0;
  lastSeen: number;
  /** Since when `roi` and `size` hold. */
  since: number;
  peakRoi: number;
  peakSize: number;
  /** Σ roi × size × dt and Σ roi × dt over the life so far. */
  wRoiSizeDt = 0;
  wRoiDt = 0;
  updates = 0;
  /** Its opening went out on `events$`. */
  announced = false;

  constructor(
    readonly id: string,
    readonly kind: OpportunityKind,
    readonly groupId: number,
    readonly title: string,
    readonly category: string | null,
    readonly side: 'yes' | 'no' | null,
    readonly legs: readonly OpportunityLeg[],
    /** The group outcome each leg buys. */
    readonly groupSides: readonly ('yes' | 'no')[],
    readonly feeKeys: readonly string[],
    readonly firstSeen: number,
    readonly openRoi: number,
    public roi: number,
    public size: number,
  ) {
    this.lastSeen = firstSeen;
    this.since = firstSeen;
    this.peakRoi = roi;
    this.peakSize = size;
  }

  /** Folds the time since the last change into the weighted sums. */
  accrue(now: number): void {
    const dt = now - this.since;
    if (dt > 0) {
      this.wRoiSizeDt += this.roi * this.size * dt;
      this.wRoiDt += this.roi * dt;
    }
    this.since = now;
  }
}

const ARB_SIDES = ['yes', 'no'] as const;

/**
 * Opportunity lifecycle: the signal engine hands each recomputed group's lists here, and the
 * tracker matches them against that group's open opportunities by identity (group, kind, legs and
 * the side bought). A new identity opens with an id; a listed one updates its running figures
 * (peak ROI and size, ROI × time weighted size); one no longer listed closes with the reason its
 * legs give (`closeReason`), goes to the sink and out on `events$`. Memory holds only open
 * opportunities, at most `maxOpen`; closed ones live in the sink.
 */
export class LifecycleTracker {
  /** Open opportunities per group (a handful each: a linear scan beats building a key per listing). */
  private readonly byGroup = new Map<number, Open[]>();
  private readonly events = new Subject<LifecycleEvent>();
  /** Opened and expired opportunities, synchronously inside the engine's recompute. */
  readonly events$ = this.events.asObservable();
  private gen = 0;
  /** Opportunities opened per group at `openedAt` (the counter of their ids; only the current millisecond's are kept). */
  private readonly openedIn = new Map<number, number>();
  private openedAt = -1;
  private readonly maxOpen: number;
  openCount = 0;
  opened = 0;
  closed = 0;
  /** Opportunities left untracked because `maxOpen` were open. */
  untracked = 0;

  constructor(
    private readonly sink: RecordSink | undefined,
    private readonly opts: TrackerOptions = {},
  ) {
    this.maxOpen = opts.maxOpen ?? 100_000;
  }

  /**
   * One recompute of a group: returns the lists with each opportunity's id, opening, updating and
   * closing as the lists say. A group with nothing open and nothing listed costs one map lookup.
   */
  track(
    groupId: number,
    title: string,
    arbs: readonly ArbOpportunity[],
    evs: readonly EvOpportunity[],
    now: number,
    legs: LegLookup,
  ): { arbs: readonly TrackedArb[]; evs: readonly TrackedEv[] } {
    let open = this.byGroup.get(groupId);
    if (!open && arbs.length === 0 && evs.length === 0) return { arbs, evs };
    if (!open) this.byGroup.set(groupId, (open = []));
    const gen = ++this.gen;
    for (const a of arbs) {
      const o = this.see(open, gen, 'arb', groupId, title, a.roi, a.size, now, legs, a);
      if (!o) continue;
      // The lists are this recompute's own objects: the id is set on them rather than on copies.
      (a as { opportunity_id?: string }).opportunity_id = o.id;
      if (!o.announced) {
        o.announced = true;
        this.events.next({ type: 'opened', kind: 'arb', id: o.id, title, opportunity: a });
      }
    }
    for (const e of evs) {
      const o = this.see(open, gen, 'ev', groupId, title, e.roi, e.size, now, legs, e);
      if (!o) continue;
      (e as { opportunity_id?: string }).opportunity_id = o.id;
      if (!o.announced) {
        o.announced = true;
        this.events.next({ type: 'opened', kind: 'ev', id: o.id, title, opportunity: e });
      }
    }
    let kept = 0;
    for (let i = 0; i < open.length; i++) {
      const o = open[i]!;
      if (o.mark === gen) open[kept++] = o;
      else this.close(o, now, undefined, legs);
    }
    open.length = kept;
    if (kept === 0) this.byGroup.delete(groupId);
    return { arbs, evs };
  }

  /**
   * A recompute of the group listed what it listed last (the engine's `refresh`, when none of what
   * it reads changed): its open opportunities were seen `now`, as `track` would note them.
   */
  seen(groupId: number, now: number): void {
    const open = this.byGroup.get(groupId);
    if (open !== undefined) for (let i = 0; i < open.length; i++) open[i]!.lastSeen = now;
  }

  /** The group is gone (or was rebuilt without them): every open opportunity of it closes as group_changed. */
  closeGroup(groupId: number, now: number): void {
    const open = this.byGroup.get(groupId);
    if (!open) return;
    this.byGroup.delete(groupId);
    for (const o of open) this.close(o, now, 'group_changed');
  }

  /** Lists or opens one opportunity (undefined when `maxOpen` are open). */
  private see(
    open: Open[],
    gen: number,
    kind: OpportunityKind,
    groupId: number,
    title: string,
    roi: number,
    size: number,
    now: number,
    legs: LegLookup,
    src: ArbOpportunity | EvOpportunity,
  ): Open | undefined {
    const o = find(open, kind, src);
    if (o) {
      o.mark = gen;
      o.lastSeen = now;
      if (o.roi !== roi || o.size !== size) {
        o.accrue(now);
        o.roi = roi;
        o.size = size;
        if (roi > o.peakRoi) o.peakRoi = roi;
        if (size > o.peakSize) o.peakSize = size;
        o.updates++;
      }
      return o;
    }
    if (this.openCount >= this.maxOpen) {
      this.untracked++;
      return undefined;
    }
    const ls: OpportunityLeg[] = src.legs.map((l) => ({ platform: l.platform, source: l.source, market_id: l.market_id, side: l.side }));
    const groupSides = kind === 'arb' ? ARB_SIDES : [(src as EvOpportunity).side];
    const n = new Open(
      this.idOf(kind, groupId, now),
      kind,
      groupId,
      title,
      this.opts.categoryOf?.(groupId) ?? null,
      kind === 'ev' ? (src as EvOpportunity).side : null,
      ls,
      groupSides,
      ls.map((l) => legs.feeKey(l.source, l.market_id)),
      now,
      roi,
      roi,
      size,
    );
    n.mark = gen;
    open.push(n);
    this.openCount++;
    this.opened++;
    return n;
  }

  /**
   * The opportunities open now, as far as their records go (no close yet), oldest first: what a
   * replay writes beside the closed ones.
   */
  openRecords(): OpenRecord[] {
    const out: OpenRecord[] = [];
    for (const open of this.byGroup.values())
      for (const o of open)
        out.push({
          ...identity(o),
          open_roi: o.openRoi,
          peak_roi: o.peakRoi,
          last_roi: o.roi,
          peak_size: o.peakSize,
          updates: o.updates,
        });
    return out.sort((x, y) => x.first_seen - y.first_seen || (x.opportunity_id < y.opportunity_id ? -1 : x.opportunity_id > y.opportunity_id ? 1 : 0));
  }

  /**
   * An id from what the opportunity is: its kind, group, the millisecond it opened and how many
   * opened in that group in that millisecond before it (`arb_<group>_<ms>_<n>`, base 36). The same
   * input gives the same ids (a replay, an edge deriving signals from the core's stream), and two
   * distinct opportunities never share one, even when one closes and another with the same legs
   * opens in the same millisecond (so neither inherits the other's detected_at).
   */
  private idOf(kind: OpportunityKind, groupId: number, now: number): string {
    if (now !== this.openedAt) {
      this.openedIn.clear();
      this.openedAt = now;
    }
    const n = this.openedIn.get(groupId) ?? 0;
    this.openedIn.set(groupId, n + 1);
    return `${kind}_${groupId.toString(36)}_${now.toString(36)}_${n.toString(36)}`;
  }

  private close(o: Open, now: number, reason: OpportunityRecord['close_reason'] | undefined, legs?: LegLookup): void {
    this.openCount--;
    this.closed++;
    o.accrue(now);
    const why =
      reason ??
      closeReason(
        o.legs.map((l, i) => legs!.legState(l.source, l.market_id, o.groupSides[i]!)),
        o.feeKeys,
      );
    const record: OpportunityRecord = {
      ...identity(o),
      closed_at: now,
      duration_ms: now - o.firstSeen,
      close_reason: why,
      open_roi: o.openRoi,
      peak_roi: o.peakRoi,
      last_roi: o.roi,
      peak_size: o.peakSize,
      roi_weighted_size: o.wRoiDt > 0 ? Math.round((o.wRoiSizeDt / o.wRoiDt) * 100) / 100 : o.size,
      updates: o.updates,
    };
    this.sink?.append(record);
    this.events.next({ type: 'expired', kind: o.kind, record });
  }
}

/** What an opportunity's record says of what it is and when it was seen (the first fields, in their order). */
function identity(
  o: Open,
): Pick<OpportunityRecord, 'opportunity_id' | 'kind' | 'group_id' | 'title' | 'category' | 'side' | 'legs' | 'platforms' | 'first_seen' | 'last_seen'> {
  return {
    opportunity_id: o.id,
    kind: o.kind,
    group_id: o.groupId,
    title: o.title,
    category: o.category,
    side: o.side,
    legs: o.legs,
    platforms: [...new Set(o.legs.map((l) => l.platform))].sort(),
    first_seen: o.firstSeen,
    last_seen: o.lastSeen,
  };
}

/**
 * The open opportunity with the identity of `src`: same kind, same markets, same side bought on
 * each (an arbitrage's first leg always buys the group's YES, so position fixes the group side).
 */
function find(open: readonly Open[], kind: OpportunityKind, src: ArbOpportunity | EvOpportunity): Open | undefined {
  const l = src.legs;
  for (let i = 0; i < open.length; i++) {
    const o = open[i]!;
    if (o.kind !== kind || o.legs.length !== l.length) continue;
    let same = true;
    for (let j = 0; j < l.length && same; j++) {
      const a = o.legs[j]!;
      const b = l[j]!;
      same = a.market_id === b.market_id && a.side === b.side && a.source === b.source;
    }
    if (same && (kind === 'arb' || o.side === (src as EvOpportunity).side)) return o;
  }
  return undefined;
}
