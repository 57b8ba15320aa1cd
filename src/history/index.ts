import { join } from 'node:path';
import { ReplayFeed, type Capture, type CaptureRecord, type ReplayItem } from '../capture/index.js';
import type { VenueConfig } from '../config/schema.js';
import type { Logger } from '../core/log.js';
import type { NormalizedEvent, VenueLabel } from '../core/types.js';
import { applyEvent, EngineState } from '../state/engine.js';
import type { QuoteRecord } from '../state/quotes.js';
import { CaptureTail, SerialSync } from './tail.js';
import { partKey, pruneSlices, SliceFile, sliceStarts, writeSlice, type BookStart, type MarketPart, type SeqEvent, type Slice } from './slice.js';

export { partKey, type Slice } from './slice.js';

/** Slice files kept open (their directories parsed) for reads. */
const OPEN_FILES = 64;

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

/** The slice being filled: each market's state when it began (taken lazily) and its events. */
interface OpenSlice {
  readonly start: number;
  readonly starts: Map<string, MarketPart>;
  readonly events: Map<string, SeqEvent[]>;
  readonly venues: Map<VenueLabel, SeqEvent[]>;
}

/**
 * The history index behind `as_of` reads. It follows the capture log as it is written (after each
 * of the capture flow's writes, `sync()`), runs its records through the SAME replay path as
 * `/replay` and `crossbook replay` (`ReplayFeed`: the live frame path and mappers, one mapper per
 * venue kept across the whole run, so relative deltas keep their book) and applies the events to
 * its own `EngineState` with the live `applyEvent`. Every `sliceMs` it writes a slice file: each
 * market's state as the slice began and its events in it (`slice.ts`). A read of a market at a
 * moment T is then: the slice holding T, the market's start state, and its events up to T,
 * applied with `applyEvent` to a scratch `EngineState` (the same book and quote code as live),
 * at most one slice of one market's events.
 *
 * It starts with this process's capture (the first records after the log's last sequence number
 * when it is built), as the feeds start with fresh connections; slice files of earlier processes
 * stay readable.
 */
/**
 * Bounds on what the index holds: the events of its open slice (kept in memory until the slice is
 * written) and the records one sync may have to catch up. Past either, the index stops (with a log
 * line, and `as_of` reads say why) rather than grow without bound: at 108k markets on 2 cores it fell
 * behind the capture and took the process past 19 GiB in minutes.
 */
export const HISTORY_LIMITS = { openEvents: 1_000_000, behind: 500_000 };

export class HistoryIndex {
  private readonly feed: ReplayFeed;
  /** Why the index stopped following the capture (a bound was passed); undefined while it runs. */
  stopped: string | undefined;
  private openEvents = 0;
  private readonly state: EngineState;
  private readonly dir: string;
  private readonly sliceMs: number;
  private readonly tail: CaptureTail;
  private readonly syncs = new SerialSync(
    () => this.syncOnce(),
    (e) => this.opts.log?.error({ err: (e as Error).message }, 'history index: reading the capture failed'),
  );
  private writes: Promise<void>[] = [];
  private lastSeq: number;
  private lastT: number;
  private cur: OpenSlice | undefined;
  /** Slices being written (still read from memory) and slice starts on disk. */
  private readonly sealing = new Map<number, Slice>();
  private starts: number[];
  private readonly files = new Map<number, SliceFile>();
  /** instrument → market, per venue: which market a book belongs to when a slice's start states are taken. */
  private readonly marketOf = new Map<string, string>();
  /** market (partKey) → the instruments of its books. */
  private readonly instruments = new Map<string, string[]>();
  /** Records whose sequence number did not follow the previous one (dropped by the writer or read past). */
  gaps = 0;
  /** Slices written by this process. */
  written = 0;

  constructor(
    private readonly capture: Capture,
    venues: readonly VenueConfig[],
    private readonly opts: { readonly sliceMs: number; readonly log?: Logger | undefined },
  ) {
    this.feed = new ReplayFeed(venues, opts.log);
    // Trades and candles are not read back from here: the smallest trade ring.
    this.state = new EngineState(venues, { tradeCapacity: 1 });
    this.dir = join(capture.store.dir, '_history');
    this.sliceMs = opts.sliceMs;
    this.lastSeq = capture.lastSeq;
    this.lastT = capture.now();
    this.tail = new CaptureTail(capture.store, this.lastSeq);
    this.starts = sliceStarts(this.dir);
  }

  /**
   * Writes what the capture buffers and indexes every record up to it. Runs never overlap, and calls
   * made while one is waiting to start share it (it starts after them, so it covers what they ask
   * for): a slow catch-up never piles up a queue.
   */
  sync(): Promise<void> {
    return this.syncs.run();
  }

  private async syncOnce(): Promise<void> {
    const upTo = this.capture.lastSeq;
    await this.capture.flush();
    if (this.stopped !== undefined) return;
    if (upTo - this.lastSeq > HISTORY_LIMITS.behind)
      return this.stop(`it fell ${upTo - this.lastSeq} records behind the capture (bound ${HISTORY_LIMITS.behind})`);
    await this.catchUp(upTo);
    // Slices closed by this catch-up are on disk when it resolves.
    const writes = this.writes;
    this.writes = [];
    await Promise.all(writes);
  }

