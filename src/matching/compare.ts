/**
 * Pairwise comparison of two propositions: the same statement, its complement (inverted), or
 * different. Every settlement-relevant field is checked; one contradiction is enough to say
 * "different" (precision first), and a field only one side knows lowers the confidence instead.
 *
 * Thresholds are compared as sets of settling values on the quantity's own grid, so that phrasing
 * differences vanish and real boundary differences do not:
 * - integer stats and margins (grid 1): "7+" = "over 6.5" = [7, ∞); "wins by over 2.5" = [3, ∞);
 * - percentages reported to 0.1 (CPI, unemployment): "above 4.7%" = [4.8, ∞) ≠ "≥4.7%" = [4.7, ∞);
 * - Fed moves in 25 bp steps: "cut by >25bps" = "cut by 50+ bps";
 * - continuous prices at cent resolution, one cent of tolerance (a price sitting exactly on the
 *   strike has no weight): "above $139,999.99" = "reach $140,000", "below $45,000" = "dip to $45,000".
 * Over and Under of one line, or a favourite's cover against the underdog's, are complements.
 */
import type { Proposition } from './proposition/index.js';
import { leagueInfo } from './teams.js';

export type Relation = 'same' | 'inverted' | 'different';

/** The verdict on a pair, with the fields that agreed and the first that contradicted. */
export interface Comparison {
  readonly relation: Relation;
  readonly confidence: number;
  /** Settlement fields that agreed. */
  readonly reasons: readonly string[];
  /** The field that contradicted, when different. */
  readonly conflict: string | null;
}

const GAME_KINDS = new Set(['game_winner', 'draw', 'spread', 'total', 'player_prop', 'map_winner']);

/** Inclusive interval of settling values in grid steps; ±Infinity for open ends. */
export interface Interval {
  readonly lo: number;
  readonly hi: number;
}

/** Each unit's grid step and the steps of tolerance between two venues' strikes. */
export const GRID: Readonly<Record<string, { step: number; tol: number }>> = {
  count: { step: 1, tol: 0 },
  pct: { step: 0.1, tol: 0 },
  pct_rate: { step: 0.25, tol: 0 },
  bps: { step: 25, tol: 0 },
  usd: { step: 0.01, tol: 1 },
  jobs: { step: 1000, tol: 0 },
};

/** Deadlines further apart than this are different windows (venues close a shared event days apart, not months). */
const DEADLINE_DAYS = 92;

function daysApart(x: string, y: string): number {
  return Math.abs(Date.parse(`${x}T00:00:00Z`) - Date.parse(`${y}T00:00:00Z`)) / 86_400_000;
}

function onGrid(v: number, step: number): { k: number; exact: boolean } {
  const k = v / step;
  const r = Math.round(k);
  return Math.abs(k - r) < 1e-6 ? { k: r, exact: true } : { k, exact: false };
}

/** The values on which a proposition's statement (before any negation) settles YES, in steps of its unit's grid. */
export function intervalOf(p: Proposition): Interval | null {
  if (p.comparator === null || p.threshold === null || p.unit === null) return null;
  const g = GRID[p.unit];
  if (!g) return null;
  const { k, exact } = onGrid(p.threshold, g.step);
  switch (p.comparator) {
    case '>':
      return { lo: exact ? k + 1 : Math.ceil(k), hi: Infinity };
    case '>=':
      return { lo: exact ? k : Math.ceil(k), hi: Infinity };
    case '<':
      return { lo: -Infinity, hi: exact ? k - 1 : Math.floor(k) };
    case '<=':
      return { lo: -Infinity, hi: exact ? k : Math.floor(k) };
    case '=':
      return exact ? { lo: k, hi: k } : null;
    case 'range': {
      if (p.thresholdHigh === null) return null;
      const h = onGrid(p.thresholdHigh, g.step);
      return { lo: exact ? k : Math.ceil(k), hi: h.exact ? h.k : Math.floor(h.k) };
    }
  }
}

/** The other side of a one-sided interval; null for a bucket (its complement is two intervals). */
export function complement(i: Interval): Interval | null {
  if (i.lo === -Infinity && i.hi !== Infinity) return { lo: i.hi + 1, hi: Infinity };
  if (i.hi === Infinity && i.lo !== -Infinity) return { lo: -Infinity, hi: i.lo - 1 };
  return null;
}

