import { describe, expect, it } from 'vitest';
import { formatReport, loadSet, precision, recall, scoreSet, tally } from '../support/pair-report.js';

/**
 * The team's real Kalshi/Polymarket pairs (test/fixtures/matching/real-pairs.json; provenance in
 * SOURCES.md), each through `crossbook match` (test/support/pair-report.ts): matched when both
 * markets share a group with the same `inverted` flag, a complement when the flags differ.
 */
const rows = scoreSet(loadSet('real-pairs.json'));
console.log(formatReport('real-pairs.json', rows));

describe('real Kalshi/Polymarket pairs scored with crossbook match', () => {
  it('dev split: precision >= 0.98, recall >= 0.90, every labelled complement reported as one', () => {
    const dev = rows.filter((r) => r.split === 'dev');
    const t = tally(dev);
    expect(precision(t)).toBeGreaterThanOrEqual(0.98);
    expect(recall(t)).toBeGreaterThanOrEqual(0.9);
    for (const r of dev) if (r.label === 'inverted') expect(r.verdict, `pair ${r.index}`).toBe('complement');
  });

  it('held-out split (never tuned on): precision >= 0.98, recall >= 0.90, no inversion reported as same', () => {
    const held = rows.filter((r) => r.split === 'heldout');
    const t = tally(held);
    expect(precision(t)).toBeGreaterThanOrEqual(0.98);
    expect(recall(t)).toBeGreaterThanOrEqual(0.9);
    for (const r of held) if (r.label === 'inverted') expect(r.verdict, `pair ${r.index}`).not.toBe('same');
  });
});
