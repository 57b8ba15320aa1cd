import type { BookLevels } from '../core/book.js';
import { PAYOUT, toCents } from '../core/price.js';
import type { MarketRead } from '../state/books.js';
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

/** `[[cents, size], …]` of at most `depth` levels of the bids (`bid`) or the asks of `l`, prices complemented (100 − p) when `complement`. */
function sideJson(l: BookLevels, bid: boolean, depth: number, complement: boolean): string {
  const n = Math.min(depth, l.count(bid));
  let out = '[';
  for (let i = 0; i < n; i++) {
    const p = l.priceAt(bid, i);
    out += `${i === 0 ? '[' : ',['}${centsText(complement ? PAYOUT - p : p)},${sizeText(l.sizeAt(bid, i))}]`;
  }
  return out + ']';
}

/**
 * The orderbook_update of the ready book `BookStore.readMarket` found, as JSON text written straight
 * from the book's level arrays (no level copies, no intermediate objects): the YES side as the book
 * stands (complemented when it is the NO book: its asks are the YES bids), the NO side the other way
 * round, or empty for a YES-only venue.
 */
export function readJson(marketId: string, slug: string, r: MarketRead, depth: number, yesOnly: boolean): string {
  const book = r.book!;
  const c = r.complement;
  const yes = `{"bids":${sideJson(book, !c, depth, c)},"asks":${sideJson(book, c, depth, c)}}`;
  const no = yesOnly ? '{"bids":[],"asks":[]}' : `{"bids":${sideJson(book, c, depth, !c)},"asks":${sideJson(book, !c, depth, !c)}}`;
  return `{"type":"orderbook_update","channel":"orderbook","market_id":${JSON.stringify(marketId)},"source":${JSON.stringify(slug)},"ready":true,"yes":${yes},"no":${no}}`;
}

