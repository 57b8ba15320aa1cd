import { EMPTY, Subject, type Observable } from 'rxjs';
import { marketUrl, type VenueDirectory } from '../venues/directory.js';
import { nativeId } from '../views/market.js';
import { sideLevels } from '../state/books.js';
import type { EngineState } from '../state/engine.js';
import { groupArbs, ladders, type ArbOpportunity, type GroupMember, type MemberLadders } from './arb.js';
import { groupEv } from './ev.js';
import type { LegState, TrackedArb, TrackedEv } from './lifecycle/record.js';
import type { LegLookup, LifecycleEvent, LifecycleTracker } from './lifecycle/tracker.js';

/** A match group as the signal engine needs it (the matcher provides these). */
export interface SignalGroup {
  readonly groupId: number;
  readonly title: string;
  readonly members: readonly { readonly venue: string; readonly marketId: string; readonly inverted: boolean }[];
  /** Why the group is suspect (its settlements contradicted the match): no arb/EV is computed from it. */
  readonly suspect?: string | undefined;
  /** The day of the group's event (YYYY-MM-DD), when known. */
  readonly eventDate?: string | null | undefined;
  /** The kind of event, as /events names it (sports, politics, …). */
  readonly eventType?: string | null | undefined;
}

/** Where groups come from: the matcher, behind this small interface. */
export interface GroupSource {
  group(id: number): SignalGroup | undefined;
  groupsOfMarket(venue: string, marketId: string): readonly number[];
  allGroups(): Iterable<SignalGroup>;
}

/**
 * What every published opportunity carries about its group, under the names clients of the hosted
 * API read (README "Clients of the hosted API").
 */
export interface GroupStamp {
  readonly group_title: string;
  readonly event_date: string | null;
  readonly event_type: string | null;
  /** When this opportunity was first computed, in the unbroken run of recomputes that still lists it (ISO 8601). */
  readonly detected_at: string;
}

/** An arbitrage opportunity as published (API and WebSocket). */
export type PublishedArb = TrackedArb & GroupStamp;
/** An EV opportunity as published. */
export type PublishedEv = TrackedEv & GroupStamp;

export interface GroupSignals {
  readonly groupId: number;
  readonly title: string;
  /** With their opportunity ids when a lifecycle tracker runs. */
  readonly arbs: readonly PublishedArb[];
  readonly evs: readonly PublishedEv[];
  /** When this group's signals were computed (ms). */
  readonly at: number;
  /** What a subscriber would see change (legs, prices, sizes, ROI), to publish only real changes. */
  readonly sig: string;
}

/** Levels of each member's book a recompute reads. */
const LADDER_DEPTH = 20;

function signature(arbs: readonly ArbOpportunity[], evs: readonly TrackedEv[]): string {
  let s = '';
  for (const a of arbs) s += `${a.legs[0].market_id}|${a.legs[1].market_id}|${a.roi}|${a.size};`;
  s += '#';
  for (const e of evs) s += `${e.legs[0].market_id}|${e.side}|${e.roi}|${e.size};`;
  return s;
}

/** What identifies an opportunity across recomputes: its id, else its legs and side. */
function identity(o: TrackedArb | TrackedEv): string {
  if (o.opportunity_id !== undefined) return o.opportunity_id;
  let k = 'side' in o ? o.side : '';
  for (const l of o.legs) k += `|${l.source}:${l.market_id}:${l.side}`;
  return k;
}

/**
 * Stamps a recompute's opportunities with their group's fields and detection time: an opportunity
 * the previous list of the group held keeps its detected_at, a new one is detected `now`.
 */
function stamp<T extends TrackedArb | TrackedEv>(
  list: readonly T[],
  prev: readonly (T & GroupStamp)[] | undefined,
  g: SignalGroup,
  now: number,
): (T & GroupStamp)[] {
  if (list.length === 0) return [];
  const seen = new Map<string, string>();
  for (const o of prev ?? []) seen.set(identity(o), o.detected_at);
  const at = new Date(now).toISOString();
  return list.map((o) => ({
    ...o,
    group_title: g.title,
    event_date: g.eventDate ?? null,
    event_type: g.eventType ?? null,
    detected_at: seen.get(identity(o)) ?? at,
  }));
}