  /** The starts of the slices on disk, oldest first. */
  get slicesOnDisk(): readonly number[] {
    return this.starts;
  }

  /** The receive time up to which every captured record is indexed. */
  get indexedTo(): number {
    return this.lastT;
  }

  /** What `as_of` may ask for: from the first slice kept (and not before `retainedFrom`) to now; undefined: nothing indexed yet. */
  window(now: number, retainedFrom: number): HistoryWindow | undefined {
    const first = this.starts[0] ?? this.cur?.start;
    if (first === undefined) return undefined;
    return { from: Math.max(first, retainedFrom), to: now };
  }

  /**
   * The state of `markets` at receive time `t`: every event up to `t` applied (through `applyEvent`)
   * to the markets' state at the start of the slice holding `t`. Call `sync()` first when `t` may be
   * past `indexedTo`. Markets the index never saw come back without books or quotes.
   */
  stateAt(t: number, markets: readonly MarketRef[]): EngineState {
    const s = new EngineState(this.state.venues, { tradeCapacity: 1 });
    const start = this.sliceAt(t);
    if (start === undefined) return s;
    const src = this.sliceSource(start);
    const venueEvents = new Map<VenueLabel, readonly SeqEvent[]>();
    for (const m of markets) {
      s.books.link(m.venue, m.marketId, m.yes, m.no);
      const part = src.market(partKey(m.venue, m.marketId));
      if (part === undefined) continue;
      let ve = venueEvents.get(m.venue);
      if (ve === undefined) venueEvents.set(m.venue, (ve = src.venue(m.venue)));
      for (const [ins, bids, asks, ts, recvTs, ready] of part.books) {
        const b = s.books.restore(m.venue, ins, bids, asks, ts, recvTs);
        if (!ready) b.reset();
      }
      if (part.quote) s.quotes.restore({ ...part.quote });
      applyMerged(s, part.events, ve, t);
    }
    return s;
  }

  /** Indexes what is left and writes the open slice (the service closes it after its feeds stop). */
  async close(): Promise<void> {
    await this.sync();
    const cur = this.cur;
    this.cur = undefined;
    if (cur) await this.seal(cur);
  }

  /** Stops following the capture and lets go of the open slice; slices already written stay readable. */
  private stop(why: string): void {
    this.stopped = `the history index stopped: ${why}; as_of reads need capture.history on a machine that keeps up, or fewer markets`;
    this.cur = undefined;
    this.opts.log?.warn({ reason: this.stopped }, 'history index stopped');
  }

  private async catchUp(upTo: number): Promise<void> {
    if (upTo <= this.lastSeq) return;
    const items: ReplayItem[] = [];
    for (const r of await this.tail.read(upTo)) this.record(r, items);
  }

  /** One record: its events into the open slice (a new one when its time passed the slice's end) and the state. */
  private record(r: CaptureRecord, items: ReplayItem[]): void {
    if (r.seq !== this.lastSeq + 1) this.gaps++;
    this.lastSeq = r.seq;
    if (r.t > this.lastT) this.lastT = r.t;
    items.length = 0;
    this.feed.apply(r, items);
    for (const it of items) {
      if (it.type !== 'event' || this.stopped !== undefined) continue;
      const e = it.event;
      const cur = this.sliceFor(e.localTimestamp);
      if (++this.openEvents > HISTORY_LIMITS.openEvents) {
        this.stop(`its open slice passed ${HISTORY_LIMITS.openEvents} events (shorten capture.checkpointIntervalMs)`);
        return;
      }
      if (e.type === 'feed') push(cur.venues, e.venue, [it.seq, e]);
      else {
        const key = partKey(e.venue, e.marketId);
        // The market's state before its first event of the slice is its start (a market without events is taken when the slice closes).
        if (!cur.starts.has(key)) cur.starts.set(key, this.startOf(e.venue, e.marketId));
        push(cur.events, key, [it.seq, e]);
        if (e.type === 'book_snapshot') this.bookOf(e.venue, e.instrument, e.marketId, key);
      }
      applyEvent(this.state, e);
    }
  }

  /** The open slice for an event at `t`: a new one when `t` is past the open one's end (which is then written). */
  private sliceFor(t: number): OpenSlice {
    const cur = this.cur;
    if (cur !== undefined && t < cur.start + this.sliceMs) return cur;
    if (cur !== undefined) this.closeSlice(cur);
    this.openEvents = 0;
    const start = Math.floor(t / this.sliceMs) * this.sliceMs;
    const next: OpenSlice = { start: Math.max(start, cur?.start ?? start), starts: new Map(), events: new Map(), venues: new Map() };
    this.cur = next;
    return next;
  }

