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

/**
 * The events of the served groups, sorted by date, and a MiniSearch index over them and their
 * markets; both rebuilt on first use after the groups change.
 */
export class EventIndex {
  private list: EventRec[] = [];
  private byId = new Map<string, EventRec>();
  private index: MiniSearch<{ id: string; title: string; text: string }> | undefined;
  private builtFor = -1;

  constructor(
    private readonly state: EngineState,
    private readonly matching: MatchingService,
  ) {}

  /** Every event, by date then id. */
  all(): readonly EventRec[] {
    this.rebuild();
    return this.list;
  }

  /** Searches events: short all-caps words (NFL, CPI, BTC) match only as whole words. */
  search(q: string): EventRec[] {
    this.rebuild();
    const terms = q.split(/\s+/).filter(Boolean);
    const acronym = (t: string): boolean => /^[A-Z0-9]{2,5}$/.test(t);
    const hits = this.index!.search(q, {
      combineWith: 'AND',
      prefix: (term, i, all) => i === all.length - 1 && !terms.some((t) => acronym(t) && t.toLowerCase() === term) && term.length >= 3,
      fuzzy: (term) => (terms.some((t) => acronym(t) && t.toLowerCase() === term) || term.length < 5 ? false : 0.15),
    });
    return hits.map((h) => this.byId.get(String(h.id))).filter((e): e is EventRec => e !== undefined);
  }

  private rebuild(): void {
    if (this.builtFor === this.matching.version && this.index) return;
    const byEvent = new Map<string, ServedGroup[]>();
    for (const g of this.matching.served()) {
      const list = byEvent.get(g.eventKey);
      if (list) list.push(g);
      else byEvent.set(g.eventKey, [g]);
    }
    const now = Date.now();
    const events = [...byEvent].map(([id, groups]) => this.event(id, groups, now));
    events.sort((a, b) => ((a.date ?? '9999') < (b.date ?? '9999') ? -1 : (a.date ?? '9999') > (b.date ?? '9999') ? 1 : a.event_id < b.event_id ? -1 : 1));
    this.list = events;
    this.byId = new Map(events.map((e) => [e.event_id, e]));
    this.index = new MiniSearch({ fields: ['title', 'text'], storeFields: ['id'], searchOptions: { boost: { title: 2 } } });
    this.index.addAll(
      events.map((e) => ({
        id: e.event_id,
        title: e.title,
        text: e.groups.map((g) => [g.title, ...g.members.map((m) => this.state.catalog.byKey(m.key)?.title ?? '')].join(' ')).join(' '),
      })),
    );
    this.builtFor = this.matching.version;
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

/** The earliest close date (YYYY-MM-DD) of some markets, null when none has one. */
function minDate(recs: readonly MarketRecord[]): string | null {
  let t = Infinity;
  for (const r of recs) if (r.closeTime !== undefined && r.closeTime < t) t = r.closeTime;
  return Number.isFinite(t) ? new Date(t).toISOString().slice(0, 10) : null;
}
