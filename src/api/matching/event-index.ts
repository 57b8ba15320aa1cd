import { realClock, type Clock } from '../../core/clock.js';
import MiniSearch from 'minisearch';
import type { MatchingService, ServedGroup } from '../../matching/service.js';
import type { MarketRecord } from '../../state/catalog.js';
import type { EngineState } from '../../state/engine.js';

/** An event as /events and /search serve it: every cross-venue group of one real-world event. */
export interface EventRec {
  readonly event_id: string;
  readonly title: string;
  readonly event_type: string;
  readonly tags: string[];
  readonly date: string | null;
  readonly groups: ServedGroup[];
  /** All markets of the event are closed/settled, or its date has passed. */
  readonly completed: boolean;
}

interface EventDoc {
  readonly id: string;
  readonly title: string;
  readonly text: string;
}

/** Past this many distinct queries the hit cache starts over. */
const HIT_CACHE = 500;

/**
 * The events of the served groups, sorted by date, and a MiniSearch index over them and their
 * markets. On first use after the groups change the event list is rebuilt, and only the events
 * whose indexed text changed are indexed again (re-indexing every event's text took seconds at
 * 100k markets, and the groups change every few seconds under live ingest). Hits of a query are
 * kept until the next change.
 */
export class EventIndex {
  private list: EventRec[] = [];
  private byId = new Map<string, EventRec>();
  private readonly index = new MiniSearch<EventDoc>({ fields: ['title', 'text'], storeFields: ['id'], searchOptions: { boost: { title: 2 } } });
  /** Event id → hash of its indexed title and text: what is in the index now. */
  private readonly indexed = new Map<string, number>();
  private readonly hits = new Map<string, readonly string[]>();
  private builtFor = -1;

  constructor(
    private readonly state: EngineState,
    private readonly matching: MatchingService,
    private readonly clock: Clock = realClock,
  ) {}

  /** Every event, by date then id. */
  all(): readonly EventRec[] {
    this.rebuild();
    return this.list;
  }

  /** Searches events: short all-caps words (NFL, CPI, BTC) match only as whole words. */
  search(q: string): EventRec[] {
    this.rebuild();
    let ids = this.hits.get(q);
    if (ids === undefined) {
      const terms = q.split(/\s+/).filter(Boolean);
      const acronym = (t: string): boolean => /^[A-Z0-9]{2,5}$/.test(t);
      ids = this.index
        .search(q, {
          combineWith: 'AND',
          prefix: (term, i, all) => i === all.length - 1 && !terms.some((t) => acronym(t) && t.toLowerCase() === term) && term.length >= 3,
          fuzzy: (term) => (terms.some((t) => acronym(t) && t.toLowerCase() === term) || term.length < 5 ? false : 0.15),
        })
        .map((h) => String(h.id));
      if (this.hits.size >= HIT_CACHE) this.hits.clear();
      this.hits.set(q, ids);
    }
    const out: EventRec[] = [];
    for (const id of ids) {
      const e = this.byId.get(id);
      if (e) out.push(e);
    }
    return out;
  }

  private rebuild(): void {
    if (this.builtFor === this.matching.version) return;
    const byEvent = new Map<string, ServedGroup[]>();
    for (const g of this.matching.served()) {
      const list = byEvent.get(g.eventKey);
      if (list) list.push(g);
      else byEvent.set(g.eventKey, [g]);
    }
    const now = this.clock.now();
    const events = [...byEvent].map(([id, groups]) => this.event(id, groups, now));
    events.sort((a, b) => ((a.date ?? '9999') < (b.date ?? '9999') ? -1 : (a.date ?? '9999') > (b.date ?? '9999') ? 1 : a.event_id < b.event_id ? -1 : 1));
    this.list = events;
    this.byId = new Map(events.map((e) => [e.event_id, e]));
    this.reindex(events);
    this.hits.clear();
    this.builtFor = this.matching.version;
  }

  /** Brings the search index to `events`: drops the events gone, indexes the new and the changed. */
  private reindex(events: readonly EventRec[]): void {
    const seen = new Set<string>();
    for (const e of events) {
      seen.add(e.event_id);
      const text = e.groups.map((g) => [g.title, ...g.members.map((m) => this.state.catalog.byKey(m.key)?.title ?? '')].join(' ')).join(' ');
      const h = hash(e.title, text);
      const had = this.indexed.get(e.event_id);
      if (had === h) continue;
      const doc = { id: e.event_id, title: e.title, text };
      if (had === undefined) this.index.add(doc);
      else this.index.replace(doc);
      this.indexed.set(e.event_id, h);
    }
    for (const id of this.indexed.keys())
      if (!seen.has(id)) {
        this.index.discard(id);
        this.indexed.delete(id);
      }
  }

  private event(id: string, groups: ServedGroup[], now: number): EventRec {
    const recs = groups.flatMap((g) => g.members.map((m) => this.state.catalog.byKey(m.key))).filter((m): m is MarketRecord => m !== undefined);
    const first = groups[0]!;
    const title = first.event_name ?? first.game_title ?? recs.find((r) => r.eventTitle)?.eventTitle ?? first.title;
    const date = first.event_date ?? minDate(recs);
    const allClosed = recs.length > 0 && recs.every((r) => r.status !== 'active' && r.status !== 'initialized');
    const past = date !== null && Date.parse(`${date}T23:59:59Z`) < now - 86_400_000 && first.event_date !== null;
    return {
      event_id: id,
      title,
      event_type: (first.category ?? (first.market_class ? 'Sports' : 'Other')).toLowerCase(),
      tags: [...new Set(recs.flatMap((r) => r.tags ?? []))],
      date,
      groups: groups.sort((a, b) => a.group_id - b.group_id),
      completed: allClosed || past,
    };
  }
}

/** FNV-1a over two strings: whether an event's indexed text changed, without keeping the text. */
function hash(a: string, b: string): number {
  let h = 0x811c9dc5;
  for (const s of [a, '\u0000', b]) for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The earliest close date (YYYY-MM-DD) of some markets, null when none has one. */
function minDate(recs: readonly MarketRecord[]): string | null {
  let t = Infinity;
  for (const r of recs) if (r.closeTime !== undefined && r.closeTime < t) t = r.closeTime;
  return Number.isFinite(t) ? new Date(t).toISOString().slice(0, 10) : null;
}
