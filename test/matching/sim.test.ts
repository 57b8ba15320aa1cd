/**
 * SYNTHETIC DATA: the simulator's seeded world (src/sim/world.ts), whose listings carry the
 * proposition they were phrased from. The matcher never sees that truth; the test checks the
 * groups against it. (Real-title quality is measured on dev-pairs.json; this guards the whole
 * pipeline over eight venues' phrasings at once.)
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Matcher, type MatcherInput } from '../../src/matching/matcher.js';
import { createWorld } from '../../src/sim/world.js';
import type { SimListing } from '../../src/sim/types.js';
import { matcherInput } from '../support/listings.js';

const venues = loadConfig({ env: {} }).venues;

function build(seed: number): { m: Matcher; byKey: Map<string, SimListing>; inputs: MatcherInput[] } {
  const world = createWorld({ seed, venues, scale: 1, depth: 1, now: () => Date.UTC(2026, 0, 10, 12) });
  const m = new Matcher();
  const byKey = new Map<string, SimListing>();
  const inputs: MatcherInput[] = [];
  for (const v of venues)
    for (const l of world.listings(v.label)) {
      const key = `${v.label}:${l.id}`;
      byKey.set(key, l);
      inputs.push(matcherInput(v, l));
    }
  for (const x of inputs) m.upsert(x);
  return { m, byKey, inputs };
}

/** The two sides of one game that cannot be drawn: each the other's complement. */
function sides(a: SimListing, b: SimListing): boolean {
  const p = a.prop;
  const q = b.prop;
  return (
    p !== q &&
    p.event === q.event &&
    p.marketType === 'moneyline' &&
    q.marketType === 'moneyline' &&
    p.period === q.period &&
    p.side !== q.side &&
    p.side !== null &&
    q.side !== null
  );
}

describe('matcher against the simulator world\u2019s ground truth (synthetic)', () => {
  it.each([3, 7])('seed %i: every grouped pair is the same proposition on the right side', (seed) => {
    const { m, byKey } = build(seed);
    let pairs = 0;
    const wrong: string[] = [];
    for (const g of m.groups()) {
      for (let i = 0; i < g.members.length; i++)
        for (let j = i + 1; j < g.members.length; j++) {
          const x = g.members[i]!;
          const y = g.members[j]!;
          const a = byKey.get(x.key)!;
          const b = byKey.get(y.key)!;
          pairs++;
          const predictedSame = x.inverted === y.inverted;
          const ok = a.prop === b.prop ? predictedSame === (a.inverted === b.inverted) : sides(a, b) && predictedSame === (a.inverted !== b.inverted);
          if (!ok) wrong.push(`${a.title} | ${b.title}`);
        }
    }
    expect(wrong).toEqual([]);
    expect(pairs).toBeGreaterThan(1000);
  });

  it('finds most cross-venue listings of one proposition', () => {
    const { m, byKey } = build(3);
    const byProp = new Map<unknown, string[]>();
    for (const [k, l] of byKey) byProp.set(l.prop, [...(byProp.get(l.prop) ?? []), k]);
    let truth = 0;
    let found = 0;
    for (const keys of byProp.values())
      for (let i = 0; i < keys.length; i++)
        for (let j = i + 1; j < keys.length; j++) {
          const a = byKey.get(keys[i]!)!;
          const b = byKey.get(keys[j]!)!;
          if (a.venue === b.venue || a.inverted !== b.inverted) continue;
          truth++;
          const ga = m.groupOf(keys[i]!)!;
          const gb = m.groupOf(keys[j]!)!;
          const sa = ga.members.find((x) => x.key === keys[i])!.inverted;
          const sb = gb.members.find((x) => x.key === keys[j])!.inverted;
          if (ga.group_id === gb.group_id && sa === sb) found++;
        }
    // Polymarket's daily crypto titles state no clock time, so they stay apart from the 5 pm ET
    // ones on purpose; most of the rest is found.
    expect(found / truth).toBeGreaterThan(0.85);
  });

  it('re-groups one changed listing with a handful of comparisons', () => {
    const { m, inputs } = build(3);
    const target = inputs.find((x) => x.platform === 'venue_b' && /^Spread:/.test(x.title))!;
    const before = m.stats().comparisons;
    const groupsBefore = new Map(m.groups().map((g) => [g.group_id, g.members.map((x) => x.key).join()]));
    m.upsert({ ...target, title: target.title.replace(/\((.)(\d+)\.5\)/, (_s, sign: string, n: string) => `(${sign}${Number(n) + 1}.5)`) });
    expect(m.stats().comparisons - before).toBeLessThan(50);
    // Only the groups the listing left or joined changed.
    let changed = 0;
    for (const g of m.groups()) if (groupsBefore.get(g.group_id) !== g.members.map((x) => x.key).join()) changed++;
    expect(changed).toBeLessThanOrEqual(2);
  });
});
