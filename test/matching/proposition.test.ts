import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { extractProposition, type MatchInput, type Proposition } from '../../src/matching/proposition/index.js';

interface Pair {
  readonly a: MatchInput;
  readonly b: MatchInput;
}
const PAIRS = JSON.parse(readFileSync(new URL('../fixtures/matching/dev-pairs.json', import.meta.url), 'utf8')) as Pair[];

const SKIP = new Set(['platform', 'marketId', 'signature', 'evidence', 'subjectCandidates', 'tokens', 'confidence', 'negated', 'subjectName', 'dateSource']);

/** The settlement fields a proposition states (nulls and empties left out). */
function fields(p: Proposition): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(p)) {
    if (SKIP.has(k) || v === null || (Array.isArray(v) && v.length === 0)) continue;
    o[k] = v;
  }
  return o;
}

// Golden: real titles from test/fixtures/matching/dev-pairs.json (pair index, side) → every field
// extraction yields. Reviewed by hand against the pair notes.
const GOLDEN: [number, 'a' | 'b', Record<string, unknown>][] = [
  [0, 'a', { kind: 'nomination', subject: 'person:james talarico', office: 'president_us', party: 'dem', year: 2028, market_type: 'nomination' }],
  [0, 'b', { kind: 'nomination', subject: 'person:james talarico', office: 'president_us', party: 'dem', year: 2028, market_type: 'nomination' }],
  [1, 'a', { kind: 'nomination', subject: 'person:ro khanna', office: 'president_us', party: 'dem', year: 2028, market_type: 'nomination' }],
  [1, 'b', { kind: 'nomination', subject: 'person:ro khanna', office: 'president_us', party: 'dem', year: 2028, market_type: 'nomination' }],
  [2, 'a', { kind: 'nomination', subject: 'person:elon musk', office: 'president_us', party: 'rep', year: 2028, market_type: 'nomination' }],
  [2, 'b', { kind: 'nomination', subject: 'person:elon musk', office: 'president_us', party: 'rep', year: 2028, market_type: 'nomination' }],
  [3, 'a', { kind: 'nomination', subject: 'person:erika kirk', office: 'president_us', party: 'rep', year: 2028, market_type: 'nomination' }],
  [3, 'b', { kind: 'nomination', subject: 'person:erika kirk', office: 'president_us', party: 'rep', year: 2028, market_type: 'nomination' }],
  [4, 'a', { kind: 'election_winner', subject: 'person:steve hilton', office: 'governor_ca', year: 2026, market_type: 'election_winner' }],
  [4, 'b', { kind: 'election_winner', subject: 'person:steve hilton', office: 'governor_ca', year: 2026, market_type: 'election_winner' }],
  [5, 'a', { kind: 'election_winner', subject: 'person:luiz inacio lula da silva', office: 'president_br', year: 2026, market_type: 'election_winner' }],
  [5, 'b', { kind: 'election_winner', subject: 'person:luiz inacio lula da silva', office: 'president_br', year: 2026, market_type: 'election_winner' }],
  [6, 'a', { kind: 'nomination', subject: 'person:jon ossoff', office: 'president_us', party: 'dem', year: 2028, market_type: 'nomination' }],
  [7, 'a', { kind: 'nomination', subject: 'person:ruben gallego', office: 'president_us', party: 'dem', year: 2028, market_type: 'nomination' }],
  [10, 'a', { kind: 'election_winner', subject: 'person:ronaldo caiado', office: 'president_br', year: 2026, market_type: 'election_winner' }],
  [10, 'b', { kind: 'election_winner', subject: 'person:eduardo leite', office: 'president_br', year: 2026, market_type: 'election_winner' }],
  [11, 'a', { kind: 'fed_decision', subject: 'fed', month: '2026-09', comparator: '=', threshold: 25, unit: 'bps', market_type: 'fed_decision' }],
  [11, 'b', { kind: 'fed_decision', subject: 'fed', month: '2026-09', comparator: '=', threshold: 25, unit: 'bps', market_type: 'fed_decision' }],
  [12, 'a', { kind: 'fed_decision', subject: 'fed', month: '2026-09', comparator: '=', threshold: 0, unit: 'bps', market_type: 'fed_decision' }],
  [12, 'b', { kind: 'fed_decision', subject: 'fed', month: '2026-09', comparator: '=', threshold: 0, unit: 'bps', market_type: 'fed_decision' }],
  [14, 'b', { kind: 'fed_decision', subject: 'fed', month: '2026-04', comparator: '>=', threshold: 25, unit: 'bps', market_type: 'fed_decision' }],
  [15, 'a', { kind: 'econ_threshold', subject: 'cpi_yoy', month: '2026-02', comparator: '>', threshold: 2.4, unit: 'pct', market_type: 'cpi_yoy' }],
  [15, 'b', { kind: 'econ_threshold', subject: 'cpi_yoy', month: '2026-02', comparator: '=', threshold: 2.4, unit: 'pct', market_type: 'cpi_yoy' }],
  [16, 'a', { kind: 'econ_threshold', subject: 'unemployment', month: '2026-01', comparator: '>', threshold: 4.7, unit: 'pct', market_type: 'unemployment' }],
  [16, 'b', { kind: 'econ_threshold', subject: 'unemployment', month: '2026-01', comparator: '>=', threshold: 4.7, unit: 'pct', market_type: 'unemployment' }],
  [
    17,
    'a',
    {
      kind: 'crypto_price',
      subject: 'asset:BTC',
      date: '2026-12-31',
      mode: 'max_by',
      comparator: '>',
      threshold: 139999.99,
      unit: 'usd',
      market_type: 'btc_max',
    },
  ],
  [
    17,
    'b',
    {
      kind: 'crypto_price',
      subject: 'asset:BTC',
      date: '2026-12-31',
      mode: 'max_by',
      comparator: '>=',
      threshold: 140000,
      unit: 'usd',
      market_type: 'btc_max',
    },
  ],
  [
    18,
    'a',
    { kind: 'crypto_price', subject: 'asset:BTC', date: '2026-12-31', mode: 'min_by', comparator: '<', threshold: 45000, unit: 'usd', market_type: 'btc_min' },
  ],
  [
    18,
    'b',
    { kind: 'crypto_price', subject: 'asset:BTC', date: '2026-12-31', mode: 'min_by', comparator: '<=', threshold: 45000, unit: 'usd', market_type: 'btc_min' },
  ],
  [
    19,
    'b',
    {
      kind: 'crypto_price',
      subject: 'asset:BTC',
      date: '2026-12-31',
      mode: 'max_by',
      comparator: '>=',
      threshold: 130000,
      unit: 'usd',
      market_type: 'btc_max',
    },
  ],
  [
    20,
    'a',
    { kind: 'crypto_price', subject: 'asset:BTC', date: '2026-12-31', mode: 'min_by', comparator: '<', threshold: 50000, unit: 'usd', market_type: 'btc_min' },
  ],
  [
    21,
    'a',
    {
      kind: 'crypto_price',
      subject: 'asset:ETH',
      date: '2026-03-29',
      time: '00:00',
      mode: 'at',
      comparator: '>',
      threshold: 2039.99,
      unit: 'usd',
      market_type: 'eth_above',
    },
  ],
  [
    21,
    'b',
    {
      kind: 'crypto_price',
      subject: 'asset:ETH',
      date: '2026-03-29',
      time: '00:00',
      mode: 'at',
      comparator: '>',
      threshold: 2035,
      unit: 'usd',
      market_type: 'eth_above',
    },
  ],
  [
    22,
    'a',
    {
      kind: 'tournament_winner',
      subject: 'NAT:NOR',
      sport: 'soccer',
      league: 'WC',
      competition: 'fifa_world_cup_men',
      stage: 'winner',
      year: 2026,
      market_type: 'tournament_winner',
      team: 'Norway',
    },
  ],
  [
    22,
    'b',
    {
      kind: 'tournament_winner',
      subject: 'NAT:NOR',
      sport: 'soccer',
      league: 'WC',
      competition: 'fifa_world_cup_men',
      stage: 'winner',
      year: 2026,
      market_type: 'tournament_winner',
      team: 'Norway',
    },
  ],
  [
    23,
    'a',
    {
      kind: 'tournament_winner',
      subject: 'NAT:JPN',
      sport: 'soccer',
      league: 'WC',
      competition: 'fifa_world_cup_men',
      stage: 'winner',
      year: 2026,
      market_type: 'tournament_winner',
      team: 'Japan',
    },
  ],
  [
    23,
    'b',
    {
      kind: 'tournament_winner',
      subject: 'NAT:JPN',
      sport: 'soccer',
      league: 'WC',
      competition: 'fifa_world_cup_men',
      stage: 'winner',
      year: 2026,
      market_type: 'tournament_winner',
      team: 'Japan',
    },
  ],
  [
    24,
    'a',
    {
      kind: 'championship',
      subject: 'MLB:HOU',
      sport: 'baseball',
      league: 'MLB',
      competition: 'MLB',
      stage: 'winner',
      year: 2026,
      market_type: 'championship_winner',
      team: 'Houston Astros',
    },
  ],
  [
    24,
    'b',
    {
      kind: 'championship',
      subject: 'MLB:HOU',
      sport: 'baseball',
      league: 'MLB',
      competition: 'MLB',
      stage: 'winner',
      year: 2026,
      market_type: 'championship_winner',
      team: 'Houston Astros',
    },
  ],
  [
    25,
    'a',
    {
      kind: 'championship',
      subject: 'NFL:LV',
      sport: 'football',
      league: 'NFL',
      competition: 'NFL',
      stage: 'winner',
      year: 2027,
      market_type: 'championship_winner',
      team: 'Las Vegas Raiders',
    },
  ],
  [
    25,
    'b',
    {
      kind: 'championship',
      subject: 'NFL:LV',
      sport: 'football',
      league: 'NFL',
      competition: 'NFL',
      stage: 'winner',
      year: 2027,
      market_type: 'championship_winner',
      team: 'Las Vegas Raiders',
    },
  ],
  [
    26,
    'a',
    {
      kind: 'tournament_winner',
      subject: 'NAT:SWE',
      sport: 'soccer',
      league: 'WC',
      competition: 'fifa_world_cup_men',
      stage: 'winner',
      year: 2026,
      market_type: 'tournament_winner',
      team: 'Sweden',
    },
  ],
  [
    27,
    'a',
    {
      kind: 'stage_reach',
      subject: 'NAT:NOR',
      sport: 'soccer',
      league: 'WC',
      competition: 'fifa_world_cup_men',
      stage: 'reach_sf',
      year: 2026,
      market_type: 'stage_reach',
      team: 'Norway',
    },
  ],
  [
    28,
    'a',
    {
      kind: 'group_winner',
      subject: 'NAT:JPN',
      sport: 'soccer',
      league: 'WC',
      competition: 'fifa_world_cup_men',
      stage: 'group_F',
      year: 2026,
      market_type: 'group_winner',
      team: 'Japan',
    },
  ],
  [
    29,
    'a',
    {
      kind: 'game_winner',
      subject: 'NFL:BUF',
      sport: 'football',
      league: 'NFL',
      teams: ['NFL:BUF', 'NFL:JAX'],
      home: 'NFL:JAX',
      away: 'NFL:BUF',
      date: '2026-01-11',
      period: 'full',
      market_class: 'moneyline',
      market_type: 'moneyline',
      side: 'away',
      team: 'Buffalo Bills',
    },
  ],
  [
    29,
    'b',
    {
      kind: 'game_winner',
      subject: 'NFL:BUF',
      sport: 'football',
      league: 'NFL',
      teams: ['NFL:BUF', 'NFL:JAX'],
      home: 'NFL:JAX',
      away: 'NFL:BUF',
      date: '2026-01-11',
      period: 'full',
      market_class: 'moneyline',
      market_type: 'moneyline',
      side: 'away',
      team: 'Buffalo Bills',
    },
  ],
  [
    30,
    'a',
    {
      kind: 'game_winner',
      subject: 'NBA:NYK',
      sport: 'basketball',
      league: 'NBA',
      teams: ['NBA:NYK', 'NBA:PHX'],
      home: 'NBA:PHX',
      away: 'NBA:NYK',
      date: '2026-01-09',
      period: 'full',
      market_class: 'moneyline',
      market_type: 'moneyline',
      side: 'away',
      team: 'New York Knicks',
    },
  ],
  [
    30,
    'b',
    {
      kind: 'game_winner',
      subject: 'NBA:NYK',
      sport: 'basketball',
      league: 'NBA',
      teams: ['NBA:NYK', 'NBA:PHX'],
      home: 'NBA:PHX',
      away: 'NBA:NYK',
      date: '2026-01-09',
      period: 'full',
      market_class: 'moneyline',
      market_type: 'moneyline',
      side: 'away',
      team: 'New York Knicks',
    },
  ],
  [
    31,
    'a',
    {
      kind: 'game_winner',
      subject: 'NBA:ATL',
      sport: 'basketball',
      league: 'NBA',
      teams: ['NBA:ATL', 'NBA:GSW'],
      home: 'NBA:GSW',
      away: 'NBA:ATL',
      date: '2026-01-11',
      period: 'full',
      market_class: 'moneyline',
      market_type: 'moneyline',
      side: 'away',
      team: 'Atlanta Hawks',
    },
  ],
  [
    31,
    'b',
    {
      kind: 'game_winner',
      subject: 'NBA:ATL',
      sport: 'basketball',
      league: 'NBA',
      teams: ['NBA:ATL', 'NBA:GSW'],
      home: 'NBA:GSW',
      away: 'NBA:ATL',
      date: '2026-01-11',
      period: 'full',
      market_class: 'moneyline',
      market_type: 'moneyline',
      side: 'away',
      team: 'Atlanta Hawks',
    },
  ],
  [
    32,
    'a',
    {
      kind: 'game_winner',
      subject: 'NFL:NE',
      sport: 'football',
      league: 'NFL',
      teams: ['NFL:NE', 'NFL:SEA'],
      home: 'NFL:SEA',
      away: 'NFL:NE',
      date: '2026-09-09',
      period: 'full',
      market_class: 'moneyline',
      market_type: 'moneyline',
      side: 'away',
      team: 'New England Patriots',
    },
  ],
  [
    32,
    'b',
    {
      kind: 'game_winner',
      subject: 'NFL:NE',
      sport: 'football',
      league: 'NFL',
      teams: ['NFL:NE', 'NFL:SEA'],
      home: 'NFL:SEA',
      away: 'NFL:NE',
      period: 'full',
      market_class: 'moneyline',
      market_type: 'moneyline',
      side: 'away',
      team: 'New England Patriots',
    },
  ],
  [
    33,
    'b',
    {
      kind: 'game_winner',
      subject: 'NBA:NYK',
      sport: 'basketball',
      league: 'NBA',
      teams: ['NBA:NYK', 'NBA:PHX'],
      home: 'NBA:PHX',
      away: 'NBA:NYK',
      date: '2026-01-09',
      period: '1H',
      market_class: 'moneyline',
      market_type: 'moneyline',
      side: 'away',
      team: 'New York Knicks',
    },
  ],
  [
    34,
    'a',
    {
      kind: 'spread',
      subject: 'NFL:SEA',
      sport: 'football',
      league: 'NFL',
      teams: ['NFL:NE', 'NFL:SEA'],
      home: 'NFL:SEA',
      away: 'NFL:NE',
      date: '2026-09-09',
      comparator: '>',
      threshold: 2.5,
      unit: 'count',
      period: 'full',
      market_class: 'spread',
      market_type: 'spread',
      line: -2.5,
      side: 'home',
      team: 'Seattle Seahawks',
    },
  ],
  [
    34,
    'b',
    {
      kind: 'spread',
      subject: 'NFL:SEA',
      sport: 'football',
      league: 'NFL',
      teams: ['NFL:SEA'],
      comparator: '>',
      threshold: 2.5,
      unit: 'count',
      period: 'full',
      market_class: 'spread',
      market_type: 'spread',
      line: -2.5,
      team: 'Seattle Seahawks',
    },
  ],
  [
    35,
    'b',
    {
      kind: 'spread',
      subject: 'NFL:NE',
      sport: 'football',
      league: 'NFL',
      teams: ['NFL:NE'],
      comparator: '>',
      threshold: -2.5,
      unit: 'count',
      period: 'full',
      market_class: 'spread',
      market_type: 'spread',
      line: 2.5,
      team: 'New England Patriots',
    },
  ],
  [
    36,
    'b',
    {
      kind: 'total',
      subject: 'game:NFL:NE+NFL:SEA',
      sport: 'football',
      league: 'NFL',
      teams: ['NFL:NE', 'NFL:SEA'],
      home: 'NFL:SEA',
      away: 'NFL:NE',
      comparator: '>',
      threshold: 44.5,
      unit: 'count',
      stat: 'score',
      period: 'full',
      market_class: 'total',
      market_type: 'total',
      line: 44.5,
      side: 'over',
    },
  ],
  [
    37,
    'a',
    {
      kind: 'player_prop',
      subject: 'player:jaxon smith njigba',
      sport: 'football',
      league: 'NFL',
      teams: ['NFL:NE', 'NFL:SEA'],
      home: 'NFL:SEA',
      away: 'NFL:NE',
      date: '2026-09-09',
      comparator: '>=',
      threshold: 7,
      unit: 'count',
      stat: 'receptions',
      period: 'full',
      market_class: 'player_prop',
      market_type: 'player_receptions',
      line: 6.5,
      side: 'over',
      player: 'Jaxon Smith-Njigba',
      team: 'Seattle Seahawks',
    },
  ],
  [
    37,
    'b',
    {
      kind: 'player_prop',
      subject: 'player:jaxon smith njigba',
      comparator: '>',
      threshold: 6.5,
      unit: 'count',
      stat: 'receptions',
      period: 'full',
      market_class: 'player_prop',
      market_type: 'player_receptions',
      line: 6.5,
      side: 'over',
      player: 'Jaxon Smith-Njigba',
    },
  ],
  [
    38,
    'b',
    {
      kind: 'player_prop',
      subject: 'player:jaxon smith njigba',
      comparator: '>',
      threshold: 70.5,
      unit: 'count',
      stat: 'receiving_yards',
      period: 'full',
      market_class: 'player_prop',
      market_type: 'player_receiving_yards',
      line: 70.5,
      side: 'over',
      player: 'Jaxon Smith-Njigba',
    },
  ],
  [39, 'a', { kind: 'ipo', subject: 'org:openai', competition: 'org:anthropic|org:openai', mode: 'first', market_type: 'ipo' }],
  [39, 'b', { kind: 'ipo', subject: 'org:openai', date: '2026-12-31', mode: 'by', market_type: 'ipo' }],
];

