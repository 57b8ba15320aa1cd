import { realClock, type Clock } from '../core/clock.js';
import { EMPTY, Subject, type Observable } from 'rxjs';
import type { VenueConfig } from '../config/schema.js';
import type { MarketRecord } from '../state/catalog.js';
import { marketUrl, nativeId, type VenueDirectory } from '../venues/directory.js';
import type { BookLevels, OrderBook } from '../core/book.js';
import { PAYOUT } from '../core/price.js';
import type { Level } from '../core/types.js';
import type { StateBook } from '../state/books.js';
import type { EngineState } from '../state/engine.js';
import { groupArbs, ladders, type ArbOpportunity, type GroupMember, type MemberLadders } from './arb.js';
import type { FeeContext } from './fees.js';
import { groupEv } from './ev.js';
import { sameArb, sameEv } from './same.js';
import type { LegState, TrackedArb, TrackedEv } from './lifecycle/record.js';
import type { LegLookup, LifecycleEvent, LifecycleTracker } from './lifecycle/tracker.js';

/**
 * A match group as the signal engine needs it (the matcher provides these). A group is never
 * changed in place: a changed group is a new object.
 */
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
  /**
   * The market → groups index's serial: another number whenever any market's groups may have
   * changed, so a caller's copy of `groupsOfMarket` (HeldGroups) stands while this does. Absent:
   * every mark looks its market up. A number, not the index itself: a book held a copy of the
   * index it last looked up, so a book nothing changed for kept a replaced index alive (each
   * re-index's whole venue → market maps; ~50 MiB at 108k markets after 9 minutes).
   */
  index?(): number;
}

/** A caller's slot for a market's groups (the state's book keeps its market's): spares the lookup per change. */
export interface HeldGroups {
  /** `GroupSource.index()` and the market when `groups` was looked up (-1: never). */
  groupsIndex: number;
  groupsMarket: string | undefined;
  groups: readonly number[];
}

/**
 * A book as a change of it reaches the engine (the state's book, StateBook): how far into each side
 * the change reached, and the engine's slots for what its last read of the book covered.
 */
export interface HeldRead extends HeldGroups {
  /** The highest bid price and the lowest ask price the book's last update changed (see StateBook). */
  readonly changedBid: number;
  readonly changedAsk: number;
  /**
   * The group (the engine's own record of it) whose recompute read the book last, and which
   * recompute that was: what it read stands for the group while that is still its latest.
   */
  readBy: object | undefined;
  readSerial: number;
  /**
   * A change of the bids at this price or above, or of the asks at this price or below, may change
   * what that recompute read of the book; one further down cannot (see `readBound`).
   */
  readBid: number;
  readAsk: number;
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
}

/**
 * A member of a group as the engine last resolved it, and the `GroupMember` the ladders carry: it
 * holds the member's record and books themselves (found again only when the catalog inserts a
 * record or the book store's layout changes), its fee context follows the record, and its page
 * link is built when an opportunity first names it (most members never appear in one).
 */
class MemberSlot implements GroupMember {
  fee: FeeContext = NO_FEES;
  /** The member's record, as of `inserts` (the catalog's count when it was looked up). */
  record: MarketRecord | undefined = undefined;
  inserts = -1;
  /** The member's YES and NO books (either may be missing), as of the book store's `layout`. */
  yesBook: StateBook | undefined = undefined;
  noBook: StateBook | undefined = undefined;
  layout = -1;
  /** The record, URL and extra fields `fee` and the link were read from (a record is updated in place). */
  private rec: MarketRecord | undefined = undefined;
  private recUrl: string | undefined = undefined;
  private extra: Readonly<Record<string, unknown>> | undefined = undefined;
  /** The page link once built; null when neither the record nor the venue's template gives one. */
  private link: string | null | undefined = undefined;

  constructor(
    readonly venue: VenueConfig,
    readonly marketId: string,
    readonly inverted: boolean,
  ) {}

  /** The same page link the market views give: the record's, else the venue's URL template. */
  get url(): string | undefined {
    if (this.link === undefined) this.link = this.rec?.url ?? marketUrl(this.venue, nativeId(this.venue, this.marketId), this.extra) ?? null;
    return this.link ?? undefined;
  }

