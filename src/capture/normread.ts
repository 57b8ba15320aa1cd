import { open, type FileHandle } from 'node:fs/promises';
import type { Logger } from '../core/log.js';
import { endLine, TYPE_GROUPS, type EventFilter, TYPE_GROUP_NAMES } from './ndjson.js';
import {
  checkNormBlock,
  decodeNormBlock,
  NORM_BLOCK_HEAD,
  normBlockIntact,
  NormCacheCorruptError,
  typeCode,
  unpackNormBlock,
  type NormBlock,
} from './normblock.js';
import { fileVersion, type NormVenueSnapshot } from './normcache.js';

/**
 * Bytes of NDJSON gathered before a chunk is handed on (a few chunks in memory: the stream's
 * backpressure bound). 1 MiB: each chunk costs a turn of the pump and two messages between the read
 * thread and the main thread (src/capture/normreader.ts); the pump writes it in pieces that fit
 * uWS's cork buffer (src/server/http.ts STREAM_PIECE), which is what once broke the chunk framing
 * of larger chunks.
 */
export const NORM_CHUNK = 1024 * 1024;
const CHUNK = NORM_CHUNK;
/** Blocks per venue read and decompressed ahead of the merge (each at most about 1 MiB of lines). */
const AHEAD = 3;

/** What a cached replay serves: the window, the filter, and where to go when the cache fails. */
export interface CachedReplay {
  readonly from: number;
  readonly to: number;
  readonly filter: EventFilter;
  /** The frames path for the rest of the window: events of records after `afterSeq`, lines counted from `count`, then the end line. */
  readonly fallback: (afterSeq: number, count: number) => AsyncIterable<string>;
  readonly log: Logger;
  /** Told when the cache failed and the frames path took over. */
  readonly onFallback?: (() => void) | undefined;
}

/**
 * The lines of a window from the normalized cache (snapshots of NormCache), merged across venues
 * by seq, copied into chunks of NORM_CHUNK bytes (each the consumer's until it asks for the next: its
 * buffer is filled again then), then `{"type":"end","count":N}`. Each venue's part starts at
 * its first event received at or after `from` (blocks before it are not read: their receive times
 * are in the snapshot) and ends at its last at or before `to`. Reads AHEAD blocks per
 * venue ahead (decompressed in parallel on libuv's pool while the merge copies). An entry that does not read back
 * (wrong version, checksum, truncated) is logged and the rest of the window comes from the frames
 * path, from the first record not yet served: the answer is whole and the same either way.
 */
export async function* cachedLines(snaps: readonly NormVenueSnapshot[], req: CachedReplay): AsyncGenerator<Uint8Array | string> {
  const types = new Uint8Array(256);
  for (const g of req.filter.types ?? TYPE_GROUP_NAMES) for (const t of TYPE_GROUPS[g]) types[typeCode(t)] = 1;
  const all = req.filter.types === undefined || req.filter.types.length === TYPE_GROUP_NAMES.length;
  const sel = { types, markets: req.filter.markets, plain: all && req.filter.markets === undefined };
  const out = new Out();
  let last = -Infinity;
  const cursors = snaps.map((s) => new Cursor(s, req.from, req.to));
  try {
    let live: Cursor[];
    try {
      await Promise.all(cursors.map((c) => c.start()));
      live = cursors.filter((c) => !c.done());
    } catch (e) {
      yield* fallBack(req, e, out, last);
      return;
    }
    while (live.length > 0) {
      // The venue with the smallest next seq takes every event below the next venue's head.
      let best = 0;
      for (let i = 1; i < live.length; i++) if (live[i]!.head() < live[best]!.head()) best = i;
      let limit = Infinity;
      for (let i = 0; i < live.length; i++) if (i !== best) limit = Math.min(limit, live[i]!.head());
      const c = live[best]!;
      last = c.take(limit, sel, out);
      for (const chunk of out.full()) {
        yield chunk;
        // The consumer is done with a chunk when it asks for the next: its buffer is filled again.
        out.recycle(chunk);
      }
      if (c.empty()) {
        try {
          await c.advance();
        } catch (e) {
          yield* fallBack(req, e, out, last);
          return;
        }
        if (c.done()) live.splice(best, 1);
      }
    }
  } finally {
    for (const c of cursors) await c.close();
  }
  yield* out.rest();
  yield endLine(out.count);
}