describe('extractProposition on real titles (dev-pairs.json)', () => {
  it.each(GOLDEN)('pair %i side %s', (i, side, expected) => {
    const m = PAIRS[i]![side];
    expect(fields(extractProposition(m))).toEqual(expected);
  });

  it('leaves statements it cannot structure as free text, never as a guessed kind', () => {
    const musk = extractProposition(PAIRS[8]!.a); // "Will a party founded by Elon Musk contest …"
    expect(musk.kind).toBe('other');
    expect(musk.tokens).toEqual(['2028', 'contest', 'election', 'elon', 'founded', 'musk', 'party', 'presidential', 'u.s']);
    expect(extractProposition(PAIRS[9]!.a).kind).toBe('other'); // "support the Democratic candidate"
  });

  it('reads the strike from the ticker when the Kalshi title is generic', () => {
    const eth = extractProposition(PAIRS[21]!.a);
    expect(PAIRS[21]!.a.title).toBe('Ethereum price at Mar 29, 2026 at 12am EDT?');
    expect([eth.comparator, eth.threshold, eth.time, eth.date]).toEqual(['>', 2039.99, '00:00', '2026-03-29']);
  });

  it('takes a Kalshi year, month or game from the ticker when the title omits it', () => {
    expect(extractProposition(PAIRS[2]!.a).year).toBe(2028); // KXPRESNOMR-28-EM: no year in the title
    expect(extractProposition(PAIRS[16]!.a).month).toBe('2026-01'); // KXU3-26JAN: "in January?"
    expect(extractProposition(PAIRS[28]!.a).year).toBe(2026); // KXWCGROUPWIN-26F
  });

  it('dates a Polymarket game from its slug, or from its close time in US Eastern', () => {
    expect(extractProposition(PAIRS[29]!.b)).toMatchObject({ date: '2026-01-11', dateSource: 'slug' });
    // 2026-01-10T02:00Z is 9 pm on January 9 in New York.
    expect(extractProposition(PAIRS[30]!.b)).toMatchObject({ date: '2026-01-09', dateSource: 'close_time' });
  });

  it('recognises a Kalshi ticker by shape when the platform is a neutral venue label', () => {
    const p = extractProposition({
      platform: 'venue_a',
      market_id: 'KXNFLGAME-26SEP09NESEA-NE',
      title: 'New England at Seattle Winner?',
      outcome: 'New England',
    });
    expect(p).toMatchObject({ kind: 'game_winner', subject: 'NFL:NE', date: '2026-09-09', dateSource: 'ticker' });
  });
});

