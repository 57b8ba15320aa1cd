import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { VenueConfig } from '../config/schema.js';
import type { Logger } from '../core/log.js';
import type { NormalizedEvent } from '../core/types.js';
import { apiMarketId } from '../venues/protocol.js';
import { eventLineWriter } from './ndjson.js';
import { NORM_BLOCK_HEAD, NormBlockBuilder, normBlockHeader, packNormBlock, type NormBlockRef } from './normblock.js';
import { NormReader } from './normreader.js';
import type { CachedReplay } from './normread.js';
import type { CaptureRecord } from './record.js';
import type { ReplayItem } from './replay.js';
import { HOUR_MS, type CaptureStore } from './store.js';

export interface NormLinesOptions {
  readonly log?: Logger | undefined;
  /** Bytes of lines per block (default 1 MiB). */
  readonly blockBytes?: number | undefined;
  /** Bytes on disk past which the cache stops following the capture (default 2 GiB); /replay then maps frames. */
  readonly maxBytes?: number | undefined;
  /** The normalizer version the cache writes (`normalizerVersion(venues)`, taken on the main thread). */
  readonly version: string;
}

/** One venue's run of the cache as a reader sees it: its file, its blocks on disk, and its records' receive times. */
export interface NormVenueView {
  readonly venue: string;
  readonly file: string;
  readonly blocks: readonly NormBlockRef[];
  /** The first receive time of its records in this run. */
  readonly minT: number;
  /** Whether its records' receive times never went back (a reader then seeks and cuts by time). */
  readonly monotone: boolean;
}

/** Where the cache stands (it crosses from the history thread to the main thread): everything in it is on disk. */
export interface NormView {
  readonly version: string;
  readonly anchor: number;
  readonly stopped: string | undefined;
  readonly venues: readonly NormVenueView[];
}

/** What a reader of one venue's part of the cache holds: the file, its version, its blocks on disk. */
export interface NormVenueSnapshot {
  readonly venue: string;
  readonly file: string;
  readonly version: string;
  readonly blocks: readonly NormBlockRef[];
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
  chain: Promise<void>;
}

/** The head of a cache file: magic, then the version's length and text. */
const FILE_MAGIC = Buffer.from('CBNORM1\n');

/**
 * The writer of the normalized cache behind GET /api/v2/replay, run on the history index's thread
 * (src/history/index.ts hands it each record with the events its `ReplayFeed` made of it): each
 * event kept once as its finished NDJSON line (src/capture/normblock.ts), so a replay copies
 * bytes instead of mapping frames and stringifying events again. The main thread pays nothing for
 * it: the mapping is the index's, done anyway, and the lines, the blocks and their LZ4 are the
 * thread's (src/capture/lz4.ts).
 *
 * One run per process, from the first record after `anchor` (the capture's last seq when the
 * service opened it), with the index's mappers: one per venue per feed session, as live, so the
 * lines of any window inside the run are the live run's events. Each venue's events go to
 * `DATA_DIR/capture/_norm/<anchor>/<venue>.nc`, each file headed by the normalizer version: code
 * that changed since the file was written is not served from it. Earlier processes' runs are
 * removed at the first record (their windows are mapped from the frames).
 */
export class NormLines {
  readonly dir: string;
  /** Why the cache stopped following the capture (undefined while it runs). */
  stopped: string | undefined;
  private readonly line: (seq: number, e: NormalizedEvent) => string | undefined;
  private readonly idOf = new Map<string, (id: string) => string>();
  private readonly runs = new Map<string, VenueRun>();
  private readonly blockBytes: number;
  private readonly maxBytes: number;
  private started = false;
  private bytes = 0;

  constructor(
    private readonly store: CaptureStore,
    readonly anchor: number,
    venues: readonly VenueConfig[],
    private readonly opts: NormLinesOptions,
  ) {
    this.blockBytes = opts.blockBytes ?? 1024 * 1024;
    this.maxBytes = opts.maxBytes ?? 2 * 1024 ** 3;
    this.line = eventLineWriter(venues);
    for (const v of venues) this.idOf.set(v.label, (id) => apiMarketId(v, id));
    this.dir = join(store.dir, '_norm', String(anchor));
  }

  /** One record and the items the replay feed made of it: its events appended to its venue's open block (sealed once full). */
  record(r: CaptureRecord, items: readonly ReplayItem[]): void {
    if (this.stopped !== undefined || r.kind === 'flush') return;
    if (!this.started) this.makeDir();
    const run = this.runOf(r.venue);
    if (r.t < run.lastT) run.monotone = false;
    if (r.t < run.minT) run.minT = r.t;
    if (r.t > run.lastT) run.lastT = r.t;
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
    if (this.bytes > this.maxBytes) this.stop(`it passed its bound of ${this.maxBytes} bytes on disk`);
  }

  /** Seals the open blocks and waits until every block is on disk (a reader then reads them all from the files). */
  async flush(): Promise<void> {
    for (const run of this.runs.values()) this.seal(run);
    for (const run of this.runs.values()) await run.chain;
  }

  /** Where the cache stands: call after `flush` for a view of everything recorded. */
  view(): NormView {
    const venues: NormVenueView[] = [];
    for (const r of this.runs.values()) venues.push({ venue: r.venue, file: r.file, blocks: [...r.blocks], minT: r.minT, monotone: r.monotone });
    return { version: this.opts.version, anchor: this.anchor, stopped: this.stopped, venues };
  }

  /** Writes the open blocks and closes the files. */
  async close(): Promise<void> {
    await this.flush();
    for (const run of this.runs.values()) {
      await run.fh?.close();
      run.fh = undefined;
    }
  }

