import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ReplayFeed, type CaptureRecord, type CaptureStore, type ReplayItem } from '../capture/index.js';
import type { NormLines, NormView } from '../capture/normcache.js';
import type { VenueConfig } from '../config/schema.js';
import { iso } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import type { NormalizedEvent, VenueLabel } from '../core/types.js';
import { EngineState, resetsBooks } from '../state/engine.js';
import { unpack } from 'msgpackr';
import type { QuoteRecord } from '../state/quotes.js';
import { EMPTY_START, applyRuns, foldRuns, type MarketRun, type StartRecord } from './fold.js';
import { PACKED_CHUNK, PackedLog } from './packed.js';
import { HandedFeed, handedRecords, type HandedBatch } from './handoff.js';
import { CaptureTail, SerialSync, type TailStart } from './tail.js';
import {
  partKey,
  pruneSlices,
  SliceFile,
  sliceStarts,
  SliceWriter,
  type BookStart,
  type Covers,
  type MarketPart,
  type SeqEvent,
  type SliceEntry,
} from './slice.js';

export { partKey, type Slice } from './slice.js';

/** Slice files kept open (their directories parsed) for reads. */
const OPEN_FILES = 64;
/** Parts compressed and appended to a slice file per write while it is written. */
const WRITE_BATCH = 256;

/** A market to rebuild, with the instruments its catalog record names (the books' YES/NO roles). */
export interface MarketRef {
  readonly venue: VenueLabel;
  readonly marketId: string;
  readonly yes?: string | undefined;
  readonly no?: string | undefined;
}

/** The moments the index can answer for: [from, to] in receive time (ms). */
export interface HistoryWindow {
  readonly from: number;
  readonly to: number;
}

/**
 * A moment inside the window that no slice covers: the service was stopped then, or its index's
 * close was cut short (`capture.historyCloseMs`), so nothing was indexed between `before` (the end
 * of what the slice before covers) and `after` (where the next one begins; undefined: not yet).
 * Answering from the slice before would give its last state as the state at a moment it never saw.
 */
export class NotIndexedError extends Error {
  constructor(
    readonly t: number,
    readonly before: number | undefined,
    readonly after: number | undefined,
  ) {
    super(
      `${iso(t)} is not in the history index: nothing was indexed from ${before === undefined ? 'before it' : iso(before)} to ${after === undefined ? 'now' : iso(after)}`,
    );
    this.name = 'NotIndexedError';
  }
}

/**
 * Where slice `start` begins to cover: its start, or, for a process's first slice (named before
 * the process began, in a window an earlier run wrote), the moment its process's index began (`from`).
 * A slice still in memory covers from there on (`to` Infinity); a written one to its directory's `to`.
 */
export function coversFrom(start: number, from: number): number {
  return Math.max(start, from);
}

/**
 * Whether slice `start` (the latest at or before `t`) covers `t`: undefined if it does (or cannot
 * say: a file written before slices kept it), else the gap `t` falls in, bounded by what the slices
 * beside it cover. `starts` are every slice's starts (on disk and in memory), `coverOf` what each covers.
 */
export function notIndexed(t: number, start: number, starts: readonly number[], coverOf: (start: number) => Covers | undefined): NotIndexedError | undefined {
  const c = coverOf(start);
  if (c === undefined || (t >= c[0] && t <= c[1])) return undefined;
  if (t > c[1]) {
    let next: number | undefined;
    for (const s of starts) if (s > start && (next === undefined || s < next)) next = s;
    return new NotIndexedError(t, c[1], next === undefined ? undefined : (coverOf(next)?.[0] ?? next));
  }
  let prev: number | undefined;
  for (const s of starts) if (s < start && (prev === undefined || s > prev)) prev = s;
  return new NotIndexedError(t, prev === undefined ? undefined : coverOf(prev)?.[1], c[0]);
}

/**
 * The slice being filled: each market's state when it began (taken lazily) and its events, kept
 * packed in `log` (msgpack bytes, as the slice file will hold them: at 108k markets the objects
 * cost far more than their bytes) and found by address; the venues' few feed events as objects.
 */
