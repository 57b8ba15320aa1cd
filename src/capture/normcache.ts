import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { VenueConfig } from '../config/schema.js';
import type { Logger } from '../core/log.js';
import type { NormalizedEvent } from '../core/types.js';
import { CaptureTail, SerialSync } from '../history/tail.js';
import { apiMarketId } from '../venues/protocol.js';
import type { Capture } from './capture.js';
import { eventLineWriter } from './ndjson.js';
import { decodeNormBlock, NORM_BLOCK_HEAD, NormBlockBuilder, normBlockHeader, normalizerVersion, type NormBlock, type NormBlockRef } from './normblock.js';
import type { CaptureRecord } from './record.js';
import { HOUR_MS } from './store.js';
import { ReplayFeed, type ReplayItem } from './replay.js';

export interface NormCacheOptions {
  readonly log?: Logger | undefined;
  /** Bytes of lines per block (default 1 MiB). */
  readonly blockBytes?: number;
  /** Bytes on disk past which the cache stops following the capture (default 2 GiB); /replay then maps frames. */
  readonly maxBytes?: number;
  /** The normalizer version the cache writes and serves (default: `normalizerVersion(venues)`). */
  readonly version?: string;
}

/** What a reader of one venue's part of the cache holds: the file, its blocks on disk, and blocks still in memory. */
export interface NormVenueSnapshot {
  readonly venue: string;
  readonly file: string;
  readonly version: string;
  readonly blocks: readonly NormBlockRef[];
  readonly memory: readonly NormBlock[];
}

/** One venue's run of the cache: its file, blocks, and the open block. */
interface VenueRun {
  readonly venue: string;
  readonly file: string;
  fh: FileHandle | undefined;
  size: number;
  /** Receive times of its records: the first, the last, and whether they never went back. */
  minT: number;
  lastT: number;
  monotone: boolean;
  readonly builder: NormBlockBuilder;
  readonly blocks: NormBlockRef[];
  readonly sealing: NormBlock[];
  chain: Promise<void>;
}

/** Records mapped between two yields to the event loop. */
const SLICE = 2048;
/** The head of a cache file: magic, then the version's length and text. */
const FILE_MAGIC = Buffer.from('CBNORM1\n');

/**
 * The normalized cache behind GET /api/v2/replay: the events the live mappers make of this
 * process's captured records, kept once as finished NDJSON lines (src/capture/normblock.ts) so a
 * replay copies bytes instead of mapping frames and stringifying events again.
 *
 * It follows the capture like the history index does (`sync()` after each of the capture flow's
 * writes: `CaptureTail` reads the blocks written since, in seq order) through its own `ReplayFeed`
 * (one fresh mapper per venue from the first record this process captured, the frame path and
 * mappers of live), writes each venue's events to `DATA_DIR/capture/_norm/<anchor>/<venue>.nc`
 * in Brotli blocks as the capture's (on libuv's pool), and keys every file by the normalizer
 * version: code that changed since the file was written is not served from it.
 *
 * Why one run from this process's start: the frames path starts each venue's mappers fresh at the
 * window's start, so the cache gives the same bytes exactly for windows that start at or before
 * the run's first record of each venue (`serves`): a whole session, the case a backtest reads.
 * Other windows are mapped from the frames as before. Runs of earlier processes are removed at
 * the first sync (they never serve a window of this design).
 */
export class NormCache {
  readonly dir: string;
  readonly version: string;
  /** The last seq captured before this process: the run starts after it. */
  readonly anchor: number;
  /** Why the cache stopped following the capture (undefined while it runs). */
  stopped: string | undefined;
  /** Windows served from the cache, and those of them that went on from the frames (an entry did not read back). */
  readonly counts = { served: 0, fellBack: 0 };
  private readonly feed: ReplayFeed;
  private readonly line: (seq: number, e: NormalizedEvent) => string | undefined;
  private readonly idOf = new Map<string, (id: string) => string>();
  private readonly tail: CaptureTail;
  private readonly runs = new Map<string, VenueRun>();
  private readonly blockBytes: number;
  private readonly maxBytes: number;
  private lastSeq: number;
  private bytes = 0;
  private readonly syncs = new SerialSync(
    () => this.syncOnce(),
    (e) => this.stop(`reading the capture failed (${e instanceof Error ? e.message : String(e)})`),
  );
  private readonly items: ReplayItem[] = [];

