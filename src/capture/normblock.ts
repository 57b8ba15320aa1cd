import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32 } from 'node:zlib';
import { lz4CompressSync, lz4Uncompress } from './lz4.js';
import type { VenueConfig } from '../config/schema.js';
import type { NormalizedType } from '../core/types.js';
import { TYPE_GROUPS } from './ndjson.js';

/**
 * The byte layout of the normalized cache (src/capture/normcache.ts): blocks of one venue's
 * normalized events as /replay writes them, each event its finished NDJSON line plus what the
 * route filters on (record seq and receive time, type, market), so serving a window is copying
 * bytes, with no mapper and no JSON.stringify.
 *
 * A block on disk is its body compressed with LZ4 (`packNormBlock`): a read decompresses every
 * byte it serves, so the codec is chosen for decompression speed (bench/replay.bench.ts; Brotli,
 * which the capture log itself keeps for its ratio, was most of a read's CPU).
 *
 * A block body (uncompressed; 8-byte aligned columns): a 16-byte head (event count, bytes of the
 * market table, bytes of the lines), then seq (f64), receive time of the event's record (f64), the
 * end of each line in the lines (u32), its market's index in the table (i32, -1: no market), its
 * type code (u8), the market table (a JSON array of API market ids), the lines ("…\n" each).
 */

/** The types a block codes, in code order (code 255: a type no group selects, never served). */
export const TYPE_CODES: readonly NormalizedType[] = Object.values(TYPE_GROUPS).flat();
const TYPE_CODE = new Map<NormalizedType, number>(TYPE_CODES.map((t, i) => [t, i]));
export const NO_TYPE = 255;

/** The code of a type (NO_TYPE when no group selects it). */
export function typeCode(t: NormalizedType): number {
  return TYPE_CODE.get(t) ?? NO_TYPE;
}

/** A block read back (or sealed and not yet written): columns and the lines' bytes. */
export interface NormBlock {
  readonly count: number;
  readonly seq: Float64Array;
  readonly t: Float64Array;
  readonly end: Uint32Array;
  readonly market: Int32Array;
  readonly type: Uint8Array;
  readonly markets: readonly string[];
  readonly lines: Buffer;
}

/** Thrown for a cache entry whose bytes are not what the writer wrote: the route logs it and serves the frames. */
export class NormCacheCorruptError extends Error {
  constructor(file: string, offset: number, why: string) {
    super(`normalized cache ${file} is unusable at byte ${offset}: ${why}`);
    this.name = 'NormCacheCorruptError';
  }
}

const HEAD = 16;
const pad8 = (n: number): number => (n + 7) & ~7;

/** Events of one block being filled: columns as arrays, lines as one string. */
export class NormBlockBuilder {
  seq: number[] = [];
  t: number[] = [];
  end: number[] = [];
  market: number[] = [];
  type: number[] = [];
  private marketIdx = new Map<string, number>();
  private lines: string[] = [];
  private bytes = 0;

  get count(): number {
    return this.seq.length;
  }

  /** Bytes of lines held. */
  get size(): number {
    return this.bytes;
  }

  /** One event: its record's seq and receive time, type, API market id (undefined: none) and line (without newline). */
  push(seq: number, t: number, type: NormalizedType, market: string | undefined, line: string): void {
    this.seq.push(seq);
    this.t.push(t);
    this.type.push(typeCode(type));
    let mi = -1;
    if (market !== undefined) {
      mi = this.marketIdx.get(market) ?? -1;
      if (mi < 0) this.marketIdx.set(market, (mi = this.marketIdx.size));
    }
    this.market.push(mi);
    const l = `${line}\n`;
    this.lines.push(l);
    this.bytes += Buffer.byteLength(l, 'utf8');
    this.end.push(this.bytes);
  }

