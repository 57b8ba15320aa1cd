import { EMPTY, Subject, type Observable } from 'rxjs';
import type { VenueDirectory } from '../venues/directory.js';
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
}

/** Where groups come from: the matcher, behind this small interface. */
export interface GroupSource {
  group(id: number): SignalGroup | undefined;
  groupsOfMarket(venue: string, marketId: string): readonly number[];
  allGroups(): Iterable<SignalGroup>;
}

export interface GroupSignals {
  readonly groupId: number;
  readonly title: string;
  /** With their opportunity ids when a lifecycle tracker runs. */
  readonly arbs: readonly TrackedArb[];
  readonly evs: readonly TrackedEv[];
  /** When this group's signals were computed (ms). */
  readonly at: number;
  /** What a subscriber would see change (legs, prices, sizes, ROI), to publish only real changes. */
  readonly sig: string;
}

function signature(arbs: readonly ArbOpportunity[], evs: readonly TrackedEv[]): string {
  let s = '';
  for (const a of arbs) s += `${a.legs[0].market_id}|${a.legs[1].market_id}|${a.roi}|${a.size};`;
  s += '#';
  for (const e of evs) s += `${e.legs[0].market_id}|${e.side}|${e.roi}|${e.size};`;
  return s;
}

/** The fee context of a market from its record's extra fields (live game, league, futures). */
function feeContext(extra: Readonly<Record<string, unknown>> | undefined): { live: boolean; league: string | undefined; futures: boolean } {
  const x = extra ?? {};
  return { live: x['live'] === true, league: typeof x['league'] === 'string' ? x['league'] : undefined, futures: x['futures'] === true };
}

/**
 * Live arbitrage and EV, incrementally: every book change of a member recomputes that one group
 * (a handful of markets) at once, so an opportunity is never older than the book that made it.
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

  /** Recomputes the groups a market belongs to (its book, quote or record changed). */
  onMarket(venue: string, marketId: string): void {
    const ids = this.groups.groupsOfMarket(venue, marketId);
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
      const member: GroupMember = { venue: v, marketId: m.marketId, inverted: m.inverted, fee: feeContext(rec.extra), url: rec.url };
      // 20 levels: deeper than any arbitrage survives fees, far cheaper to copy than whole books.
      const book = this.state.books.marketBook(m.venue, m.marketId, 20);
      if (book && book.ready) {
        ls.push(ladders(member, book.bids, book.asks));
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
    const next: GroupSignals = { groupId, title: g.title, arbs, evs, at: now, sig };
    this.signals.set(groupId, next);
    if (!prev || prev.sig !== sig) {
      this.version++;
      this.changed.next(next);
    }
    return next;
  }

  /** A leg of an opportunity that left the group being recomputed, as the tracker asks for it. */
  legState(source: string, marketId: string, groupSide: 'yes' | 'no'): LegState {
    const member = this.cur?.g.members.some((m) => m.venue === source && m.marketId === marketId) ?? false;
    const rec = this.state.catalog.get(source, marketId);
    const l = this.cur?.ls.find((x) => x.member.venue.label === source && x.member.marketId === marketId);
    const best = l ? (groupSide === 'yes' ? l.yesAsks : l.noAsks)[0] : undefined;
    return { member, active: rec?.status === 'active', feeKey: this.feeKey(source, marketId), depth: best ? best[1] : 0 };
  }

  /** What a market's taker fee depends on besides its venue (the same fields the members' fee context reads). */
  feeKey(source: string, marketId: string): string {
    const f = feeContext(this.state.catalog.get(source, marketId)?.extra);
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
