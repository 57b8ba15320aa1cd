/**
 * Team, club, esports-org and national-team knowledge for the matcher: canonical ids, the names
 * venues use for them (city, nickname, full name, common short forms) and the abbreviations that
 * appear in Kalshi tickers and Polymarket slugs. Written from general knowledge; it only has to be
 * good enough to say "these two strings name the same team", never to be complete. The tables are
 * data (`tables/teams.json`, `tables/leagues.json`), indexed once at module load.
 *
 * A team id is `<group>:<code>`, the group being the league for North-American leagues (NFL, NBA,
 * MLB, NHL, NCAAF), `SOC` for club soccer (one club plays in several competitions), `ESP` for
 * esports orgs (one org fields teams in several games) and `NAT` for national teams.
 */
import LEAGUE_DATA from './tables/leagues.json' with { type: 'json' };
import TEAM_DATA from './tables/teams.json' with { type: 'json' };

/** One team: canonical id, display name, and every name it goes by. */
export interface TeamInfo {
  readonly id: string;
  /** NFL, NBA, MLB, NHL, NCAAF, SOC, ESP, NAT. */
  readonly group: string;
  readonly code: string;
  readonly name: string;
  readonly city: string;
  readonly nick: string;
  /** Folded names (see foldName) that identify this team. */
  readonly names: readonly string[];
  /** Upper-case abbreviations used in tickers and slugs. */
  readonly codes: readonly string[];
}

/** A North-American team row of `tables/teams.json`: the name is "<city> <nick>" unless `fullName` says. */
interface CityTeamRow {
  readonly code: string;
  readonly city: string;
  readonly nick: string;
  /** Other ticker and slug codes. */
  readonly altCodes?: readonly string[];
  /** Other names it goes by, beyond city, nickname and full name. */
  readonly altNames?: readonly string[];
  readonly fullName?: string;
}

/** A club, esports org or national team row of `tables/teams.json`: one name venues agree on. */
interface NamedTeamRow {
  readonly code: string;
  readonly name: string;
  readonly altCodes?: readonly string[];
  readonly altNames?: readonly string[];
}

interface TeamData {
  readonly NFL: readonly CityTeamRow[];
  readonly NBA: readonly CityTeamRow[];
  readonly MLB: readonly CityTeamRow[];
  readonly NHL: readonly CityTeamRow[];
  readonly NCAAF: readonly CityTeamRow[];
  /** Club soccer. */
  readonly SOC: readonly NamedTeamRow[];
  /** Esports orgs. */
  readonly ESP: readonly NamedTeamRow[];
  /** National teams, by FIFA code; ISO2 first among the alternatives. */
  readonly NAT: readonly NamedTeamRow[];
}

const TEAM_ROWS: TeamData = TEAM_DATA;

/** Sport of each team group. */
export const GROUP_SPORT: Readonly<Record<string, string>> = LEAGUE_DATA.groupSport;