interface OpenSlice {
  readonly start: number;
  /** Where its slice of `sliceMs` ends (a slice closed early by size passes its end on to the next). */
  readonly end: number;
  /** market → address in `log` of its state as the slice began (a `MarketPart` without events). */
  readonly starts: Map<string, number>;
  /** market → address in `log` of its last event (a `SeqEvent`, linked back to the one before it). */
  readonly events: Map<string, number>;
  readonly venues: Map<VenueLabel, SeqEvent[]>;
  readonly log: PackedLog;
}

/** A new open slice; its full chunks go to `DIR/<start>.open` (`PackedLog`), removed once it is written or dropped. */
function openSlice(dir: string, start: number, end: number): OpenSlice {
  return {
    start,
    end,
    starts: new Map(),
    events: new Map(),
    venues: new Map(),
    log: new PackedLog(join(dir, `${start}${OPEN_EXT}`), HISTORY_LIMITS.chunkBytes),
  };
}

/** The open slice's packed chunks on disk (`openSlice`). */
const OPEN_EXT = '.open';

/** Removes the open slices' files an earlier process left (it ended before writing them as slices). */
function removeOpenFiles(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) if (n.endsWith(OPEN_EXT)) rmSync(join(dir, n), { force: true });
}

/**
 * The history index behind `as_of` reads, run on its own thread (`worker.ts`; `client.ts` is its
 * side on the main thread). It follows the capture log from disk (`sync(upTo)`, after each of the
 * capture flow's writes: the records the writer has written up to `upTo`), runs its records
 * through the SAME replay path as `/replay` and `crossbook replay` (`ReplayFeed`: the live frame
 * path and mappers, one mapper per venue per feed session, as live, so relative deltas keep their
 * book) and keeps the events in its open slice. Every `sliceMs`, and sooner once its open slice
 * holds `HISTORY_LIMITS.sliceEvents` events, it writes a slice file: each market's state as the
 * slice began and its events in it (`slice.ts`). It keeps no state of its own: each market's start
 * in the next slice is its start in this one with its events applied (`seal`, `foldRuns`). A read of
 * a market at a moment T is then: the slice holding T, the market's start state, and its events up
 * to T, applied with `applyEvent` to a scratch `EngineState` (the same book and quote code as
 * live), at most one slice of one market's events.
 *
 * It starts with this process's capture (the first records after `after`, the log's last sequence
 * number when the service opened it), as the feeds start with fresh connections; slice files of
 * earlier processes stay readable.
 */
/**
 * Bounds on what the index holds. `sliceEvents`: the open slice is written (and a new one begun)
 * once it holds this many events, so memory does not follow the slice length times the market
 * count. `openEvents`: a backstop past which the index stops (a slice that cannot close, its
 * events all at one moment). `behind`: the records one sync may have to catch up; past it the index
 * stops (with a log line, and `as_of` reads say why) rather than grow without bound: at 108k
 * markets on 2 cores it once fell behind the capture and took the process past 19 GiB in minutes.
 * `chunkBytes`: the open slice's packed chunks (`PackedLog`), each written to disk once full.
 * `readBatch`: the records a catch-up reads from the capture at a time (`CaptureTail.read`).
 * `handBatch`: the records and events the main thread's handoff holds before it hands them to the
 * thread without waiting for the next sync (`Handoff`: each take is one synchronous pack, 0.5-1 µs
 * an event; at 8,192 the per-second sync's take of a second of events was 1-4 ms of the main
 * thread at load 2-5, one task in which the WebSocket frames read meanwhile waited: issue 34).
 * The main thread sends these with each sync (a test may lower one).
 */
export const HISTORY_LIMITS = {
  sliceEvents: 200_000,
  openEvents: 1_000_000,
  behind: 500_000,
  chunkBytes: PACKED_CHUNK,
  readBatch: 4_096,
  handBatch: 1_024,
};

