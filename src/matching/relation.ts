/**
 * Relations between two listings (issue 32), beyond the groups: `same` and `inverted` as `compare`
 * decides them (match groups hold exactly these), and for propositions that differ in one measured
 * field only, how their YES outcomes nest:
 * - `subset`: a's YES implies b's ("wins by 0–3%" ⊂ "wins"; "reach $150k by Dec 31" ⊂ "reach
 *   $120k by Dec 31"; "nominated by 2026-12-31" ⊂ "nominated by 2029-01-20"); `superset` the reverse;
 * - `overlap`: both can settle YES together and neither implies the other (two margin buckets or
 *   ranges that share values);
 * - `different`: anything else, including "cannot tell", with the field that decided it.
 *
 * Nothing that trades reads these: a subset pair is not an arbitrage (the larger side can win
 * while the smaller loses). `reasons` say so where a settlement window is what differs.
 */
import { compare, complement, GRID, intervalOf, type Comparison, type Interval } from './compare.js';
import { extractProposition, type MatchInput, type Proposition } from './proposition/index.js';

export type PairRelation = 'same' | 'inverted' | 'subset' | 'superset' | 'overlap' | 'different';

/** The relation of a to b, how sure, and why. */
export interface RelationVerdict {
  readonly relation: PairRelation;
  readonly confidence: number;
  readonly reasons: readonly string[];
}

/** Kinds whose `date` is a deadline ("by"): an earlier deadline's YES implies a later one's. */
function byDeadline(p: Proposition): boolean {
  if (p.kind === 'appointment') return true;
  if (p.kind === 'ipo') return p.mode === 'by';
  if (p.kind === 'crypto_price') return p.mode === 'max_by' || p.mode === 'min_by';
  if (p.kind === 'election_winner') return p.mode === 'next';
  return false;
}

const THRESHOLD_KINDS = new Set(['crypto_price', 'econ_threshold', 'fed_rate', 'fed_decision']);

/** The fields that agreed, less the one a recomparison made equal on purpose. */
function agreed(c: Comparison, made?: readonly string[]): string[] {
  const fields = made ? c.reasons.filter((f) => !made.includes(f)) : c.reasons;
  return fields.length > 0 ? [`agree: ${fields.join(', ')}`] : [];
}

function different(reason: string, c?: Comparison): RelationVerdict {
  return { relation: 'different', confidence: 0, reasons: [...(c ? agreed(c) : []), reason] };
}

/** Where two intervals sit: a inside b, b inside a, sharing values, or apart (tolerance in grid steps). */
function nest(a: Interval, b: Interval, tol: number): 'subset' | 'superset' | 'same' | 'overlap' | 'apart' {
  const aInB = a.lo >= b.lo - tol && a.hi <= b.hi + tol;
  const bInA = b.lo >= a.lo - tol && b.hi <= a.hi + tol;
  if (aInB && bInA) return 'same';
  if (aInB) return 'subset';
  if (bInA) return 'superset';
  return Math.max(a.lo, b.lo) <= Math.min(a.hi, b.hi) ? 'overlap' : 'apart';
}

/** The YES values of a threshold statement, negation applied; null when not one interval. */
function yesValues(p: Proposition): Interval | null {
  const iv = intervalOf(p);
  if (!iv) return null;
  return p.negated ? complement(iv) : iv;
}

function nested(kind: 'subset' | 'superset' | 'same' | 'overlap' | 'apart', c: Comparison, why: string, made: readonly string[]): RelationVerdict {
  if (kind === 'apart') return { relation: 'different', confidence: 0, reasons: [...agreed(c, made), `${why}: no value settles both YES`] };
  if (kind === 'same') return { relation: 'same', confidence: c.confidence, reasons: agreed(c) };
  return { relation: kind, confidence: c.confidence, reasons: [...agreed(c, made), why] };
}

/** a and b equal but for their thresholds: how their YES values nest. */
function byThreshold(a: Proposition, b: Proposition): RelationVerdict | undefined {
  if (!THRESHOLD_KINDS.has(a.kind) || a.unit === null || a.unit !== b.unit) return undefined;
  const c = compare({ ...a, comparator: b.comparator, threshold: b.threshold, thresholdHigh: b.thresholdHigh, negated: b.negated }, b);
  const ia = yesValues(a);
  const ib = yesValues(b);
  if (c.relation !== 'same' || !ia || !ib) return undefined;
  return nested(nest(ia, ib, GRID[a.unit]?.tol ?? 0), c, `threshold ${a.comparator} ${a.threshold} against ${b.comparator} ${b.threshold}`, ['threshold']);
}

