/**
 * Proposition extraction: turns one venue listing (title, event title, outcome label, close time,
 * and the structure of its id: Kalshi tickers, Polymarket slugs) into the structured statement its
 * YES side settles on: who (subject), what (kind, stat, office, stage), when (date, month, year,
 * time), and how much (comparator and threshold, line). Matching compares these fields, never the
 * raw strings, so that "7+ receptions" meets "Receptions O/U 6.5" and "above $139,999.99" meets
 * "reach $140,000", while "above 4.7%" stays apart from "≥4.7%".
 *
 * Extraction is deliberately conservative: a field that cannot be read with confidence is left
 * null, and the matcher never groups on a missing subject or kind.
 */
import {
  GROUP_SPORT,
  LEAGUE_CODES_LONGEST_FIRST,
  groupOf,
  leagueByCode,
  leagueInfo,
  splitTeamCodes,
  teamById,
  teamsByCode,
  teamsByName,
  INDIVIDUAL,
  type LeagueInfo,
} from './teams.js';
import {
  MONTHS,
  MONTH_RE,
  addDays,
  closeMs,
  contentTokens,
  daysInMonth,
  etParts,
  findDate,
  findMonth,
  findTime,
  findYear,
  foldPerson,
  foldText,
  isoDay,
  isoMonth,
  parseAmount,
  yearNear,
} from './text.js';

/** One venue listing as the matcher sees it. */
export interface MatchInput {
  readonly platform: string;
  /** Platform-native id (Kalshi ticker, Polymarket id or slug…); null when unknown. */
  readonly market_id: string | null;
  readonly title: string;
  readonly event_title?: string | undefined;
  /** The outcome label of this listing's YES side ("Buffalo", "Over", "Yes", "$91,000 or above"). */
  readonly outcome?: string | undefined;
  /** ISO 8601, unix seconds or ms. */
  readonly close_time?: string | number | undefined;
  readonly category?: string | undefined;
  /**
   * The wire protocol the venue speaks (`kalshi`, `polymarket`, …) when `platform` is a neutral
   * venue label: it says how to read `market_id`. Kalshi-style ids are also recognised by shape.
   */
  readonly protocol?: string | undefined;
}

/** What a proposition is about; two propositions of different kinds never match. */
export type PropositionKind =
  | 'game_winner'
  | 'draw'
  | 'spread'
  | 'total'
  | 'player_prop'
  | 'map_winner'
  | 'championship'
  | 'tournament_winner'
  | 'group_winner'
  | 'stage_reach'
  | 'nomination'
  | 'election_winner'
  | 'chamber_control'
  | 'fed_decision'
  | 'fed_rate'
  | 'econ_threshold'
  | 'crypto_price'
  | 'ipo'
  | 'award'
  | 'other';

/** `range` is an inclusive [threshold, thresholdHigh] bucket. */
export type Comparator = '>' | '>=' | '<' | '<=' | '=' | 'range';

/** Spec 2.4 market_class. */
export type MarketClass = 'moneyline' | 'spread' | 'total' | 'player_prop' | 'other';

