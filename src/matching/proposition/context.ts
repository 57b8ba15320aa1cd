/**
 * Listing context: folded strings and the parsed id structure (Kalshi ticker, Polymarket slug),
 * computed once per listing, and the small helpers every domain parser shares.
 */
import PLACES from '../tables/places.json' with { type: 'json' };
import { leagueByCode, teamById, teamsByCode, type LeagueInfo } from '../teams.js';
import { closeMs, foldText } from '../text.js';
import type { Draft, MatchInput } from './types.js';

/** A Kalshi ticker split into series, event part (with its date) and market part. */
export interface Ticker {
  /** Series without the KX prefix: "NFLGAME", "FEDDECISION", "BTCMAXY". */
  readonly series: string;
  readonly eventPart: string;
  readonly market: string | undefined;
  readonly extra: readonly string[];
  readonly yy: number | undefined;
  readonly mon: number | undefined;
  readonly dd: number | undefined;
  /** "HH" or "HHMM" after the day. */
  readonly clock: string | undefined;
  /** What follows the date in the event part (team codes, group letter, stage). */
  readonly tail: string;
}

/** A Polymarket game slug ("nfl-buf-jax-2026-01-11"): league, teams and day. */
export interface Slug {
  readonly league: LeagueInfo;
  readonly away: string | undefined;
  readonly home: string | undefined;
  readonly date: string;
  readonly suffix: string;
}

/** Everything a parser reads about one listing, folded and parsed once. */
export interface Ctx {
  readonly input: MatchInput;
  readonly platform: string;
  readonly id: string | null;
  readonly rawTitle: string;
  readonly title: string;
  readonly event: string;
  readonly outcome: string;
  readonly rawOutcome: string;
  readonly close: number | undefined;
  readonly kt: Ticker | undefined;
  readonly slug: Slug | undefined;
  readonly kalshi: boolean;
}

const MON3 = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const TICKER_RE = /^(?:KX)?([A-Z0-9]+)-([A-Z0-9.]+)(?:-(.+))?$/;
const TICKER_DATE_RE = /^(\d{2})(JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC)(\d{2})?(\d{4}(?=[A-Z]|$)|\d{2}(?=[A-Z]|$))?(.*)$/;
const TICKER_YEAR_RE = /^(\d{2})([A-Z0-9]*)$/;

const KX_SHAPE = /^KX[A-Z0-9]+-[A-Z0-9]/;

/** Whether the listing is a Kalshi market: by platform, protocol, or the KX ticker shape. */
function isKalshi(input: MatchInput): boolean {
  const p = input.platform.toLowerCase();
  return p === 'kalshi' || input.protocol?.toLowerCase() === 'kalshi' || (input.market_id !== null && KX_SHAPE.test(input.market_id));
}

function parseTicker(kalshi: boolean, id: string | null): Ticker | undefined {
  if (!id || !kalshi) return undefined;
  const m = TICKER_RE.exec(id.toUpperCase());
  if (!m) return undefined;
  const series = m[1]!;
  const eventPart = m[2]!;
  const rest = m[3] ? m[3].split('-') : [];
  const base = { series, eventPart, market: rest[0], extra: rest.slice(1) };
  const d = TICKER_DATE_RE.exec(eventPart);
  if (d) {
    return { ...base, yy: Number(d[1]), mon: MON3.indexOf(d[2]!) + 1, dd: d[3] ? Number(d[3]) : undefined, clock: d[4] || undefined, tail: d[5] ?? '' };
  }
  const y = TICKER_YEAR_RE.exec(eventPart);
  if (y) return { ...base, yy: Number(y[1]), mon: undefined, dd: undefined, clock: undefined, tail: y[2] ?? '' };
  return { ...base, yy: undefined, mon: undefined, dd: undefined, clock: undefined, tail: eventPart };
}

const SLUG_RE = /^(?:aec-)?([a-z0-9]+)-([a-z0-9]+)-([a-z0-9]+)-(20\d{2}-\d{2}-\d{2})(?:-(.+))?$/;

function parseSlug(id: string | null): Slug | undefined {
  if (!id) return undefined;
  const m = SLUG_RE.exec(id.toLowerCase());
  if (!m) return undefined;
  const league = leagueByCode(m[1]!);
  if (!league) return undefined;
  const one = (c: string): string | undefined => {
    const ids = teamsByCode(c, league.groups);
    return ids.length === 1 ? ids[0] : undefined;
  };
  return { league, away: one(m[2]!), home: one(m[3]!), date: m[4]!, suffix: m[5] ?? '' };
}

