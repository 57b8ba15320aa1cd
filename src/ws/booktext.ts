import type { BookSide } from '../core/book.js';
import { PAYOUT, toCents } from '../core/price.js';
import type { MarketSides } from '../state/books.js';
import type { QuotePrices } from '../views/market.js';

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
  if (!splitMillionths(size)) return String(size);
  return `${split.whole}.${String(split.frac).padStart(split.digits, '0')}`;
}

/** What `splitMillionths` found: the whole part, the fraction's digits without trailing zeros, and how many digits it has with its leading zeros. */
const split = { whole: 0, frac: 0, digits: 0 };

/**
 * Whether `size` is a fraction that is an exact millionth below a billion, split into `split`
 * (one shared record: the writers read it at once, and a size costs no allocation); false for
 * integers and anything else, which `String` writes.
 */
function splitMillionths(size: number): boolean {
  if (Number.isInteger(size) || !(size > 0 && size < 1e9)) return false;
  const millionths = Math.round(size * 1e6);
  if (millionths / 1e6 !== size) return false;
  const whole = Math.floor(millionths / 1e6);
  let frac = millionths - whole * 1e6;
  let digits = 6;
  while (frac % 10 === 0) {
    frac /= 10;
    digits--;
  }
  split.whole = whole;
  split.frac = frac;
  split.digits = digits;
  return true;
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

/**
 * ASCII text written into one reused buffer, for a message that is built and published at once
 * (uWS copies what it publishes): no intermediate strings to build, flatten and encode again.
 */
export class TextBytes {
  private buf = Buffer.allocUnsafe(4096);
  /** Bytes written since the last reset. */
  length = 0;

  reset(): void {
    this.length = 0;
  }

  /** The bytes written, valid until the next write. */
  view(): Buffer {
    return this.buf.subarray(0, this.length);
  }

  /** A string of ASCII characters (the caller knows it is: see `plainAscii`). */
  ascii(s: string): void {
    const n = s.length;
    if (this.length + n > this.buf.length) this.grow(n);
    const b = this.buf;
    let at = this.length;
    for (let i = 0; i < n; i++) b[at++] = s.charCodeAt(i);
    this.length = at;
  }

  /** One ASCII character code. */
  char(c: number): void {
    if (this.length === this.buf.length) this.grow(1);
    this.buf[this.length++] = c;
  }

  /** A number as `String(x)` writes it. */
  num(x: number): void {
    if (x >= 0 && x <= Number.MAX_SAFE_INTEGER && Number.isInteger(x)) this.uint(x);
    else this.ascii(String(x));
  }

  /** A size as `sizeText` (and so `String`) writes it, integers and millionths without a string. */
  size(size: number): void {
    if (!splitMillionths(size)) return this.num(size);
    const { whole, frac, digits } = split;
    this.uint(whole);
    this.char(46); // .
    for (let d = digitCount(frac); d < digits; d++) this.char(48);
    this.uint(frac);
  }

  /** A non-negative safe integer in decimal. */
  private uint(x: number): void {
    const n = digitCount(x);
    if (this.length + n > this.buf.length) this.grow(n);
    const b = this.buf;
    let at = this.length + n;
    this.length = at;
    do {
      const q = Math.floor(x / 10);
      b[--at] = 48 + x - q * 10;
      x = q;
    } while (x > 0);
  }

  private grow(n: number): void {
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }
}

function digitCount(x: number): number {
  let n = 1;
  while (x >= 10) {
    x = Math.floor(x / 10);
    n++;
  }
  return n;
}

/** Whether `s` is printable ASCII that JSON writes as it is (no `"` or `\`): its JSON is `"s"`. */
export function plainAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

function levelsBytes(w: TextBytes, side: BookSide, depth: number, complement: boolean): void {
  const n = Math.min(depth, side.length);
  w.char(91); // [
  for (let i = 0; i < n; i++) {
    if (i > 0) w.char(44); // ,
    w.char(91);
    const p = side.price(i);
    w.ascii(centsText(complement ? PAYOUT - p : p));
    w.char(44);
    w.size(side.size(i));
    w.char(93); // ]
  }
  w.char(93);
}

/**
 * `bookJson` written into `w` without its closing brace (the envelope follows), for a market id
 * and slug that are `plainAscii`: the same bytes as the text, built without strings.
 */
export function bookBytes(w: TextBytes, marketId: string, slug: string, s: MarketSides, depth: number, yesOnly: boolean): void {
  const c = s.complement;
  w.ascii('{"type":"orderbook_update","channel":"orderbook","market_id":"');
  w.ascii(marketId);
  w.ascii('","source":"');
  w.ascii(slug);
  w.ascii('","ready":true,"yes":{"bids":');
  levelsBytes(w, s.bids, depth, c);
  w.ascii(',"asks":');
  levelsBytes(w, s.asks, depth, c);
  if (yesOnly) w.ascii('},"no":{"bids":[],"asks":[]}');
  else {
    w.ascii('},"no":{"bids":');
    levelsBytes(w, s.asks, depth, !c);
    w.ascii(',"asks":');
    levelsBytes(w, s.bids, depth, !c);
    w.char(125); // }
  }
}

/** A JSON number, or null for a missing (or non-finite) one, as JSON.stringify writes it. */
function jsonNumber(w: TextBytes, x: number | null | undefined): void {
  if (x === null || x === undefined || !Number.isFinite(x)) w.ascii('null');
  else w.num(x);
}

/**
 * The price_update body (src/ws/hub.ts `priceBody`, not a snapshot) written into `w` without its
 * closing brace, for a market id and slug that are `plainAscii`.
 */
export function priceBytes(w: TextBytes, marketId: string, slug: string, p: QuotePrices, volume: number | undefined): void {
  w.ascii('{"type":"price_update","channel":"prices","market_id":"');
  w.ascii(marketId);
  w.ascii('","source":"');
  w.ascii(slug);
  w.ascii('","yes_bid":');
  jsonNumber(w, p.yes_bid);
  w.ascii(',"yes_ask":');
  jsonNumber(w, p.yes_ask);
  w.ascii(',"no_bid":');
  jsonNumber(w, p.no_bid);
  w.ascii(',"no_ask":');
  jsonNumber(w, p.no_ask);
  w.ascii(',"last_price":');
  jsonNumber(w, p.last_price);
  w.ascii(',"volume":');
  jsonNumber(w, volume);
}
