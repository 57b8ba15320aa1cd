import { realClock, type Clock } from '../core/clock.js';
import { Subject } from 'rxjs';
import type { Database } from 'lmdb';
import type { VenueDirectory } from '../venues/directory.js';
import { PROTOCOL_MODULES } from '../venues/index.js';
import type { Logger } from '../core/log.js';
import type { GroupSource, SignalGroup } from '../signals/engine.js';
import type { MarketRecord } from '../state/catalog.js';
import type { QuoteRecord } from '../state/quotes.js';
import type { EngineState } from '../state/engine.js';
import { mayBeSettled, SettlementAudit, settlementOf } from './audit.js';
import { Matcher, type GroupMember, type MatchGroup } from './matcher.js';
import { OverrideStore } from './overrides.js';
import { flat } from './text.js';

const NO_GROUPS: readonly number[] = [];

/**
 * Whether two member lists hold the same listings with the same orientation (order aside). The
 * matcher hands back the same array while a group is unchanged.
 */
function sameMembers(a: readonly GroupMember[] | undefined, b: readonly GroupMember[]): boolean {
  if (a === b) return true;
  if (a === undefined || a.length !== b.length) return false;
  return a.every((x) => b.some((y) => y.key === x.key && y.inverted === x.inverted));
}

/**
 * The served copy of a group, every field named: all served groups share one of two hidden classes
 * (a spread gave each copy a class of its own).
 */
function servedOf(g: MatchGroup, eventKey: string, category: string | null, suspect: string | undefined): ServedGroup {
  const s = {
    group_id: g.group_id,
    title: g.title,
    market_class: g.market_class,
    market_type: g.market_type,
    period: g.period,
    line: g.line,
    side: g.side,
    player: g.player,
    team: g.team,
    event_id: g.event_id,
    event_name: g.event_name,
    game_title: g.game_title,
    event_date: g.event_date,
    members: g.members,
    eventKey,
    category,
  };
  return suspect === undefined ? s : { ...s, suspect };
}

/**
 * The signal engine's view of a served group. Its members are read from the served group when
 * asked for (the engine asks when it first meets the group), not kept beside it.
 */
class SignalView implements SignalGroup {
  readonly groupId: number;
  readonly title: string;
  readonly suspect: string | undefined;
  readonly eventDate: string | null;

  /** The served group's members (the matcher's list, shared while the group is unchanged), not the group. */
  private readonly served: readonly GroupMember[];

  constructor(
    g: ServedGroup,
    private readonly catalog: EngineState['catalog'],
    readonly eventType: string,
  ) {
    this.served = g.members;
    this.groupId = g.group_id;
    this.title = g.title;
    this.suspect = g.suspect;
    this.eventDate = g.event_date;
  }

  get members(): SignalGroup['members'] {
    return this.served.map((m) => ({
      venue: m.platform,
      // The catalog's own id string, not a slice of the member key.
      marketId: this.catalog.byKey(m.key)?.marketId ?? m.key.slice(m.key.indexOf(':') + 1),
      inverted: m.inverted,
    }));
  }
}

/** A cross-venue group as the API serves it: the matcher's group plus its event. */
export interface ServedGroup extends MatchGroup {
  /** Event key shared by every group of one real-world event (a game, an election, a meeting). */
  readonly eventKey: string;
  readonly category: string | null;
  /** Set when the settlement audit found members that settled inconsistently: why (arb/EV stop). */
  readonly suspect?: string | undefined;
}

/**
 * Runs the matcher over the live catalog: every new or changed market is upserted (incremental),
 * and reindex() rebuilds the cross-venue groups (members on at least two venues); pipelines/signals.ts
 * calls it once per burst of catalog changes. Group ids persist in LMDB `groups`, so they survive restarts.
 * Implements the signal engine's GroupSource. Every re-index also audits the settlements of groups
 * whose members settled or changed (see audit.ts); a group whose members contradict each other is
 * served as suspect and the signal engine computes nothing for it.
 */