function near(a: number, b: number, tol: number): boolean {
  return a === b || Math.abs(a - b) <= tol;
}

function equalIv(a: Interval, b: Interval, tol: number): boolean {
  return near(a.lo, b.lo, tol) && near(a.hi, b.hi, tol);
}

/** A value set, possibly negated when its complement is not an interval (an exact bucket's "No"). */
interface Settle {
  readonly iv: Interval;
  readonly neg: boolean;
}

function settle(iv: Interval, negated: boolean): Settle {
  if (negated) {
    const c = complement(iv);
    if (c) return { iv: c, neg: false };
  }
  return { iv, neg: negated };
}

function relate(a: Settle, b: Settle, tol: number): Relation {
  if (equalIv(a.iv, b.iv, tol)) return a.neg === b.neg ? 'same' : 'inverted';
  const c = complement(a.iv);
  if (c && equalIv(c, b.iv, tol)) return a.neg === b.neg ? 'inverted' : 'same';
  return 'different';
}

function mirror(i: Interval): Interval {
  return { lo: -i.hi, hi: -i.lo };
}

class Verdict {
  readonly reasons: string[] = [];
  confidence: number;
  conflict: string | null = null;
  constructor(a: Proposition, b: Proposition) {
    this.confidence = Math.min(a.confidence, b.confidence);
  }
  agree(field: string): void {
    this.reasons.push(field);
  }
  /** Both known and equal: a reason; both known and different: a conflict; one unknown: a penalty. */
  field(name: string, x: string | number | null, y: string | number | null, missing: number, required = false): boolean {
    if (x !== null && y !== null) {
      if (x !== y) {
        this.conflict = name;
        return false;
      }
      this.agree(name);
      return true;
    }
    if (x === null && y === null) {
      if (required) {
        this.conflict = name;
        return false;
      }
      return true;
    }
    if (required) {
      this.conflict = name;
      return false;
    }
    this.confidence -= missing;
    return true;
  }
  fail(name: string): Comparison {
    return { relation: 'different', confidence: 0, reasons: this.reasons, conflict: name };
  }
  done(relation: Relation): Comparison {
    if (relation === 'different') return this.fail(this.conflict ?? 'value');
    return { relation, confidence: Math.max(0, Math.round(this.confidence * 100) / 100), reasons: this.reasons, conflict: null };
  }
}

/**
 * One person written with fewer names: same surname and every name of the shorter form present, in
 * order, in the longer ("Lula da Silva" / "Luiz Inácio Lula da Silva"). "Donald Trump" and
 * "Donald Trump Jr" differ in the last name, so they never meet.
 */
function samePerson(x: string, y: string): boolean {
  const a = x.slice(7).split(' ');
  const b = y.slice(7).split(' ');
  const [s, l] = a.length <= b.length ? [a, b] : [b, a];
  if (s.length < 2 || s[s.length - 1] !== l[l.length - 1]) return false;
  let j = 0;
  for (const w of l) if (w === s[j]) j++;
  return j === s.length;
}

/** Subjects agree when both are the same id, or when an ambiguous side's candidates hold the other's. */
function sameSubject(a: Proposition, b: Proposition, v: Verdict): boolean | null {
  if (a.subject !== null && b.subject !== null) {
    if (a.subject === b.subject) return true;
    if (a.subject.startsWith('person:') && b.subject.startsWith('person:') && samePerson(a.subject, b.subject)) {
      v.confidence -= 0.1;
      return true;
    }
    return false;
  }
  const ca = a.subjectCandidates;
  const cb = b.subjectCandidates;
  if (ca.length === 0 || cb.length === 0) return null;
  const shared = ca.filter((x) => cb.includes(x));
  if (shared.length !== 1) return shared.length === 0 ? false : null;
  v.confidence -= 0.1;
  return true;
}

function negRelation(a: Proposition, b: Proposition): Relation {
  return a.negated === b.negated ? 'same' : 'inverted';
}