  /** Follows `rec` (the member's current record): its fee context, and its link built again when next asked for. */
  resolve(rec: MarketRecord): void {
    if (this.rec === rec && this.recUrl === rec.url && this.extra === rec.extra) return;
    this.rec = rec;
    this.recUrl = rec.url;
    this.extra = rec.extra;
    this.fee = feeContext(rec.extra);
    this.link = undefined;
  }
}

/** A member's ladders as the engine refills them (no recompute's ladders outlive it). */
interface Ladders {
  member: MemberSlot;
  yesAsks: readonly Level[];
  noAsks: readonly Level[];
}

/** Level tuples reused from one recompute to the next: `out` lists the first of `pool`. */
interface LevelBuffer {
  readonly pool: [number, number][];
  readonly out: Level[];
}

function newBuffer(): LevelBuffer {
  return { pool: [], out: [] };
}

/** The best price of side `bid` of `b`, complemented (100 − p) when `complement`; Infinity when the side is empty. */
function bestOf(b: BookLevels, bid: boolean, complement: boolean): number {
  if (b.count(bid) === 0) return Infinity;
  return complement ? PAYOUT - b.priceAt(bid, 0) : b.priceAt(bid, 0);
}

/**
 * At most `depth` levels of side `bid` of `b` best first into `buf`, each price complemented
 * (100 − p) when `complement`: the best, and after it those priced below `below`.
 */
function fillLevels(buf: LevelBuffer, b: BookLevels, bid: boolean, depth: number, complement: boolean, below: number): readonly Level[] {
  const n = Math.min(depth, b.count(bid));
  const { pool, out } = buf;
  let k = 0;
  for (; k < n; k++) {
    const p = complement ? PAYOUT - b.priceAt(bid, k) : b.priceAt(bid, k);
    if (k > 0 && p >= below) break;
    let t = pool[k];
    if (t === undefined) pool.push((t = [0, 0]));
    t[0] = p;
    t[1] = b.sizeAt(bid, k);
    out[k] = t;
  }
  if (out.length > k) out.length = k;
  return out;
}

/**
 * What the engine keeps of a group between recomputes, reached with one lookup: its member slots
 * (null for a venue not configured) for as long as the group source hands out the same group (a
 * group is never changed in place, a new one replaces it), and its last signals.
 */
interface GroupContext {
  group: SignalGroup;
  slots: readonly (MemberSlot | null)[];
  signals: GroupSignals | undefined;
  /** The serial of its latest recompute (`HeldRead.readSerial` of the books that one read), and the book store's resets then. */
  serial: number;
  resets: number;
}

/** Levels of each member's book a recompute reads. */
const LADDER_DEPTH = 20;

/**
 * Whether a recompute's lists read the same to a subscriber as the group's previous ones: the same
 * opportunities (legs, and the side of an EV) in the same order with the same ROI and size.
 */
function sameSignals(prev: GroupSignals, arbs: readonly ArbOpportunity[], evs: readonly TrackedEv[]): boolean {
  const pa = prev.arbs;
  const pe = prev.evs;
  if (pa.length !== arbs.length || pe.length !== evs.length) return false;
  for (let i = 0; i < arbs.length; i++) {
    const a = arbs[i]!;
    const b = pa[i]!;
    if (a.roi !== b.roi || a.size !== b.size || a.legs[0].market_id !== b.legs[0].market_id || a.legs[1].market_id !== b.legs[1].market_id) return false;
  }
  for (let i = 0; i < evs.length; i++) {
    const a = evs[i]!;
    const b = pe[i]!;
    if (a.roi !== b.roi || a.size !== b.size || a.side !== b.side || a.legs[0].market_id !== b.legs[0].market_id) return false;
  }
  return true;
}

/**
 * Whether two opportunities are the same one across recomputes: the same id, else (neither has
 * one) the same side and legs.
 */
function sameIdentity(a: TrackedArb | TrackedEv, b: TrackedArb | TrackedEv): boolean {
  if (a.opportunity_id !== undefined || b.opportunity_id !== undefined) return a.opportunity_id === b.opportunity_id;
  if (('side' in a ? a.side : '') !== ('side' in b ? b.side : '') || a.legs.length !== b.legs.length) return false;
  for (let i = 0; i < a.legs.length; i++) {
    const x = a.legs[i]!;
    const y = b.legs[i]!;
    if (x.source !== y.source || x.market_id !== y.market_id || x.side !== y.side) return false;
  }
  return true;
}

