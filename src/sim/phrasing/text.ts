import { MONTH_CODES } from '../data.js';
import type { Rng } from '../rng.js';
import type { SimEvent, SimTeam } from '../types.js';

/**
 * US Eastern wall time of an instant, as a Date whose UTC fields read as Eastern time: venues
 * name game days and expiries by the Eastern calendar (a 9 pm ET game is "today", not the next
 * UTC day). DST: second Sunday of March 2:00 to first Sunday of November 2:00.
 */
function eastern(ms: number): Date {
  const y = new Date(ms).getUTCFullYear();
  const nthSunday = (month: number, n: number): number => {
    const first = new Date(Date.UTC(y, month, 1)).getUTCDay();
    return 1 + ((7 - first) % 7) + (n - 1) * 7;
  };
  const dstStart = Date.UTC(y, 2, nthSunday(2, 2), 7); // 2:00 EST = 07:00 UTC
  const dstEnd = Date.UTC(y, 10, nthSunday(10, 1), 6); // 2:00 EDT = 06:00 UTC
  const offsetH = ms >= dstStart && ms < dstEnd ? 4 : 5;
  return new Date(ms - offsetH * 3_600_000);
}

/** Kalshi's date part of a ticker, Eastern calendar: 25OCT14. */
export function kDate(ms: number): string {
  const d = eastern(ms);
  return `${String(d.getUTCFullYear() % 100).padStart(2, '0')}${MONTH_CODES[d.getUTCMonth()]}${String(d.getUTCDate()).padStart(2, '0')}`;
}

/** The Eastern calendar day of an instant, YYYY-MM-DD. */
export function isoDay(ms: number): string {
  return eastern(ms).toISOString().slice(0, 10);
}

/** 96000 → "96,000", 3399.99 → "3,399.99". */
export function money(n: number): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: 2 });
}

/** Lower-case ASCII words joined by '-', accents dropped. */
export function slugify(s: string): string {
  return s
    .toLowerCase()
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

/** A random version-4-shaped UUID. */
export function uuid(rng: Rng): string {
  const h = rng.hex(32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** "Away<sep>Home" with each team named by `f`. */
export const matchup = (e: SimEvent, sep: string, f: (t: SimTeam) => string): string => `${f(e.away!)}${sep}${f(e.home!)}`;

/** The venue category word of an event. */
export function category(e: SimEvent): string {
  return { sports: 'Sports', politics: 'Politics', economics: 'Economics', crypto: 'Crypto', entertainment: 'Entertainment' }[e.category];
}

/** First letter upper-cased. */
export function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