/**
 * Compares two propositions. `same`: both YES sides settle on the same outcome; `inverted`: one
 * YES is the other's NO; `different`: anything else, including "cannot tell".
 */
export function compare(a: Proposition, b: Proposition): Comparison {
  const v = new Verdict(a, b);
  if (a.kind !== b.kind) return v.fail('kind');
  v.agree('kind');
  if (GAME_KINDS.has(a.kind)) return compareGame(a, b, v);
  switch (a.kind) {
    case 'championship':
    case 'tournament_winner':
    case 'group_winner':
    case 'stage_reach': {
      if (!v.field('competition', a.competition, b.competition, 0, true)) return v.fail('competition');
      if (!v.field('stage', a.stage, b.stage, 0, true)) return v.fail('stage');
      if (!v.field('year', a.year, b.year, 0.15)) return v.fail('year');
      return subjectThen(a, b, v, () => negRelation(a, b));
    }
    case 'nomination': {
      if (!v.field('party', a.party, b.party, 0, true)) return v.fail('party');
      if (!v.field('office', a.office, b.office, 0, true)) return v.fail('office');
      if (a.stage !== b.stage) return v.fail('stage');
      if (!v.field('year', a.year, b.year, 0.15)) return v.fail('year');
      return subjectThen(a, b, v, () => negRelation(a, b));
    }
    case 'election_winner': {
      if (!v.field('office', a.office, b.office, 0, true)) return v.fail('office');
      // A primary, a runoff or a first round is not the election itself.
      if (a.stage !== b.stage) return v.fail('stage');
      if (!sameScope(a, b, v)) return v.fail('scope');
      if (!v.field('party', a.party, b.party, 0)) return v.fail('party');
      if (!v.field('year', a.year, b.year, 0.15)) return v.fail('year');
      if (!sameMargin(a, b, v)) return v.fail('margin');
      return subjectThen(a, b, v, () => negRelation(a, b));
    }
    case 'appointment': {
      if (!v.field('office', a.office, b.office, 0, true)) return v.fail('office');
      // Naming the pick and the Senate confirming it are different events.
      if (!v.field('stage', a.stage, b.stage, 0, true)) return v.fail('stage');
      if (!sameWindow(a, b, v)) return v.fail('deadline');
      return subjectThen(a, b, v, () => negRelation(a, b));
    }
    case 'chamber_control': {
      if (!v.field('office', a.office, b.office, 0, true)) return v.fail('office');
      if (!v.field('year', a.year, b.year, 0.15)) return v.fail('year');
      return subjectThen(a, b, v, () => negRelation(a, b));
    }
    case 'fed_decision':
    case 'fed_rate':
    case 'econ_threshold': {
      if (a.subject !== b.subject) return v.fail(a.kind === 'econ_threshold' ? 'indicator' : 'subject');
      v.agree(a.kind === 'econ_threshold' ? 'indicator' : 'subject');
      // Null is the US (see Proposition.jurisdiction): both must name the same country.
      if (a.jurisdiction !== b.jurisdiction) return v.fail('jurisdiction');
      if (a.jurisdiction !== null) v.agree('jurisdiction');
      if (!v.field('month', a.month, b.month, 0, true)) return v.fail('month');
      return thresholds(a, b, v);
    }
    case 'crypto_price': {
      if (a.subject !== b.subject) return v.fail('asset');
      v.agree('asset');
      if (!v.field('mode', a.mode, b.mode, 0, true)) return v.fail('mode');
      if (!v.field('date', a.date, b.date, 0, true)) return v.fail('date');
      // A point-in-time price needs the same clock time; an unstated time is not "any" time.
      if (a.mode === 'at' && a.time !== b.time) return v.fail('time');
      if (a.mode === 'at' && a.time !== null) v.agree('time');
      return thresholds(a, b, v);
    }
    case 'ipo': {
      if (!v.field('mode', a.mode, b.mode, 0, true)) return v.fail('mode');
      if (a.mode === 'by' && !v.field('date', a.date, b.date, 0, true)) return v.fail('date');
      if (a.mode === 'first' && !v.field('competition', a.competition, b.competition, 0, true)) return v.fail('competition');
      // Two races with known horizons must end together; a known horizon never meets an unknown one.
      if (a.mode === 'first' && (a.date === null) !== (b.date === null)) return v.fail('deadline');
      if (a.mode === 'first' && a.date !== null && b.date !== null && daysApart(a.date, b.date) > DEADLINE_DAYS) return v.fail('deadline');
      return subjectThen(a, b, v, () => negRelation(a, b));
    }
    case 'award': {
      if (!v.field('ceremony', a.competition, b.competition, 0, true)) return v.fail('ceremony');
      if (!v.field('category', a.stage, b.stage, 0, true)) return v.fail('category');
      if (!v.field('year', a.year, b.year, 0.15)) return v.fail('year');
      return subjectThen(a, b, v, () => negRelation(a, b));
    }
    case 'other': {
      if (a.tokens.length < 2 || a.tokens.join(' ') !== b.tokens.join(' ')) return v.fail('text');
      v.agree('text');
      return v.done(negRelation(a, b));
    }
    default:
      return v.fail('kind');
  }
}