/**
 * Stamps a recompute's opportunities with their group's fields and detection time: an opportunity
 * the previous list of the group held keeps its detected_at, a new one is detected `now`. A stamped
 * opportunity of the previous list that reads the same is kept rather than copied, and so is the
 * previous list when all of it is.
 */
function stamp<T extends TrackedArb | TrackedEv>(
  list: readonly T[],
  prev: readonly (T & GroupStamp)[] | undefined,
  g: SignalGroup,
  now: number,
  same: (o: T, p: T) => boolean,
): readonly (T & GroupStamp)[] {
  if (list.length === 0) return EMPTY_LIST;
  const eventDate = g.eventDate ?? null;
  const eventType = g.eventType ?? null;
  // Undefined while every opportunity so far is the previous list's own at the same place.
  let out: (T & GroupStamp)[] | undefined = prev !== undefined && prev.length === list.length ? undefined : new Array<T & GroupStamp>(list.length);
  // detected_at values the group's list holds: a new opportunity gets one none of them has (see detectedAt).
  let taken: Set<string> | undefined;
  for (let i = 0; i < list.length; i++) {
    const o = list[i]!;
    // The previous list's own (the last one of its identity, as a list holds few).
    let was: (T & GroupStamp) | undefined;
    if (prev)
      for (let j = prev.length - 1; j >= 0; j--)
        if (sameIdentity(prev[j]!, o)) {
          was = prev[j];
          break;
        }
    const keep = was !== undefined && was.group_title === g.title && was.event_date === eventDate && was.event_type === eventType && same(o, was);
    if (keep && out === undefined && prev![i] === was) continue;
    out ??= prev!.slice(0, i);
    // Object.assign, not a spread: a spread of an object with fields outside it (opportunity_id)
    // gives each copy a hidden class of its own.
    out[i] = keep
      ? was!
      : Object.assign({}, o, {
          group_title: g.title,
          event_date: eventDate,
          event_type: eventType,
          detected_at: was?.detected_at ?? detectedAt(now, (taken ??= new Set(prev?.map((p) => p.detected_at)))),
        });
  }
  return out ?? prev!;
}

/**
 * The detected_at of an opportunity first computed at `now`: its ISO 8601 time, unless an
 * opportunity of the same group already carries that text (several open in one recompute, or in
 * recomputes within one millisecond); then the same millisecond with a microsecond ordinal
 * (…T15:00:00.123001Z, …002Z), so distinct opportunities of a group never share it (clients key
 * on group_id and detected_at) and the time read back is still the millisecond of detection.
 */
function detectedAt(now: number, taken: Set<string>): string {
  const iso = new Date(now).toISOString();
  let out = iso;
  for (let k = 1; taken.has(out); k++) out = `${iso.slice(0, -1)}${String(k).padStart(3, '0')}Z`;
  taken.add(out);
  return out;
}

/**
 * How far a change of `side` may reach before it could change what `fillLevels` read of it (`read`
 * levels, those after the best only while priced below `below` as read, a bids side read as its
 * complement 100 − p): for bids, a price at or above the bound; for asks, at or below. The best
 * level always counts (EV and the pairs' bests read it). When the depth cut the side, a change past
 * the last level read cannot move it; else a new level is read when it is below `below`.
 */
function readBound(b: BookLevels, bids: boolean, read: number, below: number): number {
  // An empty side: any level a change adds is its best (prices lie in 0..PAYOUT).
  if (read === 0) return bids ? 0 : PAYOUT;
  if (read === LADDER_DEPTH) return b.priceAt(bids, read - 1);
  const best = b.priceAt(bids, 0);
  return bids ? Math.min(best, PAYOUT - below + 1) : Math.max(best, below - 1);
}

/**
 * Keeps on `b` what a recompute (`serial`) of the group `c` read of it: `bids` levels of its bids
 * against `bidBelow`, `asks` of its asks against `askBelow`. A book read twice in one recompute keeps
 * the wider of the two reads.
 */
