import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { matchCommand } from '../../src/cli/match.js';
import type { MatchInput } from '../../src/matching/proposition/index.js';

/** One labelled real pair (test/fixtures/matching/real-pairs.json; provenance in SOURCES.md). */
interface RealPair {
  readonly a: MatchInput;
  readonly b: MatchInput;
  readonly same: boolean;
  readonly category: string;
  readonly split: 'dev' | 'heldout';
}

type Verdict = 'same' | 'complement' | 'apart';

const PAIRS = JSON.parse(readFileSync(new URL('../fixtures/matching/real-pairs.json', import.meta.url), 'utf8')) as RealPair[];
const dir = mkdtempSync(join(tmpdir(), 'crossbook-real-pairs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What `crossbook match` says of a pair: one group with the same `inverted` flag, a complement, or apart. */
function verdict(p: RealPair, i: number): Verdict {
  const file = join(dir, `pair-${i}.json`);
  writeFileSync(file, JSON.stringify([p.a, p.b]));
  const out: string[] = [];
  const err: string[] = [];
  expect(
    matchCommand(
      file,
      (s) => out.push(s),
      (s) => err.push(s),
    ),
  ).toBe(0);
  expect(err).toEqual([]);
  const { groups } = JSON.parse(out.join('\n')) as { groups: { markets: { platform: string; market_id: string | null; inverted: boolean }[] }[] };
  const find = (x: MatchInput, ms: (typeof groups)[number]['markets']) => ms.find((m) => m.platform === x.platform && m.market_id === x.market_id);
  for (const g of groups) {
    const ma = find(p.a, g.markets);
    const mb = find(p.b, g.markets);
    if (ma && mb) return ma.inverted === mb.inverted ? 'same' : 'complement';
  }
  return 'apart';
}

interface Tally {
  tp: number;
  fp: number;
  fn: number;
  tn: number;
}

function score(split: RealPair['split']): { all: Tally; perCategory: Map<string, Tally>; verdicts: Verdict[]; pairs: RealPair[] } {
  const pairs = PAIRS.filter((p) => p.split === split);
  const all: Tally = { tp: 0, fp: 0, fn: 0, tn: 0 };
  const perCategory = new Map<string, Tally>();
  const verdicts = pairs.map((p, i) => verdict(p, i));
  pairs.forEach((p, i) => {
    const c = perCategory.get(p.category) ?? { tp: 0, fp: 0, fn: 0, tn: 0 };
    perCategory.set(p.category, c);
    const k: keyof Tally = p.same ? (verdicts[i] === 'same' ? 'tp' : 'fn') : verdicts[i] === 'same' ? 'fp' : 'tn';
    c[k]++;
    all[k]++;
  });
  const pct = (n: number, d: number): string => (d === 0 ? '  n/a' : `${((100 * n) / d).toFixed(1)}%`);
  const line = (name: string, t: Tally): string =>
    `  ${name.padEnd(26)} precision ${pct(t.tp, t.tp + t.fp).padStart(6)}  recall ${pct(t.tp, t.tp + t.fn).padStart(6)}  (tp ${t.tp}, fp ${t.fp}, fn ${t.fn}, tn ${t.tn})`;
  console.log([`${split} (${pairs.length} pairs)`, line('all', all), ...[...perCategory].sort().map(([c, t]) => line(c, t))].join('\n'));
  return { all, perCategory, verdicts, pairs };
}

describe('real Kalshi/Polymarket pairs scored with crossbook match', () => {
  it('dev split: precision >= 0.98, recall >= 0.90, every labelled complement reported as one', () => {
    const { all, verdicts, pairs } = score('dev');
    expect(all.tp / (all.tp + all.fp)).toBeGreaterThanOrEqual(0.98);
    expect(all.tp / (all.tp + all.fn)).toBeGreaterThanOrEqual(0.9);
    pairs.forEach((p, i) => {
      if (p.category.endsWith('_inverted')) expect(verdicts[i], `pair ${i}`).toBe('complement');
    });
  });

  it('held-out split (never tuned on): precision >= 0.98, recall >= 0.90, no inversion reported as same', () => {
    const { all, verdicts, pairs } = score('heldout');
    expect(all.tp / (all.tp + all.fp)).toBeGreaterThanOrEqual(0.98);
    expect(all.tp / (all.tp + all.fn)).toBeGreaterThanOrEqual(0.9);
    pairs.forEach((p, i) => {
      if (p.category.endsWith('_inverted')) expect(verdicts[i], `pair ${i}`).not.toBe('same');
    });
  });
});
