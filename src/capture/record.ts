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

/** Bytes of one record's header inside a block: kind u8, pad u8, conn u16, length u32, seq f64, t f64. */
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

/** Serializes records into one uncompressed block body. Text payloads are written as UTF-8. */
export function encodeRecords(c: RecordColumns): { readonly body: Buffer; readonly info: BlockInfo } {
  let cap = 0;
  for (let i = 0; i < c.payloads.length; i++) {
    const p = c.payloads[i]!;
    cap += REC_HEAD + (typeof p === 'string' ? p.length * 3 : p.length);
  }
  const buf = Buffer.allocUnsafe(cap);
  let off = 0;
  let minT = Infinity;
  let maxT = -Infinity;
  for (let i = 0; i < c.seqs.length; i++) {
    const p = c.payloads[i]!;
    const t = c.ts[i]!;
    if (t < minT) minT = t;
    if (t > maxT) maxT = t;
    buf[off] = c.kinds[i]!;
    buf[off + 1] = typeof p === 'string' ? 0 : 1;
    buf.writeUInt16LE(c.conns[i]! & 0xffff, off + 2);
    buf.writeDoubleLE(c.seqs[i]!, off + 8);
    buf.writeDoubleLE(t, off + 16);
    const n = typeof p === 'string' ? buf.write(p, off + REC_HEAD, 'utf8') : (buf.set(p, off + REC_HEAD), p.length);
    buf.writeUInt32LE(n, off + 4);
    off += REC_HEAD + n;
  }
  const info = { count: c.seqs.length, firstSeq: c.seqs[0] ?? 0, lastSeq: c.seqs[c.seqs.length - 1] ?? 0, minT, maxT, rawBytes: off };
  return { body: buf.subarray(0, off), info };
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
  const out: CaptureRecord[] = [];
  let off = 0;
  while (off < body.length) {
    if (off + REC_HEAD > body.length) throw new CaptureCorruptError(file, offset, 'a record header runs past its block');
    const kind = KIND_NAME[body[off]!];
    const n = body.readUInt32LE(off + 4);
    const start = off + REC_HEAD;
    if (kind === undefined || start + n > body.length) throw new CaptureCorruptError(file, offset, 'a record in the block is not one this version writes');
    const payload = body[off + 1] === 0 ? body.toString('utf8', start, start + n) : body.subarray(start, start + n);
    out.push({ seq: body.readDoubleLE(off + 8), venue, t: body.readDoubleLE(off + 16), kind, conn: body.readUInt16LE(off + 2), payload });
    off = start + n;
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
