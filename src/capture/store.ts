import { closeSync, mkdirSync, openSync, readdirSync, readSync, rmSync, statSync, statfsSync, type Stats } from 'node:fs';
import { open, readFile, rename, writeFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { unpack } from 'msgpackr';
import { brotliCompress, brotliDecompress, brotliDecompressSync, constants } from 'node:zlib';
import {
  BLOCK_HEAD,
  blockHeader,
  blockIntact,
  CaptureCorruptError,
  decodeRecords,
  parseBlockHeader,
  type BlockInfo,
  type BlockRef,
  type CaptureRecord,
} from './record.js';
import type { Checkpoint } from './checkpoint.js';

/**
 * The capture's storage layout, owned here and nowhere else (every reader and writer calls this
 * module): `DIR/<stream>/<hour>-<firstSeq>.seg`, one directory per venue (and `_turn` for flush
 * markers), one segment file per stream per hour of receive time, so retention drops old hours
 * whole (an unlink, no compaction). A process never appends to a file an earlier one wrote (the
 * first sequence number in the name is new each time), so a crash can leave at most a short last
 * block, which readers skip as an unfinished write; a block whose checksum does not match is
 * reported as corruption, naming the file and offset, and nothing rewrites it.
 *
 * A segment file: an 8-byte magic, then blocks: a 56-byte header (magic, compressed length,
 * crc32, record count, first/last seq, min/max receive time, raw length) and the block's records
 * compressed together with Brotli (node:zlib; compressed on libuv's thread pool, not the event loop; decompressed by the reader on its own thread, `blocks`).
 * Batching many frames into one block is what makes them small: frames of one venue repeat their
 * keys and ids.
 */
const FILE_MAGIC = Buffer.from('CBCAP01\n');
/** Bytes of a segment before its first block: a file this short is one being created (a reader on another thread may see it). */
export const SEGMENT_HEAD = FILE_MAGIC.length;
export const HOUR_MS = 3_600_000;
const SEGMENT = /^(\d+)-(\d+)\.seg$/;
/** Book checkpoints: `DIR/_checkpoints/<t>-<seq>.ckpt`, Brotli of msgpack, written whole then renamed into place. */
const CHECKPOINTS = '_checkpoints';
const CHECKPOINT = /^(\d+)-(\d+)\.ckpt$/;
const STREAM = /^[A-Za-z0-9_-]{1,64}$/;
/** How far past a damaged segment's first seq a new process starts (more records than a segment holds). */
const SEQ_SKIP = 1e9;

const compress = promisify(brotliCompress);
const decompress = promisify(brotliDecompress);
/**
 * Brotli quality of blocks and checkpoints, chosen by bench/capture-level.bench.ts (2026-11-28): on
 * 1 MiB blocks of Kalshi delta frames quality 2 stores a frame 5.5× smaller than it came, as 3 does,
 * for 20% less CPU; quality 1 saves 28% more CPU but only just makes 5×; 4 gains 5% in size for 2.4×
 * the CPU. It runs on libuv's thread pool: CPU the machine pays beside ingest, not event-loop time.
 */
export const BROTLI_QUALITY = 2;

/**
 * Brotli settings for `bytes` of input: the size hint lets the encoder size its tables once; an
 * output chunk of a quarter of the input holds a block's output whole (frames compress 5–8×), where
 * zlib's 16 KiB default took a dozen round trips between the thread pool and the event loop per
 * block, each a stream write, a callback and a Buffer on the main thread.
 */
function brotliOptions(bytes: number): { readonly params: Record<number, number>; readonly chunkSize: number } {
  return {
    params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_LGWIN]: 22, [constants.BROTLI_PARAM_SIZE_HINT]: bytes },
    chunkSize: Math.max(64 * 1024, Math.ceil(bytes / 4)),
  };
}

/** One segment file. */
export interface SegmentInfo {
  readonly stream: string;
  /** Start of its hour of receive time (ms since epoch). */
  readonly hour: number;
  readonly firstSeq: number;
  readonly file: string;
  readonly bytes: number;
}

/** Thrown by `append` instead of writing when the disk is (nearly) full: nothing was written. */
export class CaptureDiskFullError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CaptureDiskFullError';
  }
}

export interface StoreOptions {
  /** Writing stops while the filesystem has less than this free (default 64 MiB). */
  readonly minFreeBytes?: number;
  /** Free bytes of the filesystem holding `dir` (default: statfs; tests give their own disk). */
  readonly freeBytes?: (dir: string) => number;
}

interface OpenSegment {
  readonly hour: number;
  readonly file: string;
  readonly fh: FileHandle;
  size: number;
}

/** A block read back. */
export interface ReadBlock {
  readonly ref: BlockRef;
  readonly records: CaptureRecord[];
}

