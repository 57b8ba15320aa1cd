/**
 * The failure classes of issue 17, one block each, on real listing titles (sources in
 * test/fixtures/matching/SOURCES.md). Where a rule needs a look-alike the venues did not list (the
 * same strike for two countries, a first-round pair in one wording), the variant changes exactly
 * one field of a real title and says so.
 */
import { describe, expect, it } from 'vitest';
import { compare, type Relation } from '../../src/matching/compare.js';
import { extractProposition, type MatchInput } from '../../src/matching/proposition/index.js';

function K(title: string, market_id: string | null, more: Partial<MatchInput> = {}): MatchInput {
  return { platform: 'kalshi', market_id, title, ...more };
}
function P(title: string, more: Partial<MatchInput> = {}): MatchInput {
  return { platform: 'polymarket', market_id: null, title, ...more };
}
function rel(a: MatchInput, b: MatchInput): Relation {
  const r = compare(extractProposition(a), extractProposition(b)).relation;
  expect(compare(extractProposition(b), extractProposition(a)).relation).toBe(r);
  return r;
}
function conflict(a: MatchInput, b: MatchInput): string | null {
  return compare(extractProposition(a), extractProposition(b)).conflict;
}

describe('the country of an indicator is a field that must agree', () => {
  it('reads the country named in the title; an unnamed or US indicator is the US (null)', () => {
    expect(extractProposition(K('Japan unemployment rate in Feb 2026?', 'KXUE-JPN26FEB-2.1')).jurisdiction).toBe('jp');
    expect(extractProposition(K('Will inflation in Brazil be below 5.50% in Dec 2025?', 'KXBRAZILINF-25DEC-5.50')).jurisdiction).toBe('br');
    expect(extractProposition(P('Will Canada’s February 2026 unemployment rate be 6.7%?')).jurisdiction).toBe('ca');
    expect(extractProposition(P('Will US GDP growth in Q1 2026 be greater than 3.5%?')).jurisdiction).toBeNull();
    expect(extractProposition(K('Will the unemployment rate (U-3) be above 4.5% in February?', 'KXU3-26FEB-T4.5')).jurisdiction).toBeNull();
  });

  it('keeps one country’s indicator from another’s at the same month and strike (strike of the US title set to Japan’s)', () => {
    const japan = K('Japan unemployment rate in Feb 2026?', 'KXUE-JPN26FEB-2.1');
    const us = K('Will the unemployment rate (U-3) be above 2.1% in February?', 'KXU3-26FEB-T2.1', { close_time: '2026-03-06T13:25:00Z' });
    expect(rel(japan, us)).toBe('different');
    expect(conflict(japan, us)).toBe('jurisdiction');
  });

  it('joins the same country across wordings, and the US across "US GDP" and "real GDP"', () => {
    expect(
      rel(K('Will inflation in Brazil be below 5.50% in Dec 2025?', 'KXBRAZILINF-25DEC-5.50'), P('Brazil’s 12-month inflation below 5.50% for December 2025?')),
    ).toBe('same');
    expect(rel(K('Will real GDP increase by more than 3.5% in Q1 2026?', 'KXGDP-26APR30-T3P5'), P('Will US GDP growth in Q1 2026 be greater than 3.5%?'))).toBe(
      'same',
    );
    expect(rel(K('Will real GDP increase by more than 3.5% in Q1 2026?', 'KXGDP-26APR30-T3P5'), P('Will China GDP growth in Q1 2026 be above 3.5%?'))).toBe(
      'different',
    );
  });
});

