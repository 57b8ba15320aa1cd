/** Appointments: who a president nominates (or announces) for an office, and who is confirmed. */
import { etParts, findDate, findTime, foldPerson, foldText, isoDay } from '../text.js';
import { note, rawSpan, type Ctx } from './context.js';
import { deadline } from './deadline.js';
import type { Draft } from './types.js';

/** Offices filled by appointment, as folded title words → office id. */
const OFFICES: readonly (readonly [RegExp, string])[] = [
  [/\b(?:fed(?:eral reserve)? chair(?:man|person)?|chair(?:man)? of the (?:board of governors of the )?federal reserve)\b/, 'fed_chair'],
];

// "announce", "name", "pick" and "nominate" settle on the same act: the president naming his choice
// for the office. Confirmation by the Senate is a later, different event.
const PICK = '(?:nominate|nominates|announce|announces|name|names|pick|picks|choose|chooses|select|selects)';
const RE_PICK_PERSON = new RegExp(`^will (?:donald )?trump (?:next )?${PICK} (.+?) (?:as|for|to be) (?:the |his )?(?:next |new )?(.+)$`);
const RE_WHO_PICK = new RegExp(`^who will (?:donald )?trump (?:next )?${PICK} (?:as|for) (?:the |his )?(?:next |new )?(.+)$`);
const RE_CONFIRMED = /^will (.+?) be confirmed as (?:the )?(?:next |new )?(.+?)(?: before .*| by .*)?$/;

function officeOf(s: string): string | undefined {
  for (const [re, id] of OFFICES) if (re.test(s)) return id;
  return undefined;
}

/**
 * "Will Trump next nominate Kevin Warsh as Fed Chair?" = "Will Trump nominate Kevin Warsh as the
 * next Fed chair?" = "Who will Trump announce as Fed chair?" listed as "Kevin Warsh"; "Will Judy
 * Shelton be confirmed as chair of the Federal Reserve …?" is a confirmation, never a nomination.
 */
export function parseAppointment(ctx: Ctx, d: Draft): boolean {
  const t = ctx.title.replace(/\?$/, '').trim();
  const raw = foldedOriginal(ctx);
  let person: string | undefined;
  let office: string | undefined;
  let stage: 'pick' | 'confirm' | undefined;
  const pick = RE_PICK_PERSON.exec(t);
  const who = RE_WHO_PICK.exec(raw);
  const confirmed = RE_CONFIRMED.exec(t);
  if (pick) [person, office, stage] = [rawSpan(ctx, pick[1]!), officeOf(pick[2]!), 'pick'];
  else if (who && ctx.rawOutcome && !/^(yes|no)$/i.test(ctx.rawOutcome)) [person, office, stage] = [ctx.rawOutcome, officeOf(who[1]!), 'pick'];
  else if (confirmed) [person, office, stage] = [rawSpan(ctx, confirmed[1]!), officeOf(confirmed[2]!), 'confirm'];
  if (!person || !office || !stage) return false;
  const id = foldPerson(person);
  if (id.split(' ').length < 2) return false;
  d.kind = 'appointment';
  d.market_type = 'appointment';
  d.office = office;
  d.stage = stage;
  d.subject = `person:${id}`;
  d.subjectCandidates = [d.subject];
  d.subjectName = person.trim();
  window(ctx, t, d);
  if (ctx.outcome === 'no') d.negated = true;
  note(d, 'title');
  return true;
}

/**
 * The window the pick must fall in: a deadline the title states ("… as next Fed Chair in 2025?",
 * "before Jan 1, 2029") wins over the close day, which venues set to the end of a term.
 */
function window(ctx: Ctx, t: string, d: Draft): void {
  const rest = t.replace(/^.*?\b(?:chair(?:man|person)?|reserve(?: system)?)\b/, '');
  const day = /\b(?:in|by|before|during) /.test(rest) ? deadline({ ...ctx, kt: undefined }, rest, findDate(rest), findTime(rest)) : undefined;
  if (day) {
    d.date = day;
    d.dateSource = 'title';
  } else if (ctx.close !== undefined) {
    const c = etParts(ctx.close);
    d.date = isoDay(c.y, c.m, c.d);
    d.dateSource = 'close_time';
  }
}

/** The folded title before a "Who will …?" listing was rewritten around its outcome. */
function foldedOriginal(ctx: Ctx): string {
  return foldText(ctx.input.title).replace(/\?$/, '').trim();
}
