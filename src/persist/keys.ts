/**
 * The key layouts of the market-keyed databases (catalog, quotes, books and the three candle logs),
 * in one place: every reader and writer of those databases builds and reads its keys here. Store
 * format 4 keys them by u32 ids (`idKey`, `idCandleKey`, at the end of this file); format 3's codes
 * below are read by the upgrade to format 4 (migrate.ts), which rewrites them.
 *
 * Format 2 keyed them by text: `venue:market` strings, and candles by ordered-binary arrays
 * [venue, market, t]. At 108k markets the keys were 44 to 54 bytes of every record (Polymarket's
 * token ids are 77 decimal digits, its condition ids 66 characters of hex), and LMDB keeps every key
 * in a leaf page the service maps: about a quarter of the file's pages (BENCHMARKS.md, "a denser
 * LMDB store").
 *
 * A format-3 key is raw bytes (lmdb-js `keyEncoding: 'binary'`), a reversible encoding of the same
 * pair, with no table to look anything up in:
 *
 *   market code = venue, id
 *     venue: one byte 5–30 for the labels `venue_a`…`venue_z`; otherwise 0xf0, a length byte and
 *            the label's UTF-8 bytes
 *     id:    a tag byte, a length byte (two for LONG), then the payload:
 *            DECIMAL  digits without a leading zero, as the big-endian bytes of the number
 *                     (77 digits: 32 bytes)
 *            HEX0X    `0x` and an even number of lowercase hex digits, as the bytes they spell
 *            HEX      an even number of lowercase hex digits, as the bytes they spell
 *            TEXT     anything else, its UTF-8 bytes (up to 255), LONG: up to 65,535
 *   candle key  = market code, t (ms) as six big-endian bytes
 *
 * The code is prefix-free (every part says its own length), so the candles of one market are one
 * contiguous range ordered by time, and no other market's keys fall inside it, which is what the
 * range reads (history, rollup rebuilds, pruning) rely on. No code starts below byte 5, where
 * lmdb-js begins a range (or a count) given no `start`: the shared msgpack structures of a database
 * live under the one-byte key 0 (`STRUCTURES_KEY`), outside every walk of the records, as a symbol
 * key is in an ordered-binary database.
 */

/** A key of a market-keyed database that is not one this layout writes: which database, and what is wrong. */
export class KeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyError';
  }
}

/**
 * The key encoder of the format-3 databases: bytes as they are. lmdb-js's own `keyEncoding: 'binary'`
 * takes any key and writes a string as zero bytes (`Uint8Array.set` of its characters), so a
 * `venue:id` string put by mistake would land on one wrong key; this one refuses it. (With a key
 * encoder of its own, lmdb-js starts a range without `start` at byte 5, as for ordered-binary keys:
 * hence the venue bytes from 5.)
 */
export const BINARY_KEYS = {
  writeKey(key: unknown, target: Uint8Array, start: number): number {
    if (!(key instanceof Uint8Array))
      throw new KeyError(`a format-3 key is bytes (src/persist/keys.ts), not ${typeof key} ${JSON.stringify(key)?.slice(0, 80)}`);
    target.set(key, start);
    return start + key.length;
  },
  readKey(target: Uint8Array, start: number, end: number): Buffer {
    return Buffer.from(target.subarray(start, end));
  },
};

/** Where each database keeps its shared msgpack structures in format 3 (sorts before every record). */
export const STRUCTURES_KEY = Buffer.from([0]);
/** The first key a walk of a format-3 market-keyed database starts from (lmdb-js's default start too). */
export const FIRST_KEY = Buffer.from([5]);

/** The byte of `venue_a`; `venue_z` is VENUE_A + 25. */
const VENUE_A = 5;
const VENUE_OTHER = 0xf0;
const DECIMAL = 1;
const HEX0X = 2;
const HEX = 3;
const TEXT = 4;
const LONG = 5;
/** Candle times are kept in six bytes: ms up to 2^48 (the year 10889). */
const T_BYTES = 6;
const T_MAX = 2 ** 48 - 1;

