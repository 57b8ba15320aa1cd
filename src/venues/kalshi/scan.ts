import { numberEnd, stringEnd, uintAt, uintEnd } from '../common/scan.js';

/**
 * What the ingest hot path needs of an `orderbook_delta` text frame, read in place. One object is
 * reused per mapper: valid until the next scan.
 */
export interface DeltaText {
  sid: number;
  seq: number;
  ticker: string;
  yes: boolean;
  /** `price_dollars` and `delta_fp` as [start, end) ranges of the text, without quotes. */
  priceStart: number;
  priceEnd: number;
  deltaStart: number;
  deltaEnd: number;
  tsMs: number;
}

/** A DeltaText to reuse. */
export function deltaText(): DeltaText {
  return { sid: 0, seq: 0, ticker: '', yes: false, priceStart: 0, priceEnd: 0, deltaStart: 0, deltaEnd: 0, tsMs: 0 };
}

const COMMA = 44;
const CLOSE = 125;

/** Bits of the fields seen, so that a repeated key (JSON.parse keeps the last) falls back. */
const TYPE = 1;
const SID = 2;
const SEQ = 4;
const MSG = 8;
const ENVELOPE = TYPE | SID | SEQ | MSG;
const TICKER = 1;
const SIDE = 2;
const PRICE = 4;
const DELTA = 8;
const TS_MS = 16;
const MARKET_ID = 32;
const TS = 64;
const REQUIRED = TICKER | SIDE | PRICE | DELTA | TS_MS;

/**
 * Reads `text` as an `orderbook_delta` frame in the plain form Kalshi sends:
 * `{"type":"orderbook_delta","sid":2,"seq":3,"msg":{"market_ticker":"…","price_dollars":"0.9600",
 * "delta_fp":"-54.00","side":"yes","ts_ms":1669149841000,…}}`, keys in any order. False for
 * anything else (whitespace, escapes, nulls, legacy integer price or delta, no `ts_ms`, a key
 * given twice, an envelope key we do not know): the caller parses and maps such a frame in full.
 * Unknown `msg` keys with a string or number value are stepped over, as the mapper ignores them.
 */
export function scanDelta(s: string, out: DeltaText): boolean {
  if (s.charCodeAt(0) !== 123 /* { */) return false;
  let seen = 0;
  let i = 1;
  for (;;) {
    const k = stringEnd(s, i);
    if (k < 0 || s.charCodeAt(k) !== 58 /* : */) return false;
    const len = k - i - 2;
    const v = k + 1;
    let bit: number;
    if (len === 4 && same(s, i + 1, 'type')) {
      if (!s.startsWith('"orderbook_delta"', v)) return false;
      bit = TYPE;
      i = v + 17;
    } else if (len !== 3) return false;
    else if (same(s, i + 1, 'sid')) {
      bit = SID;
      i = uintEnd(s, v);
      out.sid = uintAt(s, v, i);
    } else if (same(s, i + 1, 'seq')) {
      bit = SEQ;
      i = uintEnd(s, v);
      out.seq = uintAt(s, v, i);
    } else if (same(s, i + 1, 'msg') && s.charCodeAt(v) === 123 /* { */) {
      bit = MSG;
      i = scanMsg(s, v + 1, out);
    } else return false;
    if (i < 0 || (seen & bit) !== 0) return false;
    seen |= bit;
    const c = s.charCodeAt(i);
    if (c === COMMA) i++;
    else if (c === CLOSE) return i + 1 === s.length && seen === ENVELOPE;
    else return false;
  }
}

/** The `msg` object from just past its `{`: the index past its `}`, or -1. */
function scanMsg(s: string, i: number, out: DeltaText): number {
  let seen = 0;
  for (;;) {
    const k = stringEnd(s, i);
    if (k < 0 || s.charCodeAt(k) !== 58 /* : */) return -1;
    const bit = keyBit(s, i + 1, k - 1);
    if (bit < 0) return -1;
    const v = k + 1;
    if (bit === 0) {
      // A key the mapper does not read (client_order_id): step over its value.
      i = s.charCodeAt(v) === 34 ? stringEnd(s, v) : numberEnd(s, v);
      if (i < 0) return -1;
    } else {
      if ((seen & bit) !== 0) return -1;
      seen |= bit;
      i = bit === TS_MS ? uintEnd(s, v) : stringEnd(s, v);
      if (i < 0) return -1;
      if (bit === TICKER) {
        if (i - v < 3) return -1;
        out.ticker = s.slice(v + 1, i - 1);
      } else if (bit === PRICE) {
        out.priceStart = v + 1;
        out.priceEnd = i - 1;
      } else if (bit === DELTA) {
        out.deltaStart = v + 1;
        out.deltaEnd = i - 1;
      } else if (bit === SIDE) {
        if (i === v + 5 && s.startsWith('"yes"', v)) out.yes = true;
        else if (i === v + 4 && s.startsWith('"no"', v)) out.yes = false;
        else return -1;
      } else if (bit === TS_MS) out.tsMs = uintAt(s, v, i);
    }
    const c = s.charCodeAt(i);
    if (c === COMMA) i++;
    else if (c === CLOSE) return (seen & REQUIRED) === REQUIRED ? i + 1 : -1;
    else return -1;
  }
}

/**
 * The field bit of the `msg` key in [start, end): 0 for a key the mapper does not read, -1 for
 * the legacy integer `price` and `delta` (left to the full path). By length first: one compare.
 */
function keyBit(s: string, start: number, end: number): number {
  switch (end - start) {
    case 13:
      if (same(s, start, 'market_ticker')) return TICKER;
      return same(s, start, 'price_dollars') ? PRICE : 0;
    case 8:
      return same(s, start, 'delta_fp') ? DELTA : 0;
    case 4:
      return same(s, start, 'side') ? SIDE : 0;
    case 5:
      if (same(s, start, 'ts_ms')) return TS_MS;
      return same(s, start, 'price') || same(s, start, 'delta') ? -1 : 0;
    case 9:
      return same(s, start, 'market_id') ? MARKET_ID : 0;
    case 2:
      return same(s, start, 'ts') ? TS : 0;
    default:
      return 0;
  }
}

/** Whether `s` holds `word` at `at` (the caller knows the lengths agree). */
function same(s: string, at: number, word: string): boolean {
  for (let k = 0; k < word.length; k++) if (s.charCodeAt(at + k) !== word.charCodeAt(k)) return false;
  return true;
}