/** a and b equal but for a win's margin bucket: a bucket lies inside the plain win. */
function byMargin(a: Proposition, b: Proposition): RelationVerdict | undefined {
  if (a.kind !== 'election_winner' || a.negated || b.negated || (a.stat !== 'margin' && b.stat !== 'margin')) return undefined;
  const plain = (p: Proposition): Proposition => ({ ...p, stat: null, comparator: null, threshold: null, thresholdHigh: null, unit: null });
  const c = compare(plain(a), plain(b));
  if (c.relation !== 'same') return undefined;
  if (a.stat !== 'margin') return { relation: 'superset', confidence: c.confidence, reasons: [...agreed(c), 'a win contains every margin bucket of it'] };
  if (b.stat !== 'margin') return { relation: 'subset', confidence: c.confidence, reasons: [...agreed(c), 'a margin bucket of a win lies inside the win'] };
  const ia = intervalOf(a);
  const ib = intervalOf(b);
  if (!ia || !ib) return undefined;
  return nested(nest(ia, ib, 0), c, `margin ${a.threshold}–${a.thresholdHigh ?? '∞'} against ${b.threshold}–${b.thresholdHigh ?? '∞'}`, ['margin']);
}

const WINDOW_FIELDS = ['deadline', 'date'];

/** a and b equal but for their settlement windows (a deadline each). */
function byWindow(a: Proposition, b: Proposition): RelationVerdict | undefined {
  if (!byDeadline(a) || !byDeadline(b) || a.date === b.date) return undefined;
  const c = compare({ ...a, date: b.date, dateSource: b.dateSource }, b);
  if (c.relation !== 'same') return undefined;
  const noArb = 'not the same proposition: no risk-free arbitrage between them';
  if (a.date === null || b.date === null) {
    return {
      relation: 'different',
      confidence: 0,
      reasons: [...agreed(c, WINDOW_FIELDS), `settlement window known on one side only (${a.date ?? 'unknown'} against ${b.date ?? 'unknown'}): ${noArb}`],
    };
  }
  const why = `settlement windows differ (by ${a.date} against by ${b.date}): ${noArb}`;
  if (a.negated || b.negated) return { relation: 'different', confidence: 0, reasons: [...agreed(c, WINDOW_FIELDS), why] };
  return { relation: a.date < b.date ? 'subset' : 'superset', confidence: c.confidence, reasons: [...agreed(c, WINDOW_FIELDS), why] };
}

/** Two parties, or two people, as the winner of one contest (the same office and year). */
function rivals(a: Proposition, b: Proposition, c: Comparison): boolean {
  if (c.conflict !== 'subject' && c.conflict !== 'party') return false;
  if (a.kind !== b.kind || a.office === null || a.office !== b.office || a.year !== b.year || a.subject === null || b.subject === null) return false;
  const sort = (s: string): string => s.slice(0, s.indexOf(':'));
  return sort(a.subject) === sort(b.subject);
}

/** The relation of two propositions (see the module comment). */
export function relate(a: Proposition, b: Proposition): RelationVerdict {
  const c = compare(a, b);
  if (c.relation !== 'different') return { relation: c.relation, confidence: c.confidence, reasons: agreed(c) };
  const nestedBy = byWindow(a, b) ?? byMargin(a, b) ?? byThreshold(a, b);
  if (nestedBy) return nestedBy;
  if (rivals(a, b, c)) return different(`${c.conflict} differs: two winners of one contest exclude each other but are not complements (a third can win)`, c);
  return different(`${c.conflict ?? 'value'} differs`, c);
}

/** The relation of two listings, each read into its proposition. */
export function relateListings(a: MatchInput, b: MatchInput): RelationVerdict {
  return relate(extractProposition({ ...a, market_id: a.market_id ?? null }), extractProposition({ ...b, market_id: b.market_id ?? null }));
}