/** The log line of a cache that failed, what is gathered, then the frames path from after `last`. */
async function* fallBack(req: CachedReplay, e: unknown, out: Out, last: number): AsyncGenerator<Uint8Array | string> {
  req.log.warn(
    { err: e instanceof Error ? e.message : String(e), resumeAfterSeq: last },
    'replay: the normalized cache could not be read; the rest of the window is mapped from the captured frames',
  );
  req.onFallback?.();
  yield* out.rest();
  yield* req.fallback(last, out.count);
}

/** The output chunks being filled (their buffers used again once handed on: a read allocates a few). */
class Out {
  count = 0;
  private buf: Buffer = Buffer.allocUnsafe(CHUNK);
  private pos = 0;
  private ready: Buffer[] = [];
  private readonly spare: Buffer[] = [];

  /** A chunk handed on and written (or copied) by the consumer: its buffer takes the next lines. */
  recycle(chunk: Buffer): void {
    if (this.spare.length < 2 && chunk.byteOffset === 0 && chunk.buffer.byteLength === CHUNK) this.spare.push(Buffer.from(chunk.buffer, 0, CHUNK));
  }

  /** Copies lines[from, to) (whole lines) in. */
  copy(lines: Buffer, from: number, to: number): void {
    while (from < to) {
      if (this.pos === CHUNK) this.cut();
      const n = Math.min(to - from, CHUNK - this.pos);
      lines.copy(this.buf, this.pos, from, from + n);
      this.pos += n;
      from += n;
    }
  }

  /** The chunks filled so far. */
  full(): Buffer[] {
    if (this.ready.length === 0) return NONE;
    const r = this.ready;
    this.ready = [];
    return r;
  }

  /** Every chunk, the part-filled one included. */
  rest(): Buffer[] {
    if (this.pos > 0) this.cut();
    return this.full();
  }

  private cut(): void {
    this.ready.push(this.buf.subarray(0, this.pos));
    this.buf = this.spare.pop() ?? Buffer.allocUnsafe(CHUNK);
    this.pos = 0;
  }
}
const NONE: Buffer[] = [];

interface Selection {
  readonly types: Uint8Array;
  readonly markets: ReadonlySet<string> | undefined;
  /** Nothing filtered out: a run of events is one copy. */
  readonly plain: boolean;
}

/** One venue's blocks, one at a time, the next AHEAD read ahead. */
class Cursor {
  private fh: FileHandle | undefined;
  private next = 0;
  /** The first block loaded starts at its first event at or after `from`. */
  private seek = true;
  private block: NormBlock | undefined;
  private readonly ahead: Promise<NormBlock | undefined>[] = [];
  private i = 0;
  /** Events of the block at or before `to`. */
  private n = 0;
  private ended = false;
  private marketOk: Uint8Array = new Uint8Array(0);
  private marketsFor: readonly string[] | undefined;
  /** Read buffers free for the next block's compressed bytes. */
  private readonly spare: Buffer[] = [];

  constructor(
    private readonly snap: NormVenueSnapshot,
    private readonly from: number,
    private readonly to: number,
  ) {}