/** From this many bytes on, `Buffer.copy` (a native call of fixed cost) beats a loop (measured: about 60). */
const COPY_FROM = 64;

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

  /** The first `n` bytes of `bytes` as they are (a message's constant parts, encoded once). */
  raw(bytes: Buffer, n: number): void {
    if (this.length + n > this.buf.length) this.grow(n);
    if (n >= COPY_FROM) bytes.copy(this.buf, this.length, 0, n);
    else {
      const b = this.buf;
      for (let i = 0, at = this.length; i < n; i++) b[at++] = bytes[i]!;
    }
    this.length += n;
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

  /**
   * `num(x)` through `slot`, the text of the number last written there: formatted only when it
   * differs. A message's times (send, venue and receive ms, 13 digits each) repeat over the
   * messages of a turn and the frames of a millisecond.
   */
  numVia(slot: NumText, x: number): void {
    if (x === slot.x) {
      const t = slot.text;
      const n = t.length;
      if (this.length + n > this.buf.length) this.grow(n);
      const b = this.buf;
      let at = this.length;
      for (let i = 0; i < n; i++) b[at++] = t[i]!;
      this.length = at;
      return;
    }
    const from = this.length;
    this.num(x);
    const t = new Uint8Array(this.length - from);
    for (let i = 0; i < t.length; i++) t[i] = this.buf[from + i]!;
    slot.x = x;
    slot.text = t;
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

  /**
   * Side `bid` of `l` as `sideJson` writes it (at most `depth` levels, prices complemented when
   * `complement`). The first time a message writes a side (`again` false) it notes in `sizes` where
   * each level's size text starts and ends; the second time (`again`, the side's other form) it
   * copies each size's text from there rather than formatting it again (`readBytes`).
   */
  side(l: BookLevels, bid: boolean, depth: number, complement: boolean, sizes: Int32Array, again: boolean): void {
    const n = Math.min(depth, l.count(bid));
    if (this.length + 2 + n * LEVEL_ROOM > this.buf.length) this.grow(2 + n * LEVEL_ROOM);
    const b = this.buf;
    let at = this.length;
    b[at++] = 91; // [
    for (let k = 0; k < n; k++) {
      const p = l.priceAt(bid, k);
      if (k > 0) b[at++] = 44; // ,
      b[at++] = 91;
      at = writeBytes(b, at, centsBytes(complement ? PAYOUT - p : p));
      b[at++] = 44;
      if (again) for (let x = sizes[2 * k]!, end = sizes[2 * k + 1]!; x < end; x++) b[at++] = b[x]!;
      else {
        sizes[2 * k] = at;
        at = writeSize(b, at, l.sizeAt(bid, k));
        sizes[2 * k + 1] = at;
      }
      b[at++] = 93; // ]
    }
    b[at++] = 93;
    this.length = at;
  }

  /** A non-negative safe integer in decimal. */
  private uint(x: number): void {
    if (this.length + 16 > this.buf.length) this.grow(16);
    // Below 2^31 in 32-bit integer arithmetic; a larger one (a ms timestamp) as its part above 10^8
    // then its last 8 digits, each in integers, not 13 divisions of a double.
    if (x < 2147483648) this.length = writeInt(this.buf, this.length, x);
    else {
      const hi = Math.floor(x / 1e8);
      const lo = x - hi * 1e8;
      // A safe integer is below 2^53, so `hi` below 2^27.
      this.length = writeInt(this.buf, this.length, hi);
      const b = this.buf;
      let at = this.length + 8;
      this.length = at;
      for (let i = 0, r = lo; i < 8; i++) {
        const q = (r / 10) | 0;
        b[--at] = 48 + r - q * 10;
        r = q;
      }
    }
  }

  private grow(n: number): void {
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }
}

/** The number a slot of a message last had and its text (`TextBytes.numVia`). */
export class NumText {
  x = Number.NaN;
  text = new Uint8Array(0);
}

function digitCount(x: number): number {
  let n = 1;
  while (x >= 10) {
    x = Math.floor(x / 10);
    n++;
  }
  return n;
}

/**
 * Room one level takes at most, with its comma: brackets, comma, a price and a size of at most 25
 * characters each (the longest text `String` gives a double).
 */
const LEVEL_ROOM = 56;

/** The bytes of `centsText(units)` for every price in 0..PAYOUT units, filled as first written. */
const CENT_BYTES: (Uint8Array | undefined)[] = new Array<Uint8Array | undefined>(PAYOUT + 1).fill(undefined);

/** The text of a price as bytes (a table entry for 0..PAYOUT, longer ones written through centsText). */
function centsBytes(units: number): Uint8Array {
  if (units >= 0 && units <= PAYOUT && Number.isInteger(units)) return (CENT_BYTES[units] ??= Buffer.from(centsText(units), 'latin1'));
  return Buffer.from(centsText(units), 'latin1');
}

/** Writes a non-negative integer below 2^31 at `at` in decimal; returns the index after it. */
function writeInt(b: Buffer, at: number, x: number): number {
  let n = 1;
  for (let t = x; t >= 10; n++) t = (t / 10) | 0;
  let end = at + n;
  const after = end;
  do {
    const q = (x / 10) | 0;
    b[--end] = 48 + x - q * 10;
    x = q;
  } while (x > 0);
  return after;
}

/** Whether `s` is printable ASCII that JSON writes as it is (no `"` or `\`): its JSON is `"s"`. */
export function plainAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

/** Copies `bytes` to `b` at `at`; returns the index after them. */
function writeBytes(b: Buffer, at: number, bytes: Uint8Array): number {
  for (let x = 0; x < bytes.length; x++) b[at++] = bytes[x]!;
  return at;
}

/**
 * A size as `String` writes it at `at` (room for 25 characters): an integer below 2^31 or an
 * exact millionth below a billion (what the mappers leave) with integer arithmetic, anything else
 * through `String`. Returns the index after it.
 */
function writeSize(b: Buffer, at: number, size: number): number {
  if (size >= 0 && size < 2147483648 && (size | 0) === size) return writeInt(b, at, size);
  if (splitMillionths(size)) {
    at = writeInt(b, at, split.whole);
    b[at++] = 46; // .
    for (let d = digitCount(split.frac); d < split.digits; d++) b[at++] = 48;
    return writeInt(b, at, split.frac);
  }
  const s = String(size);
  for (let x = 0; x < s.length; x++) b[at++] = s.charCodeAt(x);
  return at;
}

const BOOK_HEAD = Buffer.from('{"type":"orderbook_update","channel":"orderbook","market_id":"', 'latin1');
const SOURCE = Buffer.from('","source":"', 'latin1');
const YES_BIDS = Buffer.from('","ready":true,"yes":{"bids":', 'latin1');
const ASKS = Buffer.from(',"asks":', 'latin1');
const NO_EMPTY = Buffer.from('},"no":{"bids":[],"asks":[]}', 'latin1');
const NO_BIDS = Buffer.from('},"no":{"bids":', 'latin1');

/**
 * Where `side` wrote each level's size in the message (start and end, two per level), so that
 * the side's second form copies the size text instead of formatting it again; one per side of a message.
 */
let bidSizes = new Int32Array(2 * 32);
let askSizes = new Int32Array(2 * 32);

/**
 * `readJson` written into `w` without its closing brace (the envelope follows), for a market id and
 * slug that are `plainAscii`: the same bytes as the text, built without strings, in one pass over the
 * book's level arrays. A side appears twice (YES as it stands, NO complemented, or the other way round
 * for a NO book): each level's size is formatted once, where the side is first written, and copied
 * from there for the second (the bytes just written, where a text kept per book since its last message
 * would be a cold record of its own: BENCHMARKS.md issue 34 `ingest23`).
 */
export function readBytes(w: TextBytes, marketId: string, slug: string, r: MarketRead, depth: number, yesOnly: boolean): void {
  const book = r.book!;
  const c = r.complement;
  if (bidSizes.length < 2 * depth) {
    bidSizes = new Int32Array(2 * depth);
    askSizes = new Int32Array(2 * depth);
  }
  // The YES bids are the book's bids as they stand, or its asks complemented when it is the NO book.
  const yesBids = c ? askSizes : bidSizes;
  const yesAsks = c ? bidSizes : askSizes;
  w.raw(BOOK_HEAD, BOOK_HEAD.length);
  w.ascii(marketId);
  w.raw(SOURCE, SOURCE.length);
  w.ascii(slug);
  w.raw(YES_BIDS, YES_BIDS.length);
  w.side(book, !c, depth, c, yesBids, false);
  w.raw(ASKS, ASKS.length);
  w.side(book, c, depth, c, yesAsks, false);
  if (yesOnly) w.raw(NO_EMPTY, NO_EMPTY.length);
  else {
    w.raw(NO_BIDS, NO_BIDS.length);
    w.side(book, c, depth, !c, yesAsks, true);
    w.raw(ASKS, ASKS.length);
    w.side(book, !c, depth, !c, yesBids, true);
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
