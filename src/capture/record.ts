import { isAscii } from 'node:buffer';
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
/** A record kind's name by its number (`KIND`). */
export const KIND_NAME: readonly (CaptureKind | undefined)[] = [undefined, 'frame', 'doc', 'event', 'reset', 'flush', 'mapper'];

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

/** Buffers a builder keeps for reuse: at ingest's pace a block is compressed (milliseconds) long before the next one fills (tens of milliseconds), so one is enough. */
const MAX_SPARES = 1;

/**
 * A block buffer larger than this many blocks is let go once its block is finished instead of kept
 * for the next one. Grown by doubling from 72 KiB, the buffer of a stream's 1 MiB blocks ends at
 * 1,152 or 2,304 KiB (a block passes 1 MiB by its last record); anything larger was grown to fit one
 * large document (a venue's catalog of several MB), and kept, it and the spare copied from its
 * block stayed that size for good: at 108k markets an exchange venue's stream held 2 × 3.9 MiB
 * (heap snapshot of the service, branch `buf19`; 18 + 8 MB a stream before a bound of 4 MiB).
 */
const KEEP_BLOCKS = 2.5;

/** A capture block's size when none is given: Capture's default `blockBytes`, and what a builder's buffers are kept for. */
export const BLOCK_BYTES = 1024 * 1024;

/** Payload bytes a fresh buffer holds (grown as records need). */
const TEXT_BYTES = 64 * 1024;

/** Worst case of UTF-8 bytes per UTF-16 unit (a lone surrogate or a BMP character past U+07FF). */
const UTF8_MAX = 3;

/**
 * Records of one stream waiting to be written, already in the block's byte layout (see
 * `decodeRecords`): each append writes its 24-byte header into one buffer (through a DataView: the
 * Buffer `write*LE` methods cost more than the rest of the append together) and its payload's
 * UTF-8 into the block's buffer, after room left free in front for the record count and headers,
 * so nothing per record is kept on the heap (a frame's string dies young instead of being held
 * until its block is sealed). `finish` copies the headers into that room and hands the buffer
 * over as the body, filling a recycled one next: at ingest's pace a block is compressed long
 * before the next one fills, so the payloads are written once and never copied again on the event
 * loop, and no block allocates. A frame whose received bytes are at hand and plain ASCII is copied as those bytes (the
 * bytes its text encodes to, without encoding it again). The header's length counts UTF-16 units
 * of the payload text, as the reader slices the decoded text; a binary payload is stored as
 * latin1 characters in UTF-8.
 */
export class BlockBuilder {
  private head: Buffer;
  private view: DataView;
  /** The block's buffer: `room` bytes free for the count and headers, then the payloads up to `end`. */
  private buf: Buffer;
  private room: number;
  private end: number;
  /** The room a new buffer leaves for headers: grown when a block had more headers than its buffer's room. */
  private wantRoom: number;
  /** Buffers handed back by `recycle`, free for the next block. */
  private readonly spares: Buffer[] = [];
  /** Bodies handed out by `finish` and not yet handed back by `recycle`. */
  private out = 0;
  private n = 0;
  private first = 0;
  private last = 0;
  private minT = Infinity;
  private maxT = -Infinity;

  /** Buffers larger than this are not kept past their block (see KEEP_BLOCKS). */
  private readonly keepBytes: number;

  constructor(
    private readonly textBytes = TEXT_BYTES,
    blockBytes = BLOCK_BYTES,
  ) {
    this.keepBytes = KEEP_BLOCKS * blockBytes;
    this.wantRoom = Math.max(4 + REC_HEAD * 64, ceilPow2(textBytes / 8));
    this.head = Buffer.allocUnsafe(this.wantRoom);
    this.view = viewOf(this.head);
    this.room = this.wantRoom;
    this.end = this.room;
    this.buf = Buffer.allocUnsafeSlow(this.room + textBytes);
  }

  /** Records appended. */
  get length(): number {
    return this.n;
  }

  /** Bytes the block holds so far (headers and payloads, uncompressed). */
  get size(): number {
    return this.n * REC_HEAD + this.end - this.room;
  }

  /**
   * Appends one record (the hot path: no allocation unless a buffer must grow). `bytes`, for a text
   * payload: the bytes it was decoded from (a socket's frame), copied as they are when they are ASCII.
   */
  push(kind: number, conn: number, seq: number, t: number, payload: string | Uint8Array, bytes?: Uint8Array): void {
    const binary = typeof payload !== 'string';
    if ((this.n + 1) * REC_HEAD > this.head.length) {
      this.head = grown(this.head, this.n * REC_HEAD, (this.n + 1) * REC_HEAD);
      this.view = viewOf(this.head);
    }
    const units = binary ? this.pushBytes(payload) : bytes !== undefined && isAscii(bytes) ? this.pushAscii(bytes) : this.pushText(payload);
    const v = this.view;
    const off = this.n * REC_HEAD;
    v.setUint8(off, kind);
    v.setUint8(off + 1, binary ? 1 : 0);
    v.setUint16(off + 2, conn & 0xffff, true);
    v.setUint32(off + 4, units, true);
    v.setFloat64(off + 8, seq, true);
    v.setFloat64(off + 16, t, true);
    if (this.n === 0) this.first = seq;
    this.last = seq;
    if (t < this.minT) this.minT = t;
    if (t > this.maxT) this.maxT = t;
    this.n++;
  }

