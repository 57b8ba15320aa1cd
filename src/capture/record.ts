import { crc32 } from 'node:zlib';

/**
 * What a capture record holds:
 * - `frame`: a WebSocket message, the text as received;
 * - `doc`: a REST document as the runtime got it, as JSON text;
 * - `event`: a normalized event a protocol built itself outside the frame path, or a `feed` event
 *   of the runtime (msgpack, so NaN and absent fields come back as they were);
 * - `reset`: the runtime reset the mapper on a close (payload: the instruments of a scoped reset as
 *   a JSON array, empty for the whole mapper);
 * - `flush`: the live per-turn flush ran (no payload).
 */
export const CAPTURE_KINDS = ['frame', 'doc', 'event', 'reset', 'flush'] as const;
export type CaptureKind = (typeof CAPTURE_KINDS)[number];

/** Kind codes on disk. */
export const KIND = { frame: 1, doc: 2, event: 3, reset: 4, flush: 5 } as const satisfies Record<CaptureKind, number>;
const KIND_NAME: readonly (CaptureKind | undefined)[] = [undefined, 'frame', 'doc', 'event', 'reset', 'flush'];

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
  /** Text of a frame/doc/reset; msgpack bytes of an event; empty for a flush. */
  readonly payload: string | Uint8Array;
}

/** The stream (directory) flush markers are kept in; not a venue label (labels have no leading underscore). */
export const FLUSH_STREAM = '_turn';

/** Bytes of one record's header inside a block: kind u8, binary u8, conn u16, length u32, seq f64, t f64. */
const REC_HEAD = 24;

/** Records of one stream waiting to be written, in columns (no object per record on the hot path). */
export class RecordColumns {
  kinds: number[] = [];
  conns: number[] = [];
  seqs: number[] = [];
  ts: number[] = [];
  payloads: (string | Uint8Array)[] = [];
  /** Payload characters/bytes buffered (an estimate of the block's raw size). */
  size = 0;

  get length(): number {
    return this.seqs.length;
  }

  push(kind: number, conn: number, seq: number, t: number, payload: string | Uint8Array): void {
    this.kinds.push(kind);
    this.conns.push(conn);
    this.seqs.push(seq);
    this.ts.push(t);
    this.payloads.push(payload);
    this.size += payload.length + REC_HEAD;
  }
}

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

/**
 * Serializes records into one uncompressed block body: the records' headers (kind, whether the
 * payload is bytes, connection, payload length in UTF-16 units, seq, receive time), then every
 * payload in one UTF-8 text (bytes as latin1 characters). One encode of one joined string instead
 * of a write per record: this runs on the event loop, the compression does not.
 */
export function encodeRecords(c: RecordColumns): { readonly body: Buffer; readonly info: BlockInfo } {
  const n = c.seqs.length;
  const head = Buffer.allocUnsafe(n * REC_HEAD);
  const texts: string[] = new Array<string>(n);
  let minT = Infinity;
  let maxT = -Infinity;
  for (let i = 0; i < n; i++) {
    const p = c.payloads[i]!;
    const text = typeof p === 'string' ? p : Buffer.from(p.buffer, p.byteOffset, p.byteLength).toString('latin1');
    const t = c.ts[i]!;
    if (t < minT) minT = t;
    if (t > maxT) maxT = t;
    const off = i * REC_HEAD;
    head[off] = c.kinds[i]!;
    head[off + 1] = typeof p === 'string' ? 0 : 1;
    head.writeUInt16LE(c.conns[i]! & 0xffff, off + 2);
    head.writeUInt32LE(text.length, off + 4);
    head.writeDoubleLE(c.seqs[i]!, off + 8);
    head.writeDoubleLE(t, off + 16);
    texts[i] = text;
  }
  const countBuf = Buffer.allocUnsafe(4);
  countBuf.writeUInt32LE(n, 0);
  const body = Buffer.concat([countBuf, head, Buffer.from(texts.join(''), 'utf8')]);
  const info = { count: n, firstSeq: c.seqs[0] ?? 0, lastSeq: c.seqs[n - 1] ?? 0, minT, maxT, rawBytes: body.length };
  return { body, info };
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