  /** Opens the file (checking its version) and loads the first block that reaches `from`. */
  async start(): Promise<void> {
    const blocks = this.snap.blocks;
    // Receive times never go back within a run (NormCache.serves): the blocks ending before `from` are skipped unread.
    let lo = 0;
    let hi = blocks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (blocks[mid]!.lastT < this.from) lo = mid + 1;
      else hi = mid;
    }
    this.next = lo;
    if (lo < blocks.length) {
      this.fh = await open(this.snap.file, 'r');
      const v = await fileVersion(this.fh);
      if (v !== this.snap.version)
        throw new NormCacheCorruptError(this.snap.file, 0, `written by normalizer version ${v ?? '(no head)'}, this one is ${this.snap.version}`);
    }
    await this.advance();
  }

  done(): boolean {
    return this.block === undefined;
  }

  empty(): boolean {
    return this.i >= this.n;
  }

  head(): number {
    return this.block!.seq[this.i]!;
  }

  /** Moves to the next block with events in the window (none left, or past `to`: done). */
  async advance(): Promise<void> {
    for (;;) {
      const b = this.ended ? undefined : await (this.ahead.shift() ?? this.load());
      this.block = b;
      if (b === undefined) return;
      while (this.ahead.length < AHEAD && this.next < this.snap.blocks.length) {
        const p = this.load();
        // A read ahead may fail; it is awaited (and its error thrown) when its turn comes.
        p.catch(() => undefined);
        this.ahead.push(p);
      }
      this.i = this.seek ? firstAtOrAfter(b.t, b.count, this.from) : 0;
      this.seek = false;
      this.n = b.count;
      // Receive times never go back within a run (NormCache.serves): the window ends at the first past `to`.
      if (b.count > 0 && b.t[b.count - 1]! > this.to) {
        let lo = 0;
        let hi = b.count;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (b.t[mid]! > this.to) hi = mid;
          else lo = mid + 1;
        }
        this.n = lo;
        this.ended = true;
      }
      if (this.n > this.i) return;
    }
  }

  /** Takes the events below `limit` into `out`; returns the seq of the last one taken. */
  take(limit: number, sel: Selection, out: Out): number {
    const b = this.block!;
    const seq = b.seq;
    const end = b.end;
    let i = this.i;
    let j = i;
    while (j < this.n && seq[j]! < limit) j++;
    if (sel.plain) {
      out.copy(b.lines, i === 0 ? 0 : end[i - 1]!, end[j - 1]!);
      out.count += j - i;
    } else {
      const ok = this.marketsOk(b, sel.markets);
      for (; i < j; i++) {
        if (sel.types[b.type[i]!] !== 1) continue;
        if (ok !== undefined) {
          const m = b.market[i]!;
          if (m < 0 || ok[m] !== 1) continue;
        }
        out.copy(b.lines, i === 0 ? 0 : end[i - 1]!, end[i]!);
        out.count++;
      }
    }
    this.i = j;
    return seq[j - 1]!;
  }

  async close(): Promise<void> {
    for (const p of this.ahead.splice(0)) await p.catch(() => undefined);
    await this.fh?.close();
    this.fh = undefined;
  }

  /** Which of the block's markets the filter keeps (undefined: no market filter). */
  private marketsOk(b: NormBlock, markets: ReadonlySet<string> | undefined): Uint8Array | undefined {
    if (markets === undefined) return undefined;
    if (this.marketsFor !== b.markets) {
      this.marketsFor = b.markets;
      this.marketOk = Uint8Array.from(b.markets, (m) => (markets.has(m) ? 1 : 0));
    }
    return this.marketOk;
  }

  /** The next block from the file (undefined past the last). */
  private async load(): Promise<NormBlock | undefined> {
    const k = this.next++;
    const blocks = this.snap.blocks;
    if (k >= blocks.length) return undefined;
    const ref = blocks[k]!;
    // The compressed bytes are read into a buffer kept for the next block once decompressed.
    const whole = this.spare.pop();
    const buf = whole !== undefined && whole.length >= NORM_BLOCK_HEAD + ref.length ? whole : Buffer.allocUnsafe(NORM_BLOCK_HEAD + ref.length);
    let body: Buffer;
    try {
      const { bytesRead } = await this.fh!.read(buf, 0, NORM_BLOCK_HEAD + ref.length, ref.offset);
      if (bytesRead < NORM_BLOCK_HEAD + ref.length) throw new NormCacheCorruptError(this.snap.file, ref.offset, 'the file ends inside the block (truncated)');
      checkNormBlock(buf.subarray(0, NORM_BLOCK_HEAD), ref, this.snap.file);
      const compressed = buf.subarray(NORM_BLOCK_HEAD, NORM_BLOCK_HEAD + ref.length);
      if (!normBlockIntact(ref, compressed)) throw new NormCacheCorruptError(this.snap.file, ref.offset, 'block checksum does not match');
      try {
        body = await unpackNormBlock(compressed, ref.raw);
      } catch (e) {
        throw new NormCacheCorruptError(this.snap.file, ref.offset, `block does not decompress (${(e as Error).message})`);
      }
    } finally {
      if (this.spare.length < AHEAD + 1) this.spare.push(buf);
    }
    const b = decodeNormBlock(body, this.snap.file, ref.offset);
    if (b.count !== ref.count || (b.count > 0 && b.seq[0] !== ref.firstSeq))
      throw new NormCacheCorruptError(this.snap.file, ref.offset, 'the block holds other events than written');
    return b;
  }
}

/** The index of the first of `n` ascending times at or after `from` (n when none is). */
function firstAtOrAfter(t: Float64Array, n: number, from: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (t[mid]! < from) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