const DECIMAL_RE = /^(?:0|[1-9][0-9]{0,150})$/;
const HEX0X_RE = /^0x(?:[0-9a-f]{2})+$/;
const HEX_RE = /^(?:[0-9a-f]{2})+$/;
const VENUE_RE = /^venue_[a-z]$/;

/** The venue label's bytes. */
function venueBytes(venue: string): number[] {
  if (VENUE_RE.test(venue)) return [VENUE_A + venue.charCodeAt(6) - 97];
  const b = Buffer.from(venue, 'utf8');
  if (b.length === 0 || b.length > 255) throw new KeyError(`venue label ${JSON.stringify(venue)} cannot be stored (1 to 255 bytes)`);
  return [VENUE_OTHER, b.length, ...b];
}

/** The id's tag, length and payload. */
function idBytes(id: string): Buffer {
  let tag: number;
  let payload: Buffer;
  if (DECIMAL_RE.test(id)) {
    const hex = BigInt(id).toString(16);
    tag = DECIMAL;
    payload = Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex');
  } else if (HEX0X_RE.test(id)) {
    tag = HEX0X;
    payload = Buffer.from(id.slice(2), 'hex');
  } else if (HEX_RE.test(id)) {
    tag = HEX;
    payload = Buffer.from(id, 'hex');
  } else {
    payload = Buffer.from(id, 'utf8');
    if (payload.length > 65_535) throw new KeyError(`id of ${payload.length} bytes cannot be stored (at most 65,535): ${JSON.stringify(id.slice(0, 40))}…`);
    if (payload.length > 255) return Buffer.concat([Buffer.from([LONG, payload.length >> 8, payload.length & 0xff]), payload]);
    tag = TEXT;
  }
  return Buffer.concat([Buffer.from([tag, payload.length]), payload]);
}

/** The key of a market's (or an instrument's) record in catalog, quotes or books. */
export function marketCode(venue: string, id: string): Buffer {
  return Buffer.concat([Buffer.from(venueBytes(venue)), idBytes(id)]);
}

/** A decoded market code: venue, id, and where the code ends in the key. */
export interface DecodedCode {
  readonly venue: string;
  readonly id: string;
  readonly end: number;
}

/** Reads the market code at the start of `key`; throws KeyError on anything this layout does not write. */
export function readCode(key: Uint8Array): DecodedCode {
  const b = Buffer.isBuffer(key) ? key : Buffer.from(key.buffer, key.byteOffset, key.byteLength);
  const bad = (why: string): never => {
    throw new KeyError(`not a format-3 market key (${why}): ${b.toString('hex')}`);
  };
  if (b.length < 3) bad('too short');
  let at = 0;
  let venue: string;
  const v = b[at++]!;
  if (v >= VENUE_A && v < VENUE_A + 26) venue = `venue_${String.fromCharCode(97 + v - VENUE_A)}`;
  else if (v === VENUE_OTHER) {
    const n = b[at++]!;
    if (n === 0 || at + n > b.length) bad('venue label runs past the key');
    venue = b.toString('utf8', at, at + n);
    at += n;
  } else return bad(`unknown venue byte ${v}`);
  const tag = b[at++];
  let len: number;
  if (tag === LONG) {
    if (at + 2 > b.length) bad('id length runs past the key');
    len = (b[at]! << 8) | b[at + 1]!;
    at += 2;
  } else {
    if (at >= b.length) bad('no id length');
    len = b[at++]!;
  }
  if (at + len > b.length) bad('id runs past the key');
  const payload = b.subarray(at, at + len);
  let id: string;
  switch (tag) {
    case DECIMAL:
      if (len === 0) bad('empty number');
      id = BigInt(`0x${payload.toString('hex')}`).toString(10);
      break;
    case HEX0X:
      id = `0x${payload.toString('hex')}`;
      break;
    case HEX:
      id = payload.toString('hex');
      break;
    case TEXT:
    case LONG:
      id = payload.toString('utf8');
      break;
    default:
      return bad(`unknown id tag ${tag}`);
  }
  return { venue, id, end: at + len };
}