/** The fee context of a market from its record's extra fields (live game, league, futures). */
function feeContext(extra: Readonly<Record<string, unknown>> | undefined): { live: boolean; league: string | undefined; futures: boolean } {
  const x = extra ?? {};
  return { live: x['live'] === true, league: typeof x['league'] === 'string' ? x['league'] : undefined, futures: x['futures'] === true };
}

/**
 * Live arbitrage and EV, incrementally: a book change of a member marks that one group (a handful
 * of markets) dirty, and the turn's flush recomputes each dirty group once, so an opportunity is
 * at most one event-loop turn older than the book that made it (`onMarket` recomputes at once).
 * `changes$` emits a group whenever its arbitrage or EV list changed, for the WebSocket channels.
 * With a lifecycle tracker, each recompute's lists go through it before they are kept or
 * published, so every opportunity carries its id and one that left the list has closed (the
 * tracker's `events$`) before the list without it goes out. pipelines/signals.ts says which
 * changes recompute what.
 */
export class SignalEngine implements LegLookup {
  private readonly signals = new Map<number, GroupSignals>();
  private readonly changed = new Subject<GroupSignals>();
  /** A group whose arbitrage or EV list changed (pipelines/fanout.ts publishes it). */
  readonly changes$ = this.changed.asObservable();
  /** Bumped on every change, for serialized-response caches. */
  version = 0;
  recomputed = 0;

  constructor(
    private readonly state: EngineState,
    private readonly venues: VenueDirectory,
    private readonly groups: GroupSource,
    private readonly lifecycle?: LifecycleTracker,
  ) {}

  /** Opportunities opened and expired (the tracker's events; nothing without one). */
  get lifecycle$(): Observable<LifecycleEvent> {
    return this.lifecycle?.events$ ?? EMPTY;
  }

  /** The group and ladders of the recompute in progress, for `legState`. */
  private cur: { g: SignalGroup; ls: readonly MemberLadders[] } | undefined;

  /** Groups marked dirty since the last `flush` (conflation). */
  private readonly dirty = new Set<number>();

  /** Recomputes the groups a market belongs to (its book, quote or record changed). */
  onMarket(venue: string, marketId: string): void {
    const ids = this.groups.groupsOfMarket(venue, marketId);
    for (let i = 0; i < ids.length; i++) this.recompute(ids[i]!);
  }

  /**
   * Marks the groups a market belongs to for the next `flush` (conflation: a burst of changes to a
   * group's members recomputes it once, on the state as it stands). Returns whether any was marked.
   */
  mark(venue: string, marketId: string): boolean {
    const ids = this.groups.groupsOfMarket(venue, marketId);
    for (let i = 0; i < ids.length; i++) this.dirty.add(ids[i]!);
    return ids.length > 0;
  }

  /** Recomputes every group marked since the last flush, once each. */
  flush(): void {
    if (this.dirty.size === 0) return;
    const ids = [...this.dirty];
    this.dirty.clear();
    for (let i = 0; i < ids.length; i++) this.recompute(ids[i]!);
  }

