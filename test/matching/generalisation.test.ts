/**
 * Phrasings the 40 dev pairs do not contain, written in the venues' public title formats (Kalshi
 * titles and tickers, Polymarket questions, slugs and outcome labels). Each block pins one
 * extraction rule with the pairs it must join and the look-alikes it must keep apart.
 */
import { describe, expect, it } from 'vitest';
import { compare, type Relation } from '../../src/matching/compare.js';
import { extractProposition, type MatchInput } from '../../src/matching/proposition/index.js';
import { findYear } from '../../src/matching/text.js';

function K(title: string, market_id: string, outcome?: string, event_title?: string): MatchInput {
  return { platform: 'kalshi', market_id, title, outcome, event_title };
}
function P(title: string, outcome?: string, market_id: string | null = null, event_title?: string): MatchInput {
  return { platform: 'polymarket', market_id, title, outcome, event_title };
}
function rel(a: MatchInput, b: MatchInput): Relation {
  const r = compare(extractProposition(a), extractProposition(b)).relation;
  // Symmetric by construction; check it anyway.
  expect(compare(extractProposition(b), extractProposition(a)).relation).toBe(r);
  return r;
}

describe('season years written in full', () => {
  it('reads "2025–2026" like "2025-26" (the end year), and a non-season span as its first year', () => {
    expect(findYear('will x win the 2025-2026 nba mvp')).toBe(2026);
    expect(findYear('will x win the 2025-26 nba mvp')).toBe(2026);
    expect(findYear('will x win the 2025/26 premier league')).toBe(2026);
    expect(findYear('from 2025-2027')).toBe(2025);
    expect(findYear('on 2025-12-20')).toBe(2025);
  });

  it('joins the NBA MVP across "2025-26" and "2025–2026", not across seasons', () => {
    const k = K('Will Shai Gilgeous-Alexander win the 2025-26 NBA MVP?', 'KXNBAMVP-26-SGIL');
    expect(rel(k, P('Will Shai Gilgeous-Alexander win the 2025–2026 NBA MVP?'))).toBe('same');
    expect(rel(k, P('Will Shai Gilgeous-Alexander win the 2024–2025 NBA MVP?'))).toBe('different');
  });
});

describe('a party as the winner of an election', () => {
  const demPres = K('Which party will win the 2028 presidential election?', 'KXPRESPARTY-28-D', 'Democratic party');

  it('meets "a Democrat" and the present-tense "Which party wins …?" listing', () => {
    expect(extractProposition(demPres)).toMatchObject({ kind: 'election_winner', subject: 'party:dem', office: 'president_us', year: 2028 });
    expect(rel(demPres, P('Will a Democrat win the 2028 US Presidential Election?'))).toBe('same');
    const rep = K('Which party will win the 2028 presidential election?', 'KXPRESPARTY-28-R', 'Republican party');
    expect(rel(rep, P('Which party wins 2028 US Presidential Election?', 'Republican'))).toBe('same');
  });

  it('keeps the party apart from its candidate, the other party and another year', () => {
    expect(rel(demPres, P('Will Gavin Newsom win the 2028 US Presidential Election?'))).toBe('different');
    expect(rel(demPres, P('Will a Republican win the 2028 US Presidential Election?'))).not.toBe('same');
    expect(rel(demPres, P('Will a Democrat win the 2032 US Presidential Election?'))).toBe('different');
  });

  it('reads a state race won by a party, and a contest name listed per outcome', () => {
    const maine = K('Which party will win the Senate race in Maine?', 'KXSENATEME-26-D', 'Democratic party');
    expect(rel(maine, P('Will the Democrats win the Maine Senate race in 2026?'))).toBe('same');
    expect(rel(maine, P('Will the Democrats win the Maine governor race in 2026?'))).toBe('different');
    const nc = K('Which party will win the Senate race in North Carolina?', 'KXSENATENC-26-D', 'Democratic party');
    expect(rel(nc, P('North Carolina Senate Election Winner', 'Democratic', null, 'North Carolina Senate Election Winner'))).toBe('same');
  });
});