  /** The block body, and the builder emptied for the next block. */
  finish(): Buffer {
    const n = this.count;
    const markets = Buffer.from(JSON.stringify([...this.marketIdx.keys()]), 'utf8');
    const lines = Buffer.from(this.lines.join(''), 'utf8');
    const colBytes = pad8(HEAD + 16 * n + 8 * n + n);
    const body = Buffer.alloc(colBytes + markets.length + lines.length);
    body.writeUInt32LE(n, 0);
    body.writeUInt32LE(markets.length, 4);
    body.writeUInt32LE(lines.length, 8);
    let off = HEAD;
    for (let i = 0; i < n; i++, off += 8) body.writeDoubleLE(this.seq[i]!, off);
    for (let i = 0; i < n; i++, off += 8) body.writeDoubleLE(this.t[i]!, off);
    for (let i = 0; i < n; i++, off += 4) body.writeUInt32LE(this.end[i]!, off);
    for (let i = 0; i < n; i++, off += 4) body.writeInt32LE(this.market[i]!, off);
    for (let i = 0; i < n; i++) body[off++] = this.type[i]!;
    markets.copy(body, colBytes);
    lines.copy(body, colBytes + markets.length);
    this.seq = [];
    this.t = [];
    this.end = [];
    this.market = [];
    this.type = [];
    this.marketIdx = new Map();
    this.lines = [];
    this.bytes = 0;
    return body;
  }
}

/** Reads a block body back; throws NormCacheCorruptError when its parts do not add up. */
export function decodeNormBlock(body: Buffer, file: string, offset: number): NormBlock {
  if (body.length < HEAD) throw new NormCacheCorruptError(file, offset, 'the block body is shorter than its head');
  const n = body.readUInt32LE(0);
  const mBytes = body.readUInt32LE(4);
  const lBytes = body.readUInt32LE(8);
  const colBytes = pad8(HEAD + 25 * n);
  if (colBytes + mBytes + lBytes !== body.length) throw new NormCacheCorruptError(file, offset, 'the block body does not have the length its head says');
  // Typed arrays need aligned memory: the columns in place when the body is aligned (a fresh
  // decompressed buffer is), else one copy into a fresh buffer.
  const aligned = body.byteOffset % 8 === 0;
  const cols = aligned ? body.buffer : new ArrayBuffer(colBytes);
  const at = aligned ? body.byteOffset : 0;
  if (!aligned) new Uint8Array(cols).set(body.subarray(0, colBytes));
  const end = new Uint32Array(cols, at + HEAD + 16 * n, n);
  if (n > 0 && end[n - 1] !== lBytes) throw new NormCacheCorruptError(file, offset, 'the lines do not end where the block says');
  let markets: unknown;
  try {
    markets = JSON.parse(body.toString('utf8', colBytes, colBytes + mBytes));
  } catch {
    markets = undefined;
  }
  if (!Array.isArray(markets) || !markets.every((m) => typeof m === 'string'))
    throw new NormCacheCorruptError(file, offset, 'the market table does not read back');
  return {
    count: n,
    seq: new Float64Array(cols, at + HEAD, n),
    t: new Float64Array(cols, at + HEAD + 8 * n, n),
    end,
    market: new Int32Array(cols, at + HEAD + 20 * n, n),
    type: new Uint8Array(cols, at + HEAD + 24 * n, n),
    markets: markets as string[],
    lines: body.subarray(colBytes + mBytes),
  };
}

/** A block on disk: where it is and what it covers. */
export interface NormBlockRef {
  readonly offset: number;
  readonly length: number;
  readonly crc: number;
  readonly count: number;
  readonly firstSeq: number;
  readonly lastSeq: number;
  /** Bytes of the block body once decompressed. */
  readonly raw: number;
  /** Receive times of its first and last events (kept by the writer, not on disk: a read seeks by them). */
  readonly firstT: number;
  readonly lastT: number;
}

/** Block header on disk: magic, compressed length, crc32 of the compressed bytes, event count, first and last seq, body length. */
export const NORM_BLOCK_HEAD = 40;
const NORM_BLOCK_MAGIC = 0x4d524e43; // "CNRM"