  /** Recomputes one group now. */
  recompute(groupId: number): GroupSignals | undefined {
    const g = this.groups.group(groupId);
    // A suspect group is a wrong match: its opportunities close as if the group were gone.
    if (!g || g.suspect !== undefined) {
      if (this.signals.delete(groupId)) this.version++;
      this.lifecycle?.closeGroup(groupId, Date.now());
      return undefined;
    }
    this.recomputed++;
    const ls: MemberLadders[] = [];
    for (const m of g.members) {
      const v = this.venues.byLabel.get(m.venue);
      const rec = this.state.catalog.get(m.venue, m.marketId);
      if (!v || !rec || rec.status !== 'active') continue;
      // The same page link the market views give: the record's, else the venue's URL template.
      const url = rec.url ?? marketUrl(v, nativeId(v, m.marketId), rec.extra);
      const member: GroupMember = { venue: v, marketId: m.marketId, inverted: m.inverted, fee: feeContext(rec.extra), url };
      // 20 levels: deeper than any arbitrage survives fees. Copied once, straight into the ladders
      // (`ladders` of the book's YES bids and asks, without an intermediate copy of the book).
      const sides = this.state.books.marketSides(m.venue, m.marketId);
      if (sides) {
        const ownYes = sideLevels(sides.asks, LADDER_DEPTH, sides.complement);
        const ownNo = sideLevels(sides.bids, LADDER_DEPTH, !sides.complement);
        ls.push(m.inverted ? { member, yesAsks: ownNo, noAsks: ownYes } : { member, yesAsks: ownYes, noAsks: ownNo });
        continue;
      }
      // Venues without books (listings): their quoted top of book, size unknown (0 = not tradable size).
      const q = this.state.quotes.get(m.venue, m.marketId);
      if (q && (q.yesBid !== undefined || q.yesAsk !== undefined))
        ls.push(ladders(member, q.yesBid !== undefined ? [[q.yesBid, q.yesBidSize ?? 0]] : [], q.yesAsk !== undefined ? [[q.yesAsk, q.yesAskSize ?? 0]] : []));
    }
    const now = Date.now();
    let arbs: readonly TrackedArb[] = groupArbs(groupId, ls);
    let evs: readonly TrackedEv[] = groupEv(groupId, ls);
    if (this.lifecycle) {
      this.cur = { g, ls };
      ({ arbs, evs } = this.lifecycle.track(groupId, g.title, arbs, evs, now, this));
      this.cur = undefined;
    }
    const prev = this.signals.get(groupId);
    const sig = signature(arbs, evs);
    const next: GroupSignals = { groupId, title: g.title, arbs: stamp(arbs, prev?.arbs, g, now), evs: stamp(evs, prev?.evs, g, now), at: now, sig };
    this.signals.set(groupId, next);
    if (!prev || prev.sig !== sig) {
      this.version++;
      this.changed.next(next);
    }
    return next;
  }

  /** A leg's `source` (the venue slug) → the venue label the state and groups use. */
  private labelOf(source: string): string {
    return this.venues.bySlug.get(source)?.label ?? source;
  }

  /** A leg of an opportunity that left the group being recomputed, as the tracker asks for it (source: the leg's venue slug). */
  legState(slug: string, marketId: string, groupSide: 'yes' | 'no'): LegState {
    const source = this.labelOf(slug);
    const member = this.cur?.g.members.some((m) => m.venue === source && m.marketId === marketId) ?? false;
    const rec = this.state.catalog.get(source, marketId);
    const l = this.cur?.ls.find((x) => x.member.venue.label === source && x.member.marketId === marketId);
    const best = l ? (groupSide === 'yes' ? l.yesAsks : l.noAsks)[0] : undefined;
    return { member, active: rec?.status === 'active', feeKey: this.feeKey(source, marketId), depth: best ? best[1] : 0 };
  }

  /** What a market's taker fee depends on besides its venue (the same fields the members' fee context reads). */
  feeKey(slug: string, marketId: string): string {
    const f = feeContext(this.state.catalog.get(this.labelOf(slug), marketId)?.extra);
    return `${f.live}|${f.league ?? ''}|${f.futures}`;
  }

  /** Recomputes every group (start-up, after a matcher rebuild). */
  recomputeAll(): void {
    for (const g of this.groups.allGroups()) this.recompute(g.groupId);
  }

  get(groupId: number): GroupSignals | undefined {
    return this.signals.get(groupId);
  }

  all(): IterableIterator<GroupSignals> {
    return this.signals.values();
  }
}
