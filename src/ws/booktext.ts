import type { BookSide } from '../core/book.js';
import { PAYOUT, toCents } from '../core/price.js';
import type { MarketSides } from '../state/books.js';

/** `String(toCents(units))` for every price in 0..PAYOUT units, filled as they are first written. */
const CENTS: (string | undefined)[] = new Array<string | undefined>(PAYOUT + 1).fill(undefined);

/**
 * A price in units as the cents number JSON shows (`String(toCents(units))`, e.g. 5450 → "54.5").
 * Prices lie in 0..PAYOUT, so their text comes from a table: formatting a fractional double
 * is the slow path of number-to-string, and a book message writes 40 prices.
 */
export function centsText(units: number): string {
  if (units >= 0 && units <= PAYOUT && Number.isInteger(units)) return (CENTS[units] ??= String(toCents(units)));
  return String(toCents(units));
}

/**
 * A size as JSON shows it (`String(size)`), without the double-to-string algorithm for the sizes
 * it sees: integers, and fractions that are exact millionths (what roundSize, src/core/price.ts,
 * leaves) below a billion contracts, whose shortest text is their millionths with trailing zeros
 * dropped. Anything else goes through String.
 */
export function sizeText(size: number): string {
  if (Number.isInteger(size) || !(size > 0 && size < 1e9)) return String(size);
  const millionths = Math.round(size * 1e6);
  if (millionths / 1e6 !== size) return String(size);
  const whole = Math.floor(millionths / 1e6);
  let frac = millionths - whole * 1e6;
  let digits = 6;
  while (frac % 10 === 0) {
    frac /= 10;
    digits--;
  }
  return `${whole}.${String(frac).padStart(digits, '0')}`;
}

/** `[[cents, size], …]` of at most `depth` levels of a side, prices complemented (100 − p) when `complement`. */
export function levelsJson(side: BookSide, depth: number, complement: boolean): string {
  const n = Math.min(depth, side.length);
  let out = '[';
  for (let i = 0; i < n; i++) {
    const p = side.price(i);
    out += `${i === 0 ? '[' : ',['}${centsText(complement ? PAYOUT - p : p)},${sizeText(side.size(i))}]`;
  }
  return out + ']';
}

/**
 * The orderbook_update of a ready book as JSON text, written straight from the book's level arrays
 * (no level copies, no intermediate objects): the YES side as the sides stand (complemented when
 * they are the NO book's), the NO side the other way round, or empty for a YES-only venue.
 */
export function bookJson(marketId: string, slug: string, s: MarketSides, depth: number, yesOnly: boolean): string {
  const c = s.complement;
  const yes = `{"bids":${levelsJson(s.bids, depth, c)},"asks":${levelsJson(s.asks, depth, c)}}`;
  const no = yesOnly ? '{"bids":[],"asks":[]}' : `{"bids":${levelsJson(s.asks, depth, !c)},"asks":${levelsJson(s.bids, depth, !c)}}`;
  return `{"type":"orderbook_update","channel":"orderbook","market_id":${JSON.stringify(marketId)},"source":${JSON.stringify(slug)},"ready":true,"yes":${yes},"no":${no}}`;
}
