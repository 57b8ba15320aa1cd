/**
 * Settlement audit of the cross-venue groups: every resolution of a grouped market is a test of
 * the match. Two members of a group that both settled must have settled on the same side when
 * their `inverted` flags are equal, on opposite sides when they differ; anything else is a wrong
 * match (different events, or an inversion the matcher got wrong), and the group is suspect.
 *
 * Decisions:
 * - A pair is judged when the second of its two markets settles; until then it is pending (a
 *   market settled, its partner not yet), which is reported but not counted.
 * - A settlement that pays neither side in full (void, cancelled, a Manifold MKT or scalar
 *   resolution) is counted as voided, never as an agreement or a contradiction.
 * - A pair is judged as it was grouped when both sides had settled; a later regrouping (an
 *   operator override) does not rewrite that verdict, a changed settlement (a venue corrects a
 *   result, a proposed UMA result is disputed) does. Whether a group is suspect follows the group
 *   as it is now: after an operator fixes the match, the group is no longer suspect.
 *
 * Verdicts are kept in LMDB (`audit` sub-database, one record per pair of listings), so the counts
 * survive restarts; the per category and venue pair tallies are rebuilt from them at start.
 */
import type { Database } from 'lmdb';
import { PAYOUT } from '../core/price.js';
import type { MarketStatus } from '../core/types.js';

/** How a market settled, for the audit: a full payout to one side, or neither (`void`). */
export type Settlement = 'yes' | 'no' | 'void';

/** What two settled members of a group say about their match. */
export type Verdict = 'agree' | 'contradict' | 'void';

/**
 * The settlement of a market record, undefined while it has not settled: status determined or
 * finalized with a yes/no result or a full or zero settlement value; any other result or value
 * of a settled market (void, cancelled, a partial payout) is `void`.
 */
export function settlementOf(m: {
  readonly status: MarketStatus;
  readonly result?: string | undefined;
  readonly settlementValue?: number | undefined;
}): Settlement | undefined {
  if (m.status !== 'determined' && m.status !== 'finalized') return undefined;
  const r = m.result?.toLowerCase();
  if (r === 'yes' || r === 'no') return r;
  if (m.settlementValue === PAYOUT) return 'yes';
  if (m.settlementValue === 0) return 'no';
  if ((r !== undefined && r !== '') || m.settlementValue !== undefined) return 'void';
  return undefined;
}

/** Whether a status can carry a settlement (the service audits markets with it). */
export function mayBeSettled(status: MarketStatus): boolean {
  return status === 'determined' || status === 'finalized';
}

/** The verdict on two settled members; `opposite` when exactly one of them is inverted. */
export function verdictOf(a: Settlement, b: Settlement, opposite: boolean): Verdict {
  if (a === 'void' || b === 'void') return 'void';
  return (a === b) !== opposite ? 'agree' : 'contradict';
}

/** A member of a group as the audit sees it. */
export interface AuditMember {
  /** `venue:marketId`. */
  readonly key: string;
  /** Venue label. */
  readonly venue: string;
  readonly inverted: boolean;
  /** Undefined while the market has not settled. */
  readonly settlement: Settlement | undefined;
}

/** A cross-venue group as the audit sees it. */
export interface AuditGroup {
  readonly groupId: number;
  readonly title: string;
  readonly category: string | null;
  readonly members: readonly AuditMember[];
}

/** One judged pair of listings, as persisted. */
export interface PairVerdict {
  /** Listing keys, `a` < `b`. */
  readonly a: string;
  readonly b: string;
  /** Venue labels of `a` and `b`. */
  readonly venues: readonly [string, string];
  readonly category: string | null;
  readonly groupId: number;
  /** Exactly one of the two was inverted in the group. */
  readonly opposite: boolean;
  /** Settlements of `a` and `b`. */
  readonly settled: readonly [Settlement, Settlement];
  readonly verdict: Verdict;
  /** When the verdict was reached (ms). */
  readonly at: number;
}

/** What one look at a group found. */
export interface GroupAudit {
  /** Pairs whose two markets have settled. */
  readonly judged: readonly PairVerdict[];
  /** Pairs of which exactly one market has settled: venue labels of the two. */
  readonly pending: readonly (readonly [string, string])[];
  /** The first contradiction, in words; undefined when the settled members agree. */
  readonly contradiction: string | undefined;
}

/**
 * Judges every pair of members of a group from their settlements (pure). `name` turns a listing
 * key into what the reason shows (`platform:market_id`).
 */
