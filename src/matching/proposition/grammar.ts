/**
 * Venue-generated grammar (issue 32): the phrases a venue builds from a template and a label rather
 * than writes, read back into the proposition's fields. The words are data
 * (`tables/venue-grammar.json`); this module only says how they combine.
 */
import GRAMMAR from '../tables/venue-grammar.json' with { type: 'json' };
import PLACES from '../tables/places.json' with { type: 'json' };
import type { Ticker } from './context.js';

/** A party an election's winner may be named by. */
export type Party = 'dem' | 'rep' | 'ind';

const PARTY_WORDS: Readonly<Record<string, string>> = GRAMMAR.partyWords;
const FILLERS = new Set(GRAMMAR.partyFillers);
/** Display names of the party subjects. */
export const PARTY_NAMES: Readonly<Record<string, string>> = GRAMMAR.partyNames;

/**
 * The party a phrase names, when the phrase is only a party: "the Democrats", "Democratics",
 * "Democratic (DFL)s", "a Republican", "Independents". Every word left after the fillers must name
 * the same party, so "Dan Osborn (as an independent)s" (a person) is not one.
 */
export function partyOf(phrase: string): Party | undefined {
  const words = phrase
    .replace(/[()]/g, ' ')
    .split(/[\s]+/)
    .filter((w) => w.length > 0 && !FILLERS.has(w));
  if (words.length === 0) return undefined;
  let party: string | undefined;
  for (const w of words) {
    const p = PARTY_WORDS[w];
    if (p === undefined || (party !== undefined && p !== party)) return undefined;
    party = p;
  }
  return party as Party;
}

const STATES: Readonly<Record<string, string>> = PLACES.usStates;
const POSTAL = new Set(Object.values(STATES));
const HOUSE_RE = new RegExp(`\\b(?:${GRAMMAR.houseWords.join('|')})\\b`);
const CODE_RE = /\b([a-z]{2})-0?(\d{1,2})\b/;
const NAMED_RE = new RegExp(
  `\\b(${Object.keys(STATES)
    .sort((a, b) => b.length - a.length)
    .join('|')})'s (\\d{1,2})(?:st|nd|rd|th)\\b`,
);

/**
 * The House seat a folded title names, as `house_<state><district>`: "MI-10" = "MI-10 House seat"
 * = "House race for MI-10" = "Michigan's 10th congressional district"; the Kalshi series
 * `HOUSEMI10` says it too. Needs a House word beside a code, so "VA-1" alone is not read.
 */
export function houseSeat(t: string, kt: Ticker | undefined): string | undefined {
  const series = kt ? /^HOUSE([A-Z]{2})(\d{1,2})$/.exec(kt.series) : null;
  if (series && POSTAL.has(series[1]!.toLowerCase())) return `house_${series[1]!.toLowerCase()}${Number(series[2])}`;
  if (!HOUSE_RE.test(t)) return undefined;
  const code = CODE_RE.exec(t);
  if (code && POSTAL.has(code[1]!)) return `house_${code[1]}${Number(code[2])}`;
  const named = NAMED_RE.exec(t);
  if (named) return `house_${STATES[named[1]!]}${Number(named[2])}`;
  return undefined;
}

/**
 * The city of a mayoral race: "Los Angeles mayoral election", "mayor of Los Angeles", as words
 * joined by `_`. The words before "mayor(al)" back to the first that cannot be part of a name.
 */
export function mayoralCity(t: string): string | undefined {
  const of = /\bmayor of ([a-z ]+?)(?:\?|$| in | election| race)/.exec(t);
  if (of) return of[1]!.trim().replace(/ /g, '_');
  const m = /\b((?:[a-z.]+ ){1,3})mayor(?:al|alty)?\b/.exec(t);
  if (!m) return undefined;
  const words = m[1]!.trim().split(' ');
  const keep: string[] = [];
  for (let i = words.length - 1; i >= 0; i--) {
    if (CITY_STOP.has(words[i]!) || /\d/.test(words[i]!)) break;
    keep.unshift(words[i]!);
  }
  return keep.length > 0 ? keep.join('_') : undefined;
}

const CITY_STOP = new Set(['the', 'win', 'will', 'be', 'of', 'in', 'for', 'a', 'an', 'next', 'become', 'elected', 'as', 'who', 'us', 'u.s.']);