/** A market record's key, decoded: venue and id (the whole key must be one code). */
export function readMarketKey(key: Uint8Array): { venue: string; id: string } {
  const c = readCode(key);
  if (c.end !== key.length) throw new KeyError(`not a format-3 market key (${key.length - c.end} bytes after the code): ${Buffer.from(key).toString('hex')}`);
  return { venue: c.venue, id: c.id };
}

/** Writes `t` (ms, clamped into what six bytes hold) after `code`. */
function withTime(code: Buffer, t: number): Buffer {
  const k = Buffer.allocUnsafe(code.length + T_BYTES);
  code.copy(k, 0);
  k.writeUIntBE(Math.min(T_MAX, Math.max(0, t)), code.length, T_BYTES);
  return k;
}

/** The key of a candle of `venue`/`marketId` beginning at `t` ms (a whole number in [0, 2^48)). */
export function candleKey(venue: string, marketId: string, t: number): Buffer {
  if (!Number.isSafeInteger(t) || t < 0 || t > T_MAX) throw new KeyError(`candle time ${t} cannot be stored (whole ms in [0, 2^48))`);
  return withTime(marketCode(venue, marketId), t);
}

/** The market code of a candle key, decoded; throws KeyError unless the six bytes of time follow it. */
function readCandleCode(key: Uint8Array): DecodedCode {
  const c = readCode(key);
  if (key.length !== c.end + T_BYTES)
    throw new KeyError(`not a format-3 candle key (${key.length - c.end} bytes after the market, not ${T_BYTES}): ${Buffer.from(key).toString('hex')}`);
  return c;
}

/** A candle key, decoded. */
export function readCandleKey(key: Uint8Array): { venue: string; marketId: string; t: number } {
  const c = readCandleCode(key);
  return { venue: c.venue, marketId: c.id, t: Buffer.from(key.buffer, key.byteOffset, key.byteLength).readUIntBE(c.end, T_BYTES) };
}

/**
 * Bounds of the candles of one market in [from, to) ms for a range read (`start` inclusive, `end`
 * exclusive), for any numbers: whole ms at or after `from` and before `to`.
 */
export function candleRange(venue: string, marketId: string, from: number, to: number): { start: Buffer; end: Buffer } {
  return codeRange(marketCode(venue, marketId), from, to);
}

/** `candleRange` of the market whose code is `code` (the bytes `candleCode` gives). */
export function codeRange(code: Buffer, from: number, to: number): { start: Buffer; end: Buffer } {
  return { start: withTime(code, bound(from)), end: to > T_MAX ? afterMarket(code) : withTime(code, bound(to)) };
}

/** ceil, with NaN and negatives as 0 (past T_MAX is clamped by withTime). */
function bound(x: number): number {
  return x > 0 ? Math.ceil(x) : 0;
}

/** A key after every candle of the market whose code is `code` and before the next market's. */
export function afterMarket(code: Buffer): Buffer {
  return Buffer.concat([code, Buffer.alloc(T_BYTES + 1, 0xff)]);
}

/** The market code at the start of a candle key (its bytes, for range bounds); throws KeyError as `readCandleKey` does. */
export function candleCode(key: Uint8Array): Buffer {
  return Buffer.from(key.subarray(0, readCandleCode(key).end));
}

/** The databases whose keys format 3 changed. */
export const REKEYED = new Set(['catalog', 'quotes', 'books', 'candles', 'candles1h', 'candles1d']);

/**
 * A format-1 or -2 key of `db` as format 3 writes it. Throws KeyError, saying which database and
 * key, on a key that format did not write (a record under it could not be found again).
 */
export function upgradeKey(db: string, key: unknown): Buffer {
  const bad = (why: string): never => {
    throw new KeyError(`${db}: key ${JSON.stringify(key)} is not a format-2 key (${why})`);
  };
  if (db === 'candles' || db === 'candles1h' || db === 'candles1d') {
    if (!Array.isArray(key) || key.length !== 3) return bad('a candle key is [venue, market, t]');
    const [venue, id, t] = key as unknown[];
    if (typeof venue !== 'string' || typeof id !== 'string' || typeof t !== 'number') return bad('a candle key is [venue, market, t]');
    try {
      return candleKey(venue, id, t);
    } catch (e) {
      return bad((e as Error).message);
    }
  }
  if (typeof key !== 'string') return bad('a record key is "venue:id"');
  const colon = key.indexOf(':');
  if (colon <= 0) return bad('a record key is "venue:id"');
  try {
    return marketCode(key.slice(0, colon), key.slice(colon + 1));
  } catch (e) {
    return bad((e as Error).message);
  }
}

