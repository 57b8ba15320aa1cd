/**
 * Text, number and date helpers for proposition extraction. Every regular expression is compiled
 * once at module load; per-market work is a handful of `exec` calls on one folded string.
 */

/**
 * Folds a title for parsing: accents removed, lower case, typographic quotes and dashes made
 * plain, "≥"/"≤" spelled as ">="/"<=", whitespace collapsed. Punctuation that carries meaning
 * ($ , . % + - : ? ( ) /) is kept.
 */
export function foldText(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[‘’ʼ`]/g, "'")
    .replace(/[“”]/g, '"')
    .replace(/[–—−]/g, '-')
    .replace(/≥/g, '>=')
    .replace(/≤/g, '<=')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
}

let _sink = 0;

/**
 * The string, flat: V8 keeps a string built by concatenation as the tree of its pieces (a cons
 * string, about three times the bytes of its text) until a character of it is read, which
 * flattens it in place. For strings kept long (block keys, group views, propositions).
 */
export function flat<T extends string | null>(s: T): T {
  // The read goes to a module variable so that no compiler drops it as unused.
  if (s !== null && s.length > 0) _sink ^= s.charCodeAt(0);
  return s;
}

/** Month number (1..12) by folded name or abbreviation. */
export const MONTHS: Readonly<Record<string, number>> = {
  jan: 1,
  january: 1,
  feb: 2,
  february: 2,
  mar: 3,
  march: 3,
  apr: 4,
  april: 4,
  may: 5,
  jun: 6,
  june: 6,
  jul: 7,
  july: 7,
  aug: 8,
  august: 8,
  sep: 9,
  sept: 9,
  september: 9,
  oct: 10,
  october: 10,
  nov: 11,
  november: 11,
  dec: 12,
  december: 12,
};

export const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** A month-name alternation for regular expressions (longest names first). */
export const MONTH_RE =
  'january|february|march|april|may|june|july|august|september|october|november|december|sept|jan|feb|mar|apr|jun|jul|aug|sep|oct|nov|dec';

/** Parses "139,999.99", "45000.00", "140k", "1.5m" (no currency sign) into a number; NaN if not one. */
export function parseAmount(s: string): number {
  const m = /^(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\s*(k|m|b)?$/.exec(s.trim().toLowerCase());
  if (!m) return NaN;
  const v = Number(m[1]!.replace(/,/g, '') + (m[2] ?? ''));
  const mult = m[3] === 'k' ? 1e3 : m[3] === 'm' ? 1e6 : m[3] === 'b' ? 1e9 : 1;
  return v * mult;
}

/** Zero-padded ISO day. */
export function isoDay(y: number, m: number, d: number): string {
  return `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/** ISO month "YYYY-MM". */
export function isoMonth(y: number, m: number): string {
  return `${y}-${String(m).padStart(2, '0')}`;
}

/** The ISO day `n` days after `day`. */
export function addDays(day: string, n: number): string {
  const t = Date.parse(`${day}T00:00:00Z`) + n * 86_400_000;
  return new Date(t).toISOString().slice(0, 10);
}

/** Days in a month. */
export function daysInMonth(y: number, m: number): number {
  return new Date(Date.UTC(y, m, 0)).getUTCDate();
}

function nthSunday(y: number, month0: number, n: number): number {
  const first = new Date(Date.UTC(y, month0, 1)).getUTCDay();
  return 1 + ((7 - first) % 7) + (n - 1) * 7;
}

/**
 * Offset of US Eastern time from UTC in hours at instant `ms` (-4 in daylight time, -5 otherwise):
 * US venues date games and deadlines in ET, so a UTC timestamp becomes an ET calendar day.
 */
export function etOffsetHours(ms: number): number {
  const y = new Date(ms).getUTCFullYear();
  const start = Date.UTC(y, 2, nthSunday(y, 2, 2), 7);
  const end = Date.UTC(y, 10, nthSunday(y, 10, 1), 6);
  return ms >= start && ms < end ? -4 : -5;
}

/** Calendar parts of an instant in US Eastern time. */
export function etParts(ms: number): { y: number; m: number; d: number; hour: number; minute: number } {
  const d = new Date(ms + etOffsetHours(ms) * 3_600_000);
  return { y: d.getUTCFullYear(), m: d.getUTCMonth() + 1, d: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes() };
}

/** A close time (ISO string, unix seconds or ms) as epoch ms; undefined when absent or unreadable. */
export function closeMs(v: string | number | undefined): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number') return Number.isFinite(v) ? (v < 1e12 ? v * 1000 : v) : undefined;
  if (/^\d+$/.test(v)) return closeMs(Number(v));
  const t = Date.parse(v);
  return Number.isFinite(t) ? t : undefined;
}

/**
 * The year that puts month `m` (and day `d`) nearest to the reference instant: titles often name a
 * month or day without its year ("in February?", "on March 29") and the listing's close time pins
 * it down. `notAfter` picks the latest such date on or before the reference (data months precede
 * their release).
 */
export function yearNear(refMs: number, m: number, d = 15, notAfter = false): number {
  const ref = etParts(refMs);
  let best = ref.y;
  let bestDist = Infinity;
  for (const y of [ref.y - 1, ref.y, ref.y + 1]) {
    const t = Date.UTC(y, m - 1, d);
    const refT = Date.UTC(ref.y, ref.m - 1, ref.d);
    if (notAfter && t > refT) continue;
    const dist = Math.abs(t - refT);
    if (dist < bestDist) {
      bestDist = dist;
      best = y;
    }
  }
  return best;
}

/** Clock time in a title: "12am", "11:59 PM", "5pm", "12:00am", "22:00" (24h). Minutes of day. */
const TIME_12 = /\b(\d{1,2})(?::(\d{2}))?\s?(am|pm)\b/;
const TIME_24 = /\b([01]?\d|2[0-3]):(\d{2})\b/;
const TZ = /\b(utc|gmt|et|est|edt|pt|pst|pdt|ct|cst|cdt)\b/;

/** A clock time and its zone as written; minutes of the day. */
export interface ClockTime {
  readonly minutes: number;
  readonly zone: string | null;
}

export function findTime(t: string): ClockTime | undefined {
  const z = TZ.exec(t)?.[1] ?? null;
  const a = TIME_12.exec(t);
  if (a) {
    let h = Number(a[1]) % 12;
    if (a[3] === 'pm') h += 12;
    return { minutes: h * 60 + Number(a[2] ?? 0), zone: z };
  }
  const b = TIME_24.exec(t);
  if (b) return { minutes: Number(b[1]) * 60 + Number(b[2]), zone: z };
  return undefined;
}

/** A calendar date as written: year may be missing. */
export interface TextDate {
  readonly y: number | undefined;
  readonly m: number;
  readonly d: number;
  readonly index: number;
}

const ISO_DATE = /\b(20\d{2})-(\d{2})-(\d{2})\b/;
const MONTH_DAY = new RegExp(`\\b(${MONTH_RE})\\.? (\\d{1,2})(?:st|nd|rd|th)?\\b(?:,? (20\\d{2})\\b)?`);
const MONTH_YEAR = new RegExp(`\\b(${MONTH_RE})\\.?,? (20\\d{2})\\b`);
const MONTH_ONLY = new RegExp(`\\b(${MONTH_RE})\\b`);
const YEAR = /\b(20\d{2})\b/;

/** The first calendar date (with a day) in folded text. */
export function findDate(t: string): TextDate | undefined {
  const iso = ISO_DATE.exec(t);
  const md = MONTH_DAY.exec(t);
  if (iso && (!md || iso.index <= md.index)) return { y: Number(iso[1]), m: Number(iso[2]), d: Number(iso[3]), index: iso.index };
  if (md) {
    const d = Number(md[2]);
    if (d >= 1 && d <= 31) return { y: md[3] ? Number(md[3]) : undefined, m: MONTHS[md[1]!]!, d, index: md.index };
  }
  return undefined;
}

/** The first "Month YYYY" (or a bare month name when `allowBare`) in folded text. */
export function findMonth(t: string, allowBare: boolean): { y: number | undefined; m: number } | undefined {
  const my = MONTH_YEAR.exec(t);
  if (my) return { y: Number(my[2]), m: MONTHS[my[1]!]! };
  if (!allowBare) return undefined;
  const mo = MONTH_ONLY.exec(t);
  // "may" is also a verb; a bare "may" is only a month next to meeting/inflation words, so skip it.
  if (mo && mo[1] !== 'may') return { y: undefined, m: MONTHS[mo[1]!]! };
  return undefined;
}

/**
 * The first 4-digit year (2000s) in folded text. A season "2025-26", "2025-2026" or "2025/26" gives
 * its end year: venues write one season all three ways and must land on the same year.
 */
export function findYear(t: string): number | undefined {
  const s = /\b(20\d{2})[-/](20\d{2}|\d{2})\b(?!-)/.exec(t);
  if (s) {
    const end = s[2]!.length === 4 ? Number(s[2]) : 2000 + Number(s[2]);
    // Only consecutive years are a season; "2025-2027" is a span, read as its first year.
    if (end === Number(s[1]) + 1) return end;
    return Number(s[1]);
  }
  const y = YEAR.exec(t);
  return y ? Number(y[1]) : undefined;
}

const STOP = new Set(
  'will the a an of in on at by to be is are was for and or with who what which when how does do did this that there their its it his her as from than into vs will?'.split(
    ' ',
  ),
);

/** Content words of a folded title, sorted and de-duplicated (the fallback "other" signature). */
export function contentTokens(t: string): string[] {
  const words = t
    .replace(/[$,]/g, '')
    .replace(/[^a-z0-9.%+]+/g, ' ')
    .split(' ')
    .map((w) => w.replace(/^\.+|\.+$/g, ''))
    .filter((w) => w.length > 0 && !STOP.has(w));
  return [...new Set(words)].sort();
}

/** Folded person or organisation name: "J.D. Vance" → "jd vance", "Jokić" → "jokic". */
export function foldPerson(s: string): string {
  const words = s
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/["“”]/g, '')
    .replace(/[.'’]/g, ' ')
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .filter((w) => w.length > 0);
  // Runs of single letters are initials written with dots: "j d vance" → "jd vance".
  const out: string[] = [];
  let run = '';
  for (const w of words) {
    if (w.length === 1) run += w;
    else {
      if (run) out.push(run);
      run = '';
      out.push(w);
    }
  }
  if (run) out.push(run);
  return out.join(' ');
}
