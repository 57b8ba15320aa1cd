import { crc32 } from 'node:zlib';

/**
 * What a capture record holds:
 * - `frame`: a WebSocket message, the text as received;
 * - `doc`: a REST document as the runtime got it, as JSON text;
 * - `event`: a normalized event a protocol built itself outside the frame path, or a `feed` event
 *   of the runtime (msgpack, so NaN and absent fields come back as they were);
 * - `reset`: the runtime reset the mapper on a close (payload: the instruments of a scoped reset as
 *   a JSON array, empty for the whole mapper);
 * - `flush`: the live per-turn flush ran (no payload);
 * - `mapper`: a feed session began with a fresh mapper, made with the options its protocol's
 *   `createMapper` takes (payload: a JSON object), so a replay makes its mapper as live did.
 */
export const CAPTURE_KINDS = ['frame', 'doc', 'event', 'reset', 'flush', 'mapper'] as const;
export type CaptureKind = (typeof CAPTURE_KINDS)[number];

/** Kind codes on disk. */
export const KIND = { frame: 1, doc: 2, event: 3, reset: 4, flush: 5, mapper: 6 } as const satisfies Record<CaptureKind, number>;
const KIND_NAME: readonly (CaptureKind | undefined)[] = [undefined, 'frame', 'doc', 'event', 'reset', 'flush', 'mapper'];

/** One captured record, read back. */
export interface CaptureRecord {
  /** Global receive order across venues (monotonic across restarts). */
  readonly seq: number;
  /** The venue label, or `FLUSH_STREAM` for flush markers. */
  readonly venue: string;
  /** The receive time the runtime used (ms since epoch). */
  readonly t: number;
  readonly kind: CaptureKind;
  /** The connection a frame arrived on or a reset closed (0 for REST and built events). */
  readonly conn: number;
  /** Text of a frame/doc/reset/mapper; msgpack bytes of an event; empty for a flush. */
  readonly payload: string | Uint8Array;
}

/** The stream (directory) flush markers are kept in; not a venue label (labels have no leading underscore). */
export const FLUSH_STREAM = '_turn';

/** Bytes of one record's header inside a block: kind u8, binary u8, conn u16, length u32, seq f64, t f64. */
const REC_HEAD = 24;

/** The summary a block's header carries, so a reader skips blocks outside its window unread. */
export interface BlockInfo {
  readonly count: number;
  readonly firstSeq: number;
  readonly lastSeq: number;
  readonly minT: number;
  readonly maxT: number;
  /** Bytes of the uncompressed records. */
  readonly rawBytes: number;
}

/** Worst case of UTF-8 bytes per UTF-16 unit (a lone surrogate or a BMP character past U+07FF). */
const UTF8_MAX = 3;

/**
 * Records of one stream waiting to be written, already in the block's byte layout (see
 * `decodeRecords`): each append writes its 24-byte header into one buffer and its payload's UTF-8
 * into another, so nothing per record is kept on the heap (a frame's string dies young instead of
 * being held until its block is sealed) and sealing is one concatenation, with no join or
 * re-encoding on the event loop. The header's length counts UTF-16 units of the payload text, as
 * the reader slices the decoded text; a binary payload is stored as latin1 characters in UTF-8.
 */
export class BlockBuilder {
  private head: Buffer;
  private text: Buffer;
  private textAt = 0;
  private n = 0;
  private first = 0;
  private last = 0;
  private minT = Infinity;
  private maxT = -Infinity;

  constructor(textBytes = 64 * 1024) {
    this.text = Buffer.allocUnsafe(textBytes);
    this.head = Buffer.allocUnsafe(Math.max(REC_HEAD * 64, Math.ceil(textBytes / 64) * REC_HEAD));
  }

  /** Records appended. */
  get length(): number {
    return this.n;
  }

  /** Bytes the block holds so far (headers and payloads, uncompressed). */
  get size(): number {
    return this.n * REC_HEAD + this.textAt;
  }

  /** Appends one record (the hot path: no allocation unless a buffer must grow). */
  push(kind: number, conn: number, seq: number, t: number, payload: string | Uint8Array): void {
    const binary = typeof payload !== 'string';
    if ((this.n + 1) * REC_HEAD > this.head.length) this.head = grown(this.head, this.n * REC_HEAD, (this.n + 1) * REC_HEAD);
    const units = binary ? this.pushBytes(payload) : this.pushText(payload);
    const h = this.head;
    const off = this.n * REC_HEAD;
    h[off] = kind;
    h[off + 1] = binary ? 1 : 0;
    h.writeUInt16LE(conn & 0xffff, off + 2);
    h.writeUInt32LE(units, off + 4);
    h.writeDoubleLE(seq, off + 8);
    h.writeDoubleLE(t, off + 16);
    if (this.n === 0) this.first = seq;
    this.last = seq;
    if (t < this.minT) this.minT = t;
    if (t > this.maxT) this.maxT = t;
    this.n++;
  }

  /** The uncompressed block body (record count, headers, payload text) and its summary; the builder starts the next block empty, keeping its buffers. */
  finish(): { readonly body: Buffer; readonly info: BlockInfo } {
    const count = Buffer.allocUnsafe(4);
    count.writeUInt32LE(this.n, 0);
    const body = Buffer.concat([count, this.head.subarray(0, this.n * REC_HEAD), this.text.subarray(0, this.textAt)]);
    const info = { count: this.n, firstSeq: this.first, lastSeq: this.last, minT: this.minT, maxT: this.maxT, rawBytes: body.length };
    this.n = 0;
    this.textAt = 0;
    this.minT = Infinity;
    this.maxT = -Infinity;
    return { body, info };
  }