describe('contest names listed per outcome', () => {
  it('reads "New York City Mayoral Election" + "Zohran Mamdani" as the mayoral election', () => {
    const k = K('Who will win the NYC Mayoral race?', 'KXMAYORNYC-25-ZMAM', 'Zohran Mamdani');
    expect(rel(k, P('New York City Mayoral Election', 'Zohran Mamdani'))).toBe('same');
    expect(rel(k, P('New York City Mayoral Election', 'Andrew Cuomo'))).toBe('different');
    // The primary is a contest of its own.
    expect(rel(k, P('NYC Democratic Mayoral Primary', 'Zohran Mamdani'))).toBe('different');
  });

  it('keeps a trailing year: "Presidential Election Winner 2028"', () => {
    const k = K('Who will win the next presidential election?', 'KXPRESPERSON-28-MRUB', 'Marco Rubio', '2028 U.S. Presidential Election winner?');
    expect(extractProposition(P('Presidential Election Winner 2028', 'Marco Rubio'))).toMatchObject({ kind: 'election_winner', year: 2028 });
    expect(rel(k, P('Presidential Election Winner 2028', 'Marco Rubio'))).toBe('same');
  });

  it('reads "2026 NBA Champion" + "Oklahoma City Thunder" as the championship', () => {
    const k = K('Will Oklahoma City win the 2026 Pro Basketball Championship?', 'KXNBA-26-OKC');
    expect(rel(k, P('2026 NBA Champion', 'Oklahoma City Thunder'))).toBe('same');
    expect(rel(k, P('2026 NBA Champion', 'Denver Nuggets'))).toBe('different');
    expect(rel(k, P('2027 NBA Champion', 'Oklahoma City Thunder'))).toBe('different');
    expect(rel(K('Will Colorado win the 2026 Pro Hockey Championship?', 'KXNHL-26-COL'), P('2026 Stanley Cup Champion', 'Colorado Avalanche'))).toBe('same');
  });
});

describe("a party's primary for a state office picks its nominee", () => {
  const paxton = K('Will Ken Paxton be the Republican nominee for the Senate in Texas?', 'KXSENATETXR-26-KPAX');

  it('joins "win the Texas Republican Senate primary" with the nomination', () => {
    expect(rel(paxton, P('Will Ken Paxton win the Texas Republican Senate primary?'))).toBe('same');
    expect(rel(paxton, P('Will John Cornyn win the Texas Republican Senate primary?'))).toBe('different');
    expect(rel(paxton, P('Will Ken Paxton win the Texas Democratic Senate primary?'))).toBe('different');
    // The general election is not the nomination.
    expect(rel(paxton, P('Will Ken Paxton win the Texas Senate race in 2026?'))).toBe('different');
  });

  it("does not equate one state's presidential primary with the national nomination", () => {
    const k = K('Will Gavin Newsom be the Democratic Presidential nominee in 2028?', 'KXPRESNOMD-28-GNEWS');
    expect(rel(k, P('Will Gavin Newsom win the 2028 California Democratic presidential primary?'))).toBe('different');
  });
});

describe('German chancellor', () => {
  it('reads "next Chancellor of Germany" = "next German Chancellor", and keeps countries and people apart', () => {
    const k = K('Who will be the next Chancellor of Germany?', 'KXCHANCELLORDE-25-FMER', 'Friedrich Merz');
    expect(extractProposition(k)).toMatchObject({ kind: 'election_winner', office: 'chancellor_de' });
    expect(rel(k, P('Will Friedrich Merz be the next German Chancellor?'))).toBe('same');
    expect(rel(k, P('Will Friedrich Merz be the next Chancellor of Austria?'))).toBe('different');
    expect(rel(k, P('Will Olaf Scholz be the next German Chancellor?'))).toBe('different');
  });
});