/*
 * Format 4: the market-keyed databases keyed by a dense u32 id, four big-endian bytes, with no table
 * (BENCHMARKS.md, issue 34 `ids22`). A market's id is the key of its catalog record (whose value holds
 * its venue and id), or of its quote record when the catalog does not hold it; an instrument's is the
 * key of its book record. Quotes and the candle logs (id, then t as six bytes) are keyed by the
 * market's id. Ids are given from ID_BASE up, once, never again (the next is one past the largest key
 * of the databases keyed by them); ID_BASE = 5·2²⁴ puts the first byte of every key at 5 or above, past
 * the structures key (0) and where lmdb-js begins a walk given no `start`.
 */

/** The first id; every id lies in [ID_BASE, ID_MAX]. */
export const ID_BASE = 5 * 2 ** 24;
export const ID_MAX = 2 ** 32 - 1;
const ID_BYTES = 4;

/** The key of the record of the market (or instrument) whose id is `id`. */
export function idKey(id: number): Buffer {
  if (!Number.isInteger(id) || id < ID_BASE || id > ID_MAX) throw new KeyError(`store id ${id} is out of range [${ID_BASE}, ${ID_MAX}]`);
  const k = Buffer.allocUnsafe(ID_BYTES);
  k.writeUInt32BE(id, 0);
  return k;
}

/** The id at the start of a format-4 key; throws KeyError on a key too short or below ID_BASE. */
export function readIdAt(key: Uint8Array): number {
  if (key.length < ID_BYTES) throw new KeyError(`not a format-4 key (${key.length} bytes): ${Buffer.from(key).toString('hex')}`);
  const id = ((key[0]! << 24) | (key[1]! << 16) | (key[2]! << 8) | key[3]!) >>> 0;
  if (id < ID_BASE) throw new KeyError(`not a format-4 key (id ${id} below ${ID_BASE}): ${Buffer.from(key).toString('hex')}`);
  return id;
}

/** A format-4 record key (catalog, quotes, books), decoded: the id. */
export function readIdKey(key: Uint8Array): number {
  if (key.length !== ID_BYTES) throw new KeyError(`not a format-4 record key (${key.length} bytes, not ${ID_BYTES}): ${Buffer.from(key).toString('hex')}`);
  return readIdAt(key);
}

/** The key of a candle of the market whose id is `id`, beginning at `t` ms. */
export function idCandleKey(id: number, t: number): Buffer {
  if (!Number.isSafeInteger(t) || t < 0 || t > T_MAX) throw new KeyError(`candle time ${t} cannot be stored (whole ms in [0, 2^48))`);
  return withTime(idKey(id), t);
}

/** A format-4 candle key, decoded. */
export function readIdCandleKey(key: Uint8Array): { id: number; t: number } {
  if (key.length !== ID_BYTES + T_BYTES)
    throw new KeyError(`not a format-4 candle key (${key.length} bytes, not ${ID_BYTES + T_BYTES}): ${Buffer.from(key).toString('hex')}`);
  const b = Buffer.from(key.buffer, key.byteOffset, key.byteLength);
  return { id: readIdAt(key), t: b.readUIntBE(ID_BYTES, T_BYTES) };
}

/** Bounds of the candles of market `id` in [from, to) ms (as `candleRange`). */
export function idCandleRange(id: number, from: number, to: number): { start: Buffer; end: Buffer } {
  return codeRange(idKey(id), from, to);
}

/** A key after every candle of market `id` and before the next id's. */
export function afterId(id: number): Buffer {
  return afterMarket(idKey(id));
}

/** The market id of a format-4 candle key (throws KeyError as `readIdCandleKey`). */
export function candleId(key: Uint8Array): number {
  return readIdCandleKey(key).id;
}
