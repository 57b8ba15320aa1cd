import { describe, expect, it } from 'vitest';
import { formatReport, loadSet, precision, recall, scoreSet, tally, type Scored } from '../support/pair-report.js';

/**
 * The independent real set of issue 32 (test/fixtures/matching/independent-pairs.json, provenance in
 * SOURCES-independent-pairs.md): 152 Kalshi/Polymarket/Manifold pairs from sources the matcher was
 * not built on, each through `crossbook match`. Held out: every third row from the third
 * (pair-report.ts `splitOf`).
 */
const rows = scoreSet(loadSet('independent-pairs.json'));
console.log(formatReport('independent-pairs.json', rows));

describe('the independent real pair set through crossbook match', () => {
  for (const split of ['dev', 'heldout'] as const) {
    it(`${split} split: precision >= 0.98, recall >= 0.90`, () => {
      const t = tally(rows.filter((r: Scored) => r.split === split));
      expect(t.tp + t.fp + t.fn + t.tn).toBeGreaterThan(40);
      expect(precision(t)).toBeGreaterThanOrEqual(0.98);
      expect(recall(t)).toBeGreaterThanOrEqual(0.9);
    });
  }

  it('never reports a labelled inversion as the same, and relate never calls one same', () => {
    const inverted = rows.filter((r) => r.label === 'inverted');
    expect(inverted.length).toBe(25);
    for (const r of inverted) {
      expect(r.verdict, `pair ${r.index}`).not.toBe('same');
      expect(r.relation, `pair ${r.index}`).not.toBe('same');
    }
  });

  it('never groups one proposition over two settlement windows (different_date)', () => {
    const dated = rows.filter((r) => r.label === 'different_date');
    expect(dated.length).toBe(14);
    for (const r of dated) expect([r.verdict, r.relation], `pair ${r.index}`).not.toContain('same');
  });

  it('relate agrees with crossbook match on every pair it groups', () => {
    for (const r of rows) {
      if (r.verdict === 'same') expect(r.relation, `pair ${r.index}`).toBe('same');
      if (r.verdict === 'complement') expect(r.relation, `pair ${r.index}`).toBe('inverted');
    }
  });
});