/** Where the index follows the capture from. */
export interface HistoryStart {
  readonly sliceMs: number;
  /** The capture's last sequence number when the service opened it: the index reads the records after it. */
  readonly after: number;
  /** The receive time it starts at (the clock's now). */
  readonly from: number;
  /** Where its tail starts reading, taken with `after` (default: the segments' ends now). */
  readonly tail?: TailStart | undefined;
  readonly log?: Logger | undefined;
  /** The normalized cache behind /replay, written from the events this index maps (absent: capture.replayCache off). */
  readonly lines?: NormLines | undefined;
  /**
   * Whether the main thread hands it each record with its live events (`hand`, handoff.ts) rather
   * than it reading the capture and mapping the records again (`ReplayFeed`): both give the same
   * slices and cache lines (test/api/as-of-handoff.test.ts).
   */
  readonly handed?: boolean | undefined;
}

/** A book of a rebuilt state, as it crosses threads: venue, then a slice file's book start. */
export type RebuiltBook = readonly [venue: VenueLabel, ...book: BookStart];

/** Markets rebuilt at a moment, as they cross threads: their books and quotes (`restoreRebuilt` puts them in a state). */
export interface Rebuilt {
  readonly books: readonly RebuiltBook[];
  readonly quotes: readonly QuoteRecord[];
}

/** A sync failure that repeats (about one a second) is logged once per this many. */
const SYNC_FAILURES_PER_LOG = 60;

export class HistoryIndex {
  /** The replay path over the capture (undefined: not needed, the records are handed). */
  private feed: ReplayFeed | undefined;
  /** The items of handed records: their events, or, for a record no feed runtime mapped, what a replay makes of it (made when first needed). */
  private handedFeed: HandedFeed | undefined;
  /** Batches handed by the main thread, not yet indexed (`opts.handed`). */
  private queue: HandedBatch[] = [];
  /** Why the index stopped following the capture (a bound was passed); undefined while it runs. */
  stopped: string | undefined;
  private openEvents = 0;
  private readonly venues: readonly VenueConfig[];
  private readonly dir: string;
  private readonly sliceMs: number;
  private readonly tail: CaptureTail;
  private readonly syncs = new SerialSync(
    () => this.syncOnce(),
    (e) => this.syncFailed(e),
  );
  /** The last sync failure's message and how many times in a row it came (a removed directory fails every sync, about once a second). */
  private failure: { err: string; times: number } | undefined;
  /** Set by `hurry`: catch-ups stop after the batch they are indexing, and the close's open slice is not written past the batch it is at. */
  private hurried = false;
  /** The close's open slice was not written (its time was up). */
  private dropped = false;
  /** The furthest sequence number a sync asked for. */
  private want = 0;
  private lastSeq: number;
  private lastT: number;
  /** Where this process's first slice begins to cover: when the index started (or its first event, if stamped earlier). */
  private from: number;
  private cur: OpenSlice | undefined;
  /** The slice being written (read from memory until it is on disk: the records behind wait for it). */
  private sealing: OpenSlice | undefined;
  private starts: number[];
  private readonly files: SliceFiles;
  /** Records whose sequence number did not follow the previous one (dropped by the writer or read past). */
  gaps = 0;
  /** Slices written by this process. */
  written = 0;

  constructor(
    private readonly store: CaptureStore,
    venues: readonly VenueConfig[],
    private readonly opts: HistoryStart,
  ) {
    this.venues = venues;
    this.dir = join(store.dir, '_history');
    this.sliceMs = opts.sliceMs;
    this.lastSeq = opts.after;
    this.lastT = opts.from;
    this.from = opts.from;
    this.tail = new CaptureTail(store, this.lastSeq, opts.tail);
    this.starts = sliceStarts(this.dir);
    this.files = new SliceFiles(this.dir);
    removeOpenFiles(this.dir);
  }

  /**
   * Indexes every record up to `upTo` (written by the capture before the call). Runs never overlap,
   * and calls made while one is waiting to start share it (it starts after them and reads up to the
   * furthest they asked for): a slow catch-up never piles up a queue.
   */
  sync(upTo: number): Promise<void> {
    if (upTo > this.want) this.want = upTo;
    return this.syncs.run();
  }

  /**
   * Takes a batch of records and their live events from the main thread (`opts.handed`), indexed
   * by the next sync that reaches it. Past `HISTORY_LIMITS.behind` records behind, the index stops
   * and lets go of every batch it holds, as it stops reading the capture so far behind.
   */
  hand(b: HandedBatch): void {
    if (this.stopped !== undefined) return;
    const last = b.first + b.count - 1;
    if (last - this.lastSeq > HISTORY_LIMITS.behind) {
      this.stop(`it fell ${last - this.lastSeq} records behind the capture (bound ${HISTORY_LIMITS.behind})`);
      return;
    }
    this.queue.push(b);
  }

