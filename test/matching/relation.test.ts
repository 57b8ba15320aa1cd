/**
 * Relations beyond groups (issue 32): subset/superset/overlap, settlement windows, and the
 * venue-generated grammar read back into fields. Titles are real (test/fixtures/matching/
 * independent-pairs.json and real-pairs.json); where a rule needs a look-alike the venues did not
 * list (a margin bucket beside a plain win, a known Polymarket window), the variant changes one
 * field of a real title and says so.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Matcher } from '../../src/matching/matcher.js';
import { houseSeat, mayoralCity, partyOf } from '../../src/matching/proposition/grammar.js';
import { extractProposition, type MatchInput } from '../../src/matching/proposition/index.js';
import { relateListings, type PairRelation } from '../../src/matching/relation.js';
import { createWorld } from '../../src/sim/world.js';
import { matcherInput } from '../support/listings.js';

function K(title: string, market_id: string | null, more: Partial<MatchInput> = {}): MatchInput {
  return { platform: 'kalshi', market_id, title, ...more };
}
function P(title: string, more: Partial<MatchInput> = {}): MatchInput {
  return { platform: 'polymarket', market_id: null, title, ...more };
}
const MIRROR: Record<PairRelation, PairRelation> = {
  same: 'same',
  inverted: 'inverted',
  subset: 'superset',
  superset: 'subset',
  overlap: 'overlap',
  different: 'different',
};
/** The relation of a to b, checked against b to a. */
function rel(a: MatchInput, b: MatchInput): PairRelation {
  const r = relateListings(a, b).relation;
  expect(relateListings(b, a).relation).toBe(MIRROR[r]);
  return r;
}