describe('"next X": scope and deadline must agree when the title is the only evidence', () => {
  const kalshi = K('Who will succeed Netanyahu as Prime Minister of Israel?', 'KXNEXTISRAELPM-45JAN01-YGAL', {
    outcome: 'Yoav Gallant',
    close_time: '2045-01-01T00:00:00Z',
  });

  it('reads "succeed" and "next" as the next holder, with the close day (else the dated ticker) as deadline', () => {
    const p = extractProposition(kalshi);
    expect([p.kind, p.office, p.mode, p.date, p.year]).toEqual(['election_winner', 'pm_il', 'next', '2044-12-31', null]);
    const noClose = extractProposition(
      K('Who will succeed Netanyahu as Prime Minister of Israel?', 'KXNEXTISRAELPM-45JAN01-YGAL', { outcome: 'Yoav Gallant' }),
    );
    expect([noClose.date, noClose.dateSource]).toEqual(['2045-01-01', 'ticker']);
  });

  it('keeps identical questions apart when one runs to 2045 and the other ends with 2026', () => {
    const poly = P('Will Yoav Gallant be the next Prime Minister of Israel?', { close_time: '2026-12-31T23:59:00Z' });
    expect(rel(kalshi, poly)).toBe('different');
    expect(conflict(kalshi, poly)).toBe('scope');
    expect(rel(kalshi, P('Will Yoav Gallant be the next Prime Minister of Israel?', { close_time: '2044-12-20T00:00:00Z' }))).toBe('same');
  });

  it('keeps "the next holder" apart from "the winner of the next election"', () => {
    const election = P('Will Yoav Gallant be the next Prime Minister of Israel?', {
      event_title: 'Who will be the next Prime Minister of Israel after the next election?',
      close_time: '2044-12-20T00:00:00Z',
    });
    expect(extractProposition(election).mode).toBe('next_election');
    expect(rel(kalshi, election)).toBe('different');
  });

  it('joins "the next presidential election" with the election of the ticker’s year, not another year', () => {
    const k = K('Who will win the next presidential election?', 'KXPRESPERSON-28-JVAN', {
      outcome: 'J.D. Vance',
      event_title: 'Who will win the next presidential election?',
    });
    expect(rel(k, P('Will JD Vance win the 2028 US Presidential Election?'))).toBe('same');
    expect(rel(k, P('Will JD Vance win the 2032 US Presidential Election?'))).toBe('different');
    expect(
      rel(K('Who will win the next presidential election?', null, { outcome: 'J.D. Vance' }), P('Will JD Vance win the 2028 US Presidential Election?')),
    ).toBe('different');
  });
});

describe('appointments: naming the pick, whatever the verb, and confirming it', () => {
  const kalshi = K('Will Trump next nominate Kevin Warsh as Fed Chair?', 'KXFEDCHAIRNOM-29-KW', { event_title: 'Who will Trump nominate as Fed Chair?' });

  it('joins "next nominate … as Fed Chair" with "nominate … as the next Fed chair" and a "Who will Trump announce" list', () => {
    expect(rel(kalshi, P('Will Trump nominate Kevin Warsh as the next Fed chair?'))).toBe('same');
    expect(rel(kalshi, P('Who will Trump announce as the next Fed chair?', { outcome: 'Kevin Warsh' }))).toBe('same');
    expect(rel(kalshi, P('Will Trump nominate Scott Bessent as the next Fed chair?'))).toBe('different');
  });

  it('keeps a confirmation from a nomination, and a window the title states from an open question', () => {
    const confirm = K(
      'Will Judy Shelton be confirmed as chair of the Board of Governors of the Federal Reserve System before Jan 1, 2029?',
      'KXFEDCHAIRCONFIRM-JSHE',
    );
    expect(rel(confirm, P('Will Trump nominate Judy Shelton as the next Fed chair?'))).toBe('different');
    expect(conflict(confirm, P('Will Trump nominate Judy Shelton as the next Fed chair?'))).toBe('stage');
    const in2025 = P('Will Trump announce Kevin Warsh as next Fed Chair in 2025?');
    expect(extractProposition(in2025).date).toBe('2025-12-31');
    expect(rel(kalshi, in2025)).toBe('different');
    expect(conflict(kalshi, in2025)).toBe('deadline');
  });
});

describe('two names in either order ("A or B first")', () => {
  it('joins the race whatever the order and spacing of the names, on the same outcome', () => {
    const k = K('Will Open AI or Anthropic IPO first?', 'KXOAIANTH-40-ANTH', { outcome: 'Anthropic' });
    expect(rel(k, P('Will Anthropic or OpenAI IPO first?', { outcome: 'Anthropic' }))).toBe('same');
    expect(rel(k, P('Will Anthropic or OpenAI IPO first?', { outcome: 'OpenAI' }))).toBe('different');
  });

  it('keeps races with different horizons apart, and a known horizon from an unknown one', () => {
    const a = P('Will Anthropic or OpenAI IPO first?', { outcome: 'Anthropic', close_time: '2028-01-01T04:59:00Z' });
    expect(rel(a, P('Will Anthropic or OpenAI IPO first?', { outcome: 'Anthropic', close_time: '2040-01-01T04:59:00Z' }))).toBe('different');
    expect(rel(a, P('Will Anthropic or OpenAI IPO first?', { outcome: 'Anthropic', close_time: '2027-12-31T23:00:00Z' }))).toBe('same');
    expect(rel(a, K('Will Open AI or Anthropic IPO first?', 'KXOAIANTH-40-ANTH', { outcome: 'Anthropic', close_time: '2040-01-01T04:59:00Z' }))).toBe(
      'different',
    );
  });
});