export function normBlockHeader(compressed: Buffer, count: number, firstSeq: number, lastSeq: number, raw: number): Buffer {
  const h = Buffer.alloc(NORM_BLOCK_HEAD);
  h.writeUInt32LE(NORM_BLOCK_MAGIC, 0);
  h.writeUInt32LE(compressed.length, 4);
  h.writeUInt32LE(crc32(compressed), 8);
  h.writeUInt32LE(count, 12);
  h.writeDoubleLE(firstSeq, 16);
  h.writeDoubleLE(lastSeq, 24);
  h.writeUInt32LE(raw, 32);
  return h;
}

/** Checks a header read back against what the writer remembers of the block. */
export function checkNormBlock(h: Buffer, ref: NormBlockRef, file: string): void {
  if (h.length < NORM_BLOCK_HEAD || h.readUInt32LE(0) !== NORM_BLOCK_MAGIC)
    throw new NormCacheCorruptError(file, ref.offset, 'no block header where one should start');
  if (h.readUInt32LE(4) !== ref.length || h.readUInt32LE(12) !== ref.count || h.readDoubleLE(16) !== ref.firstSeq || h.readUInt32LE(32) !== ref.raw)
    throw new NormCacheCorruptError(file, ref.offset, 'the block header is not the one written');
}

/** Whether a block's compressed bytes match its checksum. */
export function normBlockIntact(ref: NormBlockRef, compressed: Buffer): boolean {
  return compressed.length === ref.length && crc32(compressed) === ref.crc;
}

/**
 * A block body compressed for disk (LZ4 on the calling thread, the history index's: src/capture/lz4.ts
 * says why not the addon's). LZ4 keeps a body in about a fifth of its bytes where Brotli kept a
 * tenth, and decompresses several times faster.
 */
export async function packNormBlock(body: Buffer): Promise<Buffer> {
  return lz4CompressSync(body);
}

/** A block body back from its compressed bytes (on the pool); throws when they do not give `raw` bytes. */
export async function unpackNormBlock(compressed: Buffer, raw: number): Promise<Buffer> {
  const body = await lz4Uncompress(compressed);
  if (body.length !== raw) throw new Error(`it gives ${body.length} bytes, not the ${raw} written`);
  return body;
}

/** Bumped when the block layout or codec changes (3: LZ4 blocks; 2: Brotli). */
export const NORM_FORMAT = 3;

/**
 * The version a cache entry is keyed by: a hash of the code that makes the lines (every protocol's
 * raw types and mappers under src/venues/, the frame path, the replay feed and the line writer)
 * and of the venues' configuration (slugs and id prefixes are in the lines). Any change to a mapper
 * gives a new version, so a cache written before it is not served: the route maps the frames again
 * and serves the fix.
 */
export function normalizerVersion(venues: readonly VenueConfig[], code: readonly string[] = normalizerSources(), format = NORM_FORMAT): string {
  const h = createHash('sha256');
  h.update(`format ${format}\n`);
  h.update(JSON.stringify(venues));
  for (const file of code) {
    h.update(`\n${file.slice(file.lastIndexOf('src'))}\n`);
    h.update(readFileSync(file));
  }
  return h.digest('hex').slice(0, 32);
}

/** The source files a normalized line depends on (as .ts under tsx and vitest, as .js when built). */
function normalizerSources(): string[] {
  const here = dirname(fileURLToPath(import.meta.url));
  const src = dirname(here);
  const code = /\.(ts|js)$/;
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (code.test(name) && !name.endsWith('.d.ts')) out.push(p);
    }
  };
  walk(join(src, 'venues'));
  for (const f of ['capture/replay', 'capture/ndjson', 'capture/normblock', 'core/types', 'core/price', 'core/book'])
    for (const ext of ['.ts', '.js'])
      try {
        statSync(join(src, f + ext));
        out.push(join(src, f + ext));
      } catch {
        // Only one of the two exists.
      }
  return out;
}