  /** Takes the start of every market the slice did not touch, and writes it. */
  private closeSlice(cur: OpenSlice): void {
    for (const q of this.state.quotes.all()) {
      const key = partKey(q.venue, q.marketId);
      if (!cur.starts.has(key)) cur.starts.set(key, this.startOf(q.venue, q.marketId));
    }
    for (const [venue, ins] of this.state.books.entries()) {
      const marketId = this.marketOf.get(`${venue}\u0000${ins}`) ?? ins;
      const key = partKey(venue, marketId);
      if (!cur.starts.has(key)) cur.starts.set(key, this.startOf(venue, marketId));
    }
    this.writes.push(this.seal(cur));
  }

  private async seal(cur: OpenSlice): Promise<void> {
    const markets = new Map<string, MarketPart>();
    for (const [key, st] of cur.starts) markets.set(key, { books: st.books, quote: st.quote, events: cur.events.get(key) ?? [] });
    const slice: Slice = { start: cur.start, markets, venues: cur.venues };
    this.sealing.set(cur.start, slice);
    try {
      await writeSlice(this.dir, slice);
      this.written++;
      if (!this.starts.includes(cur.start)) this.starts.push(cur.start);
      this.files.delete(cur.start);
      const oldest = this.capture.store.oldest();
      if (oldest !== undefined && pruneSlices(this.dir, oldest - this.sliceMs) > 0) this.starts = sliceStarts(this.dir);
    } catch (e) {
      this.opts.log?.error({ err: (e as Error).message, slice: cur.start }, 'history slice not written; as_of reads in it fall back to the slice before');
    } finally {
      this.sealing.delete(cur.start);
    }
  }

  /** A market's state now, copied (the state goes on changing). */
  private startOf(venue: VenueLabel, marketId: string): MarketPart {
    const books: BookStart[] = [];
    for (const ins of this.instrumentsOf(venue, marketId)) {
      const b = this.state.books.instrument(venue, ins);
      if (b) books.push([ins, b.bids.levels(), b.asks.levels(), b.timestamp, b.recvTs, b.ready]);
    }
    const q = this.state.quotes.get(venue, marketId);
    return { books, quote: q && ({ ...q } as QuoteRecord), events: [] };
  }

  /** Notes that `instrument`'s book belongs to the market `key` (a book is created by its snapshot). */
  private bookOf(venue: VenueLabel, instrument: string, marketId: string, key: string): void {
    const ik = `${venue}\u0000${instrument}`;
    if (this.marketOf.get(ik) === marketId) return;
    this.marketOf.set(ik, marketId);
    const l = this.instruments.get(key);
    if (l) l.push(instrument);
    else this.instruments.set(key, [instrument]);
  }

  /** The instruments whose books belong to a market (as the books' snapshots named them). */
  private instrumentsOf(venue: VenueLabel, marketId: string): readonly string[] {
    return this.instruments.get(partKey(venue, marketId)) ?? NONE;
  }

  /** The start of the slice holding `t` (the latest slice starting at or before it). */
  private sliceAt(t: number): number | undefined {
    if (this.cur && this.cur.start <= t) return this.cur.start;
    let best: number | undefined;
    for (const s of this.sealing.keys()) if (s <= t && (best === undefined || s > best)) best = s;
    for (const s of this.starts) if (s <= t && (best === undefined || s > best)) best = s;
    return best;
  }

  private sliceSource(start: number): { market(key: string): MarketPart | undefined; venue(v: VenueLabel): readonly SeqEvent[] } {
    const cur = this.cur;
    if (cur && cur.start === start)
      return {
        market: (key) => {
          const events = cur.events.get(key);
          const st = cur.starts.get(key) ?? this.startOf(...splitKey(key));
          return events === undefined && st.books.length === 0 && st.quote === undefined ? undefined : { ...st, events: events ?? [] };
        },
        venue: (v) => cur.venues.get(v) ?? [],
      };
    const sealing = this.sealing.get(start);
    if (sealing) return { market: (key) => sealing.markets.get(key), venue: (v) => sealing.venues.get(v) ?? [] };
    let f = this.files.get(start);
    if (f === undefined) {
      if (this.files.size >= OPEN_FILES) this.files.clear();
      this.files.set(start, (f = SliceFile.open(this.dir, start)));
    }
    return f;
  }
}

/** Applies a market's events and its venue's feed events up to `t`, merged by sequence number. */
function applyMerged(s: EngineState, events: readonly SeqEvent[], venue: readonly SeqEvent[], t: number): void {
  let j = 0;
  for (let i = 0; i < events.length; i++) {
    const [seq, e] = events[i]!;
    while (j < venue.length && venue[j]![0] < seq) applyUpTo(s, venue[j++]![1], t);
    applyUpTo(s, e, t);
  }
  while (j < venue.length) applyUpTo(s, venue[j++]![1], t);
}

function applyUpTo(s: EngineState, e: NormalizedEvent, t: number): void {
  if (e.localTimestamp <= t) applyEvent(s, e);
}

const NONE: readonly string[] = [];

function push<K>(m: Map<K, SeqEvent[]>, k: K, e: SeqEvent): void {
  const l = m.get(k);
  if (l) l.push(e);
  else m.set(k, [e]);
}

function splitKey(key: string): [VenueLabel, string] {
  const i = key.indexOf('\u0000');
  return [key.slice(0, i), key.slice(i + 1)];
}
