/** IPOs: a company going public by a date, or first of two. */
import { etParts, findDate, findTime, foldPerson, isoDay } from '../text.js';
import { note, rawSpan, type Ctx } from './context.js';
import { deadline } from './deadline.js';
import type { Draft } from './types.js';

/** Organisation id without legal suffixes or spaces: "Open AI" and "OpenAI" are one company. */
function orgId(s: string): string {
  return `org:${foldPerson(s)
    .replace(/\b(inc|corp|corporation|ltc|llc|co|company|the)\b/g, '')
    .replace(/\s+/g, '')}`;
}

/** An IPO: "Will SpaceX IPO by December 31, 2026?", "Will X or Y IPO first?". */
export function parseIpo(ctx: Ctx, d: Draft): boolean {
  const t = ctx.title.replace(/\?$/, '');
  if (!/\bipo\b|\bgo(?:es)? public\b/.test(t)) return false;
  const first = /^will (.+?) or (.+?) (?:ipo|go public) first$/.exec(t);
  if (first) {
    if (!ctx.rawOutcome || /^(yes|no)$/i.test(ctx.rawOutcome)) return false;
    d.mode = 'first';
    d.subject = orgId(ctx.rawOutcome);
    d.subjectName = ctx.rawOutcome;
    d.competition = [orgId(first[1]!), orgId(first[2]!)].sort().join('|');
    // "First" is decided within the race's horizon (Kalshi runs one to 2040, Polymarket to 2028).
    // A Kalshi race states it in the ticker year (KXOAIANTH-40), which the proposition does not
    // carry; elsewhere the close day is the horizon.
    if (ctx.close !== undefined && !ctx.kalshi) {
      const c = etParts(ctx.close);
      d.date = isoDay(c.y, c.m, c.d);
      d.dateSource = 'close_time';
    }
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
