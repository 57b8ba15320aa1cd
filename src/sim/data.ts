import type { SimTeam } from './types.js';

/**
 * Names the simulated world is made of. Real team, league and public-figure names, so that
 * simulated titles read the way real venue titles do (see test/fixtures/matching/dev-pairs.json);
 * every price, id and outcome built from them is synthetic.
 */

const t = (city: string, nick: string, abbr: string, name = `${city} ${nick}`): SimTeam => ({ name, city, nick, abbr });

export interface LeagueDef {
  readonly league: string;
  readonly sport: string;
  /** Kalshi series code part, e.g. NFL → KXNFLGAME. */
  readonly code: string;
  readonly esports: boolean;
  readonly draws: boolean;
  /** Typical total line and spread lines. */
  readonly total: number;
  readonly spreads: readonly number[];
  readonly unit: string;
  readonly teams: readonly SimTeam[];
  readonly players?: readonly (readonly [team: string, player: string, stat: string, line: number])[];
  /** Championship name Kalshi uses ("Pro Football Championship") and Polymarket's. */
  readonly champ?: { readonly kalshi: string; readonly poly: string; readonly code: string };
}

export const LEAGUES: readonly LeagueDef[] = [
  {
    league: 'NFL',
    sport: 'football',
    code: 'NFL',
    esports: false,
    draws: false,
    total: 44.5,
    spreads: [1.5, 2.5, 3.5, 6.5, 7.5],
    unit: 'points',
    teams: [
      t('New England', 'Patriots', 'NE'),
      t('Seattle', 'Seahawks', 'SEA'),
      t('Buffalo', 'Bills', 'BUF'),
      t('Jacksonville', 'Jaguars', 'JAC'),
      t('Kansas City', 'Chiefs', 'KC'),
      t('Las Vegas', 'Raiders', 'LV'),
      t('Philadelphia', 'Eagles', 'PHI'),
      t('Dallas', 'Cowboys', 'DAL'),
      t('Green Bay', 'Packers', 'GB'),
      t('Chicago', 'Bears', 'CHI'),
      t('San Francisco', '49ers', 'SF'),
      t('Detroit', 'Lions', 'DET'),
    ],
    players: [
      ['SEA', 'Jaxon Smith-Njigba', 'receptions', 6.5],
      ['KC', 'Travis Kelce', 'receptions', 5.5],
      ['PHI', 'Saquon Barkley', 'rushing yards', 85.5],
      ['BUF', 'Josh Allen', 'passing yards', 245.5],
      ['DET', 'Amon-Ra St. Brown', 'receptions', 7.5],
    ],
    champ: { kalshi: 'Pro Football Championship', poly: 'NFL league championship', code: 'SB' },
  },
  {
    league: 'NBA',
    sport: 'basketball',
    code: 'NBA',
    esports: false,
    draws: false,
    total: 224.5,
    spreads: [2.5, 4.5, 6.5, 9.5],
    unit: 'points',
    teams: [
      t('New York', 'Knicks', 'NYK'),
      t('Phoenix', 'Suns', 'PHX'),
      t('Atlanta', 'Hawks', 'ATL'),
      t('Golden State', 'Warriors', 'GSW'),
      t('Boston', 'Celtics', 'BOS'),
      t('Los Angeles', 'Lakers', 'LAL'),
      t('Denver', 'Nuggets', 'DEN'),
      t('Milwaukee', 'Bucks', 'MIL'),
      t('Oklahoma City', 'Thunder', 'OKC'),
      t('Miami', 'Heat', 'MIA'),
    ],
    players: [
      ['DEN', 'Nikola Jokic', 'points', 27.5],
      ['OKC', 'Shai Gilgeous-Alexander', 'points', 31.5],
      ['LAL', 'LeBron James', 'points', 24.5],
      ['BOS', 'Jayson Tatum', 'rebounds', 8.5],
    ],
    champ: { kalshi: 'Pro Basketball Championship', poly: 'NBA Finals', code: 'NBA' },
  },
  {
    league: 'MLB',
    sport: 'baseball',
    code: 'MLB',
    esports: false,
    draws: false,
    total: 8.5,
    spreads: [1.5],
    unit: 'runs',
    teams: [
      t('Houston', 'Astros', 'HOU'),
      t('New York', 'Yankees', 'NYY'),
      t('Los Angeles', 'Dodgers', 'LAD'),
      t('Atlanta', 'Braves', 'ATL'),
      t('Boston', 'Red Sox', 'BOS'),
      t('Chicago', 'Cubs', 'CHC'),
      t('Philadelphia', 'Phillies', 'PHI'),
      t('San Diego', 'Padres', 'SD'),
    ],
    champ: { kalshi: 'Pro Baseball Championship', poly: 'World Series', code: 'MLB' },
  },
  {
    league: 'NHL',
    sport: 'hockey',
    code: 'NHL',
    esports: false,
    draws: false,
    total: 6.5,
    spreads: [1.5],
    unit: 'goals',
    teams: [
      t('Toronto', 'Maple Leafs', 'TOR'),
      t('Edmonton', 'Oilers', 'EDM'),
      t('Florida', 'Panthers', 'FLA'),
      t('Dallas', 'Stars', 'DAL'),
      t('Colorado', 'Avalanche', 'COL'),
      t('New York', 'Rangers', 'NYR'),
      t('Vegas', 'Golden Knights', 'VGK'),
      t('Boston', 'Bruins', 'BOS'),
    ],
  },
  {
    league: 'EPL',
    sport: 'soccer',
    code: 'EPL',
    esports: false,
    draws: true,
    total: 2.5,
    spreads: [1.5],
    unit: 'goals',
    teams: [
      t('Arsenal', 'Arsenal', 'ARS', 'Arsenal'),
      t('Liverpool', 'Liverpool', 'LIV', 'Liverpool'),
      t('Manchester', 'City', 'MCI', 'Manchester City'),
      t('Chelsea', 'Chelsea', 'CHE', 'Chelsea'),
      t('Tottenham', 'Hotspur', 'TOT', 'Tottenham Hotspur'),
      t('Newcastle', 'United', 'NEW', 'Newcastle United'),
    ],
  },
  {
    league: 'NCAAF',
    sport: 'football',
    code: 'NCAAF',
    esports: false,
    draws: false,
    total: 52.5,
    spreads: [3.5, 7.5, 10.5],
    unit: 'points',
    teams: [
      t('Alabama', 'Crimson Tide', 'BAMA'),
      t('Georgia', 'Bulldogs', 'UGA'),
      t('Ohio State', 'Buckeyes', 'OSU'),
      t('Michigan', 'Wolverines', 'MICH'),
      t('Texas', 'Longhorns', 'TEX'),
      t('Oregon', 'Ducks', 'ORE'),
    ],
    champ: { kalshi: 'College Football Championship', poly: 'College Football National Championship', code: 'NCAAF' },
  },
  {
    league: 'LOL',
    sport: 'esports',
    code: 'LOL',
    esports: true,
    draws: false,
    total: 2.5,
    spreads: [1.5],
    unit: 'maps',
    teams: [
      t('T1', 'T1', 'T1', 'T1'),
      t('Gen.G', 'Gen.G', 'GEN', 'Gen.G'),
      t('G2', 'Esports', 'G2', 'G2 Esports'),
      t('Fnatic', 'Fnatic', 'FNC', 'Fnatic'),
      t('Team', 'Liquid', 'TL', 'Team Liquid'),
      t('Bilibili', 'Gaming', 'BLG', 'Bilibili Gaming'),
    ],
  },
  {
    league: 'CS2',
    sport: 'esports',
    code: 'CS2',
    esports: true,
    draws: false,
    total: 2.5,
    spreads: [1.5],
    unit: 'maps',
    teams: [
      t('Natus', 'Vincere', 'NAVI', 'Natus Vincere'),
      t('Team', 'Vitality', 'VIT', 'Team Vitality'),
      t('FaZe', 'Clan', 'FAZE', 'FaZe Clan'),
      t('MOUZ', 'MOUZ', 'MOUZ', 'MOUZ'),
      t('Team', 'Spirit', 'SPIRIT', 'Team Spirit'),
      t('G2', 'Esports', 'G2', 'G2 Esports'),
    ],
  },
];

