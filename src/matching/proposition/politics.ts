/** Politics: nominations, elections and chamber control. */
import PLACES from '../tables/places.json' with { type: 'json' };
import { etParts, findYear, foldPerson, isoDay } from '../text.js';
import { DEMONYMS, DEMONYM_RE, NAME_ONLY, note, rawSpan, tickerYear, type Ctx, type Ticker } from './context.js';
import { houseSeat, mayoralCity, PARTY_NAMES, partyOf, type Party } from './grammar.js';
import type { Draft } from './types.js';

/** US state names → postal codes. */
const STATES: Readonly<Record<string, string>> = PLACES.usStates;
const STATE_RE = new RegExp(
  `\\b(${Object.keys(STATES)
    .sort((a, b) => b.length - a.length)
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
  const seat = houseSeat(s, kt);
  if (seat) return seat;
  if (/\bsenate\b|\bsenator\b/.test(s)) {
    const st = STATE_RE.exec(s);
    return st ? `senate_${STATES[st[1]!]}` : undefined;
  }
  if (/\bmayor(?:al)?\b/.test(s)) {
    if (/\bnew york city\b|\bnyc\b|\bnew york\b/.test(s)) return 'mayor_nyc';
    const city = mayoralCity(s);
    return city ? `mayor_${city}` : undefined;
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

const RE_PERSON_LEAD = /^will (.+?) (?:be|win|become|receive|secure|get|succeed)\b/;

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

/**
 * A party named as the winner of an election ("Will a Democrat win the 2028 US Presidential
 * Election?", "Which party will win the Senate race in Maine?" listed as "Democratic party", Kalshi's
 * generated "Will Democratics win…" and "Will Democratic (DFL)s win…"): the party is the subject,
 * so the venues' different words for it meet, while a party never meets one of its candidates.
 */
function partySubject(ctx: Ctx, t: string): Party | undefined {
  const lead = /^will (.+?) (?:win|be elected|control)\b/.exec(t);
  const name = lead?.[1] ?? (ctx.outcome && ctx.outcome !== 'yes' && ctx.outcome !== 'no' ? ctx.outcome : undefined);
  return name ? partyOf(name.trim()) : undefined;
}

/**
 * Primaries, runoffs and first rounds are contests of their own. In a two-round contest, "win the
 * first round" (top of the first-round count) is not "win in the first round" / "win outright"
 * (elected without a runoff), and neither is the election. Where no round is named, "outright"
 * adds nothing: a single-round contest is won outright or not at all.
 */
function electionStage(t: string): string | null {
  if (/\bprimary\b|\bprimaries\b/.test(t)) return 'primary';
  if (/\bwin\b.*\bin the first round\b|\boutright\b.*\bfirst round\b|\bfirst round\b.*\boutright\b/.test(t)) return 'round1_outright';
  if (/\brunoff\b|\bsecond round\b/.test(t)) return /\boutright\b|\bavoid (?:a )?(?:runoff|second round)\b/.test(t) ? 'round1_outright' : 'runoff';
  if (/\bfirst round\b/.test(t)) return 'round1';
  return null;
}

const RE_MARGIN_RANGE = /\bby (\d+(?:\.\d+)?)\s*(?:%|percentage points?|points?)?\s*(?:-|–|to)\s*(\d+(?:\.\d+)?)\s*(?:%|percentage points?|points?)/;
const RE_MARGIN_OPEN = /\bby (more than|over|at least|less than|under|fewer than) (\d+(?:\.\d+)?)\s*(?:%|percentage points?|points?)/;

/** A margin bucket on a win ("win … by 5–10%"): the margin is part of what settles YES. */
function electionMargin(t: string, d: Draft): void {
  const r = RE_MARGIN_RANGE.exec(t);
  const o = r ? null : RE_MARGIN_OPEN.exec(t);
  if (!r && !o) return;
  d.stat = 'margin';
  d.unit = 'pct';
  if (r) {
    d.comparator = 'range';
    d.threshold = Number(r[1]);
    d.thresholdHigh = Number(r[2]);
    return;
  }
  const w = o![1]!;
  d.comparator = w === 'at least' ? '>=' : /^(?:less|under|fewer)/.test(w) ? '<' : '>';
  d.threshold = Number(o![2]);
}

/**
 * "Will X be the next Israeli Prime Minister?": the next holder of the office, by whatever route,
 * until the listing closes (`next`), or the winner of the next election (`next_election`, when the
 * title or event names one). The close day, else a dated ticker's day, is the deadline; such a
 * ticker's year is that deadline, not the year of an election.
 */
export function nextScope(ctx: Ctx, t: string, d: Draft): void {
  // "Will X succeed Netanyahu as Prime Minister?" asks for the next holder as well.
  if (!/\bnext\b|\bsucceed\b/.test(t)) return;
  d.mode = /\belections?\b/.test(`${t} | ${ctx.event}`) ? 'next_election' : 'next';
  const kt = ctx.kt;
  const tickerDay = kt && kt.yy !== undefined && kt.mon && kt.dd ? isoDay(2000 + kt.yy, kt.mon, kt.dd) : undefined;
  if (tickerDay && findYear(t) === undefined && findYear(ctx.event) === undefined) d.year = null;
  if (ctx.close !== undefined) {
    const c = etParts(ctx.close);
    d.date = isoDay(c.y, c.m, c.d);
    d.dateSource = 'close_time';
  } else if (tickerDay) {
    d.date = tickerDay;
    d.dateSource = 'ticker';
  }
}

/**
 * A US House or Senate race whose title and id name no year ("Will the Republican Party win the
 * MI-10 House seat?"): federal elections fall in even years, and a venue closes such a market at
 * the election or after it (Kalshi on the swearing-in, the next year), never before the cycle's
 * own election; so the cycle is the close's year, or the year before when that is odd.
 */
function federalCycle(ctx: Ctx, d: Draft): void {
  if (d.year !== null || d.mode !== null || ctx.close === undefined || !/^(?:house|senate)_[a-z]{2}/.test(d.office ?? '')) return;
  const y = etParts(ctx.close).y;
  d.year = y % 2 === 0 ? y : y - 1;
  // Read from the close time, not stated: a little less sure than a stated year, more than none.
  d.confidence += 0.1;
  note(d, 'close_time');
}

const RE_CHAMBER = /\b(?:the )?(?:u\.?s\.? )?(house|senate)\b/;

/** "Will the Democrats win the House in 2026?" / "Which party will win the Senate?" + "Republican". */
function parseControl(ctx: Ctx, d: Draft, t: string): boolean {
  const ch = RE_CHAMBER.exec(t);
  if (!ch || !/\b(?:control|win|majority|keep|hold|flip)\b/.test(t) || STATE_RE.test(t) || /\b(?:race|seat|speaker)\b/.test(t)) return false;
  const lead = /^will (.+?) (?:control|win|have|keep|hold|flip)\b/.exec(t);
  const party = lead ? partyOf(lead[1]!) : undefined;
  if (party !== 'dem' && party !== 'rep') return false;
  d.kind = 'chamber_control';
  d.market_type = 'chamber_control';
  d.party = party;
  d.office = `${ch[1]}_us`;
  d.year = findYear(t) ?? findYear(ctx.event) ?? tickerYear(ctx) ?? null;
  if (d.year === null) d.confidence -= 0.15;
  d.subject = `party:${d.party}`;
  d.subjectCandidates = [d.subject];
  d.subjectName = PARTY_NAMES[d.party] ?? null;
  if (ctx.outcome === 'no') d.negated = true;
  note(d, 'title');
  return true;
}

/** A bare contest name listed per outcome: "North Carolina Senate Election Winner" + "Democratic". */
const RE_LISTED_CONTEST = /^((?:20\d{2} )?.+? (?:election|race|primary|runoff))(?: winner)?( 20\d{2})?$/;

/** A nomination, an election winner (a person or a party), or control of a chamber. */
export function parsePolitics(ctx: Ctx, d: Draft): boolean {
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
    /\b(?:win|be elected|become|be the next|succeed)\b.*\b(?:election|presidency|president|governorship|governor|senate|mayor(?:al)?(?: race| election)?|prime minister|chancellor|race|seat|district|primary|runoff|pope)\b|^who will win\b/;
  const listQuestion = /^who will (?:win|be)\b/.test(ctx.event) && NAME_ONLY.test(t);
  if (!electionWords.test(t) && !listQuestion && !(kt && officeIn('', kt))) return false;
  const office = officeIn(all, kt);
  if (!office) return false;
  const party = partySubject(ctx, t);
  const who = party ? { id: `party:${party}`, name: PARTY_NAMES[party] ?? party } : personSubject(ctx, t);
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
  if (d.kind === 'election_winner') {
    nextScope(ctx, t, d);
    electionMargin(t, d);
    federalCycle(ctx, d);
  }
  if (ctx.outcome === 'no') d.negated = true;
  note(d, 'title');
  return true;
}