  /**
   * The uncompressed block body (record count, headers, payload text) and its summary; the builder
   * starts the next block empty. The body is the builder's buffer when a buffer handed back by
   * `recycle` is there for the next block to fill; else (the last body is still being compressed,
   * or there were more headers than the room left for them: later buffers leave room for as many)
   * the block is copied out into a buffer of its own, which becomes the spare once recycled: one
   * as large as the builder's when no other body is out (nothing else would come back as the
   * spare), else one of the block's own size. A writer behind on its compressions finishes blocks
   * while earlier ones wait, and each of those sized as the builder's buffer held 1.1 MiB for a
   * second's few KiB: at 108k markets 731 MiB of array buffers held 123 MiB of records.
   */
  finish(): { readonly body: Buffer; readonly info: BlockInfo } {
    const heads = this.n * REC_HEAD;
    const front = 4 + heads;
    const spare = this.spares.at(-1);
    let body: Buffer;
    if (front <= this.room && spare !== undefined && spare.length >= this.buf.length) {
      body = this.buf.subarray(this.room - front, this.end);
      this.buf = this.spares.pop()!;
    } else {
      // No buffer to fill next (the last body is still being compressed) or no room for the
      // headers: the block is copied out, into a buffer as large as this one when it is the only
      // body out (a later block fills it once it is recycled), else into one of its own size.
      const payload = this.end - this.room;
      if (front > this.room) this.wantRoom = ceilPow2(front);
      // An oversized buffer's block gets a body of its own size, and the builder a fresh buffer.
      const big = this.buf.length > this.keepBytes;
      const spareSized = !big && this.out === 0;
      body = Buffer.allocUnsafeSlow(spareSized ? Math.max(this.buf.length, this.wantRoom + payload) : front + payload).subarray(0, front + payload);
      this.buf.copy(body, front, this.room, this.end);
      if (big) this.buf = Buffer.allocUnsafeSlow(this.wantRoom + this.textBytes);
    }
    this.room = this.wantRoom;
    this.end = this.room;
    body.writeUInt32LE(this.n, 0);
    this.head.copy(body, 4, 0, heads);
    const info = { count: this.n, firstSeq: this.first, lastSeq: this.last, minT: this.minT, maxT: this.maxT, rawBytes: body.length };
    this.n = 0;
    this.minT = Infinity;
    this.maxT = -Infinity;
    this.out++;
    return { body, info };
  }

  /** Hands back a body `finish` gave once nothing reads it any more (it was compressed, or its compression failed), for a later block to fill. */
  recycle(body: Buffer): void {
    if (this.out > 0) this.out--;
    const bytes = body.buffer.byteLength;
    if (this.spares.length < MAX_SPARES && bytes >= this.buf.length && bytes <= this.keepBytes) this.spares.push(Buffer.from(body.buffer, 0, bytes));
  }

  /** Makes room for `more` payload bytes after `end`. */
  private reserve(more: number): void {
    if (this.end + more > this.buf.length) this.buf = grown(this.buf, this.end, this.end + more);
  }

  private pushText(s: string): number {
    if (this.end + s.length * UTF8_MAX > this.buf.length) this.reserve(Buffer.byteLength(s, 'utf8'));
    this.end += this.buf.write(s, this.end);
    return s.length;
  }

  /** ASCII bytes: their UTF-8 text is themselves, one UTF-16 unit each. */
  private pushAscii(b: Uint8Array): number {
    this.reserve(b.length);
    this.buf.set(b, this.end);
    this.end += b.length;
    return b.length;
  }

  /** Bytes as latin1 characters in UTF-8 (what the reader turns back into the same bytes). */
  private pushBytes(b: Uint8Array): number {
    this.reserve(b.length * 2);
    const t = this.buf;
    let at = this.end;
    for (let i = 0; i < b.length; i++) {
      const c = b[i]!;
      if (c < 0x80) t[at++] = c;
      else {
        t[at++] = 0xc0 | (c >> 6);
        t[at++] = 0x80 | (c & 0x3f);
      }
    }
    this.end = at;
    return b.length;
  }
}

function viewOf(b: Buffer): DataView {
  return new DataView(b.buffer, b.byteOffset, b.byteLength);
}

/** The least power of two at least `x`. */
function ceilPow2(x: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(1, x)));
}

/**
 * A buffer at least `need` bytes long (double the old one when that is more) holding the first
 * `used` bytes of `b`; one of its own (never a slice of Node's shared pool), as `recycle` reuses
 * a body's whole ArrayBuffer.
 */
function grown(b: Buffer, used: number, need: number): Buffer {
  const out = Buffer.allocUnsafeSlow(Math.max(need, b.length * 2));
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