describe('conference titles and the College Football Playoff', () => {
  it('reads the AFC/NFC Championship as the NFL conference title', () => {
    const k = K('Will Kansas City win the AFC Championship?', 'KXAFC-26-KC', undefined, '2026 AFC Champion?');
    expect(extractProposition(k)).toMatchObject({ kind: 'championship', competition: 'NFL', stage: 'conf_AFC', subject: 'NFL:KC' });
    expect(rel(k, P('Will the Kansas City Chiefs win the 2026 AFC Championship?'))).toBe('same');
    expect(rel(k, P('Will the Kansas City Chiefs win Super Bowl 2026?'))).toBe('different');
    const phi = K('Will Philadelphia win the NFC Championship?', 'KXNFC-26-PHI');
    expect(rel(phi, P('Will the Philadelphia Eagles win the 2026 NFC Championship?'))).toBe('same');
    expect(rel(phi, P('Will the Philadelphia Eagles win the 2026 AFC Championship?'))).toBe('different');
  });

  it('reads "win the College Football Playoff" as the national title, "make" it as a stage', () => {
    const k = K('Will Ohio State win the College Football Playoff?', 'KXNCAAF-26-OSU');
    expect(rel(k, P('Will Ohio State win the 2026 College Football Playoff National Championship?'))).toBe('same');
    expect(rel(k, P('Will Ohio State make the College Football Playoff?'))).toBe('different');
    expect(extractProposition(P('Will Ohio State make the College Football Playoff?'))).toMatchObject({ kind: 'stage_reach', stage: 'playoffs' });
  });

  it('does not read winning one game as winning the title', () => {
    expect(extractProposition(P('Will Ohio State win a College Football Playoff game?')).kind).toBe('other');
    expect(extractProposition(P('Will the Yankees win Game 7 of the World Series?')).kind).toBe('other');
    expect(extractProposition(P('Will the Yankees win the 2026 World Series?'))).toMatchObject({ kind: 'championship', year: 2026 });
  });
});

describe('IPO questions without "Will"', () => {
  it('reads "SpaceX IPO by December 31, 2026?" and keeps other deadlines apart', () => {
    const k = K('Will SpaceX IPO before 2027?', 'KXIPOSPACEX-26');
    expect(rel(k, P('SpaceX IPO by December 31, 2026?'))).toBe('same');
    expect(rel(k, P('SpaceX IPO by June 30, 2026?'))).toBe('different');
    expect(rel(K('Will Discord IPO before 2027?', 'KXIPODISCORD-26'), P('Discord IPO in 2026?'))).toBe('same');
    expect(rel(K('Will Discord IPO before 2027?', 'KXIPODISCORD-26'), P('Discord IPO in 2025?'))).toBe('different');
    expect(extractProposition(P('Largest IPO of 2026?')).kind).toBe('other');
  });
});

describe("TIME's Person of the Year", () => {
  it('reads the Kalshi list and the Polymarket "be named" question as one award', () => {
    const k = K("Who will be TIME's Person of the Year 2025?", 'KXTIMEPOY-25-DJT', 'Donald Trump');
    expect(rel(k, P('Will Donald Trump be named TIME Person of the Year for 2025?'))).toBe('same');
    expect(rel(k, P("Will Donald Trump be TIME's 2025 Person of the Year?"))).toBe('same');
    expect(rel(k, P('Will Donald Trump be named TIME Person of the Year for 2026?'))).toBe('different');
    expect(rel(k, P('Will Elon Musk be named TIME Person of the Year for 2025?'))).toBe('different');
  });
});