export class CaptureStore {
  private readonly writing = new Map<string, OpenSegment>();
  private readonly minFree: number;
  private readonly freeOf: (dir: string) => number;
  /** Short last blocks met by readers (an unfinished write of a process that died). */
  tornTails = 0;
  /** The last compression handed to the thread pool (see `seal`). */
  private compressing: Promise<unknown> = Promise.resolve();

  constructor(
    readonly dir: string,
    opts: StoreOptions = {},
  ) {
    this.minFree = opts.minFreeBytes ?? 64 * 1024 * 1024;
    this.freeOf = opts.freeBytes ?? freeBytes;
    mkdirSync(dir, { recursive: true });
  }

  /** The streams (venues, `_turn`) that have segments. */
  streams(): string[] {
    return readdirSync(this.dir, { withFileTypes: true })
      .filter((d) => d.isDirectory() && STREAM.test(d.name) && d.name !== CHECKPOINTS)
      .map((d) => d.name)
      .sort();
  }

  /** Every segment, oldest hour first (and by first seq within an hour). */
  segments(stream?: string): SegmentInfo[] {
    const out: SegmentInfo[] = [];
    for (const s of stream === undefined ? this.streams() : [stream]) {
      let names: string[];
      try {
        names = readdirSync(join(this.dir, s));
      } catch {
        continue;
      }
      for (const name of names) {
        const m = SEGMENT.exec(name);
        if (!m) continue;
        const file = join(this.dir, s, name);
        const st = statOrUndefined(file);
        if (st) out.push({ stream: s, hour: Number(m[1]), firstSeq: Number(m[2]), file, bytes: st.size });
      }
    }
    return out.sort((a, b) => a.hour - b.hour || a.firstSeq - b.firstSeq);
  }

  /** Bytes on disk of every segment and checkpoint. */
  bytes(): number {
    let n = 0;
    for (const s of this.segments()) n += s.bytes;
    for (const c of this.checkpoints()) n += statOrUndefined(c.file)?.size ?? 0;
    return n;
  }

  /** The receive time the oldest kept segment starts at (undefined: nothing kept). */
  oldest(): number | undefined {
    return this.segments()[0]?.hour;
  }

  /** The last sequence number written by any stream (0 when none): a process continues after it. */
  lastSeq(): number {
    const last = new Map<string, SegmentInfo>();
    for (const s of this.segments()) {
      const prev = last.get(s.stream);
      if (!prev || s.firstSeq > prev.firstSeq) last.set(s.stream, s);
    }
    let max = 0;
    for (const s of last.values()) {
      max = Math.max(max, s.firstSeq);
      try {
        for (const ref of this.headers(s.file)) if (ref.lastSeq > max) max = ref.lastSeq;
      } catch (e) {
        // A damaged segment is left as it is; the new one starts past every seq its name or
        // readable headers show, and one hour-sized step past that so no seq can repeat.
        if (!(e instanceof CaptureCorruptError)) throw e;
        max += SEQ_SKIP;
      }
    }
    return max;
  }

  /** Whether twice the free-space margin is free again (a paused capture resumes then). */
  hasRoom(): boolean {
    return this.freeOf(this.dir) >= 2 * this.minFree;
  }

  /**
   * Compresses a block body (BlockBuilder.finish) or a checkpoint with Brotli on libuv's thread
   * pool, off the event loop, one compression at a time, in the order asked:
   * the capture flow's flush seals every venue's block at once, and four pool threads compressing
   * together beside the event loop on a 2-core host took its core from it for a time slice (issue
   * 34's fan-out tail); one thread at a time leaves a core to the event loop. The throughput is
   * far above the capture's (a MiB block takes milliseconds), and the writer's bound on pending
   * bytes holds as before.
   */
  seal(bytes: Buffer): Promise<Buffer> {
    const out = this.compressing.then(() => compress(bytes, brotliOptions(bytes.length)));
    this.compressing = out.catch(() => undefined);
    return out;
  }

  /**
   * Appends a sealed block to `stream`'s segment of the block's hour (a new file for a new hour).
   * Refuses (CaptureDiskFullError, nothing written) when the disk is nearly full; a write that fails
   * half-way is cut back off the file, so a segment never holds a partial block of this process.
   * Calls for one stream must not overlap (the writer chains them).
   */
  async append(stream: string, compressed: Buffer, info: BlockInfo): Promise<number> {
    if (!STREAM.test(stream)) throw new Error(`capture stream name ${JSON.stringify(stream)} is not usable as a directory name`);
    const need = BLOCK_HEAD + compressed.length;
    const free = this.freeOf(this.dir);
    if (free - need < this.minFree)
      throw new CaptureDiskFullError(`disk nearly full: ${free} bytes free in ${this.dir}, below the ${this.minFree}-byte margin; capture paused`);
    const hour = Math.floor(info.minT / HOUR_MS) * HOUR_MS;
    const seg = await this.segmentFor(stream, hour, info.firstSeq);
    const at = seg.size;
    try {
      await seg.fh.writev([blockHeader(compressed, info), compressed], at);
      seg.size = at + need;
    } catch (e) {
      await seg.fh.truncate(at).catch(() => undefined);
      throw e;
    }
    return need;
  }