/**
 * Event scope of an office question: "the next holder by a deadline" never meets an election;
 * "the next election" meets a named election only when both years are known and equal. When the
 * title is the only evidence (a `next` question, or a year missing on one side) and both listings
 * have a deadline, the deadlines must agree: one running to 2045 is not one ending in 2026.
 */
function sameScope(a: Proposition, b: Proposition, v: Verdict): boolean {
  const na = a.mode === 'next';
  if (na !== (b.mode === 'next')) return false;
  if (a.mode !== b.mode && (a.year === null || b.year === null)) return false;
  if (na || a.year === null || b.year === null) {
    if (a.date !== null && b.date !== null) {
      if (daysApart(a.date, b.date) > DEADLINE_DAYS) return false;
      v.agree('deadline');
    } else if (na) v.confidence -= 0.05;
  }
  if (a.mode !== null && a.mode === b.mode) v.agree('scope');
  return true;
}

/**
 * Settlement windows of a "by a deadline" proposition (an appointment): two known deadlines must
 * agree; a known window (the title's "in 2025", a close time) never meets an unknown one. The same
 * nominee by 2026-12-31 and by 2029-01-20 are two propositions (the first implies the second:
 * `relate` calls it a subset), and an arbitrage between them is not risk-free.
 */
function sameWindow(a: Proposition, b: Proposition, v: Verdict): boolean {
  if (a.date !== null && b.date !== null) {
    if (daysApart(a.date, b.date) > DEADLINE_DAYS) return false;
    v.agree('deadline');
    return true;
  }
  return a.date === null && b.date === null;
}

/** A win by a margin bucket meets only the same bucket; a plain win meets only a plain win. */
function sameMargin(a: Proposition, b: Proposition, v: Verdict): boolean {
  if (a.stat !== b.stat) return false;
  if (a.stat !== 'margin') return true;
  const ia = intervalOf(a);
  const ib = intervalOf(b);
  if (!ia || !ib || !equalIv(ia, ib, 0)) return false;
  v.agree('margin');
  return true;
}

function subjectThen(a: Proposition, b: Proposition, v: Verdict, rel: () => Relation): Comparison {
  const s = sameSubject(a, b, v);
  if (s !== true) return v.fail('subject');
  v.agree('subject');
  return v.done(rel());
}

function thresholds(a: Proposition, b: Proposition, v: Verdict): Comparison {
  const ia = intervalOf(a);
  const ib = intervalOf(b);
  if (!ia || !ib || a.unit !== b.unit) {
    // Buckets of unknown width (Kalshi "B" strikes): only the very same strike can be the same.
    if (a.comparator === b.comparator && a.threshold === b.threshold && a.thresholdHigh === b.thresholdHigh && a.comparator !== null) {
      v.agree('threshold');
      return v.done(negRelation(a, b));
    }
    return v.fail('threshold');
  }
  const tol = GRID[a.unit!]!.tol;
  const r = relate(settle(ia, a.negated), settle(ib, b.negated), tol);
  if (r === 'different') return v.fail('threshold');
  v.agree('threshold');
  return v.done(r);
}

