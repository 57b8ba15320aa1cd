/**
 * Sports games: moneyline, spread, total, player props, map winners. The title is tried against
 * each family of phrasings in turn (props, spreads, totals, map winners and draws, moneylines); a
 * family that recognises the title decides.
 */
import { groupOf, type LeagueInfo } from '../teams.js';
import type { Ctx } from './context.js';
import { draw, playerProp, spread, total, winner } from './game-markets.js';
import { addTeam, gameFacts, mergeMatchup, resolveTeamIn, type Game } from './game.js';
import { BO_RE, looksLikeMatchup, parseMatchup, parseMatchupPair } from './matchup.js';
import { ESPORTS_PREFIX, SPORT_SUFFIX, esportsLeague, individualSport, periodOf, statOf, tickerSport, type SportSeries } from './sport-terms.js';
import type { Draft } from './types.js';

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

/** One listing read as a game: its cleaned title and event title, the game's facts, and the ticker series. */
interface Scene {
  readonly ctx: Ctx;
  readonly d: Draft;
  /** Folded title without "?", esports prefix and "(BO3)". */
  readonly t: string;
  /** Folded event title, cleaned the same way. */
  readonly ev: string;
  readonly g: Game;
  readonly series: SportSeries | undefined;
  readonly kinfo: (typeof SPORT_SUFFIX)[string] | undefined;
}

/** A family's answer: true or false decides, undefined passes the title on to the next family. */
type Verdict = boolean | undefined;

/**
 * Sports game propositions. Returns false when the listing is not recognisably about one game
 * (then other parsers get it).
 */
export function parseSports(ctx: Ctx, d: Draft): boolean {
  const s = scene(ctx, d);
  if (!s) return false;
  return playerProps(s) ?? spreads(s) ?? totals(s) ?? mapsAndDraws(s) ?? namedMoneylines(s) ?? impliedMoneylines(s) ?? false;
}

/** Cleans the title, finds the league (ticker series, slug, esports prefix, sport named) and the game's facts. */
function scene(ctx: Ctx, d: Draft): Scene | undefined {
  const series = tickerSport(ctx.kt);
  const kinfo = series ? SPORT_SUFFIX[series.suffix] : undefined;
  // A league series without a game suffix is a futures market (KXNBA-26-BOS); an unknown suffix
  // (a prop series this table does not know) still leaves the title to read.
  if (series && series.suffix === '') return undefined;
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
  return { ctx, d, t, ev, g, series, kinfo };
}

/** Folds a matchup written in (part of) the title into the game. */
function titleMatchup(s: Scene, text: string | undefined): void {
  if (text && looksLikeMatchup(text)) mergeMatchup(s.g, parseMatchup(text, s.g.groups));
}

/** Folds the event title's matchup into the game. */
function eventMatchup(s: Scene): void {
  if (s.ev && looksLikeMatchup(s.ev)) mergeMatchup(s.g, parseMatchup(s.ev.replace(/\s+winner$/, ''), s.g.groups));
}

/** "Jaxon Smith-Njigba: 7+ receptions", "Will X record 100+ receiving yards?", "X: Receptions O/U 6.5". */
function playerProps(s: Scene): Verdict {
  const { ctx, d, t, g, kinfo } = s;
  let m: RegExpExecArray | null;
  if ((m = RE_KALSHI_PROP.exec(t)) && !looksLikeMatchup(m[1]!) && statOf(m[3]!)) {
    eventMatchup(s);
    return playerProp(ctx, d, g, m[1]!, statOf(m[3]!)!, '>=', Number(m[2]), kinfo);
  }
  if ((m = RE_WILL_PROP.exec(t)) && statOf(m[3]!)) {
    eventMatchup(s);
    return playerProp(ctx, d, g, m[1]!, statOf(m[3]!)!, '>=', Number(m[2]), kinfo);
  }
  if (
    (m = RE_POLY_PROP.exec(t)) &&
    !looksLikeMatchup(m[1]!) &&
    m[2]!.length > 0 &&
    statOf(m[2]!) &&
    !/^(?:1h |first half )?(?:games?|maps?)? ?total$/.test(m[2]!)
  ) {
    eventMatchup(s);
    const under = /^under\b/.test(ctx.outcome);
    return playerProp(ctx, d, g, m[1]!, statOf(m[2]!)!, under ? '<' : '>', Number(m[3]), kinfo);
  }
  if (kinfo?.kind === 'player_prop' && ctx.kt) {
    // Title without a readable stat line: the ticker carries stat and threshold ("…-SEAJSMITH1-7").
    const n = Number(ctx.kt.extra[0]);
    const name = /^(.+?):/.exec(t)?.[1];
    if (name && Number.isFinite(n)) {
      eventMatchup(s);
      d.confidence -= 0.1;
      return playerProp(ctx, d, g, name, kinfo.stat!, '>=', n, kinfo);
    }
  }
  return undefined;
}

/** "Seattle wins by over 2.5 points", "Spread: Seahawks (-2.5)", "Map Handicap: T1 (-1.5)". */
function spreads(s: Scene): Verdict {
  const { ctx, d, t, g } = s;
  let m: RegExpExecArray | null;
  if ((m = RE_KALSHI_SPREAD.exec(t))) {
    eventMatchup(s);
    return spread(ctx, d, g, m[1]!, -Number(m[2]), false);
  }
  if ((m = RE_POLY_SPREAD.exec(t))) {
    if (m[1]) d.period = '1H';
    eventMatchup(s);
    return spread(ctx, d, g, m[2]!, Number(m[3]), true);
  }
  if ((m = RE_HANDICAP.exec(t))) {
    if (m[3]) mergeMatchup(g, parseMatchupPair(m[1]!, m[3]!, g.groups));
    eventMatchup(s);
    return spread(ctx, d, g, m[1]!, Number(m[2]), true);
  }
  return undefined;
}