  /** The main thread let go of `n` records it held for the index (its bound passed without a sync): the index stops. */
  lose(n: number): void {
    if (this.stopped === undefined) this.stop(`the main thread let go of ${n} records held for it without a sync (bound ${HISTORY_LIMITS.behind})`);
  }

  /** One run of `sync`: up to the furthest sequence number asked for when it starts. */
  private async syncOnce(): Promise<void> {
    const upTo = this.want;
    if (this.stopped !== undefined) return;
    if (upTo - this.lastSeq > HISTORY_LIMITS.behind)
      return this.stop(`it fell ${upTo - this.lastSeq} records behind the capture (bound ${HISTORY_LIMITS.behind})`);
    await this.catchUp(upTo);
    this.failure = undefined;
  }

  /** A failed sync: logged the first time, then every SYNC_FAILURES_PER_LOG-th time it fails the same way in a row. */
  private syncFailed(e: unknown): void {
    const err = e instanceof Error ? e.message : String(e);
    if (this.failure?.err !== err) this.failure = { err, times: 0 };
    if (this.failure.times++ % SYNC_FAILURES_PER_LOG === 0)
      this.opts.log?.error({ err, times: this.failure.times }, 'history index: reading the capture failed');
  }

  /** The starts of the slices on disk, oldest first. */
  get slicesOnDisk(): readonly number[] {
    return this.starts;
  }

  /** The receive time up to which every captured record is indexed. */
  get indexedTo(): number {
    return this.lastT;
  }

  /** The first moment it can answer for: the first slice kept, else the open one's start (undefined: nothing indexed yet). */
  get first(): number | undefined {
    return this.starts[0] ?? this.sealing?.start ?? this.cur?.start;
  }

  /**
   * The state of `markets` at receive time `t`: every event up to `t` applied (through `applyEvent`)
   * to the markets' state at the start of the slice holding `t`. Sync first when `t` may be past
   * `indexedTo`. Markets the index never saw come back without books or quotes.
   */
  stateAt(t: number, markets: readonly MarketRef[]): EngineState {
    const start = this.sliceAt(t);
    const gap = start === undefined ? undefined : notIndexed(t, start, [...this.starts, ...this.inMemory], (s) => this.coverOf(s));
    if (gap !== undefined) throw gap;
    return stateFrom(this.venues, start === undefined ? undefined : this.sliceSource(start), t, markets);
  }

  /** The starts of the slices held in memory: the one being written and the open one. */
  get inMemory(): readonly number[] {
    const out: number[] = [];
    if (this.sealing) out.push(this.sealing.start);
    if (this.cur) out.push(this.cur.start);
    return out;
  }

  /** `stateAt`, as plain data that crosses threads (`restoreRebuilt` makes it a state again). */
  rebuild(t: number, markets: readonly MarketRef[]): Rebuilt {
    const s = this.stateAt(t, markets);
    const books: RebuiltBook[] = [];
    for (const [venue, ins] of s.books.entries()) {
      const b = s.books.instrument(venue, ins)!;
      books.push([venue, ins, b.levelsOf(true), b.levelsOf(false), b.timestamp, b.recvTs, b.ready]);
    }
    return { books, quotes: [...s.quotes.all()] };
  }