  constructor(
    private readonly capture: Capture,
    venues: readonly VenueConfig[],
    private readonly opts: NormCacheOptions = {},
  ) {
    this.version = opts.version ?? normalizerVersion(venues);
    this.blockBytes = opts.blockBytes ?? 1024 * 1024;
    this.maxBytes = opts.maxBytes ?? 2 * 1024 ** 3;
    this.anchor = capture.lastSeq;
    this.lastSeq = this.anchor;
    this.feed = new ReplayFeed(venues, opts.log);
    this.line = eventLineWriter(venues);
    for (const v of venues) this.idOf.set(v.label, (id) => apiMarketId(v, id));
    this.tail = new CaptureTail(capture.store, this.anchor);
    this.dir = join(capture.store.dir, '_norm', String(this.anchor));
  }

  /**
   * Writes what the capture buffers, then maps every record up to it into the cache. Runs never
   * overlap; calls made while one waits share it. Maps in slices, yielding to the event loop between.
   */
  sync(): Promise<void> {
    return this.syncs.run();
  }

  private async syncOnce(): Promise<void> {
    const upTo = this.capture.lastSeq;
    await this.capture.flush();
    if (this.stopped !== undefined || upTo <= this.lastSeq) return;
    if (this.lastSeq === this.anchor) this.makeDir();
    const recs = await this.tail.read(upTo);
    for (let i = 0; i < recs.length; i++) {
      this.record(recs[i]!);
      if (i % SLICE === SLICE - 1) await nextTurn();
    }
    if (this.bytes > this.maxBytes) this.stop(`it passed its bound of ${this.maxBytes} bytes on disk`);
  }

  /**
   * Whether the cache gives the frames path's exact answer for `venues` from `from`: it runs, each
   * venue's records since this process started never went back in time and start at or after
   * `from`, and no record of an earlier process falls at or after `from`.
   */
  serves(venues: readonly string[], from: number): boolean {
    if (this.stopped !== undefined) return false;
    for (const v of venues) {
      const run = this.runs.get(v);
      if (run !== undefined && (!run.monotone || from > run.minT)) return false;
      // Earlier processes' segments that may hold a record at or after `from` (a block runs at most a little past its file's hour).
      for (const seg of this.capture.store.segments(v))
        if (seg.firstSeq <= this.anchor && seg.hour + 2 * HOUR_MS > from && this.laterThan(seg.file, from)) return false;
    }
    return true;
  }

  /** Whether a segment holds a block reaching `from` (a damaged one counts as yes: the frames path reports it). */
  private laterThan(file: string, from: number): boolean {
    try {
      return this.capture.store.headers(file).some((b) => b.maxT >= from);
    } catch {
      return true;
    }
  }

  /** Each venue's blocks as they stand: the open blocks are sealed first, so everything synced is in them. */
  snapshot(venues: readonly string[]): NormVenueSnapshot[] {
    const out: NormVenueSnapshot[] = [];
    for (const v of venues) {
      const run = this.runs.get(v);
      if (run === undefined) continue;
      this.seal(run);
      out.push({ venue: v, file: run.file, version: this.version, blocks: [...run.blocks], memory: [...run.sealing] });
    }
    return out;
  }

  /** Maps what is left and writes the open blocks. */
  async close(): Promise<void> {
    await this.sync().catch(() => undefined);
    for (const run of this.runs.values()) this.seal(run);
    for (const run of this.runs.values()) {
      await run.chain;
      await run.fh?.close();
      run.fh = undefined;
    }
  }

  /**
   * The run's directory, made when this process first has something to cache (a command that only
   * opens the capture never syncs, so never touches a running service's run); earlier runs removed.
   */
  private makeDir(): void {
    const root = join(this.capture.store.dir, '_norm');
    for (const name of dirNames(root)) if (name !== String(this.anchor)) rmSync(join(root, name), { recursive: true, force: true });
    mkdirSync(this.dir, { recursive: true });
  }

