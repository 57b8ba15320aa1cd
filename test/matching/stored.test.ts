import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { extractProposition, type MatchInput, type Proposition } from '../../src/matching/proposition/index.js';
import { StoredProposition } from '../../src/matching/stored.js';

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
});
