/**
 * Proposition extraction: turns one venue listing (title, event title, outcome label, close time,
 * and the structure of its id: Kalshi tickers, Polymarket slugs) into the structured statement its
 * YES side settles on: who (subject), what (kind, stat, office, stage), when (date, month, year,
 * time), and how much (comparator and threshold, line). Matching compares these fields, never the
 * raw strings, so that "7+ receptions" meets "Receptions O/U 6.5" and "above $139,999.99" meets
 * "reach $140,000", while "above 4.7%" stays apart from "≥4.7%".
 *
 * Extraction is deliberately conservative: a field that cannot be read with confidence is left
 * null, and the matcher never groups on a missing subject or kind.
 */
import { contentTokens, flat } from '../text.js';
import { parseAppointment } from './appointment.js';
import { parseAward } from './awards.js';
import { blank, context, note, type Ctx } from './context.js';
import { parseIpo } from './corporate.js';
import { parseCrypto } from './crypto.js';
import { parseEcon } from './econ.js';
import { parseFed } from './fed.js';
import { parseFutures } from './futures.js';
import { parsePolitics } from './politics.js';
import { parseSports } from './sports.js';
import type { Draft, MatchInput, Proposition } from './types.js';

export type { Comparator, MarketClass, MatchInput, Proposition, PropositionKind } from './types.js';

/** Free text: the listing's content words are its subject. */
function parseOther(ctx: Ctx, d: Draft): void {
  d.kind = 'other';
  d.market_type = 'other';
  const extra = ctx.outcome && ctx.outcome !== 'yes' && ctx.outcome !== 'no' ? ` ${ctx.outcome}` : '';
  d.tokens = contentTokens(`${ctx.title}${extra}`);
  d.subject = d.tokens.length >= 2 ? `text:${d.tokens.join(' ')}` : null;
  d.subjectCandidates = d.subject ? [d.subject] : [];
  d.subjectName = ctx.rawTitle;
  if (ctx.outcome === 'no') d.negated = true;
  // Free text is the weakest evidence: only identical wording (as a set of words) may meet.
  d.confidence = 0.7;
  note(d, 'title');
}

/** The fields a proposition's signature is made of. */
export type SignatureFields = Pick<
  Proposition,
  | 'kind'
  | 'subject'
  | 'subjectCandidates'
  | 'league'
  | 'competition'
  | 'stage'
  | 'office'
  | 'jurisdiction'
  | 'party'
  | 'year'
  | 'date'
  | 'month'
  | 'time'
  | 'mode'
  | 'comparator'
  | 'threshold'
  | 'thresholdHigh'
  | 'stat'
  | 'teams'
  | 'period'
  | 'negated'
>;

/**
 * Canonical text of the settlement fields (see Proposition.signature), with the game's `teams` and
 * `date` given apart (the matcher's stored propositions keep the game their signature was read with).
 */
export function signatureOf(d: SignatureFields, teams: readonly string[] = d.teams, date: string | null = d.date): string {
  const parts: (string | number | null | boolean)[] = [
    d.kind,
    d.subject ?? `?${d.subjectCandidates.join('/')}`,
    d.league,
    d.competition,
    d.stage,
    d.office,
    d.jurisdiction,
    d.party,
    d.year,
    date,
    d.month,
    d.time,
    d.mode,
    d.comparator,
    d.threshold,
    d.thresholdHigh,
    d.stat,
    [...teams].sort().join('+'),
    d.period,
    d.negated,
  ];
  return parts.map((p) => (p === null ? '' : String(p))).join('|');
}

/**
 * Extracts the structured proposition a listing's YES side settles on. Pure and cheap: one pass of
 * pre-compiled patterns over the folded title, event title and outcome, plus the id's structure.
 */
export function extractProposition(m: MatchInput): Proposition {
  const ctx = context(m);
  const d = blank(ctx);
  const ok =
    parseSports(ctx, d) ||
    reset(ctx, d, parseFutures) ||
    reset(ctx, d, parseAppointment) ||
    reset(ctx, d, parsePolitics) ||
    reset(ctx, d, parseFed) ||
    reset(ctx, d, parseEcon) ||
    reset(ctx, d, parseCrypto) ||
    reset(ctx, d, parseIpo) ||
    reset(ctx, d, parseAward);
  if (!ok) {
    Object.assign(d, blank(ctx));
    parseOther(ctx, d);
  }
  d.confidence = Math.max(0, Math.min(1, Math.round(d.confidence * 100) / 100));
  // The draft is private to this call: it becomes the result without a copy.
  const p = d as Draft & { signature: string };
  p.signature = signatureOf(d);
  compact(p);
  return p;
}

const NONE: readonly string[] = Object.freeze([]);
/** Past this many entries an intern table starts over: bounded whatever the churn of listings. */
const INTERN_CAP = 65_536;
const strings = new Map<string, string>();
const lists = new Map<string, readonly string[]>();

/** One copy of a string many propositions hold (team ids, names, days). */
function intern(s: string | null): string | null {
  if (s === null) return null;
  const had = strings.get(flat(s));
  if (had !== undefined) return had;
  if (strings.size >= INTERN_CAP) strings.clear();
  strings.set(s, s);
  return s;
}

/** One frozen copy of a list many propositions hold (a game's teams, evidence); the empty list is shared. */
function internList(xs: readonly string[]): readonly string[] {
  if (xs.length === 0) return NONE;
  const key = xs.join('\u0000');
  let had = lists.get(key);
  if (had === undefined) {
    if (lists.size >= INTERN_CAP) lists.clear();
    lists.set(key, (had = Object.freeze(xs.map((x) => intern(x)!))));
  }
  return had;
}

/**
 * Shares what many of the matcher's propositions (one per listing, all kept) hold alike. An array
 * grown by push keeps room for 17 elements; each listing of a game would hold its own copy of the
 * game's team ids, names and day.
 */
function compact(d: Draft & { signature: string }): void {
  const out: { -readonly [K in keyof Proposition]: Proposition[K] } = d;
  out.evidence = internList(d.evidence);
  out.teams = internList(d.teams);
  out.tokens = internList(d.tokens);
  out.subjectCandidates = internList(d.subjectCandidates);
  out.subject = intern(d.subject);
  out.subjectName = intern(d.subjectName);
  out.home = intern(d.home);
  out.away = intern(d.away);
  out.team = intern(d.team);
  out.player = intern(d.player);
  out.date = intern(d.date);
  out.month = intern(d.month);
}

/** Runs a parser on a clean draft (a failed earlier parser may have written fields). */
function reset(ctx: Ctx, d: Draft, parser: (ctx: Ctx, d: Draft) => boolean): boolean {
  Object.assign(d, blank(ctx));
  return parser(ctx, d);
}