export interface RaceDef {
  readonly key: string;
  /** Kalshi series ticker. */
  readonly series: string;
  readonly kalshiTitle: (name: string) => string;
  readonly kalshiEvent: string;
  readonly polyTitle: (name: string) => string;
  readonly polyEvent: string;
  readonly office: string;
  readonly year: number;
  readonly closeIso: string;
  readonly candidates: readonly (readonly [name: string, code: string, fair: number])[];
}

export const RACES: readonly RaceDef[] = [
  {
    key: 'pres28',
    series: 'KXPRESPERSON',
    office: 'President',
    year: 2028,
    closeIso: '2028-11-07T15:00:00Z',
    kalshiTitle: (n) => `Will ${n} win the 2028 presidential election?`,
    kalshiEvent: '2028 U.S. presidential election winner?',
    polyTitle: (n) => `Will ${n} win the 2028 US Presidential Election?`,
    polyEvent: 'Presidential Election Winner 2028',
    candidates: [
      ['JD Vance', 'JVAN', 2900],
      ['Gavin Newsom', 'GNEW', 1900],
      ['Marco Rubio', 'MRUB', 900],
      ['Alexandria Ocasio-Cortez', 'AOC', 600],
      ['Josh Shapiro', 'JSHA', 500],
      ['Pete Buttigieg', 'PBUT', 350],
    ],
  },
  {
    key: 'demnom28',
    series: 'KXPRESNOMD',
    office: 'Democratic presidential nominee',
    year: 2028,
    closeIso: '2028-08-31T14:00:00Z',
    kalshiTitle: (n) => `Will ${n} be the Democratic Presidential nominee in 2028?`,
    kalshiEvent: '2028 Democratic presidential nominee',
    polyTitle: (n) => `Will ${n} win the 2028 Democratic presidential nomination?`,
    polyEvent: 'Democratic Presidential Nominee 2028',
    candidates: [
      ['Gavin Newsom', 'GNEW', 3100],
      ['Alexandria Ocasio-Cortez', 'AOC', 1200],
      ['Josh Shapiro', 'JSHA', 900],
      ['James Talarico', 'JTAL', 300],
      ['Ro Khanna', 'RKHA', 250],
      ['Jon Ossoff', 'JOSS', 400],
      ['Ruben Gallego', 'RGAL', 200],
    ],
  },
  {
    key: 'repnom28',
    series: 'KXPRESNOMR',
    office: 'Republican presidential nominee',
    year: 2028,
    closeIso: '2028-08-31T14:00:00Z',
    kalshiTitle: (n) => `Will ${n} be the nominee for the Presidency for the Republican party?`,
    kalshiEvent: '2028 Republican presidential nominee',
    polyTitle: (n) => `Will ${n} win the 2028 Republican presidential nomination?`,
    polyEvent: 'Republican Presidential Nominee 2028',
    candidates: [
      ['JD Vance', 'JVAN', 5200],
      ['Marco Rubio', 'MRUB', 1100],
      ['Donald Trump Jr.', 'DTJR', 500],
      ['Erika Kirk', 'EKIR', 150],
      ['Elon Musk', 'EM', 60],
    ],
  },
  {
    key: 'gov-ca-26',
    series: 'KXGOVCA',
    office: 'Governor of California',
    year: 2026,
    closeIso: '2026-11-03T15:00:00Z',
    kalshiTitle: () => 'Who will win the governorship in California?',
    kalshiEvent: 'California Governor winner?',
    polyTitle: (n) => `Will ${n} win the California Governor Election in 2026?`,
    polyEvent: 'California Governor Election Winner',
    candidates: [
      ['Katie Porter', 'KPOR', 3500],
      ['Steve Hilton', 'SHIL', 2200],
      ['Xavier Becerra', 'XBEC', 1500],
      ['Chad Bianco', 'CBIA', 900],
    ],
  },
  {
    key: 'brpres26',
    series: 'KXBRPRES',
    office: 'President of Brazil',
    year: 2026,
    closeIso: '2026-10-25T23:00:00Z',
    kalshiTitle: (n) => `Will ${n} win the 2026 Brazilian presidential election?`,
    kalshiEvent: 'Brazil Presidential election winner?',
    polyTitle: (n) => `Will ${n} win the 2026 Brazilian presidential election?`,
    polyEvent: 'Brazil Presidential Election',
    candidates: [
      ['Luiz Inácio Lula da Silva', 'LULA', 4600],
      ['Tarcísio de Freitas', 'TARC', 2800],
      ['Ronaldo Caiado', 'RCAI', 500],
      ['Eduardo Leite', 'ELEI', 300],
    ],
  },
];