  private pushText(s: string): number {
    if (this.textAt + s.length * UTF8_MAX > this.text.length) {
      const need = this.textAt + Buffer.byteLength(s, 'utf8');
      if (need > this.text.length) this.text = grown(this.text, this.textAt, need);
    }
    this.textAt += this.text.write(s, this.textAt);
    return s.length;
  }

  /** Bytes as latin1 characters in UTF-8 (what the reader turns back into the same bytes). */
  private pushBytes(b: Uint8Array): number {
    if (this.textAt + b.length * 2 > this.text.length) this.text = grown(this.text, this.textAt, this.textAt + b.length * 2);
    const t = this.text;
    let at = this.textAt;
    for (let i = 0; i < b.length; i++) {
      const c = b[i]!;
      if (c < 0x80) t[at++] = c;
      else {
        t[at++] = 0xc0 | (c >> 6);
        t[at++] = 0x80 | (c & 0x3f);
      }
    }
    this.textAt = at;
    return b.length;
  }
}

/** A buffer at least `need` bytes long (double the old one when that is more) holding the first `used` bytes of `b`. */
function grown(b: Buffer, used: number, need: number): Buffer {
  const out = Buffer.allocUnsafe(Math.max(need, b.length * 2));
  b.copy(out, 0, 0, used);
  return out;
}

/** Thrown for a capture file whose bytes are not what this module wrote: names the file and offset. */
export class CaptureCorruptError extends Error {
  constructor(
    readonly file: string,
    readonly offset: number,
    why: string,
  ) {
    super(`capture segment ${file} is corrupt at byte ${offset}: ${why}; the blocks before it are readable, the segment was left as it is`);
    this.name = 'CaptureCorruptError';
  }
}

/** Reads the records of one uncompressed block body back, in their order. */
export function decodeRecords(body: Buffer, venue: string, file: string, offset: number): CaptureRecord[] {
  const n = body.length >= 4 ? body.readUInt32LE(0) : -1;
  const textAt = 4 + n * REC_HEAD;
  if (n < 0 || textAt > body.length) throw new CaptureCorruptError(file, offset, 'the block body is shorter than its record headers');
  const text = body.toString('utf8', textAt);
  const out: CaptureRecord[] = new Array<CaptureRecord>(n);
  let pos = 0;
  for (let i = 0; i < n; i++) {
    const off = 4 + i * REC_HEAD;
    const kind = KIND_NAME[body[off]!];
    const len = body.readUInt32LE(off + 4);
    if (kind === undefined || pos + len > text.length) throw new CaptureCorruptError(file, offset, 'a record in the block is not one this version writes');
    const s = text.slice(pos, pos + len);
    pos += len;
    const payload = body[off + 1] === 0 ? s : Buffer.from(s, 'latin1');
    out[i] = { seq: body.readDoubleLE(off + 8), venue, t: body.readDoubleLE(off + 16), kind, conn: body.readUInt16LE(off + 2), payload };
  }
  return out;
}

/** Block header on disk: magic, compressed length, crc32 of the compressed bytes, then the BlockInfo. */
export const BLOCK_HEAD = 56;
const BLOCK_MAGIC = 0x4b4c4243; // "CBLK"

/** The header of a compressed block. */
export function blockHeader(compressed: Uint8Array, info: BlockInfo): Buffer {
  const h = Buffer.alloc(BLOCK_HEAD);
  h.writeUInt32LE(BLOCK_MAGIC, 0);
  h.writeUInt32LE(compressed.length, 4);
  h.writeUInt32LE(crc32(compressed), 8);
  h.writeUInt32LE(info.count, 12);
  h.writeDoubleLE(info.firstSeq, 16);
  h.writeDoubleLE(info.lastSeq, 24);
  h.writeDoubleLE(info.minT, 32);
  h.writeDoubleLE(info.maxT, 40);
  h.writeUInt32LE(info.rawBytes, 48);
  return h;
}

/** A block header read back: its info and where its compressed bytes are. */
export interface BlockRef extends BlockInfo {
  readonly offset: number;
  readonly length: number;
  readonly crc: number;
}

/** Parses a block header at `offset`; throws CaptureCorruptError when it is not one. */
export function parseBlockHeader(h: Buffer, file: string, offset: number): BlockRef {
  if (h.length < BLOCK_HEAD || h.readUInt32LE(0) !== BLOCK_MAGIC) throw new CaptureCorruptError(file, offset, 'no block header where one should start');
  return {
    offset,
    length: h.readUInt32LE(4),
    crc: h.readUInt32LE(8),
    count: h.readUInt32LE(12),
    firstSeq: h.readDoubleLE(16),
    lastSeq: h.readDoubleLE(24),
    minT: h.readDoubleLE(32),
    maxT: h.readDoubleLE(40),
    rawBytes: h.readUInt32LE(48),
  };
}

/** Whether the compressed bytes of a block match its header's checksum. */
export function blockIntact(ref: BlockRef, compressed: Uint8Array): boolean {
  return compressed.length === ref.length && crc32(compressed) === ref.crc;
}