  /**
   * Indexes every record up to `upTo` and writes the open slice and the normalized cache's open
   * blocks, unless `hurry` cuts it short (the service closes it after its feeds stop). `at`: the
   * moment of the close (the open slice covers up to it once every record is indexed; cut short, up
   * to the last record indexed).
   */
  async close(upTo: number, at?: number): Promise<void> {
    const began = performance.now();
    const behind = upTo - this.lastSeq;
    await this.sync(upTo);
    await this.syncs.settled();
    const caughtUp = performance.now();
    const cur = this.cur;
    this.cur = undefined;
    const to = this.lastSeq >= upTo ? Math.max(this.lastT, at ?? this.lastT) : this.lastT;
    if (cur && this.stopped === undefined) await this.seal(cur, to);
    else cur?.log.dispose();
    await this.opts.lines?.close();
    const left = upTo - this.lastSeq;
    const took = { behind, left, catchUpMs: Math.round(caughtUp - began), sealMs: Math.round(performance.now() - caughtUp), openSliceWritten: !this.dropped };
    if ((left <= 0 && !this.dropped) || this.stopped !== undefined) this.opts.log?.info(took, 'history index closed');
    else
      this.opts.log?.warn(
        { ...took, indexedTo: new Date(this.lastT).toISOString(), openSliceFrom: cur && new Date(cur.start).toISOString() },
        'history index closed short (capture.historyCloseMs was up): the records not indexed stay in the capture (/replay reads them); as_of reads of their stretch, and of the open slice when it was not written, answer as_of.not_indexed',
      );
  }

  /** The close's time is up (the service is stopping and will not wait longer): its catch-up ends after the batch being indexed, and its open slice, if still being written, is dropped. */
  hurry(): void {
    this.hurried = true;
  }

  /**
   * Indexes every record up to `upTo`, then writes the normalized cache's open blocks and answers
   * where it stands (undefined without a cache): what a /replay read copies from.
   */
  async normView(upTo: number): Promise<NormView | undefined> {
    const lines = this.opts.lines;
    if (lines === undefined) return undefined;
    await this.sync(upTo);
    await lines.flush();
    return lines.view();
  }

  /** Stops following the capture and lets go of the open slice; slices already written stay readable. The normalized cache, fed by it, stops too. */
  private stop(why: string): void {
    this.stopped = `the history index stopped: ${why}; as_of reads need capture.history on a machine that keeps up, or fewer markets`;
    this.opts.lines?.stop(`the history index it is written from stopped (${why})`);
    this.cur?.log.dispose();
    this.cur = undefined;
    this.queue = [];
    this.opts.log?.warn({ reason: this.stopped }, 'history index stopped');
  }

  /** Indexes the records up to `upTo`, a bounded batch at a time (`HISTORY_LIMITS.readBatch`): behind by a slice write's worth, it holds a batch of them, not all. */
  private async catchUp(upTo: number): Promise<void> {
    while (upTo > this.lastSeq && this.stopped === undefined && !this.hurried) {
      if (this.opts.handed === true) {
        const b = this.queue.shift();
        if (b === undefined) return;
        const records = handedRecords(b);
        const feed = (this.handedFeed ??= new HandedFeed(this.venues, this.opts.log));
        const mapped: ReplayItem[] = [];
        for (let i = 0; i < records.length; i++) {
          // A hurried close ends within a read batch's worth of records, as on the capture-reading path: a handed
          // batch is all a sync took, which after a stalled main thread is minutes of records.
          if (i % HISTORY_LIMITS.readBatch === 0 && i > 0 && (this.hurried || this.stopped !== undefined)) return;
          const items = feed.apply(records[i]!, mapped);
          if (typeof items === 'string') {
            this.stop(items);
            return;
          }
          await this.index(records[i]!.record, items);
        }
        continue;
      }
      const batch = await this.tail.read(upTo, HISTORY_LIMITS.readBatch);
      if (batch.length === 0) return;
      const feed = (this.feed ??= new ReplayFeed(this.venues, this.opts.log));
      const items: ReplayItem[] = [];
      for (const r of batch) {
        items.length = 0;
        feed.apply(r, items);
        await this.index(r, items);
      }
    }
  }

  /** One record and its events (as `ReplayFeed` makes them, or as the main thread handed them). */
  private async index(r: CaptureRecord, items: readonly ReplayItem[]): Promise<void> {
    if (r.seq !== this.lastSeq + 1) this.gaps++;
    this.lastSeq = r.seq;
    if (r.t > this.lastT) this.lastT = r.t;
    this.opts.lines?.record(r, items);
    for (const it of items) {
      if (it.type !== 'event' || this.stopped !== undefined) continue;
      const t = it.event.localTimestamp;
      const cur = this.cur;
      // A slice past its time or its size is written before the event (the records behind wait for it).
      if (cur === undefined || t >= cur.end || (this.openEvents >= HISTORY_LIMITS.sliceEvents && t > cur.start)) {
        await this.roll(t);
        // Taking the next slice's starts may have stopped the index.
        if (this.stopped !== undefined) continue;
      }
      if (++this.openEvents > HISTORY_LIMITS.openEvents) {
        this.stop(`its open slice passed ${HISTORY_LIMITS.openEvents} events (shorten capture.checkpointIntervalMs)`);
        continue;
      }
      this.record(this.cur!, it.seq, it.event);
    }
  }