  private async segmentFor(stream: string, hour: number, firstSeq: number): Promise<OpenSegment> {
    const cur = this.writing.get(stream);
    if (cur && cur.hour === hour) return cur;
    if (cur) {
      this.writing.delete(stream);
      await cur.fh.close();
    }
    mkdirSync(join(this.dir, stream), { recursive: true });
    const file = join(this.dir, stream, `${hour}-${firstSeq}.seg`);
    const fh = await open(file, 'wx');
    try {
      await fh.write(FILE_MAGIC, 0, FILE_MAGIC.length, 0);
    } catch (e) {
      await fh.close();
      rmSync(file, { force: true });
      throw e;
    }
    const seg = { hour, file, fh, size: FILE_MAGIC.length };
    this.writing.set(stream, seg);
    return seg;
  }

  /** The block headers of a segment, in order, up to a short last block (not read further). */
  headers(file: string): BlockRef[] {
    const fd = openSync(file, 'r');
    try {
      const size = statSync(file).size;
      checkMagic(fd, file);
      const out: BlockRef[] = [];
      const h = Buffer.alloc(BLOCK_HEAD);
      for (let off = FILE_MAGIC.length; off + BLOCK_HEAD <= size;) {
        readSync(fd, h, 0, BLOCK_HEAD, off);
        const ref = parseBlockHeader(h, file, off);
        if (off + BLOCK_HEAD + ref.length > size) break;
        out.push(ref);
        off += BLOCK_HEAD + ref.length;
      }
      return out;
    } finally {
      closeSync(fd);
    }
  }

  /**
   * The blocks of one segment whose receive times meet [from, to], decompressed, in order (from the
   * block at byte `startAt`, a block's end a reader reached before, when given). A short last block
   * is skipped (counted in `tornTails`); a bad checksum or header throws CaptureCorruptError.
   */
  async *blocks(seg: SegmentInfo, from: number, to: number, startAt: number = FILE_MAGIC.length): AsyncGenerator<ReadBlock> {
    const fh = await open(seg.file, 'r');
    try {
      const size = (await fh.stat()).size;
      const magic = Buffer.alloc(FILE_MAGIC.length);
      await fh.read(magic, 0, magic.length, 0);
      if (!magic.equals(FILE_MAGIC)) throw new CaptureCorruptError(seg.file, 0, 'not a crossbook capture segment (bad magic)');
      const bytes = new ReadAhead(fh, size);
      // Read ahead only while blocks are wanted: a window's start skips blocks by their headers alone.
      let wanted = true;
      for (let off = Math.max(startAt, FILE_MAGIC.length); off < size;) {
        if (off + BLOCK_HEAD > size) {
          this.tornTails++;
          return;
        }
        const ref = parseBlockHeader(await bytes.at(off, BLOCK_HEAD, wanted), seg.file, off);
        const end = off + BLOCK_HEAD + ref.length;
        if (end > size) {
          this.tornTails++;
          return;
        }
        wanted = ref.maxT >= from && ref.minT <= to;
        if (wanted) {
          const compressed = await bytes.at(off + BLOCK_HEAD, ref.length, true);
          if (!blockIntact(ref, compressed)) throw new CaptureCorruptError(seg.file, off, 'block checksum does not match');
          let body: Buffer;
          try {
            // On this thread, in one output chunk of the block's raw size: for the capture's blocks
            // (16 KiB raw on average, 0.4 MiB at most) the thread-pool round trip of an async
            // decompression cost this thread more than decompressing here (bench: 3,832 blocks,
            // 270 ms of CPU here against 270-410 ms of event-loop time and twice the CPU async), and
            // every reader does more work per block on this thread than the decompression itself.
            body = brotliDecompressSync(compressed, { chunkSize: Math.min(Math.max(ref.rawBytes, 1024), MAX_CHUNK) });
          } catch (e) {
            throw new CaptureCorruptError(seg.file, off, `block does not decompress (${(e as Error).message})`);
          }
          yield { ref, records: decodeRecords(body, seg.stream, seg.file, off) };
        }
        off = end;
      }
    } finally {
      await fh.close();
    }
  }