/** "A at B: Total Points" (line in the outcome or ticker), "A vs. B: O/U 47.5", "Over 47.5", and "Seahawks -2.5". */
function totals(s: Scene): Verdict {
  const { ctx, d, t, ev, g } = s;
  let m: RegExpExecArray | null;
  if ((m = RE_KALSHI_TOTAL.exec(t))) {
    titleMatchup(s, m[1]);
    eventMatchup(s);
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
      .replace(/[:-]\s*$/, '')
      .trim();
    titleMatchup(s, gamePart);
    eventMatchup(s);
    if (m[1]) d.period = '1H';
    const unit = /\b(games?|maps?) total\b|\btotal (games|maps)\b/.test(t) ? 'maps' : 'points';
    return total(ctx, d, g, /^under\b/.test(ctx.outcome), Number(m[2]), unit);
  }
  if ((m = RE_GAME_OVER.exec(t)) && (m[1] ? looksLikeMatchup(m[1]) : looksLikeMatchup(ev))) {
    titleMatchup(s, m[1]);
    eventMatchup(s);
    return total(ctx, d, g, m[2] === 'under', Number(m[3]), 'points');
  }
  // A team and a signed line is a spread; its game is read here too, so it stays read if it is not.
  if ((m = RE_TEAM_LINE.exec(t)) && !/o\/u/.test(t)) {
    titleMatchup(s, m[1]);
    eventMatchup(s);
    const ids = resolveTeamIn(m[2]!, g);
    if (ids.length > 0) return spread(ctx, d, g, m[2]!, Number(m[3]), true);
  }
  return undefined;
}

/** Esports per-map winners ("A vs B - Game 1 Winner") and draws ("Will A vs. B end in a draw?"). */
function mapsAndDraws(s: Scene): Verdict {
  const { ctx, d, t, g } = s;
  let m: RegExpExecArray | null;
  if ((m = RE_MAP_WINNER.exec(t))) {
    titleMatchup(s, m[1]);
    eventMatchup(s);
    d.stage = `map${m[2]}`;
    return winner(ctx, d, g, 'map_winner', undefined);
  }
  if ((m = RE_DRAW.exec(t))) {
    titleMatchup(s, m[1]);
    eventMatchup(s);
    return draw(ctx, d, g);
  }
  return undefined;
}

/** Moneylines whose title names the winner's side: "A to beat B", "A at B: A to win", "Will A win on <day>?". */
function namedMoneylines(s: Scene): Verdict {
  const { ctx, d, t, g, series } = s;
  let m: RegExpExecArray | null;
  if ((m = RE_1H_ML.exec(t))) {
    d.period = '1H';
    titleMatchup(s, m[1]);
    eventMatchup(s);
    return winner(ctx, d, g, 'game_winner', undefined);
  }
  if ((m = RE_TO_BEAT.exec(t))) {
    mergeMatchup(g, parseMatchupPair(m[1]!, m[2]!, g.groups));
    eventMatchup(s);
    return winner(ctx, d, g, 'game_winner', m[1]!);
  }
  if ((m = RE_TO_WIN.exec(t))) {
    titleMatchup(s, m[1]);
    eventMatchup(s);
    return winner(ctx, d, g, 'game_winner', m[2]!);
  }
  if ((m = RE_WIN_MATCH.exec(t)) && looksLikeMatchup(m[2]!)) {
    titleMatchup(s, m[2]);
    eventMatchup(s);
    return winner(ctx, d, g, 'game_winner', m[1]!);
  }
  if ((m = RE_WIN_ON.exec(t)) && (m[2] || ctx.slug || series)) return winOn(s, m[1]!, m[2]);
  return undefined;
}

/** "Will Arsenal win on 2026-01-11?": one side of a game that can be drawn. */
function winOn(s: Scene, team: string, day: string | undefined): boolean {
  const { ctx, d, g } = s;
  eventMatchup(s);
  if (day && !g.date) {
    g.date = day;
    g.dateSource = 'title';
  }
  const ids = resolveTeamIn(team, g);
  if (ids.length === 0) return false;
  if (g.teams.length === 0) for (const id of ids.length === 1 ? ids : []) addTeam(g, id);
  if (!g.groups && ids.length === 1) g.groups = [groupOf(ids[0]!)];
  return winner(ctx, d, g, 'game_winner', team);
}

/** Moneylines whose side comes from the outcome label or the ticker: "A vs. B", a bare team name, a generic title. */
function impliedMoneylines(s: Scene): Verdict {
  const { ctx, d, t, ev, g, kinfo } = s;
  const plain = RE_PLAIN_WINNER.exec(t);
  if (plain && looksLikeMatchup(plain[1]!)) {
    const before = g.teams.length;
    titleMatchup(s, plain[1]);
    if (g.teams.length === before && before < 2) return false;
    eventMatchup(s);
    return winner(ctx, d, g, 'game_winner', undefined);
  }
  // A bare team name as the title, its game in the event title (exchange-style listings).
  if (ev && looksLikeMatchup(ev) && !/[?:]/.test(t)) {
    eventMatchup(s);
    if (g.teams.length === 2 && resolveTeamIn(t, g).length > 0) return winner(ctx, d, g, 'game_winner', t);
  }
  if (kinfo && g.teams.length === 2) {
    // Kalshi game series whose title is generic: the ticker names the game and the side.
    return winner(ctx, d, g, kinfo.kind === 'map_winner' ? 'map_winner' : 'game_winner', undefined);
  }
  return undefined;
}