  /** One event into the open slice. */
  private record(cur: OpenSlice, seq: number, e: NormalizedEvent): void {
    if (e.type === 'feed') return push(cur.venues, e.venue, [seq, e]);
    const key = partKey(e.venue, e.marketId);
    // A market with state has its start from the slice before (`seal`); one first seen now had none.
    if (!cur.starts.has(key)) cur.starts.set(key, cur.log.add(EMPTY_START, -1));
    cur.events.set(key, cur.log.add([seq, e] satisfies SeqEvent, cur.events.get(key) ?? -1));
  }

  /**
   * Writes the open slice (if any) and opens the next for an event at `t`: on its time's boundary,
   * or at `t` when the last closed by size, or when it is the process's first and an earlier
   * process wrote a slice in this window (the boundary's name would overwrite that run's last slice).
   */
  private async roll(t: number): Promise<void> {
    const cur = this.cur;
    this.cur = undefined;
    this.openEvents = 0;
    const aligned = Math.floor(t / this.sliceMs) * this.sliceMs;
    if (cur === undefined && t < this.from) this.from = t;
    const latest = this.starts.length === 0 ? -Infinity : Math.max(...this.starts);
    const first = cur === undefined && latest >= aligned ? Math.max(this.from, latest + 1) : aligned;
    const next =
      cur !== undefined && t < cur.end ? openSlice(this.dir, t, cur.end) : openSlice(this.dir, Math.max(first, cur?.start ?? first), aligned + this.sliceMs);
    // The next slice is filled with its starts while this one is written, and read once it is open.
    if (cur !== undefined) await this.seal(cur, next.start, next);
    if (this.stopped !== undefined) next.log.dispose();
    else this.cur = next;
  }

  /**
   * Writes a slice as it goes (each market's start and events, then the venues' feed events) and,
   * given the next slice, puts there each market's start: its start here with its events and its
   * venue's feed events applied (`foldRuns`), or, for a market without either, its start's bytes
   * as they are. A fold that fails stops the index (the next slice's starts would be wrong); a
   * write that fails loses this slice only.
   */
  private async seal(cur: OpenSlice, to: number, next?: OpenSlice): Promise<void> {
    this.sealing = cur;
    const out = await SliceOut.open(this.dir, cur.start, this.opts.log);
    try {
      const resets = resetVenues(cur.venues);
      let keys: string[] = [];
      for (const key of cur.starts.keys()) {
        keys.push(key);
        if (keys.length < WRITE_BATCH) continue;
        if (await this.cutShort(next, out)) return;
        await this.sealBatch(cur, next, keys, resets, out);
        keys = [];
      }
      if (await this.cutShort(next, out)) return;
      await this.sealBatch(cur, next, keys, resets, out);
      await out.add([...cur.venues].map(([v, events]) => ['v', v, events] as const));
      if (await out.finish([coversFrom(cur.start, this.from), to])) this.sealed(cur.start);
    } catch (e) {
      await out.abort();
      this.stop(`taking the next slice's starts failed (${(e as Error).message})`);
    } finally {
      this.sealing = undefined;
      cur.log.dispose();
    }
  }

  /**
   * Whether a close's time is up while its open slice is written (`hurry`; a slice written as the
   * index rolls on is never cut): the file is dropped, and reads of its stretch answer `NotIndexedError`.
   */
  private async cutShort(next: OpenSlice | undefined, out: SliceOut): Promise<boolean> {
    if (next !== undefined || !this.hurried) return false;
    await out.abort();
    this.dropped = true;
    return true;
  }