function noteRead(b: HeldRead & OrderBook, c: GroupContext, serial: number, bids: number, bidBelow: number, asks: number, askBelow: number): void {
  const bid = readBound(b, true, bids, bidBelow);
  const ask = readBound(b, false, asks, askBelow);
  if (b.readSerial === serial) {
    b.readBid = Math.min(b.readBid, bid);
    b.readAsk = Math.max(b.readAsk, ask);
    return;
  }
  b.readBy = c;
  b.readSerial = serial;
  b.readBid = bid;
  b.readAsk = ask;
}

/**
 * Whether the last change of `b` left what group `groupId` reads of it as it was: the group's
 * latest recompute read the book, and the change reached none of what it read.
 */
function outsideRead(b: HeldRead, groupId: number): boolean {
  const c = b.readBy as GroupContext | undefined;
  return c !== undefined && c.serial === b.readSerial && c.group.groupId === groupId && b.changedBid < b.readBid && b.changedAsk > b.readAsk;
}

/** A side not yet copied. */
const NO_LEVELS: readonly Level[] = Object.freeze([]);

/** The ladders outside a recompute. */
const NO_LADDERS: readonly MemberLadders[] = Object.freeze([]);

/** The list of a group without opportunities (shared: nothing writes to a published list). */
const EMPTY_LIST: readonly never[] = Object.freeze([]);

/** Fee contexts by what they say: members whose records read alike share one (a handful between them). */
const feeContexts = new Map<string, FeeContext>();
/** Past this many distinct contexts the table starts over (it only shares copies). */
const FEE_CONTEXTS_CAP = 1_024;
const NO_FEES: FeeContext = Object.freeze({ live: false, league: undefined, futures: false });

/** What a fee context says, as a key. */
function feeKeyOf(live: boolean, league: string | undefined, futures: boolean): string {
  return `${live}|${league ?? ''}|${futures}`;
}

