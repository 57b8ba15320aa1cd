/** Futures: championships, tournaments, groups, stages. */
import { teamsByCode, teamsByName } from '../teams.js';
import { findYear, foldText } from '../text.js';
import { NAME_ONLY, note, teamName, tickerYear, type Ctx, type Ticker } from './context.js';
import type { Draft, PropositionKind } from './types.js';

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

/** What a futures title is about, before its subject is resolved to a team. */
interface FutureTarget {
  readonly comp: Competition | undefined;
  readonly kind: PropositionKind;
  readonly subjectText: string | undefined;
  readonly stage: string | undefined;
}

/** A futures proposition: a team wins a championship, tournament, group or conference, or reaches a stage. */
export function parseFutures(ctx: Ctx, d: Draft): boolean {
  const t = ctx.title.replace(/\?$/, '').trim();
  const ev = ctx.event.replace(/\?$/, '');
  const target = futureTarget(ctx, t, ev);
  if (!target) return false;
  const { comp, kind, subjectText, stage } = target;
  if (!comp || !subjectText || !stage) return false;
  const kt = ctx.kt;
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

/** A title or a cup: the tournament's winner for FIFA competitions, the league's title otherwise. */
function winnerKind(comp: Competition): PropositionKind {
  return comp.competition.startsWith('fifa') ? 'tournament_winner' : 'championship';
}

/**
 * An event about something other than winning the title: a phase of the competition, a finishing
 * place, a seed, reaching a stage, a season leader. A name listed under it is not the champion.
 */
const NOT_THE_TITLE =
  /\b(?:league phase|regular season|top \d+|\d+(?:st|nd|rd|th) place|last place|place finish|finishers?|runner-?up|seed|to make|make the|relegat\w*|qualif\w*|reach|leader|mvp|award)\b/;

/** Reads the competition, kind, stage and subject words from the title, the event title or the ticker. */
function futureTarget(ctx: Ctx, t: string, ev: string): FutureTarget | undefined {
  const kt = ctx.kt;
  const seriesComp = kt && kt.mon === undefined ? SERIES_COMPETITION[kt.series] : undefined;
  const comp = seriesComp ? competitionById(seriesComp) : undefined;
  let m: RegExpExecArray | null;
  if ((m = RE_FINISH_FIRST.exec(t))) {
    return { comp: comp ?? competitionById('fifa_world_cup_men'), kind: 'group_winner', subjectText: m[1], stage: `group_${m[3]!.toUpperCase()}` };
  }
  if ((m = RE_STAGE.exec(t)) && (comp || competitionIn(m[2]!)) && (stageOf(m[2]!) || /\bqualify\b/.test(t))) {
    return { comp: comp ?? competitionIn(m[2]!), kind: 'stage_reach', subjectText: m[1], stage: stageOf(m[2]!) ?? 'qualify' };
  }
  if ((m = RE_FUTURE_WIN.exec(t) ?? RE_FUTURE_TO_WIN.exec(t))) return titleWin(m[1], m[2]!, ev, comp);
  if (
    /\b(?:winner|champion)$/.test(t) &&
    !/^will /.test(t) &&
    competitionIn(t) &&
    ctx.rawOutcome &&
    !/^(?:yes|no)$/.test(ctx.outcome) &&
    !/\b(?:group|semi|quarter|round|conference|division|afc|nfc|mvp|award)\b/.test(t) &&
    !NOT_THE_TITLE.test(t)
  ) {
    // The event title listed per outcome: "2026 NBA Champion" + "Oklahoma City Thunder".
    const c = comp ?? competitionIn(t);
    return { comp: c, kind: winnerKind(c!), subjectText: ctx.outcome, stage: 'winner' };
  }
  if (!comp && NAME_ONLY.test(t) && competitionIn(ev) && !/\b(?:group|semi|quarter|round|conference|division|afc|nfc)\b/.test(ev) && !NOT_THE_TITLE.test(ev)) {
    // List venues: the title is the outcome label, the question is the event ("2026 NBA Finals Winner").
    const c = competitionIn(ev);
    return { comp: c, kind: winnerKind(c!), subjectText: t, stage: 'winner' };
  }
  if (comp && kt) return tickerFuture(ctx, kt, comp);
  return undefined;
}

/** "Will X win the 2026 AFC Championship?", "X to win Group F": what is won, if it is a title. */
function titleWin(subjectText: string | undefined, what: string, ev: string, seriesComp: Competition | undefined): FutureTarget | undefined {
  // "win a College Football Playoff game", "win Game 7 of the World Series": not the title.
  if (/^(?:a|an|any|one|two|three|[1-9]) /.test(what) || /\bgames? \d\b|\bgames?$|\bgame (?:of|in)\b/.test(what)) return undefined;
  const c = competitionIn(what) ?? (what.length < 80 ? competitionIn(ev) : undefined);
  if (!c && !seriesComp) return undefined;
  const comp = seriesComp ?? c;
  const grp = RE_GROUP.exec(what);
  // Conference and division titles only mean something inside their league ("AFC Bournemouth").
  const div = comp?.competition === 'NFL' ? RE_DIVISION.exec(what) : null;
  const conf = comp && ['NFL', 'NBA', 'NHL', 'MLB'].includes(comp.competition) ? RE_CONF.exec(what) : null;
  if (grp) return { comp, kind: 'group_winner', subjectText, stage: `group_${grp[1]!.toUpperCase()}` };
  if (div) return { comp, kind: 'championship', subjectText, stage: `div_${div[1]!.toUpperCase()}_${div[2]!.toUpperCase()}` };
  if (conf) {
    const stage = `conf_${conf[1]!
      .replace(/ pennant$/, '')
      .replace(/ /g, '_')
      .toUpperCase()}`;
    return { comp, kind: 'championship', subjectText, stage };
  }
  // "win their quarterfinal", "win a playoff game": not a title.
  if (/\b(?:semi-?finals?|quarter-?finals?|round of \d+|playoffs?)\b/.test(what.replace(/\bcollege football playoff\b/, ''))) return undefined;
  return { comp, kind: winnerKind(comp!), subjectText, stage: 'winner' };
}

/** Generic Kalshi title ("2026 Men's World Cup winner?"): the series says what, the outcome names the subject. */
function tickerFuture(ctx: Ctx, kt: Ticker, comp: Competition): FutureTarget {
  const subjectText = ctx.rawOutcome ? foldText(ctx.rawOutcome) : undefined;
  if (kt.series === 'WCROUND') return { comp, kind: 'stage_reach', subjectText, stage: tickerStage(kt.tail) };
  if (kt.series === 'WCGROUPWIN') return { comp, kind: 'group_winner', subjectText, stage: kt.tail ? `group_${kt.tail.slice(0, 1)}` : undefined };
  return { comp, kind: winnerKind(comp), subjectText, stage: 'winner' };
}
