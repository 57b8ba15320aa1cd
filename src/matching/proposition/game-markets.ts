/** The game propositions: winner, draw, spread, total and player prop, filled in from the game's facts. */
import { teamsByCode, teamsByName } from '../teams.js';
import { foldPerson } from '../text.js';
import { note, rawSpan, teamName, type Ctx } from './context.js';
import { addTeam, applyGame, resolveTeamIn, setSubjectTeam, sideOf, type Game } from './game.js';
import { cleanSide } from './matchup.js';
import { tickerSport } from './sport-terms.js';
import type { Comparator, Draft } from './types.js';

function finishGameCommon(d: Draft, g: Game, ctx: Ctx): void {
  applyGame(d, g, ctx);
  if (g.teams.length === 0 && d.kind !== 'player_prop') d.confidence -= 0.1;
}

/** A moneyline or map winner: the YES team from the ticker, the outcome label or the team `named` in the title. */
export function winner(ctx: Ctx, d: Draft, g: Game, kind: 'game_winner' | 'map_winner', named: string | undefined): boolean {
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

/** The draw of a game whose two teams are known. */
export function draw(ctx: Ctx, d: Draft, g: Game): boolean {
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

/** A spread on the team `teamText` names, `line` signed from its side; the outcome label may name the other side. */
export function spread(ctx: Ctx, d: Draft, g: Game, teamText: string, line: number, outcomeMayFlip: boolean): boolean {
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

/** A game total over or under `line`, in the sport's score or in maps. */
export function total(ctx: Ctx, d: Draft, g: Game, under: boolean, line: number, unit: string): boolean {
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

/** A player prop: `name` records `stat` `cmp` `value` in this game. */
export function playerProp(
  ctx: Ctx,
  d: Draft,
  g: Game,
  name: string,
  stat: string,
  cmp: Comparator,
  value: number,
  kinfo: { stat?: string } | undefined,
): boolean {
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