export function auditGroup(g: AuditGroup, at: number, name: (key: string) => string = (k) => k): GroupAudit {
  const judged: PairVerdict[] = [];
  const pending: (readonly [string, string])[] = [];
  let contradiction: string | undefined;
  const ms = [...g.members].sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
  for (let i = 0; i < ms.length; i++)
    for (let j = i + 1; j < ms.length; j++) {
      const a = ms[i]!;
      const b = ms[j]!;
      if (a.settlement === undefined || b.settlement === undefined) {
        if (a.settlement !== undefined || b.settlement !== undefined) pending.push([a.venue, b.venue]);
        continue;
      }
      const opposite = a.inverted !== b.inverted;
      const verdict = verdictOf(a.settlement, b.settlement, opposite);
      judged.push({
        a: a.key,
        b: b.key,
        venues: [a.venue, b.venue],
        category: g.category,
        groupId: g.groupId,
        opposite,
        settled: [a.settlement, b.settlement],
        verdict,
        at,
      });
      if (verdict === 'contradict' && contradiction === undefined)
        contradiction =
          `settlements contradict the match: ${name(a.key)} settled ${a.settlement} and ${name(b.key)} settled ${b.settlement}, ` +
          `but the group holds them as ${opposite ? 'opposite sides' : 'the same side'}`;
    }
  return { judged, pending, contradiction };
}

/** Counts of judged pairs. */
export interface Tally {
  agree: number;
  contradict: number;
  void: number;
  /** Pairs of which one market settled and the other not yet (current groups only). */
  pending: number;
}

/** One row of the quality report: a category and a venue pair (labels, sorted). */
export interface TallyRow {
  readonly category: string | null;
  readonly venues: readonly [string, string];
  readonly tally: Tally;
}

/** A group whose settled members contradict each other. */
export interface SuspectGroup {
  readonly groupId: number;
  readonly title: string;
  readonly category: string | null;
  /** Venue labels of the group's members, sorted, without repeats. */
  readonly venues: readonly string[];
  readonly reason: string;
}

/** Filter of the quality report: a category (case-insensitive) and venue labels a pair must include. */
export interface QualityFilter {
  readonly category?: string | undefined;
  /** One venue: pairs with a leg on it; two: exactly that venue pair. */
  readonly venues?: readonly string[] | undefined;
}

const PREFIX = 'p:';
const SEP = '\u0000';

const pairKey = (a: string, b: string): string => `${PREFIX}${a}${SEP}${b}`;
const tallyKey = (category: string | null, v: readonly [string, string]): string => `${category ?? ''}${SEP}${v[0]}${SEP}${v[1]}`;
const sortedPair = (x: string, y: string): [string, string] => (x <= y ? [x, y] : [y, x]);
const emptyTally = (): Tally => ({ agree: 0, contradict: 0, void: 0, pending: 0 });

/** Where the state of one current group stands: its pending pairs and whether it is suspect. */
interface Current {
  readonly group: AuditGroup;
  readonly pending: readonly (readonly [string, string])[];
  readonly suspect: string | undefined;
}

/**
 * The audit's state: judged pairs (persisted) with their tallies, and the groups with a settled
 * member as last seen (pending pairs, suspect reason). The matching service feeds it groups.
 */
export class SettlementAudit {
  private readonly pairs = new Map<string, PairVerdict>();
  private readonly tallies = new Map<string, TallyRow>();
  private readonly current = new Map<number, Current>();
  /** Bumped whenever a count or a suspect group changes, for response caches. */
  version = 0;

  /**
   * @param slugOf the venue name clients see for a venue label (reasons and metrics show it).
   */
  constructor(
    private readonly db?: Database,
    readonly slugOf: (label: string) => string = (l) => l,
  ) {
    if (!db) return;
    for (const { key, value } of db.getRange({ start: PREFIX, end: 'p;' })) {
      const v = value as PairVerdict;
      this.pairs.set(String(key), v);
      this.count(v, 1);
    }
  }

  /**
   * Audits a group as it is now: records pairs judged for the first time or whose settlements
   * changed, and returns the contradiction that makes it suspect (undefined when none).
   */
  check(g: AuditGroup, now: number): string | undefined {
    const r = auditGroup(g, now, (key) => {
      const i = key.indexOf(':');
      return `${this.slugOf(key.slice(0, i))}:${key.slice(i + 1)}`;
    });
    for (const v of r.judged) {
      const k = pairKey(v.a, v.b);
      const old = this.pairs.get(k);
      if (old && old.settled[0] === v.settled[0] && old.settled[1] === v.settled[1]) continue;
      // A changed settlement is judged again, in the orientation the pair had when first judged.
      const next = old
        ? { ...v, opposite: old.opposite, category: old.category, groupId: old.groupId, verdict: verdictOf(v.settled[0], v.settled[1], old.opposite) }
        : v;
      if (old) this.count(old, -1);
      this.pairs.set(k, next);
      this.count(next, 1);
      void this.db?.put(k, next);
      this.version++;
    }
    const prev = this.current.get(g.groupId);
    if (r.pending.length === 0 && r.judged.length === 0) this.current.delete(g.groupId);
    else this.current.set(g.groupId, { group: g, pending: r.pending, suspect: r.contradiction });
    if (prev?.suspect !== r.contradiction || (prev?.pending.length ?? 0) !== r.pending.length) this.version++;
    return r.contradiction;
  }

