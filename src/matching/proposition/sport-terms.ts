/**
 * Sports vocabulary: the league a ticker series or a title prefix names, the market a series
 * suffix stands for, and the stat and period words of titles.
 */
import { INDIVIDUAL, LEAGUE_CODES_LONGEST_FIRST, leagueByCode, leagueInfo, type LeagueInfo } from '../teams.js';
import type { Ticker } from './context.js';
import type { PropositionKind } from './types.js';

/** What a Kalshi sports series suffix lists (KXNFLSPREAD → spread, KXNBAPTS → points props). */
export const SPORT_SUFFIX: Readonly<Record<string, { kind: PropositionKind; period?: string; stat?: string }>> = {
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

/** A ticker series read as league + suffix. */
export interface SportSeries {
  readonly league: LeagueInfo;
  readonly suffix: string;
}

/** The league and suffix of a Kalshi sports series, longest league code first. */
export function tickerSport(kt: Ticker | undefined): SportSeries | undefined {
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

/** The one-on-one sport (tennis, MMA, boxing) a title or event names. */
export function individualSport(...texts: string[]): LeagueInfo | undefined {
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

/** The player stat the words name. */
export function statOf(s: string): string | undefined {
  for (const [re, stat] of STATS) if (re.test(s)) return stat;
  return undefined;
}

/** The game prefix of esports titles ("LoL: T1 vs Gen.G"). */
export const ESPORTS_PREFIX = /^(lol|league of legends|counter-strike 2|counter-strike|cs2|cs:go|csgo|cs|valorant|dota 2|dota2):\s*/;

const PERIOD_RE = /\b(1h|first half|1st half|2h|second half|2nd half|1q|first quarter|1st quarter|first 5 innings|f5|1st period|first period)\b/;

/** The part of the game a title is about (1H, 2H, 1Q, F5, P1), if not the full game. */
export function periodOf(s: string): string | undefined {
  const m = PERIOD_RE.exec(s);
  if (!m) return undefined;
  const p = m[1]!;
  if (p === '1h' || (p.endsWith(' half') && p.startsWith('f')) || p === '1st half') return '1H';
  if (p === '2h' || p === 'second half' || p === '2nd half') return '2H';
  if (p === '1q' || p.endsWith('quarter')) return '1Q';
  if (p === 'f5' || p === 'first 5 innings') return 'F5';
  return 'P1';
}

/** The esports league an esports title prefix names. */
export function esportsLeague(prefix: string): LeagueInfo | undefined {
  if (prefix.startsWith('lol') || prefix.startsWith('league')) return leagueInfo('LOL');
  if (prefix.startsWith('val')) return leagueInfo('VALORANT');
  if (prefix.startsWith('dota')) return leagueInfo('DOTA2');
  return leagueInfo('CS2');
}