describe('extractProposition on phrasing variants (constructed from the venues\u2019 formats)', () => {
  const K = (title: string, market_id: string | null, extra: Partial<MatchInput> = {}): MatchInput => ({ platform: 'kalshi', market_id, title, ...extra });
  const P = (title: string, extra: Partial<MatchInput> = {}): MatchInput => ({ platform: 'polymarket', market_id: null, title, ...extra });

  it('normalises team names: city, nickname, Kalshi letter suffixes, abbreviations', () => {
    expect(extractProposition(K('Los Angeles L at Boston', 'KXNBAGAME-26JAN15LALBOS', { outcome: 'Los Angeles L' })).subject).toBe('NBA:LAL');
    expect(extractProposition(P('Lakers vs. Celtics', { outcome: 'Lakers' })).teams).toEqual(['NBA:LAL', 'NBA:BOS']);
    expect(extractProposition(K('New York Y at Boston Winner?', 'KXMLBGAME-26APR15NYYBOS-NYY', { outcome: 'New York Y' })).subject).toBe('MLB:NYY');
    // "Seattle" alone is four teams; the ticker's league settles it.
    expect(extractProposition(K('Will Seattle win the 2026 Pro Football Championship?', 'KXSB-26-SEA')).subject).toBe('NFL:SEA');
  });

  it('reads "Who will …?" listed per outcome as a statement about that outcome', () => {
    const p = extractProposition(K('Who will win the NYC Mayoral race?', 'KXMAYORNYC-25-ZMAM', { outcome: 'Zohran Mamdani' }));
    expect(p).toMatchObject({ kind: 'election_winner', subject: 'person:zohran mamdani', office: 'mayor_nyc', year: 2025 });
  });

  it('separates primaries and first rounds from the election', () => {
    // A party's primary for a state office picks its nominee: a nomination, not the election.
    expect(extractProposition(P('Will Ken Paxton win the Texas Republican Senate primary?'))).toMatchObject({
      kind: 'nomination',
      office: 'senate_tx',
      stage: null,
      party: 'rep',
    });
    expect(extractProposition(P('Will Ken Paxton win the 2026 Texas Senate election?'))).toMatchObject({ office: 'senate_tx', stage: null });
  });

  it('reads Fed cuts with and without bucket bounds', () => {
    expect(extractProposition(K('Will the Federal Reserve Cut rates by >25bps at their March 2026 meeting?', 'KXFEDDECISION-26MAR-C26'))).toMatchObject({
      comparator: '<',
      threshold: -25,
      month: '2026-03',
    });
    expect(extractProposition(P('Fed decreases interest rates by 25 bps after March 2026 meeting?'))).toMatchObject({
      comparator: '=',
      threshold: -25,
      month: '2026-03',
    });
  });

  it('reads crypto deadlines: end of day, midnight of the next day, month, year', () => {
    expect(extractProposition(P('Will Bitcoin reach $150k in 2026?'))).toMatchObject({
      mode: 'max_by',
      comparator: '>=',
      threshold: 150000,
      date: '2026-12-31',
    });
    expect(extractProposition(K('Will Bitcoin be below $70,000.00 before Feb 1, 2026?', null))).toMatchObject({ mode: 'min_by', date: '2026-01-31' });
    expect(extractProposition(P('Will Bitcoin dip to $70,000 in January?', { close_time: '2026-02-01T05:00:00Z' }))).toMatchObject({
      mode: 'min_by',
      date: '2026-01-31',
    });
  });

  it('converts a UTC observation time to US Eastern', () => {
    const p = extractProposition({ platform: 'venue_f', market_id: 'F-1', title: 'Bitcoin above $96,000 on 2026-01-10 22:00 UTC' });
    expect(p).toMatchObject({ mode: 'at', date: '2026-01-10', time: '17:00', comparator: '>', threshold: 96000 });
  });

  it('marks the No side and the other team as negations of the title', () => {
    expect(extractProposition(P('Will Norway win the 2026 FIFA World Cup?', { outcome: 'No' })).negated).toBe(true);
    const other = extractProposition(P('Spread: Seahawks (-2.5)', { outcome: 'Patriots' }));
    expect([other.subject, other.line]).toEqual(['NFL:NE', 2.5]);
    expect(extractProposition(P('Patriots vs. Seahawks: O/U 44.5', { outcome: 'Under' }))).toMatchObject({ comparator: '<', side: 'under' });
  });
});