  /** A batch of a slice's markets: their parts written, their starts of the next slice taken. */
  private async sealBatch(cur: OpenSlice, next: OpenSlice | undefined, keys: readonly string[], resets: ReadonlySet<VenueLabel>, out: SliceOut): Promise<void> {
    const entries: SliceEntry[] = [];
    const runs: MarketRun[] = [];
    for (const key of keys) {
      const at = cur.starts.get(key)!;
      const bytes = cur.log.packedAt(at);
      const start = unpack(bytes) as StartRecord;
      const events = cur.log.chain(cur.events.get(key)) as SeqEvent[];
      if (events.length > 0 || start.books.length > 0 || start.quote !== undefined)
        entries.push(['m', key, { books: start.books, quote: start.quote, events }]);
      if (next === undefined) continue;
      const [venue, marketId] = splitKey(key);
      if (events.length > 0 || resets.has(venue)) runs.push({ key, venue, marketId, start, events });
      else next.starts.set(key, next.log.addPacked(bytes, -1));
    }
    await out.add(entries);
    if (next === undefined || runs.length === 0) return;
    const ends = foldRuns(this.venues, runs, (v) => cur.venues.get(v) ?? NO_EVENTS);
    for (let i = 0; i < runs.length; i++) if (ends[i] !== undefined) next.starts.set(runs[i]!.key, next.log.add(ends[i], -1));
  }

  /** A slice written whole: listed, and the slices past retention pruned. */
  private sealed(start: number): void {
    this.written++;
    if (!this.starts.includes(start)) this.starts.push(start);
    this.files.delete(start);
    const oldest = this.store.oldest();
    if (oldest !== undefined && pruneSlices(this.dir, oldest - this.sliceMs) > 0) this.starts = sliceStarts(this.dir);
  }

  /** A market's part of a slice held in memory: its start and its events. */
  private partOf(cur: OpenSlice, key: string): MarketPart {
    const at = cur.starts.get(key);
    const st = at === undefined ? EMPTY_START : (cur.log.read(at) as StartRecord);
    return { books: st.books, quote: st.quote, events: cur.log.chain(cur.events.get(key)) as SeqEvent[] };
  }

  /** The start of the slice holding `t` (the latest slice starting at or before it). */
  private sliceAt(t: number): number | undefined {
    if (this.cur && this.cur.start <= t) return this.cur.start;
    let best: number | undefined;
    if (this.sealing && this.sealing.start <= t) best = this.sealing.start;
    for (const s of this.starts) if (s <= t && (best === undefined || s > best)) best = s;
    return best;
  }

  /** What slice `start` covers: one in memory from its start (or the process's) on; one on disk as its file says (undefined: an older file, or one that does not open). */
  private coverOf(start: number): Covers | undefined {
    if (this.cur?.start === start || this.sealing?.start === start) return [coversFrom(start, this.from), Infinity];
    try {
      return this.files.get(start).covers;
    } catch {
      return undefined;
    }
  }

  private sliceSource(start: number): SliceSource {
    // The open slice, or the one being written (the records behind wait for it): starts and events in memory.
    const mem = this.cur?.start === start ? this.cur : this.sealing?.start === start ? this.sealing : undefined;
    if (mem)
      return {
        market: (key) => {
          const part = this.partOf(mem, key);
          return !mem.events.has(key) && part.books.length === 0 && part.quote === undefined ? undefined : part;
        },
        venue: (v) => mem.venues.get(v) ?? [],
      };
    return this.files.get(start);
  }
}

/** What a slice gives a read: a market's part and a venue's feed events. */
export interface SliceSource {
  market(key: string): MarketPart | undefined;
  venue(v: VenueLabel): readonly SeqEvent[];
}

/** Slice files opened for reads (their directories parsed once), at most OPEN_FILES at a time. */
export class SliceFiles {
  private readonly files = new Map<number, SliceFile>();

  constructor(private readonly dir: string) {}

  /** The slice file starting at `start` (a missing or damaged file throws, naming it). */
  get(start: number): SliceFile {
    let f = this.files.get(start);
    if (f === undefined) {
      if (this.files.size >= OPEN_FILES) this.files.clear();
      this.files.set(start, (f = SliceFile.open(this.dir, start)));
    }
    return f;
  }