export class MatchingService implements GroupSource {
  readonly matcher: Matcher;
  private byId = new Map<number, ServedGroup>();
  /** venue → market id → [its group id] (nested, and one array per group: the per-change lookups build no key or array). */
  private byMarket = new Map<string, Map<string, readonly number[]>>();
  /** Counts the replacements of `byMarket` (index()). */
  private byMarketSerial = 0;
  private suspects = new Map<number, string>();
  /** Markets that settled (or may have unsettled) since the last re-index: their groups are audited. */
  private readonly settling = new Set<string>();
  /**
   * Newest price update (ms) of a market in a cross-venue group: with the last catalog refresh it
   * makes /status last_updated (spec 4.1), which speaks of matched-market prices, not any market's.
   */
  lastMatchedPriceAt = 0;
  private readonly changed = new Subject<readonly number[]>();
  /** Group ids whose membership or fields changed, once per re-index that changed any. */
  readonly changes$ = this.changed.asObservable();
  version = 0;
  /** Operator overrides (`crossbook groups link|unlink`), when a `matching` database was given. */
  readonly overrides: OverrideStore | undefined;
  /** Settlement audit of the groups, persisted in `auditDb` when given. */
  readonly audit: SettlementAudit;

  constructor(
    private readonly state: EngineState,
    private readonly venues: VenueDirectory,
    db: Database | undefined,
    private readonly log?: Logger,
    matchingDb?: Database,
    auditDb?: Database,
    private readonly clock: Clock = realClock,
  ) {
    this.audit = new SettlementAudit(auditDb, (label) => venues.slugOf(label));
    this.matcher = new Matcher({
      persistence: db
        ? {
            load: function* () {
              for (const { key, value } of db.getRange()) if (typeof key === 'string' && typeof value === 'number') yield [key, value] as [string, number];
            },
            save: (sig, id) => void db.put(sig, id),
          }
        : undefined,
    });
    this.overrides = matchingDb ? new OverrideStore(matchingDb) : undefined;
    const initial = this.overrides?.changed();
    if (initial) this.matcher.setOverrides(initial);
    for (const m of state.catalog.all()) this.upsert(m);
    this.reindex();
  }

  /**
   * Applies the operator overrides if another process changed them (pipelines/signals.ts calls
   * this on a timer); returns whether they changed.
   */
  reloadOverrides(): boolean {
    const next = this.overrides?.changed();
    if (!next) return false;
    this.matcher.setOverrides(next);
    this.log?.info({ overrides: next.length }, 'matching overrides applied');
    this.reindex();
    return true;
  }

  /** A quote changed: a market in a cross-venue group moves /status last_updated. */
  onQuote(q: QuoteRecord): void {
    if (q.updatedAt > this.lastMatchedPriceAt && this.groupIdOf(q.venue, q.marketId) !== undefined) this.lastMatchedPriceAt = q.updatedAt;
  }

  /**
   * Catalog changes waiting for the matcher (`enqueue`), oldest first from `head`: a venue's whole
   * catalog arrives in one synchronous call (108k markets: 11.6 s of candidate searches at load 17),
   * so the flow hands them over here and indexes them a slice at a time (`drain`).
   */
  private backlog: MarketRecord[] = [];
  private head = 0;
  private readonly indexedNow = new Subject<number>();
  /** How many queued changes each `drain` put into the matcher (when it put any): what re-groups. */
  readonly indexed$ = this.indexedNow.asObservable();
  /** Queued changes indexed since start, and the drains that did so (for /metrics and the log). */
  drained = 0;
  slices = 0;
  /** `drained` and `slices` when the backlog was last empty. */
  private runDrained = 0;
  private runSlices = 0;

  /** Queues a new or changed market for the matcher; `drain` indexes it, in arrival order. */
  enqueue(m: MarketRecord): void {
    this.backlog.push(m);
  }

  /** Catalog changes queued and not yet in the matcher. */
  get pending(): number {
    return this.backlog.length - this.head;
  }

  /** Changes went into the matcher since the last re-group. */
  private regroup = false;

  /**
   * Nothing queued and every change indexed is in the served groups: what a reader that needs the
   * groups of a catalog it just applied waits for (the flow indexes and re-groups it turns later).
   */
  get settled(): boolean {
    return this.pending === 0 && !this.regroup;
  }

