import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { extractProposition, type MatchInput, type Proposition } from '../../src/matching/proposition/index.js';
import { StoredProposition } from '../../src/matching/stored.js';
import { loadConfig } from '../../src/config/load.js';
import { createWorld } from '../../src/sim/world.js';
import { matcherInput } from '../support/listings.js';

interface Pair {
  readonly a: MatchInput;
  readonly b: MatchInput;
}
const PAIRS = JSON.parse(readFileSync(new URL('../fixtures/matching/dev-pairs.json', import.meta.url), 'utf8')) as Pair[];
const PROPS: Proposition[] = PAIRS.flatMap((p) => [extractProposition(p.a), extractProposition(p.b)]);

/** Every field of a proposition read through its accessors, as a plain object. */
function read(p: Proposition): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const k of Object.keys(PROPS[0]!)) o[k] = (p as unknown as Record<string, unknown>)[k];
  return o;
}

describe('the matcher’s stored propositions', () => {
  it('read and give back every field of the extracted proposition, in its order', () => {
    expect(new Set(PROPS.map((p) => p.kind)).size).toBeGreaterThan(5);
    for (const p of PROPS) {
      const s = StoredProposition.of(p);
      expect(read(s)).toEqual(p);
      expect(Object.keys(s.plain())).toEqual(Object.keys(p));
      expect(s.plain()).toEqual(p);
    }
  });

  it('fill in a game without touching the proposition they came from', () => {
    const p = PROPS.find((x) => x.teams.length === 2 && x.date !== null)!;
    const s = StoredProposition.of(p);
    const w = s.withGame(['NFL:AAA', 'NFL:BBB'], '2030-01-02', 'title');
    expect(w.plain()).toEqual({ ...p, teams: ['NFL:AAA', 'NFL:BBB'], date: '2030-01-02', dateSource: 'title' });
    expect(s.plain()).toEqual(p);
  });

  // The signature is not kept but built again from the fields (SYNTHETIC DATA: the simulator's listings, every kind it phrases).
  it('give the signature extraction gave, for every kind of listing, and a view with a group’s game keeps it', () => {
    const venues = loadConfig({ env: {} }).venues;
    const world = createWorld({ seed: 3, venues, scale: 1, depth: 1, now: () => Date.UTC(2026, 0, 10, 12) });
    const props = venues.flatMap((v) => world.listings(v.label).map((l) => extractProposition(matcherInput(v, l))));
    expect(new Set(props.map((p) => p.kind)).size).toBeGreaterThan(8);
    let views = 0;
    for (const p of props) {
      const s = StoredProposition.of(p);
      expect(s.signature).toBe(p.signature);
      const other = s.teams.length === 2 ? ['XXX:ONE', 'XXX:TWO'] : s.teams;
      const w = s.withGame(other, s.date === null ? '2031-05-06' : s.date, 'title');
      if (w.teams !== s.teams || w.date !== s.date) views++;
      expect(w.signature).toBe(p.signature);
      expect(w.plain().signature).toBe(p.signature);
    }
    expect(views).toBeGreaterThan(100);
  });

  it('refuse a proposition whose signature is not its fields’', () => {
    const p = PROPS[0]!;
    expect(() => StoredProposition.of({ ...p, signature: `${p.signature}|x` })).toThrow(/not its fields/);
  });
});