/** The structured statement one listing's YES side settles on. */
export interface Proposition {
  readonly platform: string;
  readonly marketId: string | null;
  readonly kind: PropositionKind;
  /**
   * Canonical subject id: a team (`NFL:SEA`, `SOC:ARS`, `NAT:NOR`, `ESP:T1`), a person
   * (`person:james talarico`), an asset (`asset:BTC`), an organisation (`org:openai`), a work
   * (`work:sinners`), an indicator (`cpi_yoy`), `fed`. Null when unknown or ambiguous.
   */
  readonly subject: string | null;
  /** Candidate subject ids when a team name is ambiguous ("Giants"); [subject] when definite. */
  readonly subjectCandidates: readonly string[];
  /** Display name of the subject. */
  readonly subjectName: string | null;
  readonly sport: string | null;
  /** NFL, NBA, MLB, NHL, NCAAF, EPL, UCL, WC, LOL, CS2, … */
  readonly league: string | null;
  /** Participants of the game (team ids), away first when known. */
  readonly teams: readonly string[];
  readonly home: string | null;
  readonly away: string | null;
  /** What is won: `NFL` (league title), `fifa_world_cup_men`, … */
  readonly competition: string | null;
  /** `winner`, `group_F`, `reach_sf`, `conf_AFC`, `map1`, … */
  readonly stage: string | null;
  /** `president_us`, `governor_ca`, `president_br`, … */
  readonly office: string | null;
  readonly party: string | null;
  readonly year: number | null;
  /** Game day, deadline day or observation day (ISO, US Eastern calendar). */
  readonly date: string | null;
  /** Where `date` came from; `close_time` dates are inferred. */
  readonly dateSource: 'ticker' | 'slug' | 'title' | 'close_time' | null;
  /** Meeting or data month "YYYY-MM" (or quarter "YYYY-Qn"). */
  readonly month: string | null;
  /** Observation clock time in US Eastern, "HH:MM" (point-in-time prices). */
  readonly time: string | null;
  /** Crypto: `at` (value at a time), `max_by` (touches above by a deadline), `min_by`. IPO: `by`, `first`. */
  readonly mode: string | null;
  readonly comparator: Comparator | null;
  readonly threshold: number | null;
  readonly thresholdHigh: number | null;
  /** `usd`, `pct`, `bps`, `count` (integer stats, points, margins). */
  readonly unit: string | null;
  /** Player stat (`receptions`, `receiving_yards`, `points`…) or total unit (`points`, `maps`). */
  readonly stat: string | null;
  /** full, 1H, 2H, 1Q, F5, P1; null for non-game propositions. */
  readonly period: string | null;
  readonly market_class: MarketClass | null;
  readonly market_type: string;
  /** Spread: signed from the subject's side (-2.5 gives points). Total / prop: the half line. */
  readonly line: number | null;
  readonly side: 'home' | 'away' | 'over' | 'under' | null;
  readonly player: string | null;
  /** Display name of the team a team line is about. */
  readonly team: string | null;
  /** YES is the complement of the statement read from the title (outcome "No", "Under", the other team). */
  readonly negated: boolean;
  /** Content words, for `other` propositions only. */
  readonly tokens: readonly string[];
  /** How sure extraction is that these fields are what the listing settles on (0..1). */
  readonly confidence: number;
  /** Which parts of the listing the fields came from. */
  readonly evidence: readonly string[];
  /** Canonical text of the settlement fields: the same proposition gives the same signature. */
  readonly signature: string;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type Draft = Mutable<Omit<Proposition, 'signature' | 'evidence' | 'tokens' | 'teams' | 'subjectCandidates'>> & {
  evidence: string[];
  tokens: string[];
  teams: string[];
  subjectCandidates: string[];
};

// ---------------------------------------------------------------------------------------------
// Listing context: folded strings and parsed id structure, computed once per listing.

interface Ticker {
  /** Series without the KX prefix: "NFLGAME", "FEDDECISION", "BTCMAXY". */
  readonly series: string;
  readonly eventPart: string;
  readonly market: string | undefined;
  readonly extra: readonly string[];
  readonly yy: number | undefined;
  readonly mon: number | undefined;
  readonly dd: number | undefined;
  /** "HH" or "HHMM" after the day. */
  readonly clock: string | undefined;
  /** What follows the date in the event part (team codes, group letter, stage). */
  readonly tail: string;
}

interface Slug {
  readonly league: LeagueInfo;
  readonly away: string | undefined;
  readonly home: string | undefined;
  readonly date: string;
  readonly suffix: string;
}

interface Ctx {
  readonly input: MatchInput;
  readonly platform: string;
  readonly id: string | null;
  readonly rawTitle: string;
  readonly title: string;
  readonly event: string;
  readonly outcome: string;
  readonly rawOutcome: string;
  readonly close: number | undefined;
  readonly kt: Ticker | undefined;
  readonly slug: Slug | undefined;
  readonly kalshi: boolean;
}

const MON3 = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const TICKER_RE = /^(?:KX)?([A-Z0-9]+)-([A-Z0-9.]+)(?:-(.+))?$/;
const TICKER_DATE_RE = /^(\d{2})(JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC)(\d{2})?(\d{4}(?=[A-Z]|$)|\d{2}(?=[A-Z]|$))?(.*)$/;
const TICKER_YEAR_RE = /^(\d{2})([A-Z0-9]*)$/;

const KX_SHAPE = /^KX[A-Z0-9]+-[A-Z0-9]/;

/** Whether the listing is a Kalshi market: by platform, protocol, or the KX ticker shape. */
function isKalshi(input: MatchInput): boolean {
  const p = input.platform.toLowerCase();
  return p === 'kalshi' || input.protocol?.toLowerCase() === 'kalshi' || (input.market_id !== null && KX_SHAPE.test(input.market_id));
}

function parseTicker(kalshi: boolean, id: string | null): Ticker | undefined {
  if (!id || !kalshi) return undefined;
  const m = TICKER_RE.exec(id.toUpperCase());
  if (!m) return undefined;
  const series = m[1]!;
  const eventPart = m[2]!;
  const rest = m[3] ? m[3].split('-') : [];
  const base = { series, eventPart, market: rest[0], extra: rest.slice(1) };
  const d = TICKER_DATE_RE.exec(eventPart);
  if (d) {
    return { ...base, yy: Number(d[1]), mon: MON3.indexOf(d[2]!) + 1, dd: d[3] ? Number(d[3]) : undefined, clock: d[4] || undefined, tail: d[5] ?? '' };
  }
  const y = TICKER_YEAR_RE.exec(eventPart);
  if (y) return { ...base, yy: Number(y[1]), mon: undefined, dd: undefined, clock: undefined, tail: y[2] ?? '' };
  return { ...base, yy: undefined, mon: undefined, dd: undefined, clock: undefined, tail: eventPart };
}

const SLUG_RE = /^(?:aec-)?([a-z0-9]+)-([a-z0-9]+)-([a-z0-9]+)-(20\d{2}-\d{2}-\d{2})(?:-(.+))?$/;

function parseSlug(id: string | null): Slug | undefined {
  if (!id) return undefined;
  const m = SLUG_RE.exec(id.toLowerCase());
  if (!m) return undefined;
  const league = leagueByCode(m[1]!);
  if (!league) return undefined;
  const one = (c: string): string | undefined => {
    const ids = teamsByCode(c, league.groups);
    return ids.length === 1 ? ids[0] : undefined;
  };
  return { league, away: one(m[2]!), home: one(m[3]!), date: m[4]!, suffix: m[5] ?? '' };
}

const WHO_RAW = /^\s*(?:who|which (?:party|team|country|candidate|person|company|club|nation|player|film|movie|song|album|artist)) will\s+/i;
// Polymarket also asks in the present tense: "Which party wins 2028 US Presidential Election?".
const WHO_WINS_RAW = /^\s*(?:who|which (?:party|candidate|team|country|club|nation|player)) wins\s+/i;

function context(input: MatchInput): Ctx {
  const platform = input.platform.toLowerCase();
  const id = input.market_id ?? null;
  const kalshi = isKalshi(input);
  // "Who will win the governorship in California?" listed per outcome ("Steve Hilton") states the
  // same thing as "Will Steve Hilton win the governorship in California?": read it that way.
  let rawTitle = input.title;
  const out = input.outcome?.trim() ?? '';
  if (WHO_RAW.test(rawTitle) && out && !/^(yes|no)$/i.test(out)) rawTitle = `Will ${out} ${rawTitle.replace(WHO_RAW, '')}`;
  else if (WHO_WINS_RAW.test(rawTitle) && out && !/^(yes|no)$/i.test(out)) rawTitle = `Will ${out} win ${rawTitle.replace(WHO_WINS_RAW, '')}`;
  return {
    input,
    platform,
    id,
    rawTitle,
    title: foldText(rawTitle),
    event: input.event_title ? foldText(input.event_title) : '',
    outcome: input.outcome ? foldText(input.outcome) : '',
    rawOutcome: input.outcome ?? '',
    close: closeMs(input.close_time),
    kt: parseTicker(kalshi, id),
    slug: kalshi ? undefined : parseSlug(id),
    kalshi,
  };
}

function blank(ctx: Ctx): Draft {
  return {
    platform: ctx.platform,
    marketId: ctx.id,
    kind: 'other',
    subject: null,
    subjectCandidates: [],
    subjectName: null,
    sport: null,
    league: null,
    teams: [],
    home: null,
    away: null,
    competition: null,
    stage: null,
    office: null,
    party: null,
    year: null,
    date: null,
    dateSource: null,
    month: null,
    time: null,
    mode: null,
    comparator: null,
    threshold: null,
    thresholdHigh: null,
    unit: null,
    stat: null,
    period: null,
    market_class: null,
    market_type: 'other',
    line: null,
    side: null,
    player: null,
    team: null,
    negated: false,
    tokens: [],
    confidence: 1,
    evidence: [],
  };
}

function note(d: Draft, e: string): void {
  if (!d.evidence.includes(e)) d.evidence.push(e);
}

function tickerYear(ctx: Ctx): number | undefined {
  return ctx.kt?.yy !== undefined ? 2000 + ctx.kt.yy : undefined;
}

// ---------------------------------------------------------------------------------------------
// Sports games: moneyline, spread, total, player props, map winners.

const SPORT_SUFFIX: Readonly<Record<string, { kind: PropositionKind; period?: string; stat?: string }>> = {
  GAME: { kind: 'game_winner' },
  MATCH: { kind: 'game_winner' },
  FIGHT: { kind: 'game_winner' },
  BOUT: { kind: 'game_winner' },
  WINNER: { kind: 'game_winner' },
  '1HWINNER': { kind: 'game_winner', period: '1H' },
  H1WINNER: { kind: 'game_winner', period: '1H' },
  '1H': { kind: 'game_winner', period: '1H' },
  SPREAD: { kind: 'spread' },
  '1HSPREAD': { kind: 'spread', period: '1H' },
  MAPSPREAD: { kind: 'spread' },
  HANDICAP: { kind: 'spread' },
  TOTAL: { kind: 'total' },
  '1HTOTAL': { kind: 'total', period: '1H' },
  MAPTOTAL: { kind: 'total' },
  TOTALMAPS: { kind: 'total' },
  MAP: { kind: 'map_winner' },
  MAPWINNER: { kind: 'map_winner' },
  GAME1: { kind: 'map_winner' },
  REC: { kind: 'player_prop', stat: 'receptions' },
  RECYDS: { kind: 'player_prop', stat: 'receiving_yards' },
  RSHYDS: { kind: 'player_prop', stat: 'rushing_yards' },
  RUSHYDS: { kind: 'player_prop', stat: 'rushing_yards' },
  PASSYDS: { kind: 'player_prop', stat: 'passing_yards' },
  PASSTDS: { kind: 'player_prop', stat: 'passing_touchdowns' },
  ANYTD: { kind: 'player_prop', stat: 'touchdowns' },
  TD: { kind: 'player_prop', stat: 'touchdowns' },
  PTS: { kind: 'player_prop', stat: 'points' },
  REB: { kind: 'player_prop', stat: 'rebounds' },
  AST: { kind: 'player_prop', stat: 'assists' },
  '3PT': { kind: 'player_prop', stat: 'threes' },
  PRA: { kind: 'player_prop', stat: 'points_rebounds_assists' },
  KS: { kind: 'player_prop', stat: 'strikeouts' },
  HR: { kind: 'player_prop', stat: 'home_runs' },
  HITS: { kind: 'player_prop', stat: 'hits' },
  SOG: { kind: 'player_prop', stat: 'shots_on_goal' },
  GOAL: { kind: 'player_prop', stat: 'goals' },
};

interface SportSeries {
  readonly league: LeagueInfo;
  readonly suffix: string;
}

function tickerSport(kt: Ticker | undefined): SportSeries | undefined {
  if (!kt) return undefined;
  for (const code of LEAGUE_CODES_LONGEST_FIRST) {
    if (!kt.series.startsWith(code)) continue;
    const league = leagueByCode(code);
    // One-on-one sports list each bout as its own event: a bare series (KXBOXING-…) is the bout.
    if (league) return { league, suffix: kt.series.slice(code.length) || (league.groups.includes(INDIVIDUAL) && kt.tail ? 'MATCH' : '') };
  }
  return undefined;
}

/** One-on-one sports named in a title or event title (venues without a league code in ids). */
const INDIVIDUAL_SPORT: readonly (readonly [RegExp, string])[] = [
  [/\b(?:atp|wta|tennis|wimbledon|roland garros|french open|australian open)\b/, 'TENNIS'],
  [/\b(?:ufc|mma|pfl|bellator)\b/, 'MMA'],
  [/\bboxing\b/, 'BOXING'],
];

function individualSport(...texts: string[]): LeagueInfo | undefined {
  for (const [re, league] of INDIVIDUAL_SPORT) if (texts.some((t) => re.test(t))) return leagueInfo(league);
  return undefined;
}

/** Stat words, most specific first ("receiving yards" before "receptions"). */
const STATS: readonly (readonly [RegExp, string])[] = [
  [/\breceiving yards?\b|\brec(?:eiving)? yds\b/, 'receiving_yards'],
  [/\brushing yards?\b|\brush(?:ing)? yds\b/, 'rushing_yards'],
  [/\bpassing yards?\b|\bpass(?:ing)? yds\b/, 'passing_yards'],
  [/\bpassing (?:touchdowns?|tds?)\b/, 'passing_touchdowns'],
  [/\brushing (?:touchdowns?|tds?)\b/, 'rushing_touchdowns'],
  [/\breceiving (?:touchdowns?|tds?)\b/, 'receiving_touchdowns'],
  [/\brush(?:ing)? attempts\b/, 'rushing_attempts'],
  [/\bpass(?:ing)? completions\b|\bcompletions\b/, 'completions'],
  [/\breceptions?\b|\bcatches\b/, 'receptions'],
  [/\b(?:anytime )?(?:touchdowns?|tds?)\b/, 'touchdowns'],
  [/\bpoints? ?\+ ?rebounds? ?\+ ?assists?\b|\bpra\b/, 'points_rebounds_assists'],
  [/\b(?:3-pointers|three-pointers|threes|3pt|3-pt)(?: made)?\b/, 'threes'],
  [/\brebounds?\b/, 'rebounds'],
  [/\bassists?\b/, 'assists'],
  [/\bsteals?\b/, 'steals'],
  [/\bblocks?\b/, 'blocks'],
  [/\bstrikeouts?\b/, 'strikeouts'],
  [/\bhome runs?\b/, 'home_runs'],
  [/\btotal bases\b/, 'total_bases'],
  [/\bhits?\b/, 'hits'],
  [/\bshots on goal\b|\bsog\b/, 'shots_on_goal'],
  [/\bsaves?\b/, 'saves'],
  [/\bgoals?\b/, 'goals'],
  [/\bkills?\b/, 'kills'],
  [/\bpoints?\b/, 'points'],
];

function statOf(s: string): string | undefined {
  for (const [re, stat] of STATS) if (re.test(s)) return stat;
  return undefined;
}

const ESPORTS_PREFIX = /^(lol|league of legends|counter-strike 2|counter-strike|cs2|cs:go|csgo|cs|valorant|dota 2|dota2):\s*/;
const BO_RE = /\s*\(bo\d\)/g;
const MATCHUP_RE = /^(.+?)\s+(?:at|@|vs\.?|v\.?|versus)\s+(.+)$/;
const PERIOD_RE = /\b(1h|first half|1st half|2h|second half|2nd half|1q|first quarter|1st quarter|first 5 innings|f5|1st period|first period)\b/;

function periodOf(s: string): string | undefined {
  const m = PERIOD_RE.exec(s);
  if (!m) return undefined;
  const p = m[1]!;
  if (p === '1h' || (p.endsWith(' half') && p.startsWith('f')) || p === '1st half') return '1H';
  if (p === '2h' || p === 'second half' || p === '2nd half') return '2H';
  if (p === '1q' || p.endsWith('quarter')) return '1Q';
  if (p === 'f5' || p === 'first 5 innings') return 'F5';
  return 'P1';
}

function esportsLeague(prefix: string): LeagueInfo | undefined {
  if (prefix.startsWith('lol') || prefix.startsWith('league')) return leagueInfo('LOL');
  if (prefix.startsWith('val')) return leagueInfo('VALORANT');
  if (prefix.startsWith('dota')) return leagueInfo('DOTA2');
  return leagueInfo('CS2');
}

/** Resolved names of a matchup's sides; each is the candidate ids of that side. */
interface Resolved {
  readonly a: string[];
  readonly b: string[];
  readonly groups: readonly string[] | undefined;
}

const ALL_GROUPS = ['NFL', 'NBA', 'MLB', 'NHL', 'NCAAF', 'SOC', 'NAT', 'ESP'];

function cleanSide(s: string): string {
  return s
    .replace(BO_RE, '')
    .replace(/\s+winner\??$/, '')
    .replace(/\?$/, '')
    .replace(/^will\s+/, '')
    .trim();
}

/** Resolves both sides of "A vs B"; when no league is known, the one team group both sides share. */
function resolveMatchup(a: string, b: string, groups: readonly string[] | undefined): Resolved {
  const ca = teamsByName(cleanSide(a), groups);
  const cb = teamsByName(cleanSide(b), groups);
  if (groups || ca.length === 0 || cb.length === 0) return { a: ca, b: cb, groups };
  const shared = ALL_GROUPS.filter((g) => ca.some((id) => groupOf(id) === g) && cb.some((id) => groupOf(id) === g));
  if (shared.length === 1) {
    const g = shared[0]!;
    return { a: ca.filter((id) => groupOf(id) === g), b: cb.filter((id) => groupOf(id) === g), groups: [g] };
  }
  return { a: ca, b: cb, groups };
}

type Matchup = Resolved & { sep: string; nameA: string; nameB: string };
let lastMatchup: { s: string; groups: readonly string[] | undefined; r: Matchup | undefined } | undefined;

/** "A at B" / "A vs. B" resolved to teams (the last answer is kept: branches ask twice). */
function parseMatchup(s: string, groups: readonly string[] | undefined): Matchup | undefined {
  if (lastMatchup && lastMatchup.s === s && lastMatchup.groups === groups) return lastMatchup.r;
  const r = parseMatchupUncached(s, groups);
  lastMatchup = { s, groups, r };
  return r;
}

function parseMatchupUncached(s: string, groups: readonly string[] | undefined): Matchup | undefined {
  const m = MATCHUP_RE.exec(s);
  if (!m) return undefined;
  const sep = /^\s+(at|@)\s+/.test(s.slice(m[1]!.length, m[1]!.length + 5)) ? 'at' : 'vs';
  const r = resolveMatchup(m[1]!, m[2]!, groups);
  if (r.a.length === 0 || r.b.length === 0) return undefined;
  return { ...r, sep, nameA: cleanSide(m[1]!), nameB: cleanSide(m[2]!) };
}

/** Game facts gathered from every part of the listing. */
interface Game {
  league: LeagueInfo | undefined;
  groups: readonly string[] | undefined;
  teams: string[];
  away: string | undefined;
  home: string | undefined;
  date: string | undefined;
  dateSource: Draft['dateSource'];
}

function leagueOfTeams(ids: readonly string[]): LeagueInfo | undefined {
  const gs = new Set(ids.map(groupOf));
  if (gs.size !== 1) return undefined;
  const g = [...gs][0]!;
  return ['NFL', 'NBA', 'MLB', 'NHL', 'NCAAF'].includes(g) ? leagueInfo(g) : undefined;
}

function addTeam(g: Game, id: string | undefined): void {
  if (id && !g.teams.includes(id) && g.teams.length < 2) g.teams.push(id);
}

function gameFacts(ctx: Ctx, d: Draft, series: SportSeries | undefined, prefixLeague: LeagueInfo | undefined): Game {
  const league = series?.league ?? ctx.slug?.league ?? prefixLeague;
  const g: Game = { league, groups: league?.groups, teams: [], away: undefined, home: undefined, date: undefined, dateSource: null };
  const kt = ctx.kt;
  if (series && kt) {
    const pair = splitTeamCodes(kt.tail, series.league.groups);
    if (pair) {
      g.away = pair[0];
      g.home = pair[1];
      addTeam(g, pair[0]);
      addTeam(g, pair[1]);
      note(d, 'ticker');
    }
    if (kt.yy !== undefined && kt.mon && kt.dd) {
      g.date = isoDay(2000 + kt.yy, kt.mon, kt.dd);
      g.dateSource = 'ticker';
    }
  }
  if (ctx.slug) {
    if (!g.teams.length && ctx.slug.away && ctx.slug.home) {
      g.away = ctx.slug.away;
      g.home = ctx.slug.home;
    }
    addTeam(g, ctx.slug.away);
    addTeam(g, ctx.slug.home);
    if (!g.date) {
      g.date = ctx.slug.date;
      g.dateSource = 'slug';
    }
    note(d, 'slug');
  }
  return g;
}

/** Folds a matchup found in the title or event title into the game facts. */
function mergeMatchup(g: Game, mu: ReturnType<typeof parseMatchup>): void {
  if (!mu) return;
  if (!g.groups && mu.groups) g.groups = mu.groups;
  const a = mu.a.length === 1 ? mu.a[0] : mu.a.find((id) => g.teams.includes(id));
  const b = mu.b.length === 1 ? mu.b[0] : mu.b.find((id) => g.teams.includes(id));
  if (g.teams.length === 2 && ((a && !g.teams.includes(a)) || (b && !g.teams.includes(b)))) return; // contradicts the id: keep the id's
  addTeam(g, a);
  addTeam(g, b);
  if (!g.away && !g.home && a && b && !(g.groups ?? mu.groups ?? []).includes(INDIVIDUAL)) {
    // "A at B" names the away team first; so do Polymarket's US-sports "A vs. B" titles. Soccer
    // lists the home side first.
    const soccer = (g.groups ?? mu.groups ?? []).some((x) => x === 'SOC' || x === 'NAT');
    if (mu.sep === 'at' || !soccer) {
      g.away = a;
      g.home = b;
    } else {
      g.home = a;
      g.away = b;
    }
  }
  if (!g.league) g.league = leagueOfTeams(g.teams);
}

function teamName(id: string | null | undefined): string | null {
  return id ? (teamById(id)?.name ?? null) : null;
}

/** A team named by `name` among the game's teams (or the league's). */
function resolveTeamIn(name: string, g: Game): string[] {
  const n = cleanSide(name);
  if (!n) return [];
  const byName = teamsByName(n, g.groups);
  const inGame = byName.filter((id) => g.teams.includes(id));
  if (inGame.length > 0) return inGame;
  if (g.teams.length === 2 && byName.length > 0) return []; // names a team that is not in this game
  if (byName.length > 0) return byName;
  if (g.groups && /^[a-z0-9]{2,5}$/.test(n)) {
    const byCode = teamsByCode(n, g.groups);
    const inGame2 = byCode.filter((id) => g.teams.includes(id));
    return inGame2.length > 0 ? inGame2 : byCode;
  }
  return [];
}

function opponent(g: Game, id: string): string | undefined {
  return g.teams.length === 2 && g.teams.includes(id) ? g.teams.find((t) => t !== id) : undefined;
}

function applyGame(d: Draft, g: Game, ctx: Ctx): void {
  d.league = (g.league ?? leagueOfTeams(g.teams))?.league ?? null;
  d.sport = g.league?.sport ?? (g.teams[0] ? (GROUP_SPORT[groupOf(g.teams[0])] ?? null) : null);
  d.teams = g.teams.slice();
  d.home = g.home ?? null;
  d.away = g.away ?? null;
  if (g.date) {
    d.date = g.date;
    d.dateSource = g.dateSource;
  } else if (ctx.close !== undefined && !ctx.kalshi) {
    // Polymarket-style game listings close at the start time; Kalshi's close weeks later.
    const p = etParts(ctx.close);
    d.date = isoDay(p.y, p.m, p.d);
    d.dateSource = 'close_time';
    note(d, 'close_time');
  }
  if (d.period === null) d.period = 'full';
}

function setSubjectTeam(d: Draft, ids: readonly string[]): void {
  d.subjectCandidates = ids.slice();
  d.subject = ids.length === 1 ? ids[0]! : null;
  d.subjectName = ids.length === 1 ? teamName(ids[0]) : null;
  d.team = d.subjectName;
}

function sideOf(d: Draft): Draft['side'] {
  if (!d.subject) return null;
  if (d.subject === d.home) return 'home';
  if (d.subject === d.away) return 'away';
  return null;
}

const OVER_UNDER = /\b(over|under)\s*(\d+(?:\.\d+)?)?/;
const NUM = '(\\d+(?:\\.\\d+)?)';
const RE_KALSHI_SPREAD = new RegExp(`^(.+?) wins? by (?:over|more than) ${NUM} (?:points?|runs?|goals?|maps?|games?)$`);
const RE_POLY_SPREAD = new RegExp(`^(?:(1h|first half) )?spread:? (.+?) \\(([+-]${NUM.slice(1, -1)})\\)$`);
const RE_HANDICAP = new RegExp(`^(?:map|maps|game|games) handicap:? (.+?) \\(([+-]${NUM.slice(1, -1)})\\)(?: vs\\.? (.+?) \\(([+-]${NUM.slice(1, -1)})\\))?$`);
const RE_TEAM_LINE = new RegExp(`^(?:(.+?): )?(.+?) ([+-]${NUM.slice(1, -1)})$`);
const RE_KALSHI_PROP = new RegExp(`^(.+?): ${NUM}\\+ (.+)$`);
const RE_WILL_PROP = new RegExp(`^will (.+?) (?:record|have|get|score|throw|make) ${NUM}\\+? (?:or more )?(.+?)(?: (?:against|vs\\.?|in|on) .+)?$`);
const RE_POLY_PROP = new RegExp(`^(.+?): (.+?) o/u ${NUM}$`);
const RE_OU = new RegExp(`(?:^|: |- )(?:(1h|first half) )?(?:(?:games?|maps?) total:? |total (?:games|maps|points|runs|goals):? |total:? )?o/u ${NUM}$`);
const RE_KALSHI_TOTAL = /^(.+?): (?:(first half|1h) )?total (points|runs|goals|maps|games)$/;
const RE_GAME_OVER = new RegExp(`^(?:(.+?): )?(over|under) ${NUM}(?: (?:points|runs|goals|maps|games))?$`);
const RE_1H_ML = /^(.+?): (?:1h|first half|1st half) (?:moneyline|winner)$/;
const RE_MAP_WINNER = /^(.+?) - (?:game|map) (\d) winner$/;
const RE_DRAW = /^will (.+?) end in a (?:draw|tie)$/;
const RE_WIN_ON = /^will (.+?) win(?: on (20\d{2}-\d{2}-\d{2}))?$/;
const RE_WIN_MATCH = /^will (.+?) win the (.+?) (?:match|game|fight|bout)$/;
const RE_TO_BEAT = /^(.+?) to (?:beat|defeat) (.+)$/;
const RE_TO_WIN = /^(.+?): (.+?) to win$/;
const RE_PLAIN_WINNER = /^(.+?)(?: winner)?$/;

function looksLikeMatchup(s: string): boolean {
  return MATCHUP_RE.test(s);
}

/**
 * Sports game propositions. Returns false when the listing is not recognisably about one game
 * (then other parsers get it).
 */
function parseSports(ctx: Ctx, d: Draft): boolean {
  const series = tickerSport(ctx.kt);
  const kinfo = series ? SPORT_SUFFIX[series.suffix] : undefined;
  // A league series without a game suffix is a futures market (KXNBA-26-BOS); an unknown suffix
  // (a prop series this table does not know) still leaves the title to read.
  if (series && series.suffix === '') return false;
  let t = ctx.title.replace(/\?$/, '').trim();
  let prefixLeague: LeagueInfo | undefined;
  const pre = ESPORTS_PREFIX.exec(t);
  if (pre) {
    prefixLeague = esportsLeague(pre[1]!);
    t = t.slice(pre[0].length);
  }
  const ev = ctx.event.replace(ESPORTS_PREFIX, '').replace(BO_RE, '').replace(/\?$/, '').trim();
  if (!prefixLeague) {
    const ep = ESPORTS_PREFIX.exec(ctx.event);
    if (ep) prefixLeague = esportsLeague(ep[1]!);
  }
  if (!prefixLeague && !series && !ctx.slug) prefixLeague = individualSport(ctx.title, ctx.event);
  t = t.replace(BO_RE, '').trim();
  const g = gameFacts(ctx, d, series, prefixLeague);
  const period = periodOf(t) ?? kinfo?.period ?? undefined;
  if (period) d.period = period;

  const titleMatchup = (s: string | undefined): void => {
    if (s && looksLikeMatchup(s)) mergeMatchup(g, parseMatchup(s, g.groups));
  };
  const eventMatchup = (): void => {
    if (ev && looksLikeMatchup(ev)) mergeMatchup(g, parseMatchup(ev.replace(/\s+winner$/, ''), g.groups));
  };

  let m: RegExpExecArray | null;
  // ---- player props ----
  if ((m = RE_KALSHI_PROP.exec(t)) && !looksLikeMatchup(m[1]!) && statOf(m[3]!)) {
    eventMatchup();
    return playerProp(ctx, d, g, m[1]!, statOf(m[3]!)!, '>=', Number(m[2]), kinfo);
  }
  if ((m = RE_WILL_PROP.exec(t)) && statOf(m[3]!)) {
    eventMatchup();
    return playerProp(ctx, d, g, m[1]!, statOf(m[3]!)!, '>=', Number(m[2]), kinfo);
  }
  if (
    (m = RE_POLY_PROP.exec(t)) &&
    !looksLikeMatchup(m[1]!) &&
    m[2]!.length > 0 &&
    statOf(m[2]!) &&
    !/^(?:1h |first half )?(?:games?|maps?)? ?total$/.test(m[2]!)
  ) {
    eventMatchup();
    const under = /^under\b/.test(ctx.outcome);
    return playerProp(ctx, d, g, m[1]!, statOf(m[2]!)!, under ? '<' : '>', Number(m[3]), kinfo);
  }
  if (kinfo?.kind === 'player_prop' && ctx.kt) {
    // Title without a readable stat line: the ticker carries stat and threshold ("…-SEAJSMITH1-7").
    const n = Number(ctx.kt.extra[0]);
    const name = /^(.+?):/.exec(t)?.[1];
    if (name && Number.isFinite(n)) {
      eventMatchup();
      d.confidence -= 0.1;
      return playerProp(ctx, d, g, name, kinfo.stat!, '>=', n, kinfo);
    }
  }

  // ---- spreads ----
  if ((m = RE_KALSHI_SPREAD.exec(t))) {
    eventMatchup();
    return spread(ctx, d, g, m[1]!, -Number(m[2]), false);
  }
  if ((m = RE_POLY_SPREAD.exec(t))) {
    if (m[1]) d.period = '1H';
    eventMatchup();
    return spread(ctx, d, g, m[2]!, Number(m[3]), true);
  }
  if ((m = RE_HANDICAP.exec(t))) {
    if (m[3]) mergeMatchup(g, { ...resolveMatchup(m[1]!, m[3]!, g.groups), sep: 'vs', nameA: m[1]!, nameB: m[3]! });
    eventMatchup();
    return spread(ctx, d, g, m[1]!, Number(m[2]), true);
  }

  // ---- totals ----
  if ((m = RE_KALSHI_TOTAL.exec(t))) {
    titleMatchup(m[1]);
    eventMatchup();
    if (m[2]) d.period = '1H';
    const ou = OVER_UNDER.exec(ctx.outcome);
    let line = ou?.[2] ? Number(ou[2]) : NaN;
    if (!Number.isFinite(line) && ctx.kt?.market && /^\d+$/.test(ctx.kt.market)) {
      line = Number(ctx.kt.market) + 0.5; // ticker strike is the floor of the half line
      d.confidence -= 0.1;
    }
    if (!Number.isFinite(line)) return false;
    return total(ctx, d, g, ou?.[1] === 'under', line, m[3]!);
  }
  if ((m = RE_OU.exec(t))) {
    const gamePart = t
      .slice(0, m.index)
      .replace(/[:\-]\s*$/, '')
      .trim();
    titleMatchup(gamePart);
    eventMatchup();
    if (m[1]) d.period = '1H';
    const unit = /\b(games?|maps?) total\b|\btotal (games|maps)\b/.test(t) ? 'maps' : 'points';
    return total(ctx, d, g, /^under\b/.test(ctx.outcome), Number(m[2]), unit);
  }
  if ((m = RE_GAME_OVER.exec(t)) && (m[1] ? looksLikeMatchup(m[1]) : looksLikeMatchup(ev))) {
    titleMatchup(m[1]);
    eventMatchup();
    return total(ctx, d, g, m[2] === 'under', Number(m[3]), 'points');
  }
  if ((m = RE_TEAM_LINE.exec(t)) && !/o\/u/.test(t)) {
    titleMatchup(m[1]);
    eventMatchup();
    const ids = resolveTeamIn(m[2]!, g);
    if (ids.length > 0) return spread(ctx, d, g, m[2]!, Number(m[3]), true);
  }

  // ---- map winners (esports per-map) ----
  if ((m = RE_MAP_WINNER.exec(t))) {
    titleMatchup(m[1]);
    eventMatchup();
    d.stage = `map${m[2]}`;
    return winner(ctx, d, g, 'map_winner', undefined);
  }

  // ---- draws ----
  if ((m = RE_DRAW.exec(t))) {
    titleMatchup(m[1]);
    eventMatchup();
    return draw(ctx, d, g);
  }

  // ---- moneylines ----
  if ((m = RE_1H_ML.exec(t))) {
    d.period = '1H';
    titleMatchup(m[1]);
    eventMatchup();
    return winner(ctx, d, g, 'game_winner', undefined);
  }
  if ((m = RE_TO_BEAT.exec(t))) {
    mergeMatchup(g, parseMatchupPair(m[1]!, m[2]!, g));
    eventMatchup();
    return winner(ctx, d, g, 'game_winner', m[1]!);
  }
  if ((m = RE_TO_WIN.exec(t))) {
    titleMatchup(m[1]);
    eventMatchup();
    return winner(ctx, d, g, 'game_winner', m[2]!);
  }
  if ((m = RE_WIN_MATCH.exec(t)) && looksLikeMatchup(m[2]!)) {
    titleMatchup(m[2]);
    eventMatchup();
    return winner(ctx, d, g, 'game_winner', m[1]!);
  }
  if ((m = RE_WIN_ON.exec(t)) && (m[2] || ctx.slug || series)) {
    // "Will Arsenal win on 2026-01-11?": one side of a game that can be drawn.
    eventMatchup();
    if (m[2] && !g.date) {
      g.date = m[2];
      g.dateSource = 'title';
    }
    const ids = resolveTeamIn(m[1]!, g);
    if (ids.length === 0) return false;
    if (g.teams.length === 0) for (const id of ids.length === 1 ? ids : []) addTeam(g, id);
    if (!g.groups && ids.length === 1) g.groups = [groupOf(ids[0]!)];
    return winner(ctx, d, g, 'game_winner', m[1]!);
  }
  const plain = RE_PLAIN_WINNER.exec(t);
  if (plain && looksLikeMatchup(plain[1]!)) {
    const before = g.teams.length;
    titleMatchup(plain[1]);
    if (g.teams.length === before && before < 2) return false;
    eventMatchup();
    return winner(ctx, d, g, 'game_winner', undefined);
  }
  // A bare team name as the title, its game in the event title (exchange-style listings).
  if (ev && looksLikeMatchup(ev) && !/[?:]/.test(t)) {
    eventMatchup();
    if (g.teams.length === 2 && resolveTeamIn(t, g).length > 0) return winner(ctx, d, g, 'game_winner', t);
  }
  if (kinfo && g.teams.length === 2) {
    // Kalshi game series whose title is generic: the ticker names the game and the side.
    return winner(ctx, d, g, kinfo.kind === 'map_winner' ? 'map_winner' : 'game_winner', undefined);
  }
  return false;
}

function parseMatchupPair(a: string, b: string, g: Game): Resolved & { sep: string; nameA: string; nameB: string } {
  return { ...resolveMatchup(a, b, g.groups), sep: 'vs', nameA: a, nameB: b };
}

function finishGameCommon(d: Draft, g: Game, ctx: Ctx): void {
  applyGame(d, g, ctx);
  if (g.teams.length === 0 && d.kind !== 'player_prop') d.confidence -= 0.1;
}

function winner(ctx: Ctx, d: Draft, g: Game, kind: 'game_winner' | 'map_winner', named: string | undefined): boolean {
  d.kind = kind;
  d.market_class = kind === 'game_winner' ? 'moneyline' : 'other';
  d.market_type = kind === 'game_winner' ? 'moneyline' : 'map_winner';
  let ids: string[] = [];
  const out = ctx.outcome;
  const kt = ctx.kt;
  // The YES team: ticker suffix, then the outcome label, then a team named in the title.
  if (kt?.market && g.groups && tickerSport(kt)) {
    if (kt.market === 'TIE' || kt.market === 'DRAW') return draw(ctx, d, g);
    ids = teamsByCode(kt.market, g.groups).filter((id) => g.teams.length === 0 || g.teams.includes(id));
  }
  if (ids.length === 0 && out && out !== 'yes' && out !== 'no') {
    if (out === 'tie' || out === 'draw') return draw(ctx, d, g);
    ids = resolveTeamIn(ctx.rawOutcome, g);
    if (ids.length === 0) return false; // an outcome that names no team of this game
    note(d, 'outcome');
  }
  if (ids.length === 0 && named) ids = resolveTeamIn(named, g);
  if (ids.length === 0 && g.teams.length === 2 && !out) {
    // Polymarket lists a game as one market whose first outcome (its YES token) is the first-named
    // team; without an outcome label that convention is all we have.
    ids = [g.away ?? g.teams[0]!];
    d.confidence -= 0.1;
  }
  if (ids.length === 0) return false;
  if (ctx.outcome === 'no') d.negated = true;
  for (const id of ids.length === 1 ? ids : []) if (g.teams.length < 2 && !g.teams.includes(id)) g.teams.push(id);
  finishGameCommon(d, g, ctx);
  setSubjectTeam(d, ids);
  d.side = sideOf(d);
  note(d, 'title');
  return true;
}

function draw(ctx: Ctx, d: Draft, g: Game): boolean {
  if (g.teams.length < 2) return false;
  d.kind = 'draw';
  d.market_class = 'moneyline';
  d.market_type = 'draw';
  finishGameCommon(d, g, ctx);
  d.subject = 'draw';
  d.subjectCandidates = ['draw'];
  d.subjectName = 'Draw';
  if (ctx.outcome === 'no') d.negated = true;
  note(d, 'title');
  return true;
}

function spread(ctx: Ctx, d: Draft, g: Game, teamText: string, line: number, outcomeMayFlip: boolean): boolean {
  let ids = resolveTeamIn(teamText, g);
  if (ids.length === 0 && ctx.kt?.market && g.groups) {
    const code = /^([A-Z]+)\d*$/.exec(ctx.kt.market)?.[1];
    if (code) ids = teamsByCode(code, g.groups).filter((id) => g.teams.length === 0 || g.teams.includes(id));
  }
  if (ids.length === 0 || !Number.isFinite(line)) return false;
  d.kind = 'spread';
  d.market_class = 'spread';
  d.market_type = g.league?.sport === 'esports' || (g.groups ?? []).includes('ESP') ? 'map_handicap' : 'spread';
  let subj = ids;
  let l = line;
  if (outcomeMayFlip && ctx.outcome && ctx.outcome !== 'yes' && ctx.outcome !== 'no') {
    const o = resolveTeamIn(ctx.rawOutcome, g);
    if (o.length === 1 && ids.length === 1 && o[0] !== ids[0]) {
      // The YES side is the other team: "Spread: Seahawks (-2.5)" with outcome "Patriots" is
      // Patriots +2.5.
      subj = o;
      l = -line;
      note(d, 'outcome');
    } else if (o.length === 0 && !teamsByName(cleanSide(ctx.rawOutcome)).length) {
      // Unreadable outcome: keep the title's side.
    } else if (o.length === 0) {
      d.negated = true;
    }
  }
  if (ctx.outcome === 'no') d.negated = !d.negated;
  if (subj.length === 1) addTeam(g, subj[0]);
  finishGameCommon(d, g, ctx);
  setSubjectTeam(d, subj);
  d.line = l;
  d.comparator = '>';
  d.threshold = -l; // the subject's margin must exceed -line
  d.unit = 'count';
  d.side = sideOf(d);
  note(d, 'title');
  return true;
}

function total(ctx: Ctx, d: Draft, g: Game, under: boolean, line: number, unit: string): boolean {
  if (!Number.isFinite(line)) return false;
  d.kind = 'total';
  d.market_class = 'total';
  const esports = g.league?.sport === 'esports' || (g.groups ?? []).includes('ESP') || unit === 'maps' || unit === 'games';
  d.market_type = esports ? 'total_maps' : 'total';
  // "Total Runs", "Total Goals", "O/U": a game total counts the sport's own score; only esports
  // totals (maps) differ from it.
  d.stat = esports ? 'maps' : 'score';
  finishGameCommon(d, g, ctx);
  if (g.teams.length === 0) return false;
  d.subject = `game:${[...g.teams].sort().join('+')}`;
  d.subjectCandidates = [d.subject];
  d.subjectName = g.teams.map((id) => teamName(id)).join(' vs ');
  d.line = line;
  d.comparator = under ? '<' : '>';
  d.threshold = line;
  d.unit = 'count';
  d.side = under ? 'under' : 'over';
  if (ctx.outcome === 'no') d.negated = true;
  note(d, 'title');
  return true;
}

function playerProp(ctx: Ctx, d: Draft, g: Game, name: string, stat: string, cmp: Comparator, value: number, kinfo: { stat?: string } | undefined): boolean {
  const player = foldPerson(name);
  if (!player || player.split(' ').length < 2 || !Number.isFinite(value)) return false;
  d.kind = 'player_prop';
  d.market_class = 'player_prop';
  d.stat = stat;
  d.market_type = `player_${stat}`;
  if (kinfo?.stat && kinfo.stat !== stat) d.confidence -= 0.2;
  finishGameCommon(d, g, ctx);
  d.subject = `player:${player}`;
  d.subjectCandidates = [d.subject];
  d.subjectName = rawSpan(ctx, name.replace(/^will\s+/i, '').trim());
  d.player = d.subjectName;
  d.comparator = cmp;
  d.threshold = value;
  d.unit = 'count';
  // Spec line: the half line a ">= n" prop is quoted at elsewhere ("7+" is O/U 6.5).
  d.line = cmp === '>=' ? value - 0.5 : cmp === '<=' ? value + 0.5 : value;
  d.side = cmp === '<' || cmp === '<=' ? 'under' : 'over';
  if (ctx.outcome === 'no') d.negated = true;
  if (ctx.kt && ctx.kt.market && g.groups) {
    // The market part starts with the player's team code ("SEAJSMITHNJIGBA1").
    const mk = ctx.kt.market;
    const groups = g.groups;
    const team = [4, 3, 2].map((n) => teamsByCode(mk.slice(0, n), groups).find((id) => g.teams.includes(id))).find((id) => id !== undefined);
    if (team) d.team = teamName(team);
  }
  note(d, 'title');
  return true;
}

// ---------------------------------------------------------------------------------------------
// Futures: championships, tournaments, groups, stages.

interface Competition {
  readonly competition: string;
  readonly groups: readonly string[];
  readonly league: string | null;
  readonly sport: string;
  readonly name: string;
}

const COMPETITIONS: readonly (readonly [RegExp, Competition])[] = [
  [/\bclub world cup\b/, { competition: 'fifa_club_world_cup', groups: ['SOC'], league: null, sport: 'soccer', name: 'FIFA Club World Cup' }],
  [/\bwomen'?s world cup\b/, { competition: 'fifa_world_cup_women', groups: ['NAT'], league: null, sport: 'soccer', name: "FIFA Women's World Cup" }],
  [/\bworld cup\b/, { competition: 'fifa_world_cup_men', groups: ['NAT'], league: 'WC', sport: 'soccer', name: 'FIFA World Cup' }],
  [
    // A conference title is the NFL's too (its stage is read below): "win the 2026 AFC Championship".
    /\bsuper bowl\b|\bpro football championship\b|\bnfl (?:league )?championship\b|\bnfl champion\b|\b(?:afc|nfc) champion(?:ship)?\b/,
    { competition: 'NFL', groups: ['NFL'], league: 'NFL', sport: 'football', name: 'NFL Championship' },
  ],
  [
    /\bnba finals\b|\bnba championship\b|\bpro basketball championship\b|\bnba champion\b/,
    { competition: 'NBA', groups: ['NBA'], league: 'NBA', sport: 'basketball', name: 'NBA Championship' },
  ],
  [
    /\bworld series\b|\bpro baseball championship\b|\bmlb champion(?:ship)?\b/,
    { competition: 'MLB', groups: ['MLB'], league: 'MLB', sport: 'baseball', name: 'World Series' },
  ],
  [
    /\bstanley cup\b|\bpro hockey championship\b|\bnhl champion(?:ship)?\b/,
    { competition: 'NHL', groups: ['NHL'], league: 'NHL', sport: 'hockey', name: 'Stanley Cup' },
  ],
  [
    // "win the College Football Playoff" is winning its title game; "make the College Football
    // Playoff" is a stage, read as such by the stage pattern first.
    /\bcollege football (?:playoff )?(?:national )?championship\b|\bcfp (?:national )?championship\b|\bncaa(?:f)? (?:football )?championship\b|\bcollege football playoff\b/,
    { competition: 'NCAAF', groups: ['NCAAF'], league: 'NCAAF', sport: 'football', name: 'College Football Championship' },
  ],
  [/\bchampions league\b|\bucl\b/, { competition: 'UCL', groups: ['SOC'], league: 'UCL', sport: 'soccer', name: 'UEFA Champions League' }],
  [/\beuropa league\b/, { competition: 'UEL', groups: ['SOC'], league: 'UEL', sport: 'soccer', name: 'UEFA Europa League' }],
  [/\bpremier league\b|\bepl\b/, { competition: 'EPL', groups: ['SOC'], league: 'EPL', sport: 'soccer', name: 'Premier League' }],
  [/\bla liga\b/, { competition: 'LALIGA', groups: ['SOC'], league: 'LALIGA', sport: 'soccer', name: 'La Liga' }],
  [/\bserie a\b/, { competition: 'SERIEA', groups: ['SOC'], league: 'SERIEA', sport: 'soccer', name: 'Serie A' }],
  [/\bbundesliga\b/, { competition: 'BUNDESLIGA', groups: ['SOC'], league: 'BUNDESLIGA', sport: 'soccer', name: 'Bundesliga' }],
  [/\bligue 1\b/, { competition: 'LIGUE1', groups: ['SOC'], league: 'LIGUE1', sport: 'soccer', name: 'Ligue 1' }],
  [/\bmls cup\b/, { competition: 'MLS', groups: ['SOC'], league: 'MLS', sport: 'soccer', name: 'MLS Cup' }],
];

const SERIES_COMPETITION: Readonly<Record<string, string>> = {
  SB: 'NFL',
  NFL: 'NFL',
  NBA: 'NBA',
  MLB: 'MLB',
  NHL: 'NHL',
  NCAAF: 'NCAAF',
  MENWORLDCUP: 'fifa_world_cup_men',
  WORLDCUP: 'fifa_world_cup_men',
  WCGROUPWIN: 'fifa_world_cup_men',
  WCROUND: 'fifa_world_cup_men',
  UCL: 'UCL',
  EPL: 'EPL',
};

function competitionIn(s: string): Competition | undefined {
  for (const [re, c] of COMPETITIONS) if (re.test(s)) return c;
  return undefined;
}

function competitionById(id: string): Competition | undefined {
  for (const [, c] of COMPETITIONS) if (c.competition === id) return c;
  return undefined;
}

const ROMAN: Readonly<Record<string, number>> = { i: 1, v: 5, x: 10, l: 50, c: 100 };
function roman(s: string): number {
  let v = 0;
  for (let i = 0; i < s.length; i++) {
    const a = ROMAN[s[i]!] ?? 0;
    const b = ROMAN[s[i + 1] ?? ''] ?? 0;
    v += a < b ? -a : a;
  }
  return v;
}

const RE_FUTURE_WIN = /^will (.+?) win (?:the )?(.+)$/;
const RE_FUTURE_TO_WIN = /^(.+?) to win (?:the )?(.+)$/;
const RE_GROUP = /\bgroup ([a-l])\b/;
const RE_FINISH_FIRST = /^will (.+?) (?:finish first|win|top) (?:in )?(?:the )?(?:(20\d{2}) )?(?:fifa )?(?:world cup )?group ([a-l])\b/;
const RE_STAGE = /^will (.+?) (?:qualify for|reach|advance to|make|make it to) (?:the )?(.+)$/;
const RE_CONF = /\b(afc|nfc|eastern conference|western conference|american league|national league|al pennant|nl pennant)\b/;
const RE_DIVISION = /\b(afc|nfc) (east|west|north|south)\b/;

function stageOf(s: string): string | undefined {
  if (/\bsemi-?finals?\b|\bsemis\b|\bfinal four\b/.test(s)) return 'reach_sf';
  if (/\bquarter-?finals?\b/.test(s)) return 'reach_qf';
  if (/\bround of 16\b|\blast 16\b/.test(s)) return 'reach_r16';
  if (/\bround of 32\b|\bknockout (?:stage|round)s?\b/.test(s)) return 'reach_r32';
  if (/\bfinals?\b/.test(s)) return 'reach_final';
  if (/\bplayoffs?\b/.test(s)) return 'playoffs';
  return undefined;
}

function tickerStage(tail: string): string | undefined {
  if (/^SEMI/.test(tail) || tail === 'SF') return 'reach_sf';
  if (/^QUARTER/.test(tail) || tail === 'QF') return 'reach_qf';
  if (/^R16|^ROUNDOF16/.test(tail)) return 'reach_r16';
  if (/^R32/.test(tail)) return 'reach_r32';
  if (/^FINAL/.test(tail)) return 'reach_final';
  return undefined;
}

function futureYear(ctx: Ctx, ...texts: string[]): number | undefined {
  for (const s of texts) {
    const sb = /\bsuper bowl ([lxvi]+)\b/.exec(s);
    if (sb) return 1966 + roman(sb[1]!);
    const y = findYear(s);
    if (y) return y;
  }
  return tickerYear(ctx);
}

function resolveSubjectTeam(name: string, groups: readonly string[]): string[] {
  const n = name.replace(/^the\s+/, '').trim();
  const ids = teamsByName(n, groups);
  return ids.length > 0 ? ids : teamsByName(name, groups);
}

function parseFutures(ctx: Ctx, d: Draft): boolean {
  const t = ctx.title.replace(/\?$/, '').trim();
  const ev = ctx.event.replace(/\?$/, '');
  const kt = ctx.kt;
  const seriesComp = kt && kt.mon === undefined ? SERIES_COMPETITION[kt.series] : undefined;
  let comp = seriesComp ? competitionById(seriesComp) : undefined;
  let subjectText: string | undefined;
  let kind: PropositionKind | undefined;
  let stage: string | undefined;
  let m: RegExpExecArray | null;

  if ((m = RE_FINISH_FIRST.exec(t))) {
    kind = 'group_winner';
    subjectText = m[1];
    stage = `group_${m[3]!.toUpperCase()}`;
    comp ??= competitionById('fifa_world_cup_men');
  } else if ((m = RE_STAGE.exec(t)) && (comp || competitionIn(m[2]!)) && (stageOf(m[2]!) || /\bqualify\b/.test(t))) {
    kind = 'stage_reach';
    subjectText = m[1];
    stage = stageOf(m[2]!) ?? 'qualify';
    comp ??= competitionIn(m[2]!);
  } else if ((m = RE_FUTURE_WIN.exec(t) ?? RE_FUTURE_TO_WIN.exec(t))) {
    const what = m[2]!;
    // "win a College Football Playoff game", "win Game 7 of the World Series": not the title.
    if (/^(?:a|an|any|one|two|three|[1-9]) /.test(what) || /\bgames? \d\b|\bgames?$|\bgame (?:of|in)\b/.test(what)) return false;
    const c = competitionIn(what) ?? (what.length < 80 ? competitionIn(ev) : undefined);
    if (!c && !comp) return false;
    comp ??= c;
    subjectText = m[1];
    const grp = RE_GROUP.exec(what);
    // Conference and division titles only mean something inside their league ("AFC Bournemouth").
    const div = comp?.competition === 'NFL' ? RE_DIVISION.exec(what) : null;
    const conf = comp && ['NFL', 'NBA', 'NHL', 'MLB'].includes(comp.competition) ? RE_CONF.exec(what) : null;
    if (grp) {
      kind = 'group_winner';
      stage = `group_${grp[1]!.toUpperCase()}`;
    } else if (div) {
      kind = 'championship';
      stage = `div_${div[1]!.toUpperCase()}_${div[2]!.toUpperCase()}`;
    } else if (conf) {
      kind = 'championship';
      stage = `conf_${conf[1]!
        .replace(/ pennant$/, '')
        .replace(/ /g, '_')
        .toUpperCase()}`;
    } else if (/\b(?:semi-?finals?|quarter-?finals?|round of \d+|playoffs?)\b/.test(what.replace(/\bcollege football playoff\b/, ''))) {
      return false; // "win their quarterfinal", "win a playoff game": not a title
    } else {
      kind = comp!.competition.startsWith('fifa') ? 'tournament_winner' : 'championship';
      stage = 'winner';
    }
  } else if (
    /\b(?:winner|champion)$/.test(t) &&
    !/^will /.test(t) &&
    competitionIn(t) &&
    ctx.rawOutcome &&
    !/^(?:yes|no)$/.test(ctx.outcome) &&
    !/\b(?:group|semi|quarter|round|conference|division|afc|nfc|mvp|award)\b/.test(t)
  ) {
    // The event title listed per outcome: "2026 NBA Champion" + "Oklahoma City Thunder".
    comp ??= competitionIn(t);
    subjectText = ctx.outcome;
    kind = comp!.competition.startsWith('fifa') ? 'tournament_winner' : 'championship';
    stage = 'winner';
  } else if (!comp && NAME_ONLY.test(t) && competitionIn(ev) && !/\b(?:group|semi|quarter|round|conference|division|afc|nfc)\b/.test(ev)) {
    // List venues: the title is the outcome label, the question is the event ("2026 NBA Finals Winner").
    comp = competitionIn(ev);
    subjectText = t;
    kind = comp!.competition.startsWith('fifa') ? 'tournament_winner' : 'championship';
    stage = 'winner';
  } else if (comp && kt) {
    // Generic Kalshi title ("2026 Men's World Cup winner?"): the outcome names the subject.
    subjectText = ctx.rawOutcome ? foldText(ctx.rawOutcome) : undefined;
    if (kt.series === 'WCROUND') {
      kind = 'stage_reach';
      stage = tickerStage(kt.tail);
    } else if (kt.series === 'WCGROUPWIN') {
      kind = 'group_winner';
      stage = kt.tail ? `group_${kt.tail.slice(0, 1)}` : undefined;
    } else {
      kind = comp.competition.startsWith('fifa') ? 'tournament_winner' : 'championship';
      stage = 'winner';
    }
  } else {
    return false;
  }
  if (!comp || !kind || !subjectText || !stage) return false;
  if (kt?.series === 'WCGROUPWIN' && kind === 'group_winner' && kt.tail && stage !== `group_${kt.tail.slice(0, 1)}`) d.confidence -= 0.3;
  let ids = resolveSubjectTeam(subjectText, comp.groups);
  if (ids.length > 1 && kt?.market) {
    // "Will Los Angeles win …?": the ticker's team code (KXSB-26-LAR) says which one.
    const byCode = teamsByCode(kt.market, comp.groups).filter((id) => ids.includes(id));
    if (byCode.length === 1) ids = byCode;
  }
  if (ids.length === 0) return false;
  d.kind = kind;
  d.market_type = kind === 'championship' ? 'championship_winner' : kind;
  d.competition = comp.competition;
  d.league = comp.league;
  d.sport = comp.sport;
  d.stage = stage;
  d.year = futureYear(ctx, t, ev) ?? null;
  if (d.year === null) d.confidence -= 0.1;
  d.subjectCandidates = ids;
  d.subject = ids.length === 1 ? ids[0]! : null;
  d.subjectName = ids.length === 1 ? teamName(ids[0]) : null;
  d.team = d.subjectName;
  if (ctx.outcome === 'no') d.negated = true;
  note(d, 'title');
  if (kt) note(d, 'ticker');
  return true;
}

// ---------------------------------------------------------------------------------------------
// Politics: nominations and elections.

const STATES: Readonly<Record<string, string>> = {
  alabama: 'al',
  alaska: 'ak',
  arizona: 'az',
  arkansas: 'ar',
  california: 'ca',
  colorado: 'co',
  connecticut: 'ct',
  delaware: 'de',
  florida: 'fl',
  georgia: 'ga',
  hawaii: 'hi',
  idaho: 'id',
  illinois: 'il',
  indiana: 'in',
  iowa: 'ia',
  kansas: 'ks',
  kentucky: 'ky',
  louisiana: 'la',
  maine: 'me',
  maryland: 'md',
  massachusetts: 'ma',
  michigan: 'mi',
  minnesota: 'mn',
  mississippi: 'ms',
  missouri: 'mo',
  montana: 'mt',
  nebraska: 'ne',
  nevada: 'nv',
  'new hampshire': 'nh',
  'new jersey': 'nj',
  'new mexico': 'nm',
  'new york': 'ny',
  'north carolina': 'nc',
  'north dakota': 'nd',
  ohio: 'oh',
  oklahoma: 'ok',
  oregon: 'or',
  pennsylvania: 'pa',
  'rhode island': 'ri',
  'south carolina': 'sc',
  'south dakota': 'sd',
  tennessee: 'tn',
  texas: 'tx',
  utah: 'ut',
  vermont: 'vt',
  virginia: 'va',
  washington: 'wa',
  'west virginia': 'wv',
  wisconsin: 'wi',
  wyoming: 'wy',
};
const STATE_RE = new RegExp(
  `\\b(${Object.keys(STATES)
    .sort((a, b) => b.length - a.length)
    .join('|')})\\b`,
);

const DEMONYMS: Readonly<Record<string, string>> = {
  brazilian: 'br',
  brazil: 'br',
  french: 'fr',
  france: 'fr',
  colombian: 'co',
  colombia: 'co',
  chilean: 'cl',
  chile: 'cl',
  peruvian: 'pe',
  peru: 'pe',
  mexican: 'mx',
  mexico: 'mx',
  argentine: 'ar',
  argentinian: 'ar',
  argentina: 'ar',
  polish: 'pl',
  poland: 'pl',
  'south korean': 'kr',
  'south korea': 'kr',
  portuguese: 'pt',
  portugal: 'pt',
  romanian: 'ro',
  romania: 'ro',
  ecuadorian: 'ec',
  ecuador: 'ec',
  costa: 'cr',
  'costa rican': 'cr',
  philippine: 'ph',
  filipino: 'ph',
  ukrainian: 'ua',
  ukraine: 'ua',
  russian: 'ru',
  russia: 'ru',
  taiwanese: 'tw',
  taiwan: 'tw',
  bolivian: 'bo',
  bolivia: 'bo',
  honduran: 'hn',
  honduras: 'hn',
  uruguayan: 'uy',
  uruguay: 'uy',
  venezuelan: 've',
  venezuela: 've',
  irish: 'ie',
  ireland: 'ie',
  german: 'de',
  germany: 'de',
  austrian: 'at',
  austria: 'at',
  canadian: 'ca',
  canada: 'ca',
  japanese: 'jp',
  japan: 'jp',
  israeli: 'il',
  israel: 'il',
  hungarian: 'hu',
  hungary: 'hu',
  czech: 'cz',
  dutch: 'nl',
  netherlands: 'nl',
  'u.s.': 'us',
  us: 'us',
  'united states': 'us',
  american: 'us',
  america: 'us',
  'u.k.': 'uk',
  uk: 'uk',
  british: 'uk',
};
const DEMONYM_RE = new RegExp(
  `\\b(${Object.keys(DEMONYMS)
    .sort((a, b) => b.length - a.length)
    .map((k) => k.replace(/\./g, '\\.'))
    .join('|')})\\b`,
);

/** Office named in folded text: "president_us", "governor_ca", "senate_tx", "pm_uk"… */
function officeIn(s: string, kt: Ticker | undefined): string | undefined {
  if (kt) {
    if (kt.series === 'PRESPERSON' || kt.series === 'PRES') return 'president_us';
    const gov = /^GOV([A-Z]{2})$/.exec(kt.series);
    if (gov) return `governor_${gov[1]!.toLowerCase()}`;
    const sen = /^SENATE([A-Z]{2})$/.exec(kt.series);
    if (sen) return `senate_${sen[1]!.toLowerCase()}`;
    const pres = /^([A-Z]{2})PRES$/.exec(kt.series);
    if (pres) return `president_${pres[1]!.toLowerCase()}`;
  }
  if (/\bvice[- ]presiden/.test(s)) return 'vice_president_us';
  if (/\bpresiden(?:t|cy|tial)\b/.test(s)) {
    const dm = /\b([a-z.]+(?: [a-z]+)?) presiden(?:t|cy|tial)/.exec(s);
    const of = /\bpresident of (?:the )?([a-z. ]+?)(?:\?|$| in | election)/.exec(s);
    const key =
      (dm && (DEMONYMS[dm[1]!] ? dm[1] : DEMONYMS[dm[1]!.split(' ').pop()!] ? dm[1]!.split(' ').pop() : undefined)) ?? (of ? of[1]!.trim() : undefined);
    if (key && DEMONYMS[key]) return `president_${DEMONYMS[key]}`;
    const dem = DEMONYM_RE.exec(s);
    if (dem && DEMONYMS[dem[1]!] !== 'us') return `president_${DEMONYMS[dem[1]!]}`;
    return 'president_us';
  }
  if (/\bgovern(?:or|orship)\b|\bgubernatorial\b/.test(s)) {
    const st = STATE_RE.exec(s);
    return st ? `governor_${STATES[st[1]!]}` : undefined;
  }
  if (/\bsenate\b|\bsenator\b/.test(s)) {
    const st = STATE_RE.exec(s);
    return st ? `senate_${STATES[st[1]!]}` : undefined;
  }
  if (/\bmayor(?:al)?\b/.test(s)) {
    if (/\bnew york city\b|\bnyc\b|\bnew york\b/.test(s)) return 'mayor_nyc';
    const city = /\bmayor of ([a-z ]+?)(?:\?|$| in )/.exec(s);
    return city ? `mayor_${city[1]!.trim().replace(/ /g, '_')}` : undefined;
  }
  if (/\bpope\b/.test(s)) return 'pope';
  if (/\bchancellor\b/.test(s)) {
    // "next Chancellor of Germany" = "next German Chancellor"; a chancellor of no named country
    // (a university's, the UK Exchequer's) is left unread.
    if (/\bexchequer\b|\buniversity\b/.test(s)) return undefined;
    const dem = DEMONYM_RE.exec(s);
    return dem && ['de', 'at'].includes(DEMONYMS[dem[1]!]!) ? `chancellor_${DEMONYMS[dem[1]!]}` : undefined;
  }
  if (/\bprime minister\b/.test(s)) {
    const dem = DEMONYM_RE.exec(s);
    return dem ? `pm_${DEMONYMS[dem[1]!]}` : undefined;
  }
  return undefined;
}

function partyIn(s: string, kt: Ticker | undefined): string | undefined {
  if (kt?.series.startsWith('PRESNOM')) return kt.series.endsWith('D') ? 'dem' : kt.series.endsWith('R') ? 'rep' : undefined;
  // Whole words only: "Rep." in a title is a Representative, not the party.
  if (/\b(democratic|democrat|democrats)\b/.test(s)) return 'dem';
  if (/\b(republican|republicans|gop)\b/.test(s)) return 'rep';
  return undefined;
}

/** The raw-case text of a span read from the folded title (for display); the folded span if not found. */
function rawSpan(ctx: Ctx, folded: string): string {
  const i = ctx.title.indexOf(folded);
  if (i < 0) return folded;
  const raw = ctx.rawTitle.trim().slice(i, i + folded.length);
  return foldText(raw) === folded ? raw : folded;
}

const RE_PERSON_LEAD = /^will (.+?) (?:be|win|become|receive|secure|get)\b/;
const NAME_ONLY = /^[a-z][a-z0-9.'\- ]{1,60}$/;

/** A person's name: from "Will X …", else the outcome, else a bare-name title (list venues). */
function personSubject(ctx: Ctx, t: string): { id: string; name: string } | undefined {
  const m = RE_PERSON_LEAD.exec(t);
  let name: string | undefined;
  if (m && !/^(?:the|a|an|any|there|someone|a woman)\b/.test(m[1]!)) name = rawSpan(ctx, m[1]!);
  if (!name && ctx.rawOutcome && !/^(yes|no)$/i.test(ctx.rawOutcome)) name = ctx.rawOutcome;
  if (!name && NAME_ONLY.test(t) && t.split(' ').length <= 6 && !/\b(will|win|who|what)\b/.test(t)) name = ctx.rawTitle;
  if (!name) return undefined;
  const id = foldPerson(name);
  if (!id || id.split(' ').length < 2) return undefined;
  return { id: `person:${id}`, name: name.trim() };
}

const PARTY_NAME = /^(?:the |a )?(democrats?|democratic(?: party)?|republicans?|republican(?: party)?|gop)$/;

/**
 * A party named as the winner of an election ("Will a Democrat win the 2028 US Presidential
 * Election?", "Which party will win the Senate race in Maine?" listed as "Democratic party"): the
 * party is the subject, so the venues' different words for it ("Democrats", "Democratic party", "a
 * Democrat") meet, while a party never meets one of its candidates.
 */
function partySubject(ctx: Ctx, t: string): 'dem' | 'rep' | undefined {
  const lead = /^will (.+?) (?:win|be elected|control)\b/.exec(t);
  const name = lead?.[1] ?? (ctx.outcome && ctx.outcome !== 'yes' && ctx.outcome !== 'no' ? ctx.outcome : undefined);
  const m = name ? PARTY_NAME.exec(name.trim()) : null;
  if (!m) return undefined;
  return m[1]!.startsWith('dem') ? 'dem' : 'rep';
}

/** Primaries, runoffs and first rounds are contests of their own. */
function electionStage(t: string): string | null {
  if (/\bprimary\b|\bprimaries\b/.test(t)) return 'primary';
  if (/\brunoff\b|\bsecond round\b/.test(t)) return 'runoff';
  if (/\bfirst round\b/.test(t)) return 'round1';
  return null;
}

const RE_CHAMBER = /\b(?:the )?(?:u\.?s\.? )?(house|senate)\b/;

/** "Will the Democrats win the House in 2026?" / "Which party will win the Senate?" + "Republican". */
function parseControl(ctx: Ctx, d: Draft, t: string): boolean {
  const ch = RE_CHAMBER.exec(t);
  if (!ch || !/\b(?:control|win|majority|keep|hold|flip)\b/.test(t) || STATE_RE.test(t) || /\b(?:race|seat|speaker)\b/.test(t)) return false;
  const lead = /^will (?:the )?(democrats|democratic party|democratic|republicans|republican party|republican|gop)\b/.exec(t);
  if (!lead) return false;
  d.kind = 'chamber_control';
  d.market_type = 'chamber_control';
  d.party = /^dem/.test(lead[1]!) ? 'dem' : 'rep';
  d.office = `${ch[1]}_us`;
  d.year = findYear(t) ?? findYear(ctx.event) ?? tickerYear(ctx) ?? null;
  if (d.year === null) d.confidence -= 0.15;
  d.subject = `party:${d.party}`;
  d.subjectCandidates = [d.subject];
  d.subjectName = d.party === 'dem' ? 'Democrats' : 'Republicans';
  if (ctx.outcome === 'no') d.negated = true;
  note(d, 'title');
  return true;
}

/** A bare contest name listed per outcome: "North Carolina Senate Election Winner" + "Democratic". */
const RE_LISTED_CONTEST = /^((?:20\d{2} )?.+? (?:election|race|primary|runoff))(?: winner)?( 20\d{2})?$/;

function parsePolitics(ctx: Ctx, d: Draft): boolean {
  let t = ctx.title.replace(/\?$/, '').trim();
  const listedContest = RE_LISTED_CONTEST.exec(t);
  // Read it as the question it stands for, as "Who will win …?" titles are read.
  if (listedContest && ctx.outcome && !/^(?:yes|no)$/.test(ctx.outcome) && !/^will /.test(t))
    t = `will ${ctx.outcome} win the ${listedContest[1]}${listedContest[2] ?? ''}`;
  const all = `${t} | ${ctx.event}`;
  const kt = ctx.kt;
  if (parseControl(ctx, d, t)) return true;
  const nomination = /\bnomin(?:ee|ation)\b/.test(all) || kt?.series.startsWith('PRESNOM') === true;
  if (nomination) {
    // Only "X is the nominee" statements; "support the nominee" and the like are something else.
    const statesNominee = /\b(?:be|win|become|receive|secure)\b.{0,60}\bnomin/.test(t);
    const listed = NAME_ONLY.test(t) && /\bnomin/.test(ctx.event);
    const generic = kt?.series.startsWith('PRESNOM') === true && !/^will /.test(t);
    if (!statesNominee && !listed && !generic) return false;
    const party = partyIn(all, kt);
    const office = officeIn(all, undefined) ?? (kt?.series.startsWith('PRESNOM') ? 'president_us' : undefined);
    const who = personSubject(ctx, t);
    if (!party || !office || !who) return false;
    d.kind = 'nomination';
    d.market_type = 'nomination';
    d.party = party;
    d.office = office;
    d.stage = electionStage(t);
    d.year = findYear(t) ?? findYear(ctx.event) ?? tickerYear(ctx) ?? null;
    if (d.year === null) d.confidence -= 0.15;
    d.subject = who.id;
    d.subjectCandidates = [who.id];
    d.subjectName = who.name;
    if (ctx.outcome === 'no') d.negated = true;
    note(d, 'title');
    return true;
  }
  const electionWords =
    /\b(?:win|be elected|become|be the next)\b.*\b(?:election|presidency|president|governorship|governor|senate|mayor(?:al)?(?: race| election)?|prime minister|chancellor|race|primary|runoff|pope)\b|^who will win\b/;
  const listQuestion = /^who will (?:win|be)\b/.test(ctx.event) && NAME_ONLY.test(t);
  if (!electionWords.test(t) && !listQuestion && !(kt && officeIn('', kt))) return false;
  const office = officeIn(all, kt);
  if (!office) return false;
  const party = partySubject(ctx, t);
  const who = party ? { id: `party:${party}`, name: party === 'dem' ? 'Democrats' : 'Republicans' } : personSubject(ctx, t);
  if (!who) return false;
  d.kind = 'election_winner';
  d.market_type = 'election_winner';
  d.office = office;
  d.stage = electionStage(t);
  d.party = party ?? partyIn(t, undefined) ?? null;
  d.year = findYear(t) ?? findYear(ctx.event) ?? tickerYear(ctx) ?? null;
  if (d.year === null) d.confidence -= 0.15;
  d.subject = who.id;
  d.subjectCandidates = [who.id];
  d.subjectName = who.name;
  if (d.stage === 'primary' && d.party !== null && !party && !office.startsWith('president') && !/\brunoff\b|\bfirst round\b/.test(t)) {
    // A party's primary for a state office picks its nominee: "win the Texas Republican Senate
    // primary" settles as "be the Republican nominee for the Senate in Texas". Not so for the
    // presidency, where one state's primary is only a step towards the nomination.
    d.kind = 'nomination';
    d.market_type = 'nomination';
    d.stage = null;
  }
  if (ctx.outcome === 'no') d.negated = true;
  note(d, 'title');
  return true;
}

// ---------------------------------------------------------------------------------------------
// Economics: Fed decisions, rate levels, CPI, unemployment, GDP.

const FED_RE = /\b(fed|federal reserve|fomc)\b/;
const MEETING_RE = new RegExp(`\\b(${MONTH_RE})\\.?(?:,? (20\\d{2}))? (?:fomc |fed )?meeting\\b`);
const FED_DECISION_IN_RE = new RegExp(`\\b(?:decision|fomc) in (${MONTH_RE})\\.?(?:,? (20\\d{2}))?\\b`);
const BPS_RE = /(>|more than |over |at least )?(\d+)(\+)?\s?(?:bps|bp|basis points)\b/;

function meetingMonth(ctx: Ctx, s: string): string | undefined {
  const kt = ctx.kt;
  if (kt && kt.yy !== undefined && kt.mon) return isoMonth(2000 + kt.yy, kt.mon);
  const m = MEETING_RE.exec(s) ?? FED_DECISION_IN_RE.exec(s);
  const f = m ? { m: MONTHS[m[1]!]!, y: m[2] ? Number(m[2]) : undefined } : findMonth(s, false);
  if (!f) return undefined;
  const y = f.y ?? (ctx.close !== undefined ? yearNear(ctx.close, f.m) : undefined);
  return y ? isoMonth(y, f.m) : undefined;
}

function parseFed(ctx: Ctx, d: Draft): boolean {
  const t = ctx.title.replace(/\?$/, '');
  const all = `${t} | ${ctx.event}`;
  const kt = ctx.kt;
  const isDecision = kt?.series === 'FEDDECISION';
  if (!isDecision && !FED_RE.test(all)) return false;
  const month = meetingMonth(ctx, all);
  // Rate level: "upper bound of the federal funds rate above 4.25%".
  if (kt?.series === 'FED' || /\b(?:fed funds|federal funds) (?:target )?rate\b|\bupper bound\b/.test(t)) {
    const c = comparison(t, '%') ?? tickerStrike(ctx);
    if (!c || !month) return false;
    d.kind = 'fed_rate';
    d.market_type = 'fed_rate';
    d.subject = 'fed';
    d.subjectCandidates = ['fed'];
    d.subjectName = 'Federal Reserve';
    d.month = month;
    setThreshold(d, c, 'pct_rate');
    note(d, 'title');
    return true;
  }
  let change: { cmp: Comparator; value: number } | undefined;
  // "Fed decision in January?" listed per outcome ("No change", "25 bps decrease"): the outcome
  // label says what YES settles on.
  const said = ctx.outcome && !/^(?:yes|no)$/.test(ctx.outcome) ? `${t} | ${ctx.outcome}` : t;
  const bps = BPS_RE.exec(said);
  const hike = /\b(hike|hikes|raise|raises|increase|increases)\b/.test(said);
  const cut = /\b(cut|cuts|decrease|decreases|lower|lowers|reduce|reduces)\b/.test(said);
  if (/\bno change\b|\bunchanged\b|\b(?:hold|holds|pause|pauses|keep|keeps|maintain|maintains)\b.*\brates?\b/.test(said) || (bps && Number(bps[2]) === 0)) {
    change = { cmp: '=', value: 0 };
  } else if ((hike || cut) && bps) {
    const v = Number(bps[2]) * (cut ? -1 : 1);
    const strict = bps[1] === '>' || bps[1] === 'more than ' || bps[1] === 'over ';
    const orMore = bps[3] === '+' || bps[1] === 'at least ';
    change = strict ? { cmp: cut ? '<' : '>', value: v } : orMore ? { cmp: cut ? '<=' : '>=', value: v } : { cmp: '=', value: v };
  } else if ((hike || cut) && !bps && /\brates?\b/.test(said)) {
    change = { cmp: cut ? '<=' : '>=', value: cut ? -25 : 25 };
    d.confidence -= 0.1;
  } else if (kt && isDecision && kt.market) {
    const code = /^([HC])(\d+)$/.exec(kt.market);
    if (code) {
      const n = Number(code[2]);
      // Kalshi codes a cut of more than 25 bp as C26.
      change = code[1] === 'H' ? { cmp: '=', value: n } : n === 26 ? { cmp: '<', value: -25 } : { cmp: '=', value: -n };
    }
  }
  if (!change || !month) return false;
  d.kind = 'fed_decision';
  d.market_type = 'fed_decision';
  d.subject = 'fed';
  d.subjectCandidates = ['fed'];
  d.subjectName = 'Federal Reserve';
  d.month = month;
  d.comparator = change.cmp;
  d.threshold = change.value;
  d.unit = 'bps';
  if (ctx.outcome === 'no') d.negated = true;
  note(d, 'title');
  if (kt) note(d, 'ticker');
  return true;
}

interface Cmp {
  readonly cmp: Comparator;
  readonly value: number;
  readonly high?: number | undefined;
}

/**
 * The comparison a title states about a number with `unit` ("%" or "$"): "above 2.4%" (>),
 * "≥4.7%" / "4.7% or higher" / "25+" (>=), "below" (<), "at most" (<=), "between X and Y"
 * (range), a bare number (= exact bucket: "increase by 2.4%").
 */
interface CmpPatterns {
  readonly between: RegExp;
  readonly to: RegExp | undefined;
  readonly ge: RegExp;
  readonly le: RegExp;
  readonly gt: RegExp;
  readonly lt: RegExp;
  readonly eq: RegExp | undefined;
}

function cmpPatterns(num: string, dollars: boolean): CmpPatterns {
  return {
    between: new RegExp(`\\bbetween ${num} and ${num}`),
    to: dollars ? new RegExp(`${num} to ${num}`) : undefined,
    ge: new RegExp(`(?:>=|\\bat least|\\bno less than)\\s?${num}|${num}\\s?(?:\\+|or (?:more|higher|above|greater))`),
    le: new RegExp(`(?:<=|\\bat most|\\bno more than)\\s?${num}|${num}\\s?or (?:less|lower|below|fewer)`),
    gt: new RegExp(`(?:>|\\babove|\\bmore than|\\bover|\\bgreater than|\\bhigher than|\\bexceeds?|\\bexceeding)\\s?${num}`),
    lt: new RegExp(`(?:<|\\bbelow|\\bless than|\\bunder|\\blower than)\\s?${num}`),
    eq: dollars ? undefined : new RegExp(num),
  };
}

const MONEY = '\\$?\\s?(\\d{1,3}(?:,\\d{3})+(?:\\.\\d+)?|\\d+(?:\\.\\d+)?(?:k|m)?)';
const CMP_PCT = cmpPatterns('(-?\\d+(?:\\.\\d+)?)\\s?%', false);
const CMP_USD = cmpPatterns(MONEY, true);

function comparison(t: string, unit: '%' | '$'): Cmp | undefined {
  const p = unit === '%' ? CMP_PCT : CMP_USD;
  const between = p.between.exec(t) ?? p.to?.exec(t);
  if (between) return { cmp: 'range', value: amount(between[1]!), high: amount(between[2]!) };
  const ge = p.ge.exec(t);
  if (ge) return { cmp: '>=', value: amount(ge[1] ?? ge[2]!) };
  const le = p.le.exec(t);
  if (le) return { cmp: '<=', value: amount(le[1] ?? le[2]!) };
  const gt = p.gt.exec(t);
  if (gt) return { cmp: '>', value: amount(gt[1]!) };
  const lt = p.lt.exec(t);
  if (lt) return { cmp: '<', value: amount(lt[1]!) };
  const eq = p.eq?.exec(t);
  if (eq) return { cmp: '=', value: amount(eq[1]!) };
  return undefined;
}

function amount(s: string): number {
  const v = parseAmount(s.replace(/^\$/, '').trim());
  return Number.isFinite(v) ? v : Number(s);
}

/** Kalshi strike from the market part of a ticker: T = above, B = bucket. */
function tickerStrike(ctx: Ctx): Cmp | undefined {
  const mk = ctx.kt?.market;
  if (!mk) return undefined;
  const m = /^([TB])?(-?\d+(?:\.\d+)?)$/.exec(mk);
  if (!m) return undefined;
  const v = Number(m[2]);
  if (m[1] === 'B') return { cmp: 'range', value: v, high: undefined };
  return { cmp: '>', value: v };
}

function setThreshold(d: Draft, c: Cmp, unit: string): void {
  d.comparator = c.cmp;
  d.threshold = c.value;
  d.thresholdHigh = c.high ?? null;
  d.unit = unit;
}

const INDICATORS: readonly (readonly [RegExp, string])[] = [
  [/\bcore (?:cpi|inflation)\b.*\b(?:year|annual|yoy|y\/y|12-month)\b|\b(?:annual|yoy|year-over-year) core\b/, 'core_cpi_yoy'],
  [/\bcore (?:cpi|inflation)\b/, 'core_cpi_mom'],
  [/\bpce\b/, 'pce'],
  [
    /\b(?:cpi|inflation)\b.*\b(?:year ending|annual|yoy|y\/y|12-month|year-over-year|year over year)\b|\b(?:annual|yoy|year-over-year)\b.*\b(?:cpi|inflation)\b/,
    'cpi_yoy',
  ],
  [/\b(?:cpi|inflation)\b.*\b(?:monthly|month-over-month|m\/m|mom)\b|\b(?:monthly)\b.*\b(?:cpi|inflation)\b/, 'cpi_mom'],
  [/\bu-?6\b/, 'unemployment_u6'],
  [/\bunemployment\b/, 'unemployment'],
  [/\bgdp\b/, 'gdp'],
  [/\b(?:payrolls|jobs report|nonfarm|jobs added)\b|\badd (?:more than |over |at least |fewer than |less than )?[\d,.]+k? jobs\b/, 'payrolls'],
  // Last resort: CPI with no period word; settled below by the size of the number.
  [/\b(?:cpi|inflation)\b/, 'cpi'],
];

const SERIES_INDICATOR: Readonly<Record<string, string>> = {
  CPIYOY: 'cpi_yoy',
  CPI: 'cpi_mom',
  CPICOREYOY: 'core_cpi_yoy',
  CPICORE: 'core_cpi_mom',
  U3: 'unemployment',
  GDP: 'gdp',
  PAYROLLS: 'payrolls',
};

function parseEcon(ctx: Ctx, d: Draft): boolean {
  const t = ctx.title.replace(/\?$/, '');
  const all = `${t} | ${ctx.event}`;
  const kt = ctx.kt;
  let ind = kt ? SERIES_INDICATOR[kt.series] : undefined;
  if (!ind)
    for (const [re, id] of INDICATORS)
      if (re.test(all)) {
        ind = id;
        break;
      }
  if (!ind) return false;
  let c = ind === 'payrolls' ? comparison(t.replace(/\bjobs?\b/g, ''), '$') : comparison(t, '%');
  if (!c) c = tickerStrike(ctx);
  if (!c) return false;
  if (ind === 'cpi') {
    // Monthly CPI changes sit within about ±1%, annual rates above: the number tells which.
    ind = Math.abs(c.value) <= 1.2 ? 'cpi_mom' : 'cpi_yoy';
    d.confidence -= 0.1;
  }
  // Period: a quarter for GDP, else the data month ("for the year ending in February 2026").
  let month: string | undefined;
  const q = /\bq([1-4])\b(?: (20\d{2}))?|\b(first|second|third|fourth) quarter(?: of)?(?: (20\d{2}))?/.exec(all);
  if (ind === 'gdp' && q) {
    const n = q[1] ? Number(q[1]) : ['first', 'second', 'third', 'fourth'].indexOf(q[3]!) + 1;
    const y = Number(q[2] ?? q[4] ?? '') || (kt?.yy !== undefined ? 2000 + kt.yy : ctx.close !== undefined ? etParts(ctx.close).y : NaN);
    if (Number.isFinite(y)) month = `${y}-Q${n}`;
  } else if (kt && kt.yy !== undefined && kt.mon) {
    month = isoMonth(2000 + kt.yy, kt.mon);
  } else {
    const f = findMonth(all, true);
    if (f) {
      const y = f.y ?? (ctx.close !== undefined ? yearNear(ctx.close, f.m, 15, true) : undefined);
      if (y) month = isoMonth(y, f.m);
    }
  }
  if (!month) return false;
  d.kind = 'econ_threshold';
  d.market_type = ind;
  d.subject = ind;
  d.subjectCandidates = [ind];
  d.subjectName = ind;
  d.month = month;
  setThreshold(d, c, ind === 'payrolls' ? 'jobs' : 'pct');
  if (ctx.outcome === 'no') d.negated = true;
  note(d, 'title');
  return true;
}

// ---------------------------------------------------------------------------------------------
// Crypto prices.

const ASSETS: readonly (readonly [RegExp, string, string, boolean])[] = [
  [/\bbitcoin\b/, 'BTC', 'Bitcoin', true],
  [/\bethereum\b|\bether\b/, 'ETH', 'Ethereum', true],
  [/\bsolana\b/, 'SOL', 'Solana', true],
  [/\bxrp\b|\bripple\b/, 'XRP', 'XRP', true],
  [/\bdogecoin\b/, 'DOGE', 'Dogecoin', true],
  [/\bcardano\b/, 'ADA', 'Cardano', true],
  [/\blitecoin\b/, 'LTC', 'Litecoin', true],
  [/\bbtc\b/, 'BTC', 'Bitcoin', false],
  [/\beth\b/, 'ETH', 'Ethereum', false],
  [/\bsol\b/, 'SOL', 'Solana', false],
  [/\bdoge\b/, 'DOGE', 'Dogecoin', false],
  [/\bbnb\b/, 'BNB', 'BNB', false],
  [/\bhype\b|\bhyperliquid\b/, 'HYPE', 'Hyperliquid', false],
];

const PRICE_WORDS = /\$|\bprice\b|\babove\b|\bbelow\b|\breach\b|\bhit\b|\bdip\b/;
const CRYPTO_EXCLUDE =
  /\bup or down\b|\ball[- ]time high\b|\bmarket cap\b|\betf\b|\bflip(?:pening)?\b|\bdominance\b|\breserve\b|\bhalving\b|\bunban\b|\bstrategic\b/;

function assetOf(ctx: Ctx, s: string): { code: string; name: string } | undefined {
  const kt = ctx.kt;
  if (kt) {
    const m = /^(BTC|ETH|SOL|XRP|DOGE|ADA|LTC|BNB|HYPE)(D|MAXY|MINY|MAX|MIN|MAXMON|MINMON|W|)$/.exec(kt.series);
    if (m) {
      const a = ASSETS.find((x) => x[1] === m[1]);
      return { code: m[1]!, name: a?.[2] ?? m[1]! };
    }
  }
  for (const [re, code, name, strong] of ASSETS) if (re.test(s) && (strong || PRICE_WORDS.test(s))) return { code, name };
  return undefined;
}

const RE_TOUCH_UP = new RegExp(`\\b(reach|hit|touch|surpass|break|exceed|climb to|rise to)\\s+${MONEY}`);
const RE_TOUCH_DOWN = new RegExp(`\\b(dip to|dip below|fall to|fall below|drop to|drop below|sink to|crash to|go below|go under)\\s+${MONEY}`);
/** Polymarket lists "What price will Bitcoin hit in 2026?" per strike: outcome "↑ 150,000" / "↓ 60,000". */
const RE_ARROW = new RegExp(`^([↑↓])\\s*${MONEY}$`);

function parseCrypto(ctx: Ctx, d: Draft): boolean {
  const t = ctx.title.replace(/\?$/, '');
  const asset = assetOf(ctx, t);
  if (!asset) return false;
  if (CRYPTO_EXCLUDE.test(t)) return false;
  const kt = ctx.kt;
  const series = kt ? /(MAXY|MINY|MAXMON|MINMON|MAX|MIN|D|W)?$/.exec(kt.series)?.[1] : undefined;
  let mode: 'at' | 'max_by' | 'min_by';
  let c: Cmp | undefined;
  const arrow = RE_ARROW.exec(ctx.outcome);
  const touchUp = RE_TOUCH_UP.exec(t);
  const touchDown = RE_TOUCH_DOWN.exec(t);
  const byDeadline = /\bby\b|\bbefore\b|\bin 20\d{2}\b|\bthis year\b|\bend of\b/.test(t);
  if (arrow) {
    // "↑ 150,000" reads "reach $150,000", "↓ 60,000" reads "dip to $60,000".
    mode = arrow[1] === '↑' ? 'max_by' : 'min_by';
    c = { cmp: arrow[1] === '↑' ? '>=' : '<=', value: amount(arrow[2]!) };
  } else if (touchUp) {
    mode = 'max_by';
    c = { cmp: /surpass|break|exceed/.test(touchUp[1]!) ? '>' : '>=', value: amount(touchUp[2]!) };
  } else if (touchDown) {
    mode = 'min_by';
    c = { cmp: /below|under/.test(touchDown[1]!) ? '<' : '<=', value: amount(touchDown[2]!) };
  } else {
    c = comparison(t, '$');
    if (c && !/\d/.test(String(c.value))) c = undefined;
    if (series === 'MAXY' || series === 'MAX' || series === 'MAXMON') mode = 'max_by';
    else if (series === 'MINY' || series === 'MIN' || series === 'MINMON') mode = 'min_by';
    else if (byDeadline && c && (c.cmp === '>' || c.cmp === '>=')) mode = 'max_by';
    else if (byDeadline && c && (c.cmp === '<' || c.cmp === '<=')) mode = 'min_by';
    else mode = 'at';
    if (!c && ctx.outcome) c = comparison(ctx.outcome, '$');
    if (!c) c = tickerStrike(ctx);
    if (c && c.cmp === '=') c = undefined;
  }
  if (!c || !Number.isFinite(c.value)) return false;
  // When: a deadline day for touches, an observation day and clock time for "at".
  let date: string | undefined;
  let time: string | undefined;
  const td = findDate(t);
  const tm = findTime(t);
  if (mode === 'at') {
    if (td) {
      const y = td.y ?? (ctx.close !== undefined ? yearNear(ctx.close, td.m, td.d) : kt?.yy !== undefined ? 2000 + kt.yy : undefined);
      if (y) date = isoDay(y, td.m, td.d);
    } else if (kt && kt.yy !== undefined && kt.mon && kt.dd) {
      date = isoDay(2000 + kt.yy, kt.mon, kt.dd);
    }
    if (tm) {
      let minutes = tm.minutes;
      if (tm.zone === 'utc' || tm.zone === 'gmt') {
        // A UTC clock time: shift the instant to US Eastern (its day may change too).
        if (date) {
          const ms = Date.parse(`${date}T00:00:00Z`) + minutes * 60_000;
          const p = etParts(ms);
          date = isoDay(p.y, p.m, p.d);
          minutes = p.hour * 60 + p.minute;
        }
      } else if (tm.zone === 'pt' || tm.zone === 'pst' || tm.zone === 'pdt') minutes = (minutes + 180) % 1440;
      else if (tm.zone === 'ct' || tm.zone === 'cst' || tm.zone === 'cdt') minutes = (minutes + 60) % 1440;
      time = `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
    } else if (kt?.clock && kt.clock.length >= 2) {
      time = `${kt.clock.slice(0, 2)}:${kt.clock.length === 4 ? kt.clock.slice(2) : '00'}`;
    }
  } else {
    date = deadline(ctx, t, td, tm);
  }
  if (!date) return false;
  d.kind = 'crypto_price';
  d.mode = mode;
  d.market_type = `${asset.code.toLowerCase()}_${mode === 'at' ? (c.cmp === 'range' ? 'range' : c.cmp.startsWith('<') ? 'below' : 'above') : mode === 'max_by' ? 'max' : 'min'}`;
  d.subject = `asset:${asset.code}`;
  d.subjectCandidates = [d.subject];
  d.subjectName = asset.name;
  d.date = date;
  d.dateSource = 'title';
  d.time = time ?? null;
  setThreshold(d, c, 'usd');
  if (ctx.outcome === 'no') d.negated = true;
  note(d, 'title');
  if (kt) note(d, 'ticker');
  return true;
}

const RE_MONTH_DEADLINE = new RegExp(`\\b(?:in|by|by the end of|by end of|before the end of|during) (${MONTH_RE})\\b(?!\\.? \\d)(?:,? (20\\d{2}))?`);
const RE_YEAR_DEADLINE = new RegExp(`\\b(?:end of|by|in|before) (?:the end of )?(?:(${MONTH_RE}) )?(20\\d{2})\\b`);

/**
 * The last day a "by" deadline covers: "by Dec 31, 2026 at 11:59 PM ET" and "by Jan 1, 2027 at
 * 12:00am ET" both end with December 31, 2026; "in 2026", "by the end of 2026" likewise;
 * "before 2027" is the day before.
 */
function deadline(ctx: Ctx, t: string, td: ReturnType<typeof findDate>, tm: ReturnType<typeof findTime>): string | undefined {
  const before = /\bbefore\b/.test(t);
  if (td) {
    const y = td.y ?? (ctx.close !== undefined ? yearNear(ctx.close, td.m, td.d) : undefined);
    if (!y) return undefined;
    let day = isoDay(y, td.m, td.d);
    if ((tm && tm.minutes === 0) || before) day = addDays(day, -1);
    return day;
  }
  const monthOnly = RE_MONTH_DEADLINE.exec(t);
  if (monthOnly) {
    const m = MONTHS[monthOnly[1]!]!;
    const y = monthOnly[2] ? Number(monthOnly[2]) : ctx.close !== undefined ? yearNear(ctx.close, m) : undefined;
    if (y) return isoDay(y, m, daysInMonth(y, m));
  }
  if (/\bthis year\b|\bend of (?:the )?year\b/.test(t) && ctx.close !== undefined) return isoDay(etParts(ctx.close).y, 12, 31);
  const endOf = RE_YEAR_DEADLINE.exec(t);
  if (endOf) {
    const y = Number(endOf[2]);
    if (endOf[1]) {
      const m = MONTHS[endOf[1]]!;
      return /\bbefore\b/.test(endOf[0]) ? addDays(isoDay(y, m, 1), -1) : isoDay(y, m, daysInMonth(y, m));
    }
    return /\bbefore\b/.test(endOf[0]) ? isoDay(y - 1, 12, 31) : isoDay(y, 12, 31);
  }
  const kt = ctx.kt;
  if (kt && kt.yy !== undefined && kt.mon && kt.dd) return isoDay(2000 + kt.yy, kt.mon, kt.dd);
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// IPOs and awards.

function orgId(s: string): string {
  return `org:${foldPerson(s)
    .replace(/\b(inc|corp|corporation|ltc|llc|co|company|the)\b/g, '')
    .replace(/\s+/g, ' ')
    .trim()}`;
}

function parseIpo(ctx: Ctx, d: Draft): boolean {
  const t = ctx.title.replace(/\?$/, '');
  if (!/\bipo\b|\bgo(?:es)? public\b/.test(t)) return false;
  const first = /^will (.+?) or (.+?) (?:ipo|go public) first$/.exec(t);
  if (first) {
    if (!ctx.rawOutcome || /^(yes|no)$/i.test(ctx.rawOutcome)) return false;
    d.mode = 'first';
    d.subject = orgId(ctx.rawOutcome);
    d.subjectName = ctx.rawOutcome;
    d.competition = [orgId(first[1]!), orgId(first[2]!)].sort().join('|');
  } else {
    // Polymarket often drops the "Will": "SpaceX IPO by December 31, 2026?".
    const m = /^will (.+?) (?:ipo|go public|announce (?:an|its) ipo)\b(.*)$/.exec(t) ?? /^([a-z0-9][a-z0-9.&' -]{0,40}?) ipo\b(.*)$/.exec(t);
    if (!m || /\bannounce\b/.test(t)) return false;
    const rest = m[2]!;
    const td = findDate(rest);
    const date = deadline(ctx, rest, td, findTime(rest));
    if (!date) return false;
    d.mode = 'by';
    d.date = date;
    d.dateSource = 'title';
    d.subject = orgId(m[1]!);
    d.subjectName = rawSpan(ctx, m[1]!);
  }
  d.kind = 'ipo';
  d.market_type = 'ipo';
  d.subjectCandidates = [d.subject!];
  if (ctx.outcome === 'no') d.negated = true;
  note(d, 'title');
  return true;
}

const CEREMONIES: readonly (readonly [RegExp, string])[] = [
  [/\btime(?:'s| magazine'?s?)?(?: 20\d{2})? person of the year\b/, 'time_poy'],
  [/\boscars?\b|\bacademy awards?\b/, 'oscars'],
  [/\bgrammys?\b|\bgrammy awards?\b/, 'grammys'],
  [/\bemmys?\b|\bemmy awards?\b/, 'emmys'],
  [/\bgolden globes?\b/, 'golden_globes'],
  [/\btony awards?\b|\btonys\b/, 'tonys'],
  [/\bballon d'?or\b/, 'ballon_dor'],
  [/\bnba\b/, 'nba'],
  [/\bnfl\b/, 'nfl'],
  [/\bmlb\b|\bamerican league\b|\bnational league\b/, 'mlb'],
  [/\bnhl\b/, 'nhl'],
];

/** Year of the Nth ceremony: the 98th Academy Awards are held in 2026. */
const CEREMONY_BASE: readonly (readonly [RegExp, number])[] = [
  [/\b(\d{2,3})(?:st|nd|rd|th) (?:annual )?(?:academy awards|oscars)\b/, 1928],
  [/\b(\d{2,3})(?:st|nd|rd|th) (?:annual )?grammy/, 1958],
  [/\b(\d{2,3})(?:st|nd|rd|th) (?:annual )?golden globe/, 1943],
  [/\b(\d{2,3})(?:st|nd|rd|th) (?:annual )?(?:primetime )?emmy/, 1948],
  [/\b(\d{2,3})(?:st|nd|rd|th) (?:annual )?tony/, 1947],
];

function ceremonyYear(s: string): number | undefined {
  for (const [re, base] of CEREMONY_BASE) {
    const m = re.exec(s);
    if (m) return base + Number(m[1]);
  }
  return undefined;
}

const AWARD_WORDS = /\bbest\b|\bof the year\b|\bmvp\b|\bmost valuable\b|\baward\b|\btrophy\b|\bcy young\b|\bheisman\b|\brookie\b|\bballon\b/;

function parseAward(ctx: Ctx, d: Draft): boolean {
  const t = ctx.title.replace(/\?$/, '');
  const all = `${t} | ${ctx.event}`;
  let ceremony: string | undefined;
  for (const [re, c] of CEREMONIES)
    if (re.test(all)) {
      ceremony = c;
      break;
    }
  if (!ceremony && !/\bheisman\b|\bcy young\b/.test(all)) return false;
  let subject: string | undefined;
  let category: string | undefined;
  const m = /^will (.+?) win (?:the )?(.+?)$/.exec(t);
  // TIME names its Person of the Year: "Will X be (named) TIME's Person of the Year 2025?".
  const named = ceremony === 'time_poy' ? /^will (.+?) be (?:named |chosen as |selected as )?(?:the )?time\b/.exec(t) : null;
  if (named) {
    subject = named[1]!;
    category = 'person of the year';
  } else if (m && AWARD_WORDS.test(m[2]!)) {
    subject = m[1]!;
    category = m[2]!;
  } else if (ctx.rawOutcome && !/^(yes|no)$/i.test(ctx.rawOutcome) && AWARD_WORDS.test(all)) {
    subject = foldText(ctx.rawOutcome);
    category = /(?:win|for) (?:the )?(.+?)$/.exec(t)?.[1] ?? t;
  }
  if (!subject || !category) return false;
  // TIME gives one title a year, however the venue words it.
  if (ceremony === 'time_poy') category = 'person of the year';
  const cat = foldText(category)
    .replace(/\b(?:at|in) the .*$/, '')
    .replace(/\b20\d{2}(?:-\d{2})?\b/g, '')
    .replace(/\b(oscars?|academy awards?|grammys?|grammy awards?|emmys?|golden globes?|nba|nfl|mlb|nhl|award|the|for|winner)\b/g, '')
    .replace(/[^a-z0-9 ]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (!cat) return false;
  d.kind = 'award';
  d.market_type = 'award_winner';
  d.competition = ceremony ?? 'award';
  d.stage = cat;
  d.year = ceremonyYear(all) ?? findYear(t) ?? findYear(ctx.event) ?? tickerYear(ctx) ?? null;
  if (d.year === null) d.confidence -= 0.15;
  const name = subject.replace(/^["']|["']$/g, '').replace(/^the /, '');
  d.subject = `work:${foldPerson(name)}`;
  d.subjectCandidates = [d.subject];
  d.subjectName = name;
  if (ctx.outcome === 'no') d.negated = true;
  note(d, 'title');
  return true;
}

// ---------------------------------------------------------------------------------------------

function parseOther(ctx: Ctx, d: Draft): void {
  d.kind = 'other';
  d.market_type = 'other';
  const extra = ctx.outcome && ctx.outcome !== 'yes' && ctx.outcome !== 'no' ? ` ${ctx.outcome}` : '';
  d.tokens = contentTokens(`${ctx.title}${extra}`);
  d.subject = d.tokens.length >= 2 ? `text:${d.tokens.join(' ')}` : null;
  d.subjectCandidates = d.subject ? [d.subject] : [];
  d.subjectName = ctx.rawTitle;
  if (ctx.outcome === 'no') d.negated = true;
  // Free text is the weakest evidence: only identical wording (as a set of words) may meet.
  d.confidence = 0.7;
  note(d, 'title');
}

function signatureOf(d: Draft): string {
  const parts: (string | number | null | boolean)[] = [
    d.kind,
    d.subject ?? `?${d.subjectCandidates.join('/')}`,
    d.league,
    d.competition,
    d.stage,
    d.office,
    d.party,
    d.year,
    d.date,
    d.month,
    d.time,
    d.mode,
    d.comparator,
    d.threshold,
    d.thresholdHigh,
    d.stat,
    [...d.teams].sort().join('+'),
    d.period,
    d.negated,
  ];
  return parts.map((p) => (p === null ? '' : String(p))).join('|');
}

/**
 * Extracts the structured proposition a listing's YES side settles on. Pure and cheap: one pass of
 * pre-compiled patterns over the folded title, event title and outcome, plus the id's structure.
 */
export function extractProposition(m: MatchInput): Proposition {
  const ctx = context(m);
  const d = blank(ctx);
  const ok =
    parseSports(ctx, d) ||
    reset(ctx, d, parseFutures) ||
    reset(ctx, d, parsePolitics) ||
    reset(ctx, d, parseFed) ||
    reset(ctx, d, parseEcon) ||
    reset(ctx, d, parseCrypto) ||
    reset(ctx, d, parseIpo) ||
    reset(ctx, d, parseAward);
  if (!ok) {
    Object.assign(d, blank(ctx));
    parseOther(ctx, d);
  }
  d.confidence = Math.max(0, Math.min(1, Math.round(d.confidence * 100) / 100));
  // The draft is private to this call: it becomes the result without a copy.
  const p = d as Draft & { signature: string };
  p.signature = signatureOf(d);
  return p;
}

/** Runs a parser on a clean draft (a failed earlier parser may have written fields). */
function reset(ctx: Ctx, d: Draft, parser: (ctx: Ctx, d: Draft) => boolean): boolean {
  Object.assign(d, blank(ctx));
  return parser(ctx, d);
}