  stop(why: string): void {
    if (this.stopped !== undefined) return;
    this.stopped = `the normalized cache stopped: ${why}; /replay maps the captured frames`;
    this.opts.log?.warn({ reason: this.stopped }, 'normalized cache stopped');
  }

  /** The run's directory, made at its first record; earlier processes' runs removed. */
  private makeDir(): void {
    this.started = true;
    const root = join(this.store.dir, '_norm');
    for (const name of dirNames(root)) if (name !== String(this.anchor)) rmSync(join(root, name), { recursive: true, force: true });
    mkdirSync(this.dir, { recursive: true });
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
        chain: Promise.resolve(),
      };
      this.runs.set(venue, run);
    }
    return run;
  }

  /** Ends the open block: compressed and written behind the venue's earlier blocks, in order. */
  private seal(run: VenueRun): void {
    const count = run.builder.count;
    if (count === 0) return;
    const firstSeq = run.builder.seq[0]!;
    const lastSeq = run.builder.seq[count - 1]!;
    const firstT = run.builder.t[0]!;
    const lastT = run.builder.t[count - 1]!;
    const body = run.builder.finish();
    run.chain = run.chain.then(async () => {
      if (this.stopped !== undefined) return;
      try {
        const compressed = await packNormBlock(body);
        if (run.fh === undefined) {
          run.fh = await open(run.file, 'w');
          const head = Buffer.concat([FILE_MAGIC, u32(Buffer.byteLength(this.opts.version)), Buffer.from(this.opts.version)]);
          await run.fh.write(head, 0, head.length, 0);
          run.size = head.length;
        }
        const h = normBlockHeader(compressed, count, firstSeq, lastSeq, body.length);
        await run.fh.writev([h, compressed], run.size);
        run.blocks.push({ offset: run.size, length: compressed.length, crc: h.readUInt32LE(8), count, firstSeq, lastSeq, raw: body.length, firstT, lastT });
        run.size += NORM_BLOCK_HEAD + compressed.length;
        this.bytes += NORM_BLOCK_HEAD + compressed.length;
      } catch (e) {
        this.stop(`writing ${run.file} failed (${e instanceof Error ? e.message : String(e)})`);
      }
    });
  }
}

/**
 * The normalized cache as GET /replay sees it, on the main thread: `sync()` asks the cache's
 * writer (on the history thread: `HistoryClient.normSync`) to take in every record captured so far
 * and write its blocks, and keeps the view it answers; `serves` says whether a window reads from
 * it, `snapshot` gives the blocks a read copies from (src/capture/normread.ts).
 */
export class NormCache {
  /** Windows served from the cache, and those of them that went on from the frames (an entry did not read back). */
  readonly counts = { served: 0, fellBack: 0 };
  private view: NormView | undefined;
  private reader: NormReader | undefined;

  /** `source`: brings the writer up to the capture and answers its view (rejects when its thread is gone). */
  constructor(
    private readonly source: () => Promise<NormView>,
    private readonly store: CaptureStore,
  ) {}

  /** Brings the cache up to what was captured (the last second may still sit in the writer's buffers: it is flushed first). */
  async sync(): Promise<void> {
    this.view = await this.source();
  }

  /** Why the cache does not serve (undefined while it runs and has synced). */
  get stopped(): string | undefined {
    return this.view === undefined ? 'the normalized cache has not synced yet' : this.view.stopped;
  }

  /**
   * Whether the cache holds every event of `venues` in [from, …): it runs, each venue's records of
   * this run never went back in time (a read seeks and cuts by receive time), and no record of an
   * earlier process falls at or after `from` (those are not in this run). A window that starts
   * mid-run is served too: the run's events from `from` on, as live made them.
   */
  serves(venues: readonly string[], from: number): boolean {
    const view = this.view;
    if (view === undefined || view.stopped !== undefined) return false;
    for (const v of venues) {
      const run = view.venues.find((r) => r.venue === v);
      if (run !== undefined && !run.monotone) return false;
      // Earlier processes' segments that may hold a record at or after `from` (a block runs at most a little past its file's hour).
      for (const seg of this.store.segments(v))
        if (seg.firstSeq <= view.anchor && seg.hour + 2 * HOUR_MS > from && this.laterThan(seg.file, from)) return false;
    }
    return true;
  }

  /**
   * The lines of a window from the cache, read on the cache's read thread (`NormReader`: the same
   * bytes as `cachedLines`, off the main thread); `serves` said yes for its venues.
   */
  lines(venues: readonly string[], req: CachedReplay): AsyncGenerator<Uint8Array | string> {
    this.reader ??= new NormReader(req.log);
    return this.reader.lines(this.snapshot(venues), req);
  }

  /** Ends the read thread (the service closes it after its HTTP server). */
  async close(): Promise<void> {
    await this.reader?.close();
    this.reader = undefined;
  }

  /** Each venue's blocks as of the last sync. */
  snapshot(venues: readonly string[]): NormVenueSnapshot[] {
    const view = this.view;
    if (view === undefined) return [];
    const out: NormVenueSnapshot[] = [];
    for (const v of venues) {
      const run = view.venues.find((r) => r.venue === v);
      if (run !== undefined) out.push({ venue: v, file: run.file, version: view.version, blocks: run.blocks });
    }
    return out;
  }

  /** Whether a segment holds a block reaching `from` (a damaged one counts as yes: the frames path reports it). */
  private laterThan(file: string, from: number): boolean {
    try {
      return this.store.headers(file).some((b) => b.maxT >= from);
    } catch {
      return true;
    }
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