describe('venue-generated grammar', () => {
  it('reads a party from its plural, "(DFL)", article and "party" forms, and nothing else', () => {
    for (const s of ['democratics', 'democratic (dfl)s', 'the democrats', 'democratic party', 'a democrat']) expect(partyOf(s), s).toBe('dem');
    for (const s of ['republican', 'a republican', 'the republican party', 'gop']) expect(partyOf(s), s).toBe('rep');
    expect(partyOf('independents')).toBe('ind');
    expect(partyOf('an independent')).toBe('ind');
    expect(partyOf('dan osborn (as an independent)s')).toBeUndefined();
    expect(partyOf('democratic republican')).toBeUndefined();
  });

  it('reads a House seat from a district code, a House phrase, a possessive ordinal or the Kalshi series', () => {
    expect(houseSeat('will republican win the house race for mi-10?', undefined)).toBe('house_mi10');
    expect(houseSeat('will the republican party win the mi-10 house seat?', undefined)).toBe('house_mi10');
    expect(houseSeat("will a republican win michigan's 10th congressional district?", undefined)).toBe('house_mi10');
    expect(houseSeat('will the democratic party win the va-01 house seat?', undefined)).toBe('house_va1');
    // A code without a House word, or not a state, is not a seat.
    expect(houseSeat('will va-1 pass?', undefined)).toBeUndefined();
    expect(houseSeat('will the house race for xx-3 flip?', undefined)).toBeUndefined();
  });

  it('reads a mayoral city before "mayoral" or after "mayor of"', () => {
    expect(mayoralCity('will karen bass win the 2026 los angeles mayoral election')).toBe('los_angeles');
    expect(mayoralCity('will karen bass be mayor of los angeles in 2026')).toBe('los_angeles');
  });

  it('meets Kalshi generated titles with the Polymarket question (independent-pairs.json rows 14, 23, 29, 15, 129)', () => {
    expect(rel(K('Will Democratics win the Senate race in Montana?', 'SENATEMT-26-D'), P('Will the Democrats win the Montana Senate race in 2026?'))).toBe(
      'same',
    );
    expect(
      rel(K('Will Democratic (DFL)s win the Senate race in Minnesota?', 'SENATEMN-26-D'), P('Will the Democrats win the Minnesota Senate race in 2026?')),
    ).toBe('same');
    expect(rel(K('Will Republican win the House race for MI-10?', 'HOUSEMI10-26-R'), P('Will the Republican Party win the MI-10 House seat?'))).toBe('same');
    expect(rel(K('Will Independents win the Senate race in Montana?', 'SENATEMT-26-IND'), P('Will an Independent win the Montana Senate race in 2026?'))).toBe(
      'same',
    );
    const bass = K('Who will win Los Angeles Mayoral Election?', 'KXMAYORLA-26-KBAS', {
      event_title: 'Who will win Los Angeles Mayoral Election?',
      outcome: 'Karen Bass',
    });
    expect(rel(bass, P('Will Karen Bass win the 2026 Los Angeles mayoral election?'))).toBe('same');
    expect(rel(bass, P('Will Rick Caruso win the 2026 Los Angeles mayoral election?'))).toBe('different');
  });

  it("reads a House race's cycle from the close when no year is stated, so two cycles of one seat stay apart (the 2028 close is a variant of row 29's)", () => {
    const kalshi = K('Will Republican win the House race for MI-10?', 'HOUSEMI10-26-R', { close_time: '2027-11-03T15:00:00Z' });
    expect(extractProposition(P('Will the Republican Party win the MI-10 House seat?', { close_time: '2026-11-04T04:59:00Z' })).year).toBe(2026);
    expect(extractProposition(K('Will Republican win the House race for MI-10?', null, { close_time: '2027-11-03T15:00:00Z' })).year).toBe(2026);
    expect(rel(kalshi, P('Will the Republican Party win the MI-10 House seat?', { close_time: '2026-11-04T04:59:00Z' }))).toBe('same');
    expect(rel(kalshi, P('Will the Republican Party win the MI-10 House seat?', { close_time: '2028-11-08T04:59:00Z' }))).toBe('different');
    expect(rel(kalshi, P("Will the Republicans win Michigan's 10th congressional district in 2026?"))).toBe('same');
  });

  it('keeps neighbouring seats, another office and the two parties of one race apart; the parties are rivals, not complements', () => {
    expect(rel(K('Will Democratic win the House race for VA-1?', 'HOUSEVA1-26-D'), P('Will the Democratic Party win the VA-02 House seat?'))).toBe('different');
    expect(rel(K('Will Republican win the House race for MI-10?', 'HOUSEMI10-26-R'), P('Will the Republicans win the Michigan Senate race in 2026?'))).toBe(
      'different',
    );
    const r = relateListings(
      K('Will the Democratic party win the governorship in Alabama', 'GOVPARTYAL-26-D'),
      P('Will the Republicans win the Alabama governor race in 2026?'),
    );
    expect(r.relation).toBe('different');
    expect(r.reasons.join(' ')).toMatch(/not complements/);
  });
});

describe('settlement windows are part of the proposition', () => {
  const kalshi = K('Will Trump next nominate Kevin Warsh as Fed Chair?', 'KXFEDCHAIRNOM-29-KW', {
    event_title: 'Who will Trump nominate as Fed Chair?',
    close_time: '2029-01-20T15:00:00Z',
  });

  it('a known window never meets an unknown one, and the reasons say why (independent-pairs.json row 117)', () => {
    const r = relateListings(kalshi, P('Will Trump nominate Kevin Warsh as the next Fed chair?', { event_title: 'Who will Trump nominate as Fed Chair?' }));
    expect(r.relation).toBe('different');
    expect(r.reasons.join(' ')).toMatch(/settlement window known on one side only .*no risk-free arbitrage/);
  });

  it('two known windows: the earlier deadline is a subset of the later (Polymarket close set to its 2026-12-31 rule deadline)', () => {
    const poly = P('Will Trump nominate Kevin Warsh as the next Fed chair?', { close_time: '2026-12-31T23:59:00Z' });
    expect(rel(poly, kalshi)).toBe('subset');
    expect(relateListings(poly, kalshi).reasons.join(' ')).toMatch(/settlement windows differ \(by 2026-12-31 against by 2029-01-20\)/);
    // …and windows within the venues' usual spread still meet.
    expect(rel(P('Will Trump nominate Kevin Warsh as the next Fed chair?', { close_time: '2029-01-19T23:00:00Z' }), kalshi)).toBe('same');
  });

  it('a title deadline ("before Jan 1, 2029", "in 2025") is the window', () => {
    const p = extractProposition(P('Will Trump announce Kevin Warsh as next Fed Chair in 2025?'));
    expect([p.date, p.dateSource]).toEqual(['2025-12-31', 'title']);
  });
});