  /**
   * Puts up to `max` queued changes into the matcher, oldest first, and tells `indexed$` how many;
   * returns how many are still queued. A count, not a time budget, so a replay drains exactly as
   * live did at the same flushes.
   */
  drain(max: number): number {
    const end = Math.min(this.backlog.length, this.head + max);
    const n = end - this.head;
    if (n <= 0) return 0;
    const from = this.head;
    for (let i = from; i < end; i++) {
      this.upsert(this.backlog[i]!);
      // The catalog holds the record; the queue lets go of it once indexed.
      (this.backlog as (MarketRecord | undefined)[])[i] = undefined;
    }
    this.head = end;
    if (this.head === this.backlog.length) {
      this.backlog = [];
      this.head = 0;
    } else if (this.head >= 4_096 && this.head * 2 >= this.backlog.length) {
      // Drop the indexed front once it is most of the array (no shift per change).
      this.backlog = this.backlog.slice(this.head);
      this.head = 0;
    }
    this.drained += n;
    this.slices++;
    this.regroup = true;
    const left = this.pending;
    if (left > 0) this.log?.debug({ indexed: n, pending: left }, 'matching slice');
    else {
      // A catch-up of more than one slice ends: how much it indexed, in how many slices.
      if (this.slices - this.runSlices > 1)
        this.log?.info({ indexed: this.drained - this.runDrained, slices: this.slices - this.runSlices }, 'matching backlog indexed');
      this.runDrained = this.drained;
      this.runSlices = this.slices;
    }
    this.indexedNow.next(n);
    return left;
  }

  /** A new or changed market goes into the matcher now; groups change at the next reindex(). */
  upsert(m: MarketRecord): void {
    const v = this.venues.byLabel.get(m.venue);
    if (!v) return;
    if (mayBeSettled(m.status)) this.settling.add(`${m.venue}:${m.marketId}`);
    else {
      const id = this.groupIdOf(m.venue, m.marketId);
      if (id !== undefined && this.audit.tracks(id)) this.settling.add(`${m.venue}:${m.marketId}`);
    }
    this.matcher.upsert({
      // join builds one flat string; a template literal leaves a concatenation of two pieces.
      key: [m.venue, m.marketId].join(':'),
      platform: m.venue,
      protocol: v.protocol,
      market_id: PROTOCOL_MODULES[v.protocol].traits.matchId?.(m.marketId, m.extra) ?? m.marketId,
      title: m.title,
      event_title: m.eventTitle,
      outcome: m.outcome,
      close_time: m.closeTime,
      category: m.category,
    });
  }

  /** Rebuilds the cross-venue index from the matcher, audits settlements and reports which groups changed. */
  reindex(): void {
    this.regroup = false;
    const byId = new Map<number, ServedGroup>();
    const byMarket = new Map<string, Map<string, readonly number[]>>();
    const suspects = new Map<number, string>();
    const changed: number[] = [];
    const now = this.clock.now();
    for (const g of this.matcher.crossVenueGroups()) {
      const same = sameMembers(this.byId.get(g.group_id)?.members, g.members);
      const category = this.categoryOf(g);
      // Audited when its members or their orientation changed, or a member settled; else as before.
      const suspect = !same || g.members.some((m) => this.settling.has(m.key)) ? this.auditOf(g, category, now) : this.suspects.get(g.group_id);
      if (suspect !== undefined) suspects.set(g.group_id, suspect);
      const eventKey = this.eventKey(g);
      const was = this.byId.get(g.group_id);
      // The matcher hands back the same member list while a group's view is unchanged: an unchanged
      // group keeps its served object, and with it the signal engine's view and member slots.
      const keep = was !== undefined && was.members === g.members && was.eventKey === eventKey && was.category === category && was.suspect === suspect;
      byId.set(g.group_id, keep ? was : servedOf(g, eventKey, category, suspect));
      if (!same || this.suspects.get(g.group_id) !== suspect) changed.push(g.group_id);
      const ids = [g.group_id];
      for (const m of g.members) {
        const rec = this.state.catalog.byKey(m.key);
        // The catalog's own venue and id strings as keys, not slices of the member key kept alive beside them.
        const c = m.key.indexOf(':');
        const venue = rec?.venue ?? m.key.slice(0, c);
        let v = byMarket.get(venue);
        if (!v) byMarket.set(venue, (v = new Map()));
        v.set(rec?.marketId ?? m.key.slice(c + 1), ids);
        // A market that joins a group (or every one, at start) brings the age of its current price.
        const at = (rec && this.state.quotes.get(rec.venue, rec.marketId)?.updatedAt) ?? 0;
        if (at > this.lastMatchedPriceAt) this.lastMatchedPriceAt = at;
      }
    }
    this.settling.clear();
    for (const id of this.byId.keys())
      if (!byId.has(id)) {
        changed.push(id);
        this.audit.drop(id);
      }
    this.byId = byId;
    this.byMarket = byMarket;
    this.byMarketSerial++;
    this.suspects = suspects;
    if (changed.length) {
      this.version++;
      this.changed.next(changed);
    }
  }