/** Lower-case, accent-free, punctuation-free form used as a name key. */
export function foldName(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/['’.]/g, '')
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

const TEAMS: TeamInfo[] = [];
const BY_ID = new Map<string, TeamInfo>();
const BY_NAME = new Map<string, string[]>();
const BY_CODE = new Map<string, Map<string, string[]>>();

function addName(name: string, id: string): void {
  const k = foldName(name);
  if (!k) return;
  const ids = BY_NAME.get(k);
  if (!ids) BY_NAME.set(k, [id]);
  else if (!ids.includes(id)) ids.push(id);
}

function addCode(group: string, code: string, id: string): void {
  let m = BY_CODE.get(group);
  if (!m) BY_CODE.set(group, (m = new Map()));
  const ids = m.get(code);
  if (!ids) m.set(code, [id]);
  else if (!ids.includes(id)) ids.push(id);
}

function add(t: TeamInfo): void {
  TEAMS.push(t);
  BY_ID.set(t.id, t);
  for (const n of t.names) addName(n, t.id);
  for (const c of t.codes) addCode(t.group, c, t.id);
}

for (const group of ['NFL', 'NBA', 'MLB', 'NHL', 'NCAAF'] as const) {
  for (const { code, city, nick, altCodes = [], altNames = [], fullName } of TEAM_ROWS[group]) {
    const name = fullName || `${city} ${nick}`;
    const names = [name, `${city} ${nick}`, nick, city, ...altNames];
    // Schools are often written "Ohio St." / "Penn St.".
    if (city.endsWith(' State')) names.push(`${city.slice(0, -6)} St`, `${city.slice(0, -6)} St ${nick}`);
    add({ id: `${group}:${code}`, group, code, name, city, nick, names, codes: [code, ...altCodes] });
  }
}
for (const group of ['SOC', 'ESP', 'NAT'] as const) {
  for (const { code, name, altCodes = [], altNames = [] } of TEAM_ROWS[group]) {
    add({ id: `${group}:${code}`, group, code, name, city: name, nick: name, names: [name, ...altNames], codes: [code, ...altCodes] });
  }
}

/** The team with this id (an individual's id is made up on the spot: see personId). */
export function teamById(id: string): TeamInfo | undefined {
  const t = BY_ID.get(id);
  if (t || !id.startsWith(`${INDIVIDUAL}:`)) return t;
  const surname = id.slice(INDIVIDUAL.length + 1);
  const name = surname.replace(/(^|\s)\S/g, (c) => c.toUpperCase());
  return { id, group: INDIVIDUAL, code: surname.slice(0, 3).toUpperCase(), name, city: name, nick: name, names: [surname], codes: [] };
}

/**
 * The team group of one-on-one sports (tennis, MMA, boxing): no table of players, each competitor
 * is identified by surname within the game (the blocking key also carries the day and the opponent).
 */
export const INDIVIDUAL = 'IND';
const NAME_SUFFIXES = new Set(['jr', 'sr', 'ii', 'iii', 'iv']);

/**
 * An individual competitor's id from a name as titles write it ("Jannik Sinner", "Sinner",
 * "J. Sinner (ITA)", "Alex Pereira - Round 1"): `IND:<surname>`, or undefined when the text does
 * not look like a person's name (1 to 4 words of letters).
 */
export function personId(name: string): string | undefined {
  // "UFC 322: Della Maddalena" (a label before "X:") and "Alcaraz : Final" / "Pereira - Round 1" (a qualifier after " :").
  const core = name
    .replace(/\(.*?\)/g, ' ')
    .replace(/^.*\S:\s+/, '')
    .replace(/\s+[-–:|](?:\s.*)?$/, '');
  const words = foldName(core)
    .split(' ')
    .filter((w) => w.length > 0 && !NAME_SUFFIXES.has(w));
  if (words.length === 0 || words.length > 4 || !words.every((w) => /^[a-z]+$/.test(w))) return undefined;
  const last = words[words.length - 1]!;
  // "de Minaur", "van de Zandschulp", "Della Maddalena": particles belong to the surname.
  let i = words.length - 1;
  while (i > 0 && /^(de|da|del|della|di|van|von|der|den|le|la|dos|du|st|mc|mac|al|el|ben|bin)$/.test(words[i - 1]!)) i--;
  const surname = i < words.length - 1 ? words.slice(i).join(' ') : last;
  return last.length >= 2 ? `${INDIVIDUAL}:${surname}` : undefined;
}

/** Every known team (for tests and diagnostics). */
export function allTeams(): readonly TeamInfo[] {
  return TEAMS;
}

/**
 * Ids of the teams a name may refer to, restricted to `groups` when given. "Seattle" alone is
 * ambiguous across leagues (Seahawks, Mariners, Kraken, …); callers narrow it with a league hint
 * or with the other team of the game. A leading "the" is ignored ("the Norway" is Norway).
 */
export function teamsByName(name: string, groups?: readonly string[]): string[] {
  if (groups?.includes(INDIVIDUAL)) {
    const p = personId(name);
    return p ? [p] : [];
  }
  const ids = namedIds(name);
  return groups && groups.length > 0 ? ids.filter((id) => groups.includes(id.slice(0, id.indexOf(':')))) : ids.slice();
}

// Titles repeat the same few thousand names: remember what a raw name folded to (bounded).
const NAME_MEMO = new Map<string, readonly string[]>();
const NO_IDS: readonly string[] = [];

function namedIds(name: string): readonly string[] {
  const hit = NAME_MEMO.get(name);
  if (hit) return hit;
  let k = foldName(name);
  if (k.startsWith('the ') && !BY_NAME.has(k)) k = k.slice(4);
  // Club-name decorations: "Arsenal FC", "FC Barcelona", "Inter Miami CF".
  if (!BY_NAME.has(k)) k = k.replace(/^(?:fc|cf|afc|ac|as|ssc|sc) /, '').replace(/ (?:fc|cf|sc|afc)$/, '');
  const ids = BY_NAME.get(k) ?? NO_IDS;
  if (NAME_MEMO.size >= 50_000) NAME_MEMO.clear();
  NAME_MEMO.set(name, ids);
  return ids;
}

/** Ids of the teams an abbreviation (ticker or slug code, any case) may refer to within `groups`. */
export function teamsByCode(code: string, groups: readonly string[]): string[] {
  const c = code.toUpperCase();
  const out: string[] = [];
  for (const g of groups) for (const id of BY_CODE.get(g)?.get(c) ?? []) if (!out.includes(id)) out.push(id);
  return out;
}

/**
 * Splits a ticker's concatenated team codes ("NESEA", "BUFJAC", "NYKPHX") into two known codes of
 * the given groups. Undefined when no split, or more than one split, names two known teams.
 */
export function splitTeamCodes(s: string, groups: readonly string[]): [string, string] | undefined {
  let found: [string, string] | undefined;
  for (let i = 2; i <= s.length - 2; i++) {
    const a = teamsByCode(s.slice(0, i), groups);
    const b = teamsByCode(s.slice(i), groups);
    if (a.length === 1 && b.length === 1 && a[0] !== b[0]) {
      if (found) return undefined;
      found = [a[0]!, b[0]!];
    }
  }
  return found;
}

/** The team group of an id ("NFL" for "NFL:SEA"). */
export function groupOf(id: string): string {
  return id.slice(0, id.indexOf(':'));
}

/**
 * Leagues and competitions: the code venues use in tickers and slugs → the team groups whose teams
 * play in it, its sport, and whether a game can end in a draw (a draw breaks the complement
 * between "A wins" and "B wins").
 */
export interface LeagueInfo {
  readonly league: string;
  readonly sport: string;
  readonly groups: readonly string[];
  readonly draws: boolean;
}

const LEAGUE_ROWS: readonly LeagueInfo[] = LEAGUE_DATA.leagues;

const LEAGUE_BY_NAME = new Map<string, LeagueInfo>(LEAGUE_ROWS.map((l) => [l.league, l]));

/** Aliases of league codes as they appear in Kalshi series and Polymarket slugs. */
const LEAGUE_ALIASES: Readonly<Record<string, string>> = LEAGUE_DATA.aliases;

/** The league for a code ("NFL", "nfl", "fifwc", "KXEPL…" stripped of KX), if known. */
export function leagueByCode(code: string): LeagueInfo | undefined {
  const l = LEAGUE_ALIASES[code.toUpperCase()];
  return l ? LEAGUE_BY_NAME.get(l) : undefined;
}

/** The league row by its canonical name. */
export function leagueInfo(league: string): LeagueInfo | undefined {
  return LEAGUE_BY_NAME.get(league);
}

/** Canonical league codes, longest first (for prefix matching Kalshi series tickers). */
export const LEAGUE_CODES_LONGEST_FIRST: readonly string[] = Object.keys(LEAGUE_ALIASES).sort((a, b) => b.length - a.length);
