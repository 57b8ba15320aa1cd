import { Subject } from 'rxjs';
import type { Database } from 'lmdb';
import type { VenueDirectory } from '../venues/directory.js';
import { PROTOCOL_MODULES } from '../venues/index.js';
import type { Logger } from '../core/log.js';
import type { GroupSource, SignalGroup } from '../signals/engine.js';
import type { MarketRecord } from '../state/catalog.js';
import type { QuoteRecord } from '../state/quotes.js';
import type { EngineState } from '../state/engine.js';
import { Matcher, type MatchGroup } from './matcher.js';
import { OverrideStore } from './overrides.js';

/** A cross-venue group as the API serves it: the matcher's group plus its event. */
export interface ServedGroup extends MatchGroup {
  /** Event key shared by every group of one real-world event (a game, an election, a meeting). */
  readonly eventKey: string;
  readonly category: string | null;
}

/**
 * Runs the matcher over the live catalog: every new or changed market is upserted (incremental),
 * and reindex() rebuilds the cross-venue groups (members on at least two venues); pipelines/signals.ts
 * calls it once per burst of catalog changes. Group ids persist in LMDB `groups`, so they survive restarts.
 * Implements the signal engine's GroupSource.
 */
export class MatchingService implements GroupSource {
  readonly matcher: Matcher;
  private byId = new Map<number, ServedGroup>();
  private byKey = new Map<string, number>();
  private signatures = new Map<number, string>();
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

  constructor(
    private readonly state: EngineState,
    private readonly venues: VenueDirectory,
    db: Database | undefined,
    private readonly log?: Logger,
    matchingDb?: Database,
  ) {
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

  /** A new or changed market goes into the matcher now; groups change at the next reindex(). */
  upsert(m: MarketRecord): void {
    const v = this.venues.byLabel.get(m.venue);
    if (!v) return;
    this.matcher.upsert({
      key: `${m.venue}:${m.marketId}`,
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

  /** Rebuilds the cross-venue index from the matcher and reports which groups changed. */
  reindex(): void {
    const byId = new Map<number, ServedGroup>();
    const byKey = new Map<string, number>();
    const signatures = new Map<number, string>();
    for (const g of this.matcher.groups()) {
      if (new Set(g.members.map((m) => m.platform)).size < 2) continue;
      const served: ServedGroup = { ...g, eventKey: this.eventKey(g), category: this.categoryOf(g) };
      byId.set(g.group_id, served);
      for (const m of g.members) {
        byKey.set(m.key, g.group_id);
        // A market that joins a group (or every one, at start) brings the age of its current price.
        const rec = this.state.catalog.byKey(m.key);
        const at = (rec && this.state.quotes.get(rec.venue, rec.marketId)?.updatedAt) ?? 0;
        if (at > this.lastMatchedPriceAt) this.lastMatchedPriceAt = at;
      }
      signatures.set(
        g.group_id,
        g.members
          .map((m) => `${m.key}${m.inverted ? '~' : ''}`)
          .sort()
          .join('|'),
      );
    }
    const changed: number[] = [];
    for (const [id, sig] of signatures) if (this.signatures.get(id) !== sig) changed.push(id);
    for (const id of this.signatures.keys()) if (!signatures.has(id)) changed.push(id);
    this.byId = byId;
    this.byKey = byKey;
    this.signatures = signatures;
    if (changed.length) {
      this.version++;
      this.changed.next(changed);
    }
  }

  /** The event a group belongs to: the game for sports, else the event of its first member in venue order. */
  private eventKey(g: MatchGroup): string {
    if (g.event_id) return g.event_id;
    for (const v of this.venues.enabled) {
      const mem = g.members.find((m) => m.platform === v.label);
      const rec = mem ? this.state.catalog.byKey(mem.key) : undefined;
      if (rec?.eventId) return `${v.slug}:${rec.eventId}`;
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

  /** Cross-venue groups. */
  served(): IterableIterator<ServedGroup> {
    return this.byId.values();
  }

  servedGroup(id: number): ServedGroup | undefined {
    return this.byId.get(id);
  }

  groupIdOf(venue: string, marketId: string): number | undefined {
    return this.byKey.get(`${venue}:${marketId}`);
  }

  // ---- GroupSource --------------------------------------------------------------------------

  group(id: number): SignalGroup | undefined {
    const g = this.byId.get(id);
    if (!g) return undefined;
    return {
      groupId: g.group_id,
      title: g.title,
      members: g.members.map((m) => ({ venue: m.platform, marketId: m.key.slice(m.key.indexOf(':') + 1), inverted: m.inverted })),
      eventDate: g.event_date,
      // As /events names the kind of event (src/api/matching/event-index.ts).
      eventType: (g.category ?? (g.market_class ? 'Sports' : 'Other')).toLowerCase(),
    };
  }

  groupsOfMarket(venue: string, marketId: string): readonly number[] {
    const id = this.byKey.get(`${venue}:${marketId}`);
    return id === undefined ? [] : [id];
  }

  *allGroups(): Generator<SignalGroup> {
    for (const id of this.byId.keys()) yield this.group(id)!;
  }

  close(): void {
    this.changed.complete();
    this.log?.debug('matching service closed');
  }
}