describe('subset, superset and overlap', () => {
  it('nests thresholds of one indicator and month (real-pairs.json row 59)', () => {
    const above = K('Will the unemployment rate (U-3) be above 4.6% in February?', 'KXU3-26FEB-T4.6', { close_time: '2026-03-06T13:25:00Z' });
    expect(rel(above, P('Will the February 2026 unemployment rate be ≥4.6%?'))).toBe('subset');
  });

  it('nests a higher strike of a "reach by" ladder in a lower one, and keeps a "dip to" apart', () => {
    const high = K('Will Bitcoin be above $139,999.99 by Dec 31, 2026 at 11:59 PM ET?', 'KXBTCMAXY-26DEC31-139999.99');
    expect(rel(high, P('Will Bitcoin reach $130,000 by December 31, 2026?'))).toBe('subset');
    expect(rel(high, P('Will Bitcoin reach $140,000 by December 31, 2026?'))).toBe('same');
    expect(rel(high, P('Will Bitcoin dip to $45,000 by December 31, 2026?'))).toBe('different');
  });

  it('puts a margin bucket inside the win, and overlapping buckets as overlap (bucket titles: a real Polymarket question with a margin added)', () => {
    const win = P('Will Gavin Newsom win the 2028 US Presidential Election?');
    const bucket = P('Will Gavin Newsom win the 2028 US Presidential Election by 0–3%?');
    expect(rel(bucket, win)).toBe('subset');
    expect(rel(bucket, P('Will Gavin Newsom win the 2028 US Presidential Election by 2–5%?'))).toBe('overlap');
    expect(rel(bucket, P('Will Gavin Newsom win the 2028 US Presidential Election by 5–10%?'))).toBe('different');
    expect(rel(bucket, P('Will JD Vance win the 2028 US Presidential Election?'))).toBe('different');
  });
});

describe('Matcher.related on the simulator world (SYNTHETIC)', () => {
  it('lists a higher strike of a Kalshi yearly-high as a superset of its YES and its group-mates as same', () => {
    const venues = loadConfig({ env: {} }).venues;
    const world = createWorld({ seed: 7, venues, scale: 1, depth: 1, now: () => Date.UTC(2026, 0, 10, 12) });
    const m = new Matcher();
    for (const v of venues) for (const l of world.listings(v.label)) m.upsert(matcherInput(v, l));
    const key = 'venue_a:KXBTCMAXY-26DEC31-114999.99';
    const related = m.related(key)!;
    const group = m.groupOf(key)!;
    expect(related.length).toBeGreaterThan(0);
    for (const r of related) {
      expect(r.key).not.toBe(key);
      expect(group.members.some((x) => x.key === r.key)).toBe(r.relation === 'same');
    }
    // "above $114,999.99 by Dec 31" is implied by "reach $140,000 by Dec 31": the asked YES is a superset.
    const wider = related.filter((r) => r.relation === 'superset');
    expect(wider.map((r) => r.platform).sort()).toEqual(['venue_b', 'venue_d']);
    for (const r of wider) expect(r.reasons.join(' ')).toMatch(/threshold > 114999.99 against >= 140000/);
    expect(m.related('venue_a:nope')).toBeUndefined();
  });
});