  /** Forgets a slice (written again, or pruned). */
  delete(start: number): void {
    this.files.delete(start);
  }
}

/**
 * The state of `markets` at receive time `t` from the slice holding it: each market's start (its
 * books and quote as the slice began), then the markets' events and their venues' feed events up
 * to `t`, merged by seq, through `applyEvent` on a scratch `EngineState` (`applyRuns`). Markets the slice does not hold
 * come back without books or quotes.
 */
export function stateFrom(venues: readonly VenueConfig[], src: SliceSource | undefined, t: number, markets: readonly MarketRef[]): EngineState {
  const s = new EngineState(venues, { tradeCapacity: 1 });
  if (src === undefined) return s;
  const runs: MarketRun[] = [];
  for (const m of markets) {
    s.books.link(m.venue, m.marketId, m.yes, m.no);
    const key = partKey(m.venue, m.marketId);
    const part = src.market(key);
    if (part !== undefined) runs.push({ key, venue: m.venue, marketId: m.marketId, start: part, events: part.events });
  }
  applyRuns(s, runs, (v) => src.venue(v), t);
  return s;
}

/** A state for the API from markets rebuilt on the index's thread: their books (linked to their markets' roles) and quotes. */
export function restoreRebuilt(venues: readonly VenueConfig[], markets: readonly MarketRef[], r: Rebuilt): EngineState {
  const s = new EngineState(venues, { tradeCapacity: 1 });
  for (const m of markets) s.books.link(m.venue, m.marketId, m.yes, m.no);
  for (const [venue, ins, bids, asks, ts, recvTs, ready] of r.books) {
    const b = s.books.restore(venue, ins, bids, asks, ts, recvTs);
    if (!ready) b.reset();
  }
  for (const q of r.quotes) s.quotes.restore(q);
  return s;
}

const NO_EVENTS: readonly SeqEvent[] = [];

/** The venues whose books a feed event of the slice reset (`resetsBooks`, as `applyEvent` does): each of their markets' starts is folded. */
function resetVenues(venues: ReadonlyMap<VenueLabel, readonly SeqEvent[]>): Set<VenueLabel> {
  const out = new Set<VenueLabel>();
  for (const [v, events] of venues) if (events.some(([, e]) => e.type === 'feed' && resetsBooks(e))) out.add(v);
  return out;
}

/**
 * A slice file being written, whose failure loses the file only: the first error is logged, the
 * file dropped, and the rest of the slice's writes skipped (the next slice's starts are taken all
 * the same).
 */
class SliceOut {
  private constructor(
    private w: SliceWriter | undefined,
    private readonly start: number,
    private readonly log: Logger | undefined,
  ) {}

  static async open(dir: string, start: number, log: Logger | undefined): Promise<SliceOut> {
    const out = new SliceOut(undefined, start, log);
    await out.guard(async () => void (out.w = await SliceWriter.open(dir, start)));
    return out;
  }

  add(entries: readonly SliceEntry[]): Promise<void> {
    const w = this.w;
    return w === undefined ? Promise.resolve() : this.guard(() => w.add(entries));
  }

  /** Writes the directory (with what the slice covers); whether the slice is now on disk. */
  async finish(covers: Covers): Promise<boolean> {
    const w = this.w;
    if (w === undefined) return false;
    await this.guard(async () => void (await w.finish(covers)));
    return this.w !== undefined;
  }

  async abort(): Promise<void> {
    await this.w?.abort();
    this.w = undefined;
  }

  private async guard(f: () => Promise<void>): Promise<void> {
    try {
      await f();
    } catch (e) {
      this.log?.error({ err: (e as Error).message, slice: this.start }, 'history slice not written; as_of reads in its stretch answer as_of.not_indexed');
      await this.abort();
    }
  }
}

function push<K>(m: Map<K, SeqEvent[]>, k: K, e: SeqEvent): void {
  const l = m.get(k);
  if (l) l.push(e);
  else m.set(k, [e]);
}

function splitKey(key: string): [VenueLabel, string] {
  const i = key.indexOf('\u0000');
  return [key.slice(0, i), key.slice(i + 1)];
}