describe('club names as Polymarket writes them, Kalshi club codes', () => {
  it.each([
    ['KXSERIEAGAME-25DEC21INTNAP-INT', 'Inter vs Napoli Winner?', 'Inter', 'sea-int-nap-2025-12-21-int', 'Will FC Internazionale Milano win on 2025-12-21?'],
    [
      'KXLALIGAGAME-25DEC21ATMBAR-ATM',
      'Atletico Madrid vs Barcelona Winner?',
      'Atletico Madrid',
      'lal-atm-bar-2025-12-21-atm',
      'Will Club Atlético de Madrid win on 2025-12-21?',
    ],
    ['KXUCLGAME-25DEC10BMUPSG-BMU', 'Bayern Munich vs PSG Winner?', 'Bayern Munich', 'ucl-bay-psg-2025-12-10-bay', 'Will FC Bayern München win on 2025-12-10?'],
    ['KXSERIEAGAME-25DEC20LAZJUV-LAZ', 'Lazio vs Juventus Winner?', 'Lazio', 'sea-laz-juv-2025-12-20-laz', 'Will SS Lazio win on 2025-12-20?'],
    [
      'KXBUNDESLIGAGAME-25DEC20SGEHOF-HOF',
      'Eintracht Frankfurt vs Hoffenheim Winner?',
      'Hoffenheim',
      'bun-sge-hof-2025-12-20-hof',
      'Will TSG 1899 Hoffenheim win on 2025-12-20?',
    ],
    [
      'KXLALIGAGAME-25DEC20ESPGET-ESP',
      'Espanyol vs Getafe Winner?',
      'Espanyol',
      'lal-esp-get-2025-12-20-esp',
      'Will RCD Espanyol de Barcelona win on 2025-12-20?',
    ],
    ['KXEPLGAME-25DEC27CFCAVL-CFC', 'Chelsea vs Aston Villa Winner?', 'Chelsea', 'epl-che-avl-2025-12-27-che', 'Will Chelsea FC win on 2025-12-27?'],
    ['KXEPLGAME-25NOV09MCILFC-LFC', 'Manchester City vs Liverpool Winner?', 'Liverpool', 'epl-mci-liv-2025-11-09-liv', 'Will Liverpool FC win on 2025-11-09?'],
  ])('%s = %s', (kid, ktitle, kout, pid, ptitle) => {
    expect(rel(K(ktitle, kid, kout), P(ptitle, undefined, pid))).toBe('same');
  });

  it('keeps the other club and another day apart (a draw is possible)', () => {
    const k = K('Chelsea vs Aston Villa Winner?', 'KXEPLGAME-25DEC27CFCAVL-CFC', 'Chelsea');
    expect(rel(k, P('Will Aston Villa FC win on 2025-12-27?', undefined, 'epl-che-avl-2025-12-27-avl'))).toBe('different');
    const l = K('Lazio vs Juventus Winner?', 'KXSERIEAGAME-25DEC20LAZJUV-LAZ', 'Lazio');
    expect(rel(l, P('Will SS Lazio win on 2025-12-21?', undefined, 'sea-laz-juv-2025-12-21-laz'))).toBe('different');
  });
});

describe('strikes and buckets carried by the outcome label', () => {
  it('reads Polymarket "What price will Bitcoin hit in 2026?" + "↑ 150,000" / "↓ 60,000" as touches', () => {
    const hi = K('Will Bitcoin be above $149,999.99 by Dec 31, 2026 at 11:59 PM ET?', 'KXBTCMAXY-26DEC31-149999.99');
    expect(rel(hi, P('What price will Bitcoin hit in 2026?', '↑ 150,000'))).toBe('same');
    expect(rel(hi, P('What price will Bitcoin hit in 2026?', '↑ 160,000'))).toBe('different');
    expect(rel(hi, P('What price will Bitcoin hit in 2025?', '↑ 150,000'))).toBe('different');
    const lo = K('Will Bitcoin be below $60000.00 by Jan 1, 2027 at 12:00am ET?', 'KXBTCMINY-27JAN01-60000.00');
    expect(rel(lo, P('What price will Bitcoin hit in 2026?', '↓ 60,000'))).toBe('same');
    expect(rel(lo, P('What price will Bitcoin hit in 2026?', '↑ 60,000'))).toBe('different');
  });

  it('reads Polymarket "Fed decision in January?" + "No change" / "25 bps decrease"', () => {
    const close = '2026-01-28T19:00:00Z';
    const fed = (outcome: string): MatchInput => ({ ...P('Fed decision in January?', outcome), close_time: close });
    const hold = K('Will the Federal Reserve Hike rates by 0bps at their January 2026 meeting?', 'KXFEDDECISION-26JAN-H0');
    const cut = K('Will the Federal Reserve Cut rates by 25bps at their January 2026 meeting?', 'KXFEDDECISION-26JAN-C25');
    expect(rel(hold, fed('No change'))).toBe('same');
    expect(rel(cut, fed('25 bps decrease'))).toBe('same');
    expect(rel(hold, fed('25 bps decrease'))).toBe('different');
    expect(rel(cut, fed('50+ bps decrease'))).toBe('different');
  });
});