  /**
   * Writes a checkpoint (refused like `append` when the disk is nearly full); a reader never sees
   * half of one. `cp`: its msgpack bytes (`packCheckpoint`) with its `seq` and `t`.
   */
  async writeCheckpoint(cp: { readonly seq: number; readonly t: number; readonly packed: Buffer }): Promise<number> {
    const packed = cp.packed;
    const bytes = await this.seal(packed);
    const free = this.freeOf(this.dir);
    if (free - bytes.length < this.minFree) throw new CaptureDiskFullError(`disk nearly full: ${free} bytes free in ${this.dir}; checkpoint not written`);
    const dir = join(this.dir, CHECKPOINTS);
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${cp.t}-${cp.seq}.ckpt`);
    await writeFile(`${file}.tmp`, bytes);
    await rename(`${file}.tmp`, file);
    return bytes.length;
  }

  /** The checkpoints kept, oldest first. */
  checkpoints(): { readonly t: number; readonly seq: number; readonly file: string }[] {
    const dir = join(this.dir, CHECKPOINTS);
    return namesMatching(dir, CHECKPOINT)
      .map((m) => ({ t: Number(m[1]), seq: Number(m[2]), file: join(dir, m[0]) }))
      .sort((a, b) => a.t - b.t || a.seq - b.seq);
  }

  /** The latest checkpoint taken at or before `t` (undefined: none); a damaged one is a CaptureCorruptError. */
  async checkpointAt(t: number): Promise<Checkpoint | undefined> {
    const c = this.checkpoints()
      .filter((x) => x.t <= t)
      .at(-1);
    if (c === undefined) return undefined;
    try {
      return unpack(await decompress(await readFile(c.file))) as Checkpoint;
    } catch (e) {
      throw new CaptureCorruptError(c.file, 0, `checkpoint does not read back (${(e as Error).message})`);
    }
  }

  /**
   * Retention: removes whole segments whose hour ended more than `maxAgeMs` before `now`, then the
   * oldest segments until the total is at most `maxBytes`. Segments being written are kept.
   */
  prune(now: number, maxAgeMs: number, maxBytes: number): { readonly removed: number; readonly bytes: number } {
    const open = new Set([...this.writing.values()].map((s) => s.file));
    const segs = this.segments().filter((s) => !open.has(s.file));
    let total = this.bytes();
    let removed = 0;
    let freed = 0;
    for (const s of segs) {
      if (s.hour + HOUR_MS > now - maxAgeMs && total <= maxBytes) break;
      rmSync(s.file, { force: true });
      total -= s.bytes;
      freed += s.bytes;
      removed++;
    }
    // Checkpoints older than the oldest segment kept serve no window any more.
    const oldest = this.oldest() ?? now;
    for (const c of this.checkpoints()) if (c.t < oldest) rmSync(c.file, { force: true });
    return { removed, bytes: freed };
  }

  /** Closes the segments being written. */
  async close(): Promise<void> {
    const segs = [...this.writing.values()];
    this.writing.clear();
    for (const s of segs) await s.fh.close();
  }
}

function checkMagic(fd: number, file: string): void {
  const m = Buffer.alloc(FILE_MAGIC.length);
  readSync(fd, m, 0, m.length, 0);
  if (!m.equals(FILE_MAGIC)) throw new CaptureCorruptError(file, 0, 'not a crossbook capture segment (bad magic)');
}

/** The names in `dir` that `re` matches, as its matches (none when `dir` cannot be read). */
export function namesMatching(dir: string, re: RegExp): RegExpExecArray[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.map((n) => re.exec(n)).filter((m): m is RegExpExecArray => m !== null);
}

function statOrUndefined(file: string): Stats | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}

/** Bytes an unprivileged writer may still use on the filesystem holding `dir`. */
function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}

/** Bytes a segment reader asks the file for at once (a block's header and body, and the blocks after, in one read). */
const READ_AHEAD = 1 << 20;
/** The largest decompression output chunk (a damaged header's raw length must not size a buffer). */
const MAX_CHUNK = 64 << 20;

/**
 * A segment's bytes read a megabyte at a time: one read of the thread pool brings a block's header,
 * its body and the blocks after, where a read per header and per body cost two round trips per block.
 * Each read fills a fresh buffer, so what `at` handed out stays valid while it is decompressed.
 */
class ReadAhead {
  private buf: Buffer = Buffer.alloc(0);
  private start = 0;

  constructor(
    private readonly fh: FileHandle,
    private readonly size: number,
  ) {}

  /** `n` bytes at `off` (fewer when the file ended); `ahead`: read past them, else read just them when not held. */
  async at(off: number, n: number, ahead: boolean): Promise<Buffer> {
    const rel = off - this.start;
    if (rel >= 0 && rel + n <= this.buf.length) return this.buf.subarray(rel, rel + n);
    const len = Math.max(0, Math.min(ahead ? Math.max(n, READ_AHEAD) : n, this.size - off));
    const b = Buffer.allocUnsafe(len);
    const { bytesRead } = await this.fh.read(b, 0, len, off);
    this.buf = b.subarray(0, bytesRead);
    this.start = off;
    return this.buf.subarray(0, Math.min(n, bytesRead));
  }
}
