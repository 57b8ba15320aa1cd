import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compare } from '../../src/matching/compare.js';
import { extractProposition, type MatchInput } from '../../src/matching/proposition/index.js';

interface Pair {
  readonly a: MatchInput;
  readonly b: MatchInput;
  readonly same: boolean;
  readonly note: string;
}
const PAIRS = JSON.parse(readFileSync(new URL('../fixtures/matching/dev-pairs.json', import.meta.url), 'utf8')) as Pair[];

function cmp(a: MatchInput, b: MatchInput): ReturnType<typeof compare> {
  return compare(extractProposition(a), extractProposition(b));
}

describe('contradictions in real pairs are never "same" (dev-pairs.json)', () => {
  // [pair index, the field that must contradict]
  const cases: [number, string, string][] = [
    [6, 'subject', 'different candidate (Ossoff vs Talarico)'],
    [7, 'subject', 'different candidate (Gallego vs Khanna)'],
    [10, 'subject', 'different candidate (Caiado vs Leite)'],
    [14, 'month', 'different meeting (September vs April)'],
    [13, 'threshold', 'no change vs +25 bp'],
    [15, 'threshold', 'above 2.4% vs exactly 2.4%'],
    [16, 'threshold', 'above 4.7% (>) vs ≥4.7% (>=)'],
    [19, 'threshold', '$140k vs $130k'],
    [20, 'threshold', '$50k vs $45k'],
    [21, 'threshold', 'ticker strike 2039.99 vs 2,035'],
    [26, 'subject', 'Sweden vs Norway'],
    [27, 'kind', 'reach the semifinals vs win the World Cup'],
    [28, 'kind', 'group winner vs tournament winner'],
    [33, 'period', 'full game vs first-half moneyline'],
    [36, 'kind', 'moneyline vs total'],
    [38, 'stat', 'receptions vs receiving yards'],
    [39, 'mode', 'IPO first vs IPO by a date'],
    [8, 'kind', 'Musk party contests vs Musk nominated'],
  ];
  it.each(cases)('pair %i: %s (%s)', (i, field) => {
    const p = PAIRS[i]!;
    expect(p.same).toBe(false);
    const c = cmp(p.a, p.b);
    expect(c.relation).toBe('different');
    expect(c.conflict).toBe(field);
    // Symmetric.
    expect(cmp(p.b, p.a).relation).toBe('different');
  });
});

describe('equivalent phrasings are "same" with their reasons (dev-pairs.json)', () => {
  it('7+ receptions = Receptions O/U 6.5 (Over), the missing game day costing confidence', () => {
    const c = cmp(PAIRS[37]!.a, PAIRS[37]!.b);
    expect(c).toEqual({ relation: 'same', confidence: 0.85, reasons: ['kind', 'period', 'player', 'stat', 'line'], conflict: null });
  });
  it('above $139,999.99 by Dec 31 = reach $140,000 by December 31', () => {
    expect(cmp(PAIRS[17]!.a, PAIRS[17]!.b)).toEqual({
      relation: 'same',
      confidence: 1,
      reasons: ['kind', 'asset', 'mode', 'date', 'threshold'],
      conflict: null,
    });
  });
  it('below $45,000 by Jan 1 12:00am = dip to $45,000 by December 31', () => {
    expect(cmp(PAIRS[18]!.a, PAIRS[18]!.b).relation).toBe('same');
  });
  it('Hike 0bps = no change', () => {
    expect(cmp(PAIRS[12]!.a, PAIRS[12]!.b).relation).toBe('same');
  });
  it('Kalshi city = Polymarket nickname, same side of one game', () => {
    expect(cmp(PAIRS[29]!.a, PAIRS[29]!.b)).toEqual({
      relation: 'same',
      confidence: 1,
      reasons: ['kind', 'league', 'period', 'date', 'teams', 'team'],
      conflict: null,
    });
  });
});