  /** Audits a group's settlements from the catalog; the contradiction that makes it suspect, if any. */
  private auditOf(g: MatchGroup, category: string | null, now: number): string | undefined {
    const members = g.members.map((m) => {
      const rec = this.state.catalog.byKey(m.key);
      return { key: m.key, venue: m.platform, inverted: m.inverted, settlement: rec ? settlementOf(rec) : undefined };
    });
    return this.audit.check({ groupId: g.group_id, title: g.title, category, members }, now);
  }

  /** The event a group belongs to: the game for sports, else the event of its first member in venue order. */
  private eventKey(g: MatchGroup): string {
    if (g.event_id) return g.event_id;
    for (const v of this.venues.enabled) {
      const mem = g.members.find((m) => m.platform === v.label);
      const rec = mem ? this.state.catalog.byKey(mem.key) : undefined;
      if (rec?.eventId) return flat(`${v.slug}:${rec.eventId}`);
    }
    return `group:${g.group_id}`;
  }

  private categoryOf(g: MatchGroup): string | null {
    for (const m of g.members) {
      const c = this.state.catalog.byKey(m.key)?.category;
      if (c) return c;
    }
    return null;
  }

  /** A sports game event id (shared by all groups of one game) that has a cross-venue group. */
  hasGameEvent(id: string): boolean {
    for (const g of this.byId.values()) if (g.market_class && g.event_id === id) return true;
    return false;
  }

  /**
   * Whether a game is live: its day has come and a member says so (venue_h publishes `live`), or
   * its markets are still open on game day.
   */
  isGameLive(id: string, now: number): boolean {
    for (const g of this.byId.values()) {
      if (!g.market_class || g.event_id !== id) continue;
      for (const m of g.members) if (this.state.catalog.byKey(m.key)?.extra?.['live'] === true) return true;
      if (g.event_date && g.event_date === new Date(now).toISOString().slice(0, 10)) return true;
    }
    return false;
  }

  /** How many cross-venue groups are held (what a re-group walks). */
  get groupCount(): number {
    return this.byId.size;
  }

  /** Cross-venue groups. */
  served(): IterableIterator<ServedGroup> {
    return this.byId.values();
  }

  servedGroup(id: number): ServedGroup | undefined {
    return this.byId.get(id);
  }

  groupIdOf(venue: string, marketId: string): number | undefined {
    return this.byMarket.get(venue)?.get(marketId)?.[0];
  }

  // ---- GroupSource --------------------------------------------------------------------------

  /**
   * The signal engine's view of a served group, built once per served group: a reindex serves new
   * group objects, so an entry never outlives the group it was built from.
   */
  private readonly signalGroups = new WeakMap<ServedGroup, SignalGroup>();

  group(id: number): SignalGroup | undefined {
    const g = this.byId.get(id);
    if (!g) return undefined;
    let s = this.signalGroups.get(g);
    if (s === undefined) this.signalGroups.set(g, (s = this.signalGroupOf(g)));
    return s;
  }

  private signalGroupOf(g: ServedGroup): SignalGroup {
    // As /events names the kind of event (src/api/matching/event-index.ts).
    return new SignalView(g, this.state.catalog, this.eventTypeOf(g.category ?? (g.market_class ? 'Sports' : 'Other')));
  }

  /** Event types by category, one string each rather than one per group. */
  private readonly eventTypes = new Map<string, string>();

  private eventTypeOf(category: string): string {
    let t = this.eventTypes.get(category);
    if (t === undefined) {
      // Categories are a venue's handful; the table is only cleared if a feed sends many.
      if (this.eventTypes.size >= 1_024) this.eventTypes.clear();
      this.eventTypes.set(category, (t = category.toLowerCase()));
    }
    return t;
  }

  /** The serial of the market → groups index: it is replaced whole by each reindex, never changed in place. */
  index(): number {
    return this.byMarketSerial;
  }

  groupsOfMarket(venue: string, marketId: string): readonly number[] {
    return this.byMarket.get(venue)?.get(marketId) ?? NO_GROUPS;
  }

  *allGroups(): Generator<SignalGroup> {
    for (const id of this.byId.keys()) yield this.group(id)!;
  }

  close(): void {
    this.changed.complete();
    this.indexedNow.complete();
    this.log?.debug('matching service closed');
  }
}