const WHO_RAW = /^\s*(?:who|which (?:party|team|country|candidate|person|company|club|nation|player|film|movie|song|album|artist)) will\s+/i;
// Polymarket also asks in the present tense: "Which party wins 2028 US Presidential Election?".
const WHO_WINS_RAW = /^\s*(?:who|which (?:party|candidate|team|country|club|nation|player)) wins\s+/i;

/** Reads one listing: folds its texts and parses its id. */
export function context(input: MatchInput): Ctx {
  const platform = input.platform.toLowerCase();
  const id = input.market_id ?? null;
  const kalshi = isKalshi(input);
  // "Who will win the governorship in California?" listed per outcome ("Steve Hilton") states the
  // same thing as "Will Steve Hilton win the governorship in California?": read it that way.
  let rawTitle = input.title;
  const out = input.outcome?.trim() ?? '';
  if (WHO_RAW.test(rawTitle) && out && !/^(yes|no)$/i.test(out)) rawTitle = `Will ${out} ${rawTitle.replace(WHO_RAW, '')}`;
  else if (WHO_WINS_RAW.test(rawTitle) && out && !/^(yes|no)$/i.test(out)) rawTitle = `Will ${out} win ${rawTitle.replace(WHO_WINS_RAW, '')}`;
  return {
    input,
    platform,
    id,
    rawTitle,
    title: foldText(rawTitle),
    event: input.event_title ? foldText(input.event_title) : '',
    outcome: input.outcome ? foldText(input.outcome) : '',
    rawOutcome: input.outcome ?? '',
    close: closeMs(input.close_time),
    kt: parseTicker(kalshi, id),
    slug: kalshi ? undefined : parseSlug(id),
    kalshi,
  };
}

/** A draft with every field unset (kind `other`, confidence 1). */
export function blank(ctx: Ctx): Draft {
  return {
    platform: ctx.platform,
    marketId: ctx.id,
    kind: 'other',
    subject: null,
    subjectCandidates: [],
    subjectName: null,
    sport: null,
    league: null,
    teams: [],
    home: null,
    away: null,
    competition: null,
    stage: null,
    office: null,
    jurisdiction: null,
    party: null,
    year: null,
    date: null,
    dateSource: null,
    month: null,
    time: null,
    mode: null,
    comparator: null,
    threshold: null,
    thresholdHigh: null,
    unit: null,
    stat: null,
    period: null,
    market_class: null,
    market_type: 'other',
    line: null,
    side: null,
    player: null,
    team: null,
    negated: false,
    tokens: [],
    confidence: 1,
    evidence: [],
    // Set last by extractProposition; declared here so it is stored in the object, not beside it.
    signature: '',
  } as Draft;
}

/** Records which part of the listing a field came from (once). */
export function note(d: Draft, e: string): void {
  if (!d.evidence.includes(e)) d.evidence.push(e);
}

/** The year of the ticker's event part, if it has one. */
export function tickerYear(ctx: Ctx): number | undefined {
  return ctx.kt?.yy !== undefined ? 2000 + ctx.kt.yy : undefined;
}

/** The raw-case text of a span read from the folded title (for display); the folded span if not found. */
export function rawSpan(ctx: Ctx, folded: string): string {
  const i = ctx.title.indexOf(folded);
  if (i < 0) return folded;
  const raw = ctx.rawTitle.trim().slice(i, i + folded.length);
  return foldText(raw) === folded ? raw : folded;
}

/** A title that is only a name (list venues put the outcome label in the title). */
export const NAME_ONLY = /^[a-z][a-z0-9.'\- ]{1,60}$/;

/** Display name of a team id. */
export function teamName(id: string | null | undefined): string | null {
  return id ? (teamById(id)?.name ?? null) : null;
}

/** Country names and demonyms → ISO 3166 alpha-2 codes ("uk" for the United Kingdom, "ea" for the euro area). */
export const DEMONYMS: Readonly<Record<string, string>> = PLACES.demonyms;
/** Any country name or demonym, longest first, as whole words. */
export const DEMONYM_RE = new RegExp(
  `\\b(${Object.keys(DEMONYMS)
    .sort((a, b) => b.length - a.length)
    .map((k) => k.replace(/\./g, '\\.'))
    .join('|')})\\b`,
);

/** The country a folded text names first ("japan", "Brazil's", "Canadian"), as its ISO code. */
export function countryIn(s: string): string | undefined {
  const m = DEMONYM_RE.exec(s);
  return m ? DEMONYMS[m[1]!] : undefined;
}
