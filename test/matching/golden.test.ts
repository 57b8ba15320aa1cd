/**
 * SYNTHETIC DATA: golden digests of the matcher's output on the simulator's seeded world
 * (src/sim/world.ts). Every group (singletons included) with its described fields and each
 * member's orientation, confidence and reasons, every listing's proposition, and the same after
 * a seeded run of changes, removals, re-additions and operator overrides, hashed. A change to the
 * matcher's memory layout must leave every digest as it is; a change to what it groups or how it
 * explains a group must update them on purpose (run with GOLDEN_PRINT=1 to print the new ones).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Matcher, type MatcherInput } from '../../src/matching/matcher.js';
import type { Override } from '../../src/matching/overrides.js';
import { Rng } from '../../src/sim/rng.js';
import { createWorld } from '../../src/sim/world.js';
import { matcherInput } from '../support/listings.js';

const venues = loadConfig({ env: {} }).venues;

function inputsOf(seed: number): MatcherInput[] {
  const world = createWorld({ seed, venues, scale: 1, depth: 1, now: () => Date.UTC(2026, 0, 10, 12) });
  const out: MatcherInput[] = [];
  for (const v of venues) for (const l of world.listings(v.label)) out.push(matcherInput(v, l));
  const rand = new Rng(seed);
  const r = (): number => rand.next();
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** JSON with object keys sorted, so a digest depends on values, not on the order fields were set in. */
function canonical(x: unknown): string {
  return JSON.stringify(x, (_k, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v,
  );
}

function digest(m: Matcher, keys: readonly string[]): { groups: string; cross: string; props: string } {
  const h = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 16);
  return {
    groups: h(canonical(m.groups())),
    cross: h(canonical(m.crossVenueGroups())),
    props: h(canonical(keys.map((k) => [k, m.propositionOf(k) ?? null, m.groupOf(k)?.group_id ?? null]))),
  };
}

/** Builds the world's groups, then changes, removes and re-adds listings and applies overrides, digesting each stage. */
function run(seed: number): Record<string, { groups: string; cross: string; props: string }> {
  const inputs = inputsOf(seed);
  const keys = inputs.map((x) => x.key);
  const m = new Matcher();
  for (const x of inputs) m.upsert(x);
  const built = digest(m, keys);
  const rand = new Rng(seed + 100);
  const r = (): number => rand.next();
  const pick = (): MatcherInput => inputs[Math.floor(r() * inputs.length)]!;
  // Title edits that move a line or a strike, and event-title edits that change nothing read.
  for (let i = 0; i < 300; i++) {
    const x = pick();
    const title = x.title.replace(/(\d+)(\.5)?/, (_s, n: string, half: string | undefined) => `${Number(n) + 1}${half ?? ''}`);
    m.upsert({ ...x, title, event_title: i % 3 === 0 ? `${x.event_title ?? ''} ` : x.event_title });
  }
  const removed = Array.from({ length: 200 }, pick);
  for (const x of removed) m.remove(x.key);
  const changed = digest(m, keys);
  for (const x of removed) m.upsert(x);
  for (let i = 0; i < 100; i++) m.upsert(pick());
  const readded = digest(m, keys);
  const overrides: Override[] = [];
  for (let i = 0; i < 40; i++)
    overrides.push({ a: pick().key, b: pick().key, action: i % 4 === 0 ? 'unlink' : 'link', inverted: i % 3 === 0, at: '2026-11-24T00:00:00.000Z' });
  for (const g of m.crossVenueGroups().slice(0, 20))
    overrides.push({ a: g.members[0]!.key, b: g.members[1]!.key, action: 'unlink', inverted: false, at: '2026-11-24T00:00:00.000Z' });
  m.setOverrides(overrides);
  const overridden = digest(m, keys);
  m.setOverrides(overrides.slice(10));
  const relaxed = digest(m, keys);
  return { built, changed, readded, overridden, relaxed };
}

const GOLDEN: Record<number, Record<string, { groups: string; cross: string; props: string }>> = {
  3: {
    built: { groups: 'a5751607966dd327', cross: '95e844a8c358068c', props: 'a989e6d6de822591' },
    changed: { groups: '349ee4a1df241856', cross: '28ce21e31dae43d9', props: '5baa6374fada7310' },
    readded: { groups: '6c3fb8b86143a35c', cross: '2739461414d3bd68', props: 'c0f64f4ab230c5ca' },
    overridden: { groups: '1cb8bf4e282281be', cross: '8ad6ff576c84ebde', props: '655702e4495319aa' },
    relaxed: { groups: '55d1a6b89ee706ef', cross: '3593afba60b70084', props: 'b1f1c0ae9e4a8ead' },
  },
  7: {
    built: { groups: '688d9f3cd83d4a47', cross: '8ab997e7e948f6de', props: 'd81dabeb99fa56d5' },
    changed: { groups: 'ff711c80dae14c3e', cross: '33b088105d592590', props: '33665dbbf9f4492e' },
    readded: { groups: 'c85cca831cc7ec12', cross: '4107c36bb886479b', props: '44c805ec197fca11' },
    overridden: { groups: 'b91f5fee9586f26e', cross: '97c50505bc34eec3', props: '44b4357db3bb4875' },
    relaxed: { groups: '03c6efaf9b5cb8d9', cross: '8af99a4cd584f0ce', props: '416ea8e3a34d4e63' },
  },
};

describe('matcher output on a seeded world is unchanged (golden digests, synthetic)', () => {
  it.each([3, 7])('seed %i: groups, explanations and propositions after a build, changes, removals and overrides', (seed) => {
    const got = run(seed);
    if (process.env['GOLDEN_PRINT']) console.log(seed, JSON.stringify(got, null, 2));
    expect(got).toEqual(GOLDEN[seed]);
  });
});
