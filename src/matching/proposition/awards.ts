/** Awards: Oscars, Grammys, Emmys, Golden Globes, Tonys, Ballon d'Or, league MVPs, TIME Person of the Year. */
import { etParts, findYear, foldPerson, foldText } from '../text.js';
import { NAME_ONLY, note, tickerYear, type Ctx } from './context.js';
import type { Draft } from './types.js';

const CEREMONIES: readonly (readonly [RegExp, string])[] = [
  [/\btime(?:'s| magazine'?s?)?(?: 20\d{2})? person of the year\b/, 'time_poy'],
  [/\boscars?\b|\bacademy awards?\b/, 'oscars'],
  [/\bgrammys?\b|\bgrammy awards?\b/, 'grammys'],
  [/\bemmys?\b|\bemmy awards?\b/, 'emmys'],
  [/\bgolden globes?\b/, 'golden_globes'],
  [/\btony awards?\b|\btonys\b/, 'tonys'],
  [/\bballon d'?or\b/, 'ballon_dor'],
  [/\bnba\b|\bpro basketball\b/, 'nba'],
  [/\bnfl\b|\bpro football\b/, 'nfl'],
  [/\bmlb\b|\bamerican league\b|\bnational league\b|\bpro baseball\b/, 'mlb'],
  [/\bnhl\b|\bpro hockey\b/, 'nhl'],
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

const SERIES_LEAGUE = /^(NBA|NFL|MLB|NHL)(?:MVP|ROY|DPOY|COY|MIP|SMOY|CY|HART)/;

const AWARD_WORDS = /\bbest\b|\bof the year\b|\bmvp\b|\bmost valuable\b|\baward\b|\btrophy\b|\bcy young\b|\bheisman\b|\brookie\b|\bballon\b/;

/** An award winner: "Will Sinners win Best Picture?", a ceremony listed per nominee. */
export function parseAward(ctx: Ctx, d: Draft): boolean {
  const t = ctx.title.replace(/\?$/, '');
  const all = `${t} | ${ctx.event}`;
  let ceremony: string | undefined;
  for (const [re, c] of CEREMONIES)
    if (re.test(all)) {
      ceremony = c;
      break;
    }
  // Kalshi names the league in the series when the title does not ("MVP Winner?", KXNBAMVP).
  ceremony ??= SERIES_LEAGUE.exec(ctx.kt?.series ?? '')?.[1]?.toLowerCase();
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
  } else if (NAME_ONLY.test(t) && ctx.event && (AWARD_WORDS.test(ctx.event) || ceremony === 'ballon_dor')) {
    // A list venue's nominee listed under its award ("Vinícius Júnior" in "Ballon d'Or Winner 2026").
    subject = t;
    category = ctx.event;
  }
  if (!subject || !category) return false;
  // TIME gives one title a year, however the venue words it.
  if (ceremony === 'time_poy') category = 'person of the year';
  const cat = foldText(category)
    .replace(/\b(?:at|in) the .*$/, '')
    .replace(/\b(?:in|for|of) 20\d{2}(?:-\d{2,4})?\b/g, '')
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
  if (d.year === null && ctx.close !== undefined) {
    // "Will X win MVP?" names no season: the award is given in the year the listing closes (a
    // season "2025-26" is read as its end year, when its MVP is named).
    d.year = etParts(ctx.close).y;
    d.confidence -= 0.05;
    note(d, 'close_time');
  }
  if (d.year === null) d.confidence -= 0.15;
  const name = subject.replace(/^["']|["']$/g, '').replace(/^the /, '');
  d.subject = `work:${foldPerson(name)}`;
  d.subjectCandidates = [d.subject];
  d.subjectName = name;
  if (ctx.outcome === 'no') d.negated = true;
  note(d, 'title');
  return true;
}