function compareGame(a: Proposition, b: Proposition, v: Verdict): Comparison {
  if (!v.field('league', a.league, b.league, 0)) return v.fail('league');
  if (!v.field('period', a.period, b.period, 0)) return v.fail('period');
  if (a.kind === 'map_winner' && !v.field('map', a.stage, b.stage, 0, true)) return v.fail('map');
  // Which game: the same day (a missing day costs confidence, two missing days more) and teams
  // that do not contradict (one side may know only one team).
  if (a.date !== null && b.date !== null) {
    if (a.date !== b.date) return v.fail('date');
    v.agree('date');
    if (a.dateSource === 'close_time' || b.dateSource === 'close_time') v.confidence -= 0.05;
  } else v.confidence -= a.date === null && b.date === null ? 0.3 : 0.15;
  const ta = a.teams;
  const tb = b.teams;
  if (ta.length > 0 && tb.length > 0) {
    const [small, big] = ta.length <= tb.length ? [ta, tb] : [tb, ta];
    if (big.length === 2 && !small.every((t) => big.includes(t))) return v.fail('teams');
    if (big.length === 1 && small.length === 1 && small[0] !== big[0] && a.kind !== 'spread' && a.kind !== 'game_winner') return v.fail('teams');
    if (ta.length === 2 && tb.length === 2) v.agree('teams');
  } else if (a.kind !== 'player_prop') {
    v.confidence -= 0.1;
  }
  // Opponents are only known from a listing that names both teams of the game.
  const game = ta.length === 2 ? ta : tb.length === 2 ? tb : [];
  switch (a.kind) {
    case 'draw':
      return v.done(negRelation(a, b));
    case 'game_winner':
    case 'map_winner': {
      const s = sameSubject(a, b, v);
      if (s === true) {
        v.agree('team');
        return v.done(negRelation(a, b));
      }
      // The two sides of a game that cannot be drawn are complements.
      const league = leagueInfo(a.league ?? b.league ?? '');
      const noDraw = league ? !league.draws : false;
      if (
        s === false &&
        a.subject &&
        b.subject &&
        game.length === 2 &&
        game.includes(a.subject) &&
        game.includes(b.subject) &&
        noDraw &&
        a.period === 'full' &&
        b.period === 'full'
      ) {
        v.agree('team');
        return v.done(a.negated === b.negated ? 'inverted' : 'same');
      }
      return v.fail('team');
    }
    case 'spread': {
      const ia = intervalOf(a);
      const ib = intervalOf(b);
      if (!ia || !ib) return v.fail('line');
      const s = sameSubject(a, b, v);
      let r: Relation;
      if (s === true) r = relate(settle(ia, a.negated), settle(ib, b.negated), 0);
      else if (s === false && a.subject && b.subject && game.length === 2 && game.includes(a.subject) && game.includes(b.subject)) {
        // Express b on a's team: margin(a) = -margin(b).
        r = relate(settle(ia, a.negated), settle(mirror(ib), b.negated), 0);
      } else return v.fail('team');
      if (r === 'different') return v.fail('line');
      v.agree('team');
      v.agree('line');
      return v.done(r);
    }
    case 'total': {
      if (!v.field('stat', a.stat, b.stat, 0)) return v.fail('stat');
      if (ta.length < 2 && tb.length < 2) return v.fail('teams');
      const ia = intervalOf(a);
      const ib = intervalOf(b);
      if (!ia || !ib) return v.fail('line');
      const r = relate(settle(ia, a.negated), settle(ib, b.negated), 0);
      if (r === 'different') return v.fail('line');
      v.agree('line');
      return v.done(r);
    }
    case 'player_prop': {
      if (a.subject !== b.subject) return v.fail('player');
      v.agree('player');
      if (!v.field('stat', a.stat, b.stat, 0, true)) return v.fail('stat');
      const ia = intervalOf(a);
      const ib = intervalOf(b);
      if (!ia || !ib) return v.fail('line');
      const r = relate(settle(ia, a.negated), settle(ib, b.negated), 0);
      if (r === 'different') return v.fail('line');
      v.agree('line');
      return v.done(r);
    }
    default:
      return v.fail('kind');
  }
}
