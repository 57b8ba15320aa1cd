/** Fed decisions (the change at one meeting) and rate levels. */
import { MONTHS, MONTH_RE, findMonth, isoMonth, yearNear } from '../text.js';
import { note, type Ctx } from './context.js';
import { comparison, setThreshold, tickerStrike } from './threshold.js';
import type { Comparator, Draft } from './types.js';

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

/** A Fed decision at one meeting (hike, cut, no change, by how much) or a rate level after it. */
export function parseFed(ctx: Ctx, d: Draft): boolean {
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