/** Fed meeting months ahead of the world's start (month offset, Kalshi code, Polymarket words). */
export const FED_OUTCOMES: readonly (readonly [code: string, kalshi: string, poly: string, fair: number])[] = [
  ['C25', 'Cut rates by 25bps', 'decrease interest rates by 25 bps', 3500],
  ['H0', 'Hike rates by 0bps', 'no change in Fed interest rates', 5600],
  ['H25', 'Hike rates by 25bps', 'increase interest rates by 25 bps', 400],
  ['C26', 'Cut rates by >25bps', 'decrease interest rates by 50+ bps', 500],
];

export const CRYPTO: readonly (readonly [name: string, code: string, spot: number, step: number])[] = [
  ['Bitcoin', 'BTC', 96_000, 2_500],
  ['Ethereum', 'ETH', 3_400, 100],
  ['Solana', 'SOL', 210, 10],
];

export const AWARDS: readonly (readonly [show: string, category: string, code: string, nominees: readonly string[]])[] = [
  ['Oscars', 'Best Picture', 'OSCARPIC', ['One Battle After Another', 'Sinners', 'Hamnet', 'Marty Supreme', 'Frankenstein']],
  ['Grammys', 'Album of the Year', 'GRAMMYAOTY', ['Mayhem', 'Debí Tirar Más Fotos', "Man's Best Friend", 'Let God Sort Em Out']],
];