describe('inversions are detected, not paired as equal', () => {
  it('Seattle wins by over 2.5 vs Spread: Patriots (+2.5) is the complement (dev pair 35)', () => {
    const c = cmp(PAIRS[35]!.a, PAIRS[35]!.b);
    expect(c.relation).toBe('inverted');
    expect(c.reasons).toContain('line');
  });
  it('Over vs Under of one total line', () => {
    const over = { platform: 'polymarket', market_id: null, title: 'Patriots vs. Seahawks: O/U 44.5', outcome: 'Over' };
    expect(cmp(over, { ...over, platform: 'venue_e', outcome: 'Under' }).relation).toBe('inverted');
    expect(cmp(over, { ...over, platform: 'venue_e', title: 'Patriots vs. Seahawks: O/U 45.5' }).relation).toBe('different');
  });
  it('the two sides of a game that cannot be drawn', () => {
    const ne = PAIRS[32]!.a; // Kalshi NE side of KXNFLGAME-26SEP09NESEA
    const sea = { ...ne, market_id: 'KXNFLGAME-26SEP09NESEA-SEA', outcome: 'Seattle' };
    expect(cmp(ne, sea).relation).toBe('inverted');
    expect(cmp(sea, PAIRS[32]!.b).relation).toBe('inverted'); // Polymarket "Patriots vs. Seahawks", outcome Patriots
  });
  it('but not the two sides of a soccer game (a draw is neither)', () => {
    const ars = { platform: 'kalshi', market_id: 'KXEPLGAME-26JAN11ARSCHE-ARS', title: 'Arsenal vs Chelsea Winner?', outcome: 'Arsenal' };
    const che = { ...ars, market_id: 'KXEPLGAME-26JAN11ARSCHE-CHE', outcome: 'Chelsea' };
    expect(cmp(ars, che)).toMatchObject({ relation: 'different', conflict: 'team' });
  });
  it('a No outcome inverts any statement', () => {
    const p = PAIRS[22]!;
    expect(cmp(p.a, { ...p.b, outcome: 'No' }).relation).toBe('inverted');
  });
  it('a whole-number spread is not complemented by the other side (a push refunds both)', () => {
    const fav = { platform: 'polymarket', market_id: null, title: 'Spread: Seahawks (-3)', event_title: 'Patriots vs. Seahawks', outcome: 'Seahawks' };
    const dog = { ...fav, platform: 'venue_e', title: 'Spread: Patriots (+3)', outcome: 'Patriots' };
    expect(cmp(fav, dog).relation).toBe('different');
  });
});

describe('thresholds compare on the quantity\u2019s own grid', () => {
  const cpi = (title: string, extra: Partial<MatchInput> = {}): MatchInput => ({
    platform: 'polymarket',
    market_id: null,
    title,
    close_time: '2026-01-13T00:00:00Z',
    ...extra,
  });
  it('above 2.9% = ≥3.0% for a rate reported to one decimal', () => {
    const k = {
      platform: 'kalshi',
      market_id: 'KXCPIYOY-25DEC-T2.9',
      title: 'Will the rate of CPI inflation be above 2.9% for the year ending in December 2025?',
    };
    expect(cmp(k, cpi('Will annual inflation increase by ≥3.0% in December?')).relation).toBe('same');
    expect(cmp(k, cpi('Will annual inflation increase by ≥2.9% in December?')).relation).toBe('different');
  });
  it('a Fed cut of more than 25 bp = a cut of 50+ bp (the Fed moves in quarter points)', () => {
    const k = { platform: 'kalshi', market_id: 'KXFEDDECISION-26MAR-C26', title: 'Will the Federal Reserve Cut rates by >25bps at their March 2026 meeting?' };
    expect(cmp(k, cpi('Will the Fed decrease interest rates by 50+ bps after the March 2026 meeting?')).relation).toBe('same');
    expect(cmp(k, cpi('Will the Fed decrease interest rates by 25 bps after the March 2026 meeting?')).relation).toBe('different');
  });
  it('a point-in-time price needs the same clock time', () => {
    const k = { platform: 'kalshi', market_id: 'KXBTCD-26JAN1017-T99999.99', title: 'Bitcoin price on Jan 10, 2026 at 5pm EST?', outcome: '$100,000 or above' };
    expect(cmp(k, { platform: 'venue_f', market_id: 'F-1', title: 'Bitcoin above $100,000 on 2026-01-10 22:00 UTC' }).relation).toBe('same');
    expect(cmp(k, cpi('Bitcoin above 100,000 on January 10?')).relation).toBe('different');
  });
});