  private stop(why: string): void {
    if (this.stopped !== undefined) return;
    this.stopped = `the normalized cache stopped: ${why}; /replay maps the captured frames`;
    this.opts.log?.warn({ reason: this.stopped }, 'normalized cache stopped');
  }

  /** One record: its events appended to its venue's open block (sealed once full, at a record's end). */
  private record(r: CaptureRecord): void {
    this.lastSeq = r.seq;
    if (r.kind === 'flush') return;
    const run = this.runOf(r.venue);
    if (r.t < run.lastT) run.monotone = false;
    if (r.t < run.minT) run.minT = r.t;
    run.lastT = Math.max(run.lastT, r.t);
    const items = this.items;
    items.length = 0;
    this.feed.apply(r, items);
    const idOf = this.idOf.get(r.venue);
    for (let i = 0; i < items.length; i++) {
      const it = items[i]!;
      if (it.type !== 'event') continue;
      const e = it.event;
      const l = this.line(it.seq, e);
      if (l === undefined) continue;
      run.builder.push(it.seq, r.t, e.type, 'marketId' in e && idOf !== undefined ? idOf(e.marketId) : undefined, l);
    }
    if (run.builder.size >= this.blockBytes) this.seal(run);
  }

  private runOf(venue: string): VenueRun {
    let run = this.runs.get(venue);
    if (run === undefined) {
      run = {
        venue,
        file: join(this.dir, `${venue}.nc`),
        fh: undefined,
        size: 0,
        minT: Infinity,
        lastT: -Infinity,
        monotone: true,
        builder: new NormBlockBuilder(),
        blocks: [],
        sealing: [],
        chain: Promise.resolve(),
      };
      this.runs.set(venue, run);
    }
    return run;
  }

  /** Ends the open block: kept in memory (served from there) until written behind the venue's earlier blocks. */
  private seal(run: VenueRun): void {
    const count = run.builder.count;
    if (count === 0) return;
    const firstSeq = run.builder.seq[0]!;
    const lastSeq = run.builder.seq[count - 1]!;
    const body = run.builder.finish();
    const block = decodeNormBlock(body, run.file, run.size);
    run.sealing.push(block);
    run.chain = run.chain.then(async () => {
      try {
        const compressed = await this.capture.store.seal(body);
        if (run.fh === undefined) {
          run.fh = await open(run.file, 'w');
          const head = Buffer.concat([FILE_MAGIC, u32(Buffer.byteLength(this.version)), Buffer.from(this.version)]);
          await run.fh.write(head, 0, head.length, 0);
          run.size = head.length;
        }
        const h = normBlockHeader(compressed, count, firstSeq, lastSeq, body.length);
        await run.fh.writev([h, compressed], run.size);
        run.blocks.push({ offset: run.size, length: compressed.length, crc: h.readUInt32LE(8), count, firstSeq, lastSeq, raw: body.length });
        run.size += NORM_BLOCK_HEAD + compressed.length;
        this.bytes += NORM_BLOCK_HEAD + compressed.length;
      } catch (e) {
        this.stop(`writing ${run.file} failed (${e instanceof Error ? e.message : String(e)})`);
      } finally {
        run.sealing.splice(run.sealing.indexOf(block), 1);
      }
    });
  }
}

/** The version a cache file was written with (read from its head), or undefined when the head is not one. */
export async function fileVersion(fh: FileHandle): Promise<string | undefined> {
  const head = Buffer.alloc(FILE_MAGIC.length + 4);
  const { bytesRead } = await fh.read(head, 0, head.length, 0);
  if (bytesRead < head.length || !head.subarray(0, FILE_MAGIC.length).equals(FILE_MAGIC)) return undefined;
  const n = head.readUInt32LE(FILE_MAGIC.length);
  if (n > 1024) return undefined;
  const v = Buffer.alloc(n);
  return (await fh.read(v, 0, n, head.length)).bytesRead === n ? v.toString('utf8') : undefined;
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n, 0);
  return b;
}

function dirNames(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
