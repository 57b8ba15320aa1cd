/** The facts of one game (league, teams, home and away, day) gathered from every part of a listing. */
import { GROUP_SPORT, INDIVIDUAL, groupOf, leagueInfo, splitTeamCodes, teamsByCode, teamsByName, type LeagueInfo } from '../teams.js';
import { etParts, isoDay } from '../text.js';
import { note, teamName, type Ctx } from './context.js';
import { cleanSide, type Matchup } from './matchup.js';
import type { SportSeries } from './sport-terms.js';
import type { Draft } from './types.js';

/** Game facts gathered from every part of the listing. */
export interface Game {
  league: LeagueInfo | undefined;
  groups: readonly string[] | undefined;
  teams: string[];
  away: string | undefined;
  home: string | undefined;
  date: string | undefined;
  dateSource: Draft['dateSource'];
}

/** The North-American league all these teams belong to, if one. */
export function leagueOfTeams(ids: readonly string[]): LeagueInfo | undefined {
  const gs = new Set(ids.map(groupOf));
  if (gs.size !== 1) return undefined;
  const g = [...gs][0]!;
  return ['NFL', 'NBA', 'MLB', 'NHL', 'NCAAF'].includes(g) ? leagueInfo(g) : undefined;
}

/** Adds a participant, at most two. */
export function addTeam(g: Game, id: string | undefined): void {
  if (id && !g.teams.includes(id) && g.teams.length < 2) g.teams.push(id);
}

/** The game facts the listing's id gives: teams and day from a ticker or a slug. */
export function gameFacts(ctx: Ctx, d: Draft, series: SportSeries | undefined, prefixLeague: LeagueInfo | undefined): Game {
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
export function mergeMatchup(g: Game, mu: Matchup | undefined): void {
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

/** A team named by `name` among the game's teams (or the league's). */
export function resolveTeamIn(name: string, g: Game): string[] {
  const n = cleanSide(name);
  if (!n) return [];
  const byName = teamsByName(n, g.groups);
  const inGame = byName.filter((id) => g.teams.includes(id));
  if (inGame.length > 0) return inGame;
  if (g.teams.length === 2 && byName.length > 0) return []; // names a team that is not in this game
  if (byName.length > 0) return byName;
  // An outcome token may be the team code as the venue writes it ("MIL").
  if (g.groups && /^[a-z0-9]{2,5}$/i.test(n)) {
    const byCode = teamsByCode(n, g.groups);
    const inGame2 = byCode.filter((id) => g.teams.includes(id));
    return inGame2.length > 0 ? inGame2 : byCode;
  }
  return [];
}

/** Writes the game's facts into the draft; a non-Kalshi game with no day takes its close day. */
export function applyGame(d: Draft, g: Game, ctx: Ctx): void {
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

/** Makes the team (or the candidates of an ambiguous name) the subject. */
export function setSubjectTeam(d: Draft, ids: readonly string[]): void {
  d.subjectCandidates = ids.slice();
  d.subject = ids.length === 1 ? ids[0]! : null;
  d.subjectName = ids.length === 1 ? teamName(ids[0]) : null;
  d.team = d.subjectName;
}

/** Home or away, for a subject team of the game. */
export function sideOf(d: Draft): Draft['side'] {
  if (!d.subject) return null;
  if (d.subject === d.home) return 'home';
  if (d.subject === d.away) return 'away';
  return null;
}
