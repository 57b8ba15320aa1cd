/**
 * Measures the matcher on labelled pairs (test/fixtures/matching/dev-pairs.json format): a pair is
 * predicted "same" when the matcher, given just the two listings, puts them in one group on the
 * same side (neither inverted against the other). Inverted pairs, different groups and ambiguous
 * pairs count as "not same".
 */
import { Matcher, type MatcherOptions } from '../../src/matching/matcher.js';
import type { MatchInput } from '../../src/matching/proposition/index.js';

/** One labelled pair. */
export interface LabelledPair {
  readonly a: MatchInput;
  readonly b: MatchInput;
  readonly same: boolean;
  readonly category?: string | undefined;
  readonly note?: string | undefined;
}

/** Counts and rates for a set of pairs. */
export interface PairScores {
  readonly tp: number;
  readonly fp: number;
  readonly fn: number;
  readonly tn: number;
  /** tp / (tp + fp); 1 when nothing was predicted same. */
  readonly precision: number;
  /** tp / (tp + fn); 1 when there are no positives. */
  readonly recall: number;
}

/** One pair's outcome, for diagnostics. */
export interface PairResult {
  readonly index: number;
  readonly category: string;
  readonly same: boolean;
  readonly predicted: boolean;
  /** Same group but on opposite sides. */
  readonly inverted: boolean;
  readonly confidence: number | null;
  readonly reasons: readonly string[];
}

export interface Evaluation extends PairScores {
  readonly perCategory: Readonly<Record<string, PairScores>>;
  readonly results: readonly PairResult[];
}

function scores(rs: readonly PairResult[]): PairScores {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  let tn = 0;
  for (const r of rs) {
    if (r.predicted && r.same) tp++;
    else if (r.predicted) fp++;
    else if (r.same) fn++;
    else tn++;
  }
  return { tp, fp, fn, tn, precision: tp + fp === 0 ? 1 : tp / (tp + fp), recall: tp + fn === 0 ? 1 : tp / (tp + fn) };
}

/** Runs every pair through a fresh matcher and scores the predictions, overall and per category. */
export function evaluatePairs(pairs: readonly LabelledPair[], opts: MatcherOptions = {}): Evaluation {
  const results: PairResult[] = pairs.map((p, index) => {
    const m = new Matcher(opts);
    m.upsert({ ...p.a, key: 'a' });
    m.upsert({ ...p.b, key: 'b' });
    const ga = m.groupOf('a');
    const gb = m.groupOf('b');
    const together = ga !== undefined && gb !== undefined && ga.group_id === gb.group_id;
    const ma = ga?.members.find((x) => x.key === 'a');
    const mb = gb?.members.find((x) => x.key === 'b');
    const sameSide = together && ma !== undefined && mb !== undefined && ma.inverted === mb.inverted;
    return {
      index,
      category: p.category ?? 'uncategorised',
      same: p.same,
      predicted: sameSide,
      inverted: together && !sameSide,
      confidence: together ? (mb?.confidence ?? null) : null,
      reasons: together ? (mb?.reasons ?? []) : [],
    };
  });
  const byCat = new Map<string, PairResult[]>();
  for (const r of results) {
    const l = byCat.get(r.category);
    if (l) l.push(r);
    else byCat.set(r.category, [r]);
  }
  const perCategory: Record<string, PairScores> = {};
  for (const [c, rs] of [...byCat].sort((x, y) => x[0].localeCompare(y[0]))) perCategory[c] = scores(rs);
  return { ...scores(results), perCategory, results };
}