  /** A group left the index: it is no longer pending or suspect (its judged pairs stay counted). */
  drop(groupId: number): void {
    if (this.current.delete(groupId)) this.version++;
  }

  /** Whether a group has a settled member (a change of any member's status must audit it again). */
  tracks(groupId: number): boolean {
    return this.current.has(groupId);
  }

  /** Why a group is suspect, or undefined. */
  suspectOf(groupId: number): string | undefined {
    return this.current.get(groupId)?.suspect;
  }

  /** Every suspect group matching the filter, by group id. */
  suspects(f: QualityFilter = {}): SuspectGroup[] {
    const out: SuspectGroup[] = [];
    for (const { group: g, suspect } of this.current.values()) {
      if (suspect === undefined || !categoryMatch(g.category, f.category)) continue;
      const venues = [...new Set(g.members.map((m) => m.venue))].sort();
      if (f.venues && !f.venues.every((v) => venues.includes(v))) continue;
      out.push({ groupId: g.groupId, title: g.title, category: g.category, venues, reason: suspect });
    }
    return out.sort((a, b) => a.groupId - b.groupId);
  }

  /** Tallies by category and venue pair (pending pairs of the current groups included), filtered. */
  rows(f: QualityFilter = {}): TallyRow[] {
    const rows = new Map<string, TallyRow>();
    const row = (category: string | null, venues: readonly [string, string]): TallyRow => {
      const k = tallyKey(category, venues);
      let r = rows.get(k);
      if (!r) rows.set(k, (r = { category, venues, tally: emptyTally() }));
      return r;
    };
    for (const r of this.tallies.values()) {
      if (!rowMatch(r.category, r.venues, f)) continue;
      const t = row(r.category, r.venues).tally;
      t.agree += r.tally.agree;
      t.contradict += r.tally.contradict;
      t.void += r.tally.void;
    }
    for (const { group, pending } of this.current.values())
      for (const [x, y] of pending) {
        const venues = sortedPair(x, y);
        if (rowMatch(group.category, venues, f)) row(group.category, venues).tally.pending++;
      }
    return [...rows.values()].sort((a, b) => (tallyKey(a.category, a.venues) < tallyKey(b.category, b.venues) ? -1 : 1));
  }

  /** The sum of the tallies, and how many groups are pending or suspect now. */
  totals(f: QualityFilter = {}): Tally & { pendingGroups: number; suspectGroups: number } {
    const t = { ...emptyTally(), pendingGroups: 0, suspectGroups: 0 };
    for (const r of this.rows(f)) {
      t.agree += r.tally.agree;
      t.contradict += r.tally.contradict;
      t.void += r.tally.void;
      t.pending += r.tally.pending;
    }
    for (const c of this.current.values()) {
      if (!categoryMatch(c.group.category, f.category)) continue;
      if (f.venues && !f.venues.every((v) => c.group.members.some((m) => m.venue === v))) continue;
      if (c.pending.length) t.pendingGroups++;
      if (c.suspect !== undefined) t.suspectGroups++;
    }
    return t;
  }

  /** The judged pair of two listings, if any. */
  verdict(x: string, y: string): PairVerdict | undefined {
    const [a, b] = sortedPair(x, y);
    return this.pairs.get(pairKey(a, b));
  }

  private count(v: PairVerdict, d: 1 | -1): void {
    const venues = sortedPair(v.venues[0], v.venues[1]);
    const k = tallyKey(v.category, venues);
    let r = this.tallies.get(k);
    if (!r) this.tallies.set(k, (r = { category: v.category, venues, tally: emptyTally() }));
    r.tally[v.verdict] += d;
  }
}

/** Agreements over agreements and contradictions, null before any. */
export function precisionOf(t: Pick<Tally, 'agree' | 'contradict'>): number | null {
  const n = t.agree + t.contradict;
  return n === 0 ? null : Math.round((t.agree / n) * 10_000) / 10_000;
}

function categoryMatch(category: string | null, want: string | undefined): boolean {
  return want === undefined || (category !== null && category.toLowerCase() === want.toLowerCase());
}

function rowMatch(category: string | null, venues: readonly [string, string], f: QualityFilter): boolean {
  if (!categoryMatch(category, f.category)) return false;
  if (!f.venues) return true;
  if (f.venues.length === 1) return venues.includes(f.venues[0]!);
  const [x, y] = sortedPair(f.venues[0]!, f.venues[1]!);
  return venues[0] === x && venues[1] === y;
}