/** The fee context of a market from its record's extra fields (live game, league, futures); shared, frozen. */
export function feeContext(extra: Readonly<Record<string, unknown>> | undefined): FeeContext {
  if (extra === undefined) return NO_FEES;
  const live = extra['live'] === true;
  const league = typeof extra['league'] === 'string' ? extra['league'] : undefined;
  const futures = extra['futures'] === true;
  if (!live && league === undefined && !futures) return NO_FEES;
  const key = feeKeyOf(live, league, futures);
  let f = feeContexts.get(key);
  if (f === undefined) {
    if (feeContexts.size >= FEE_CONTEXTS_CAP) feeContexts.clear();
    feeContexts.set(key, (f = Object.freeze({ live, league, futures })));
  }
  return f;
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
  /** Per group, its member slots and last signals (the order groups were first computed in). */
  private readonly contexts = new Map<number, GroupContext>();
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
    private readonly clock: Clock = realClock,
  ) {}

  /** Opportunities opened and expired (the tracker's events; nothing without one). */
  get lifecycle$(): Observable<LifecycleEvent> {
    return this.lifecycle?.events$ ?? EMPTY;
  }

  /** The group and ladders of the recompute in progress, for `legState`. */
  private curGroup: SignalGroup | undefined = undefined;
  private curLadders: readonly MemberLadders[] = NO_LADDERS;

  /**
   * Groups marked since the last `flush` (conflation), in the order first marked: true to
   * recompute, false when every change since was one their last recompute did not read (`markBook`);
   * and an empty map for the marks made while one flushes (none while it runs).
   */
  private dirty = new Map<number, boolean>();
  private spare: Map<number, boolean> | undefined = new Map<number, boolean>();
  /** Recomputes started (each read of a book is stamped with its serial: `HeldRead.readSerial`). */
  private reads = 0;
  /** Flushes that refreshed a group instead of recomputing it (`refresh`). */
  refreshed = 0;

  /** The context of `g`, its slots built again when the group source hands out a different group. */
  private contextOf(g: SignalGroup): GroupContext {
    let c = this.contexts.get(g.groupId);
    if (c && c.group === g) return c;
    const slots = g.members.map((m) => {
      const v = this.venues.byLabel.get(m.venue);
      return v ? new MemberSlot(v, m.marketId, m.inverted) : null;
    });
    if (c) {
      c.group = g;
      c.slots = slots;
    } else this.contexts.set(g.groupId, (c = { group: g, slots, signals: undefined, serial: 0, resets: -1 }));
    return c;
  }

  /** The member of a slot when its market is listed and active, following its record. */
  private memberOf(m: MemberSlot | null): MemberSlot | undefined {
    if (m === null) return undefined;
    const catalog = this.state.catalog;
    // Records are never removed and are updated in place: the one found stands until an insert.
    if (m.inserts !== catalog.inserts) {
      m.record = catalog.get(m.venue.label, m.marketId);
      m.inserts = catalog.inserts;
    }
    const rec = m.record;
    if (!rec || rec.status !== 'active') return undefined;
    m.resolve(rec);
    return m;
  }

  /** The ready book a member's ladders read, as `BookStore.marketSides` picks it: its YES book, else its NO book. */
  private bookOf(m: MemberSlot): StateBook | undefined {
    const books = this.state.books;
    if (m.layout !== books.layout) {
      const [yes, , no] = books.marketBookSource(m.venue.label, m.marketId);
      m.yesBook = yes;
      m.noBook = no;
      m.layout = books.layout;
    }
    if (m.yesBook?.ready) return m.yesBook;
    if (m.noBook?.ready) return m.noBook;
    return undefined;
  }

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
    return this.markRecompute(this.groups.groupsOfMarket(venue, marketId));
  }

  /**
   * `mark` for a change of a member's book: when the book's market is in one group and the change
   * did not reach what that group's last recompute read of the book (levels past those a pair could
   * take, below the best), the group is only marked to be refreshed, which gives what a recompute
   * would: the same lists, stamped with the flush's time (`refresh`). Returns whether any was marked.
   */
  markBook(venue: string, marketId: string, book: HeldRead): boolean {
    const ids = this.heldGroups(venue, marketId, book);
    if (ids.length === 1 && outsideRead(book, ids[0]!)) {
      if (!this.dirty.has(ids[0]!)) this.dirty.set(ids[0]!, false);
      return true;
    }
    return this.markRecompute(ids);
  }

  /** Marks `ids` to be recomputed at the next flush; whether there were any. */
  private markRecompute(ids: readonly number[]): boolean {
    for (let i = 0; i < ids.length; i++) this.dirty.set(ids[i]!, true);
    return ids.length > 0;
  }

  /** The market's groups through `held`, looked up again when the index or the market is not the one it holds. */
  private heldGroups(venue: string, marketId: string, held: HeldGroups): readonly number[] {
    const index = this.groups.index?.();
    if (index !== undefined && held.groupsIndex === index && held.groupsMarket === marketId) return held.groups;
    const ids = this.groups.groupsOfMarket(venue, marketId);
    held.groupsIndex = index ?? -1;
    // The catalog's copy of the id, not the event's: a book kept the string of the event that last
    // looked it up (one copy per book, ~7.8 MiB at 108k markets).
    if (held.groupsMarket !== marketId) held.groupsMarket = this.state.catalog.get(venue, marketId)?.marketId ?? marketId;
    held.groups = ids;
    return ids;
  }

  /** Recomputes every group marked since the last flush, once each. */
  flush(): void {
    if (this.dirty.size === 0) return;
    // Groups marked by a recompute's subscribers go to the next flush.
    const ids = this.dirty;
    this.dirty = this.spare ?? new Map();
    this.spare = undefined;
    for (const [id, recompute] of ids) if (recompute || !this.refresh(id)) this.recompute(id);
    ids.clear();
    this.spare = ids;
  }

  /**
   * What a recompute of a group gives when none of what it reads changed since the last one: the
   * same lists (so nothing is published), stamped with the time now (`at`), and each of its open
   * opportunities seen now. False, and nothing done, when the group or its members' slots are not
   * the ones last computed, a book was reset since (a reset changes what a recompute finds without
   * a change to mark), or a listed opportunity went untracked (a recompute might open it now).
   */
  private refresh(groupId: number): boolean {
    const c = this.contexts.get(groupId);
    const prev = c?.signals;
    if (c === undefined || prev === undefined || c.resets !== this.state.books.resets || this.groups.group(groupId) !== c.group) return false;
    if (this.lifecycle) {
      for (let i = 0; i < prev.arbs.length; i++) if (prev.arbs[i]!.opportunity_id === undefined) return false;
      for (let i = 0; i < prev.evs.length; i++) if (prev.evs[i]!.opportunity_id === undefined) return false;
    }
    const now = this.clock.now();
    this.lifecycle?.seen(groupId, now);
    c.signals = { groupId, title: prev.title, arbs: prev.arbs, evs: prev.evs, at: now };
    this.refreshed++;
    return true;
  }

  /** Recomputes one group now. */
  recompute(groupId: number): GroupSignals | undefined {
    const g = this.groups.group(groupId);
    // A suspect group is a wrong match: its opportunities close as if the group were gone.
    if (!g || g.suspect !== undefined) {
      if (this.contexts.get(groupId)?.signals !== undefined) this.version++;
      this.contexts.delete(groupId);
      this.lifecycle?.closeGroup(groupId, this.clock.now());
      return undefined;
    }
    this.recomputed++;
    // A recompute started inside another (from a subscriber) must not refill the ladders in use.
    const reuse = this.depth++ === 0;
    try {
      const c = this.contextOf(g);
      return this.compute(c, this.laddersOf(c, reuse));
    } finally {
      this.depth--;
    }
  }

  /** Recomputes started and not yet done (more than one: one started inside another). */
  private depth = 0;

  /**
   * The ladders of a group's listed, active members with a book or a quote, in member order. At
   * most 20 levels of a side (deeper than any arbitrage survives fees), and past its best only the
   * levels some pair could still take: a group-YES ask at p pays only against a group-NO ask below
   * 100 − p, and none is below the members' best, so a walk stops before any level left out
   * (fees are never negative). EV and the consensus read the best levels alone.
   */
  private laddersOf(c: GroupContext, reuse: boolean): MemberLadders[] {
    // Written by position and cut to length at the end: emptying an array drops its storage.
    const ls: MemberLadders[] = reuse ? this.scratch.ls : [];
    const books: (StateBook | undefined)[] = reuse ? this.scratch.books : [];
    const serial = ++this.reads;
    c.serial = serial;
    c.resets = this.state.books.resets;
    let n = 0;
    let minYes = Infinity;
    let minNo = Infinity;
    const slots = c.slots;
    for (let i = 0; i < slots.length; i++) {
      const m = this.memberOf(slots[i]!);
      if (!m) continue;
      const k = n;
      const book = this.bookOf(m);
      if (book) {
        // The sides `BookStore.marketSides` reads: a NO book's bids are the YES asks, complemented.
        const complement = book !== m.yesBook;
        const ownYes = bestOf(book, complement, complement);
        const ownNo = bestOf(book, !complement, !complement);
        minYes = Math.min(minYes, m.inverted ? ownNo : ownYes);
        minNo = Math.min(minNo, m.inverted ? ownYes : ownNo);
        let l = reuse ? this.scratch.ladders[k] : undefined;
        if (l) l.member = m;
        else {
          l = { member: m, yesAsks: NO_LEVELS, noAsks: NO_LEVELS };
          if (reuse) this.scratch.ladders[k] = l;
        }
        books[k] = book;
        ls[n++] = l;
        continue;
      }
      // Venues without books (listings): their quoted top of book, size unknown (0 = not tradable size).
      const q = this.state.quotes.get(m.venue.label, m.marketId);
      if (q && (q.yesBid !== undefined || q.yesAsk !== undefined)) {
        const l = ladders(m, q.yesBid !== undefined ? [[q.yesBid, q.yesBidSize ?? 0]] : [], q.yesAsk !== undefined ? [[q.yesAsk, q.yesAskSize ?? 0]] : []);
        minYes = Math.min(minYes, l.yesAsks[0]?.[0] ?? Infinity);
        minNo = Math.min(minNo, l.noAsks[0]?.[0] ?? Infinity);
        books[k] = undefined;
        ls[n++] = l;
      }
    }
    if (ls.length !== n) ls.length = n;
    // Copied once, straight into the ladders, in the engine's scratch unless another recompute uses it.
    for (let k = 0; k < ls.length; k++) {
      const book = books[k];
      if (book === undefined) continue;
      const l = ls[k] as Ladders;
      const m = l.member;
      const complement = book !== m.yesBook;
      const yesBelow = PAYOUT - minNo;
      const noBelow = PAYOUT - minYes;
      // A NO book's bids are the YES asks, so the bids are always the side read as 100 − p.
      const yesBelowOwn = m.inverted ? noBelow : yesBelow;
      const noBelowOwn = m.inverted ? yesBelow : noBelow;
      const ownYes = fillLevels(reuse ? (this.scratch.levels[2 * k] ??= newBuffer()) : newBuffer(), book, complement, LADDER_DEPTH, complement, yesBelowOwn);
      const ownNo = fillLevels(
        reuse ? (this.scratch.levels[2 * k + 1] ??= newBuffer()) : newBuffer(),
        book,
        !complement,
        LADDER_DEPTH,
        !complement,
        noBelowOwn,
      );
      l.yesAsks = m.inverted ? ownNo : ownYes;
      l.noAsks = m.inverted ? ownYes : ownNo;
      noteRead(
        book,
        c,
        serial,
        complement ? ownYes.length : ownNo.length,
        complement ? yesBelowOwn : noBelowOwn,
        complement ? ownNo.length : ownYes.length,
        complement ? noBelowOwn : yesBelowOwn,
      );
    }
    return ls;
  }

  /**
   * What a recompute's ladders are built in, reused by the next (they do not outlive it): the list,
   * the book of each position (undefined for a quote), each member's ladders (by position in the
   * list) and their level tuples (two per position).
   */
  private readonly scratch: {
    readonly ls: MemberLadders[];
    readonly books: (StateBook | undefined)[];
    readonly ladders: Ladders[];
    readonly levels: LevelBuffer[];
  } = { ls: [], books: [], ladders: [], levels: [] };

  /** A group's arbitrage and EV from its members' ladders, tracked, stamped, kept and published when changed. */
  private compute(c: GroupContext, ls: readonly MemberLadders[]): GroupSignals {
    const g = c.group;
    const groupId = g.groupId;
    const now = this.clock.now();
    let arbs: readonly TrackedArb[] = groupArbs(groupId, ls, c.signals?.arbs);
    let evs: readonly TrackedEv[] = groupEv(groupId, ls, c.signals?.evs);
    if (this.lifecycle) {
      this.curGroup = g;
      this.curLadders = ls;
      ({ arbs, evs } = this.lifecycle.track(groupId, g.title, arbs, evs, now, this));
      this.curGroup = undefined;
      this.curLadders = NO_LADDERS;
    }
    const prev = c.signals;
    const stampedArbs = stamp(arbs, prev?.arbs, g, now, sameArb);
    const stampedEvs = stamp(evs, prev?.evs, g, now, sameEv);
    // Lists kept whole read the same in every field; others are compared as a subscriber sees them.
    const same = prev !== undefined && ((stampedArbs === prev.arbs && stampedEvs === prev.evs) || sameSignals(prev, arbs, evs));
    const next: GroupSignals = { groupId, title: g.title, arbs: stampedArbs, evs: stampedEvs, at: now };
    c.signals = next;
    if (!same) {
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
    const member = this.curGroup?.members.some((m) => m.venue === source && m.marketId === marketId) ?? false;
    const rec = this.state.catalog.get(source, marketId);
    const l = this.curLadders.find((x) => x.member.venue.label === source && x.member.marketId === marketId);
    const best = l ? (groupSide === 'yes' ? l.yesAsks : l.noAsks)[0] : undefined;
    return { member, active: rec?.status === 'active', feeKey: this.feeKey(source, marketId), depth: best ? best[1] : 0 };
  }

  /** What a market's taker fee depends on besides its venue (the same fields the members' fee context reads). */
  feeKey(slug: string, marketId: string): string {
    const f = feeContext(this.state.catalog.get(this.labelOf(slug), marketId)?.extra);
    return feeKeyOf(f.live ?? false, f.league, f.futures ?? false);
  }

  /** Recomputes every group (start-up, after a matcher rebuild). */
  recomputeAll(): void {
    for (const g of this.groups.allGroups()) this.recompute(g.groupId);
  }

  get(groupId: number): GroupSignals | undefined {
    return this.contexts.get(groupId)?.signals;
  }

  /** Every group's last signals, in the order the groups were first computed. */
  *all(): IterableIterator<GroupSignals> {
    for (const c of this.contexts.values()) if (c.signals !== undefined) yield c.signals;
  }
}