export const WORLD_CUP: readonly (readonly [country: string, code2: string, code3: string, fair: number])[] = [
  ['Spain', 'ES', 'ESP', 1700],
  ['France', 'FR', 'FRA', 1500],
  ['England', 'GB', 'ENG', 1200],
  ['Brazil', 'BR', 'BRA', 1000],
  ['Argentina', 'AR', 'ARG', 1000],
  ['Germany', 'DE', 'GER', 700],
  ['Portugal', 'PT', 'POR', 700],
  ['Norway', 'NO', 'NOR', 250],
  ['Japan', 'JP', 'JPN', 150],
];

/** CPI year-over-year strikes (percent) and their fair values. */
export const CPI_STRIKES: readonly (readonly [line: number, fair: number])[] = [
  [2.7, 7000],
  [2.9, 4500],
  [3.1, 2000],
];

/** Yearly-high strikes as multiples of spot, and their fair values. */
export const CRYPTO_YEARLY_HIGHS: readonly (readonly [mult: number, fair: number])[] = [
  [1.2, 2500],
  [1.45, 800],
];

/** Month names as the venues write them: Kalshi tickers, full names, short names. */
export const MONTH_CODES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] as const;
export const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'] as const;
export const MONTH_SHORT = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

/** Usernames that create Manifold's binary markets in the world. */
export const MANIFOLD_CREATORS = ['Manifold', 'JamesGrugett', 'SG', 'Joshua', 'Bayesian', 'mattyb'] as const;

/** Words of the Adjective-Noun pseudonyms Polymarket's data-api shows for wallets. */
export const PSEUDONYM_ADJECTIVES = ['Enchanting', 'Quiet', 'Bold', 'Lucky', 'Patient', 'Sharp', 'Restless', 'Frugal', 'Brave', 'Curious'] as const;
export const PSEUDONYM_NOUNS = ['Populist', 'Otter', 'Contrarian', 'Falcon', 'Oracle', 'Badger', 'Skeptic', 'Heron', 'Gambit', 'Lantern'] as const;
