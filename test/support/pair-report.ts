/**
 * The precision/recall report of the real labelled pair sets, scored the way a user meets the
 * matcher: each pair alone through `crossbook match` (`matchCommand`). A pair is predicted `same`
 * when both markets share a group with equal `inverted` flags, a `complement` when the flags
 * differ, `apart` otherwise. Each pair is also put to `relate` (src/matching/relation.ts), whose
 * relation (same, inverted, subset, superset, overlap, different) is counted per labelled relation.
 *
 * Printed per set, split, category and labelled relation by `npm run match:report`
 * (test/support/match-report.ts); the tests in test/matching assert the floors on the same figures.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { matchCommand } from '../../src/cli/match.js';
import type { MatchInput } from '../../src/matching/proposition/index.js';
import { relateListings, type PairRelation } from '../../src/matching/relation.js';

/** One labelled pair of either real set (the fields both share, and the ones each adds). */
export interface RealPair {
  readonly a: MatchInput;
  readonly b: MatchInput;
  readonly same: boolean;
  readonly category: string;
  /** independent-pairs.json: `same`, `inverted`, `different_event`, `different_scope`, `different_date`. */
  readonly relation?: string;
  /** real-pairs.json: the split fixed when the batch was written. */
  readonly split?: 'dev' | 'heldout';
}

/** What `crossbook match` says of a pair. */
export type Verdict = 'same' | 'complement' | 'apart';

/** One pair scored. */
export interface Scored {
  readonly index: number;
  readonly pair: RealPair;
  readonly split: 'dev' | 'heldout';
  /** The labelled relation (derived for real-pairs.json: `same`, `inverted` for its complement categories, else `different`). */
  readonly label: string;
  readonly verdict: Verdict;
  readonly relation: PairRelation;
}

export interface Tally {
  tp: number;
  fp: number;
  fn: number;
  tn: number;
}

/** The two real sets: the team's (with its own split) and the independent one (split by position here). */
export const SETS = {
  'real-pairs.json': 'the team set (95 pairs, split fixed in the file)',
  'independent-pairs.json': 'the independent set of issue 32 (152 pairs; held out: every third row from the third)',
} as const;
export type SetName = keyof typeof SETS;

/** Reads a set from test/fixtures/matching. */
export function loadSet(name: SetName): RealPair[] {
  return JSON.parse(readFileSync(new URL(`../fixtures/matching/${name}`, import.meta.url), 'utf8')) as RealPair[];
}

/**
 * The independent set's held-out rows: every third row from the third (2, 5, 8, …), fixed when
 * the set was copied in, before any rule of issue 32 was written. Rules were written looking only
 * at the other rows' misses.
 */
export function splitOf(p: RealPair, i: number): 'dev' | 'heldout' {
  return p.split ?? (i % 3 === 2 ? 'heldout' : 'dev');
}

function labelOf(p: RealPair): string {
  if (p.relation) return p.relation;
  if (p.same) return 'same';
  return p.category.endsWith('_inverted') ? 'inverted' : 'different';
}

/** Runs every pair through `crossbook match` and `relate`. */
export function scoreSet(pairs: readonly RealPair[]): Scored[] {
  const dir = mkdtempSync(join(tmpdir(), 'crossbook-pair-report-'));
  try {
    return pairs.map((pair, index) => ({
      index,
      pair,
      split: splitOf(pair, index),
      label: labelOf(pair),
      verdict: verdict(dir, pair, index),
      relation: relateListings(pair.a, pair.b).relation,
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `crossbook match FILE` in process: its exit code and what it wrote to out and err. */
export function runMatchCommand(file: string): { code: number; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  const code = matchCommand(
    file,
    (s) => out.push(s),
    (s) => err.push(s),
  );
  return { code, out, err };
}

function verdict(dir: string, p: RealPair, i: number): Verdict {
  const file = join(dir, `pair-${i}.json`);
  writeFileSync(file, JSON.stringify([p.a, p.b]));
  const { code, out, err } = runMatchCommand(file);
  if (code !== 0) throw new Error(`crossbook match failed on pair ${i}: ${err.join('; ')}`);
  const { groups } = JSON.parse(out.join('\n')) as { groups: { markets: { platform: string; market_id: string | null; inverted: boolean }[] }[] };
  const find = (x: MatchInput, ms: (typeof groups)[number]['markets']) => ms.find((m) => m.platform === x.platform && m.market_id === (x.market_id ?? null));
  for (const g of groups) {
    const ma = find(p.a, g.markets);
    const mb = find(p.b, g.markets);
    if (ma && mb) return ma.inverted === mb.inverted ? 'same' : 'complement';
  }
  return 'apart';
}

/** Counts of predicted `same` against labelled `same`. */
export function tally(rows: readonly Scored[]): Tally {
  const t: Tally = { tp: 0, fp: 0, fn: 0, tn: 0 };
  for (const r of rows) {
    const predicted = r.verdict === 'same';
    t[r.pair.same ? (predicted ? 'tp' : 'fn') : predicted ? 'fp' : 'tn']++;
  }
  return t;
}

export const precision = (t: Tally): number => (t.tp + t.fp === 0 ? 1 : t.tp / (t.tp + t.fp));
export const recall = (t: Tally): number => (t.tp + t.fn === 0 ? 1 : t.tp / (t.tp + t.fn));

function line(name: string, t: Tally): string {
  const f = (x: number): string => x.toFixed(3);
  return `  ${name.padEnd(28)} precision ${f(precision(t))}  recall ${f(recall(t))}  (tp ${t.tp}, fp ${t.fp}, fn ${t.fn}, tn ${t.tn})`;
}

function groupBy(rows: readonly Scored[], key: (r: Scored) => string): [string, Scored[]][] {
  const m = new Map<string, Scored[]>();
  for (const r of rows) {
    const k = key(r);
    const l = m.get(k);
    if (l) l.push(r);
    else m.set(k, [r]);
  }
  return [...m].sort((x, y) => x[0].localeCompare(y[0]));
}

/** The report of one set: overall, per split, per category, and per labelled relation with what match and relate said. */
export function formatReport(name: string, rows: readonly Scored[]): string {
  const out = [`${name}: ${rows.length} pairs`, line('all', tally(rows))];
  for (const [s, rs] of groupBy(rows, (r) => r.split)) out.push(line(`split ${s}`, tally(rs)));
  out.push(' per category');
  for (const [c, rs] of groupBy(rows, (r) => r.pair.category)) out.push(line(c, tally(rs)));
  out.push(' per labelled relation: crossbook match (same / complement / apart), relate (its relations)');
  for (const [l, rs] of groupBy(rows, (r) => r.label)) {
    const n = (v: Verdict): number => rs.filter((r) => r.verdict === v).length;
    const rel = groupBy(rs, (r) => r.relation)
      .map(([k, x]) => `${k} ${x.length}`)
      .join(', ');
    out.push(`  ${l.padEnd(28)} ${String(rs.length).padStart(3)} pairs: same ${n('same')}, complement ${n('complement')}, apart ${n('apart')}; relate: ${rel}`);
  }
  const wrong = rows.filter((r) => (r.verdict === 'same') !== r.pair.same || (r.label === 'inverted' && r.verdict === 'same'));
  if (wrong.length > 0) out.push(` misses: ${wrong.map((r) => `#${r.index} (${r.split}, ${r.label}, ${r.verdict})`).join(', ')}`);
  return out.join('\n');
}