describe('first round, outright and the election', () => {
  const first = 'Will Tarcísio de Freitas win the first round of the 2026 Brazilian presidential election?';

  it('reads "win the first round" (top of round one) apart from "win in the first round" (no runoff) and the election', () => {
    expect(extractProposition(K(first, null)).stage).toBe('round1');
    // The same Kalshi title reworded to the outright question.
    const outright = K('Will Tarcísio de Freitas win the 2026 Brazilian presidential election in the first round?', null);
    expect(extractProposition(outright).stage).toBe('round1_outright');
    expect(rel(K(first, null), outright)).toBe('different');
    expect(rel(outright, P('Will Tarcísio de Freitas win the 2026 Brazilian presidential election outright in the first round?'))).toBe('same');
    expect(rel(outright, P('Will Tarcísio de Freitas win the 2026 Brazilian presidential election?'))).toBe('different');
  });
});

describe('margin buckets', () => {
  const bucket = P('Will Luiz Inácio Lula da Silva win the first round of the 2026 Brazilian presidential election by 5–10%?', {
    event_title: 'Brazil Presidential Election First Round: Margin of Victory',
  });

  it('reads the bucket as part of the win, so it meets only the same bucket', () => {
    const p = extractProposition(bucket);
    expect([p.stat, p.comparator, p.threshold, p.thresholdHigh, p.stage]).toEqual(['margin', 'range', 5, 10, 'round1']);
    expect(rel(bucket, K('Will Luiz Inácio Lula da Silva win the first round of the 2026 Brazilian presidential election?', null))).toBe('different');
    expect(
      rel(bucket, K('Will Luiz Inácio Lula da Silva win the first round of the 2026 Brazilian presidential election by 5-10 percentage points?', null)),
    ).toBe('same');
    expect(rel(bucket, P('Will Flávio Bolsonaro win the first round of the 2026 Brazilian presidential election by 5–10%?'))).toBe('different');
  });
});

describe('titles without the year where the close time or the series gives it', () => {
  it('takes an award’s year from the close time and its league from the Kalshi series', () => {
    const noYear = K('Will Shai Gilgeous-Alexander win MVP?', null, { event_title: 'Pro Basketball MVP', close_time: '2026-05-20T00:00:00Z' });
    expect(extractProposition(noYear).year).toBe(2026);
    expect(rel(noYear, P('Will Shai Gilgeous-Alexander win the 2025–2026 NBA MVP?'))).toBe('same');
    expect(rel(noYear, P('Will Shai Gilgeous-Alexander win the 2024–2025 NBA MVP?'))).toBe('different');
    const listed = K('MVP Winner?', 'KXNBAMVP-26-SGIL', { event_title: 'MVP Winner?', outcome: 'Shai Gilgeous-Alexander' });
    expect(rel(listed, P('Will Shai Gilgeous-Alexander win the 2025–2026 NBA MVP?'))).toBe('same');
    expect(rel(listed, P('Will Nikola Jokic win the 2025–2026 NBA MVP?'))).toBe('different');
  });

  it('reads a nominee listed by name under its award', () => {
    const k = K("Who will win the Ballon d'Or in 2026?", null, { outcome: 'Vinicius Junior' });
    expect(rel(k, P('Vinicius Junior', { event_title: "Ballon d'Or Winner 2026" }))).toBe('same');
    expect(rel(k, P('Vinicius Junior', { event_title: "Ballon d'Or Winner 2027" }))).toBe('different');
  });
});

describe('"25 bps cut" and "decrease … after the meeting"', () => {
  it('joins the two phrasings of one meeting and size, not another meeting or size', () => {
    const k = K('Fed Reserve Cut rates by 25bps Dec 2025?', null);
    expect(rel(k, P('Fed decreases interest rates by 25 bps after December 2025 meeting?'))).toBe('same');
    expect(rel(k, P('Fed decreases interest rates by 50+ bps after December 2025 meeting?'))).toBe('different');
    expect(rel(K('Fed Reserve Cut rates by 25bps Sep 2025?', null), P('Fed decreases interest rates by 25 bps after December 2025 meeting?'))).toBe(
      'different',
    );
  });
});

describe('a name listed under an event that is not the title', () => {
  it('does not read "League Phase Winner" or "Top 5 Finishers" as the champion', () => {
    expect(
      rel(
        K('Will Inter win the Champions League?', null, { outcome: 'Inter' }),
        P('Inter Milan', { event_title: 'UEFA Champions League: League Phase Winner' }),
      ),
    ).toBe('different');
    expect(
      rel(
        K('Will Crystal Palace win the English Premier League?', null, { outcome: 'Crystal Palace' }),
        P('Crystal Palace', { event_title: 'English Premier League Top 5 Finishers' }),
      ),
    ).toBe('different');
    expect(rel(K('Will the New York Yankees win the 2026 World Series?', null), P('New York Yankees', { event_title: 'MLB: 2026 World Series Winner' }))).toBe(
      'same',
    );
  });
});
