/** "A at B" / "A vs. B": the two sides of a game named in a title, resolved to team ids. */
import { groupOf, teamsByName } from '../teams.js';

/** A best-of marker, "(BO3)", which titles append to a matchup. */
export const BO_RE = /\s*\(bo\d\)/g;
const MATCHUP_RE = /^(.+?)\s+(?:at|@|vs\.?|v\.?|versus)\s+(.+)$/;

/** Resolved names of a matchup's sides; each is the candidate ids of that side. */
export interface Resolved {
  readonly a: string[];
  readonly b: string[];
  readonly groups: readonly string[] | undefined;
}

const ALL_GROUPS = ['NFL', 'NBA', 'MLB', 'NHL', 'NCAAF', 'SOC', 'NAT', 'ESP'];

/** One side of a matchup as a name: no "(BO3)", "winner", "?" or leading "will". */
export function cleanSide(s: string): string {
  return s
    .replace(BO_RE, '')
    .replace(/\s+winner\??$/, '')
    .replace(/\?$/, '')
    .replace(/^will\s+/, '')
    .trim();
}

/** Resolves both sides of "A vs B"; when no league is known, the one team group both sides share. */
function resolveMatchup(a: string, b: string, groups: readonly string[] | undefined): Resolved {
  const ca = teamsByName(cleanSide(a), groups);
  const cb = teamsByName(cleanSide(b), groups);
  if (groups || ca.length === 0 || cb.length === 0) return { a: ca, b: cb, groups };
  const shared = ALL_GROUPS.filter((g) => ca.some((id) => groupOf(id) === g) && cb.some((id) => groupOf(id) === g));
  if (shared.length === 1) {
    const g = shared[0]!;
    return { a: ca.filter((id) => groupOf(id) === g), b: cb.filter((id) => groupOf(id) === g), groups: [g] };
  }
  return { a: ca, b: cb, groups };
}

/** A matchup read from text: the resolved sides, "at" or "vs", and the names as written. */
export type Matchup = Resolved & { sep: string; nameA: string; nameB: string };
let lastMatchup: { s: string; groups: readonly string[] | undefined; r: Matchup | undefined } | undefined;

/** "A at B" / "A vs. B" resolved to teams (the last answer is kept: branches ask twice). */
export function parseMatchup(s: string, groups: readonly string[] | undefined): Matchup | undefined {
  if (lastMatchup && lastMatchup.s === s && lastMatchup.groups === groups) return lastMatchup.r;
  const r = parseMatchupUncached(s, groups);
  lastMatchup = { s, groups, r };
  return r;
}

function parseMatchupUncached(s: string, groups: readonly string[] | undefined): Matchup | undefined {
  const m = MATCHUP_RE.exec(s);
  if (!m) return undefined;
  const sep = /^\s+(at|@)\s+/.test(s.slice(m[1]!.length, m[1]!.length + 5)) ? 'at' : 'vs';
  const r = resolveMatchup(m[1]!, m[2]!, groups);
  if (r.a.length === 0 || r.b.length === 0) return undefined;
  return { ...r, sep, nameA: cleanSide(m[1]!), nameB: cleanSide(m[2]!) };
}

/** Whether the text has the shape "A at B" / "A vs. B" (its names not yet resolved). */
export function looksLikeMatchup(s: string): boolean {
  return MATCHUP_RE.test(s);
}

/** Two names known to be the sides of one game ("A to beat B"), resolved as an "A vs B" matchup. */
export function parseMatchupPair(a: string, b: string, groups: readonly string[] | undefined): Matchup {
  return { ...resolveMatchup(a, b, groups), sep: 'vs', nameA: a, nameB: b };
}
