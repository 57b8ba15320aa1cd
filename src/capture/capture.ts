import { pack } from 'msgpackr';
import type { OrderBook } from '../core/book.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import type { NormalizedEvent, VenueLabel } from '../core/types.js';
import { packCheckpoint } from './checkpoint.js';
import { BLOCK_BYTES, BlockBuilder, FLUSH_STREAM, KIND, type BlockInfo } from './record.js';
import type { CaptureSink, MappingCapture, VenueCapture } from './sink.js';
import { CaptureDiskFullError, type CaptureStore } from './store.js';

/** How often a write failure that keeps repeating is logged again. */
const FAILURE_LOG_MS = 60_000;

export interface CaptureOptions {
  readonly clock: Clock;
  readonly log: Logger;
  /** A stream's records are sealed into one compressed block once this many bytes are buffered (default 1 MiB). */
  readonly blockBytes?: number;
  /** Bytes buffered or being written past which new records are dropped and counted (default 256 MiB). */
  readonly maxPendingBytes?: number;
}

/** What /status and /metrics show of the capture. */
export interface CaptureStats {
  /** Records appended by this process. */
  readonly records: number;
  /** Segment bytes on disk (all processes, after retention). */
  readonly bytes: number;
  /** Bytes written by this process (compressed) and the raw bytes they hold. */
  readonly written: number;
  readonly rawWritten: number;
  /** Records waiting to be written (buffered or being compressed and written): the lag. */
  readonly pending: number;
  /** Records not kept: capture paused (disk full), the buffer past its bound, or a failed write. */
  readonly drops: number;
  readonly paused: boolean;
  readonly reason: string | undefined;
}

/** A block finished from a stream's buffer, with what it counts against the pending bound. */
interface Sealed {
  readonly body: Buffer;
  readonly info: BlockInfo;
  readonly records: number;
  readonly payloadBytes: number;
}

/** One queued write of a stream: a block finished when it was queued (a full one), or, left empty, whatever the stream buffers by the time the write starts. */
interface Write {
  sealed?: Sealed;
}

/** One stream's buffer and its write chain (writes of a stream never overlap; streams write in parallel). */
class StreamWriter {
  /** The records of the block being filled, in its byte layout; reused after each seal. */
  readonly block: BlockBuilder;
  /** Payload bytes (characters of a text) in `block`, as `maxPendingBytes` counts them. */
  payloadBytes = 0;
  chain: Promise<void> = Promise.resolve();
  /** The write queued behind the chain that has not started and holds no block yet: it takes every record buffered until it starts. */
  waiting: Write | undefined;
  /** Its writers, made when first asked for: for writers that map nothing (`venue`) and for a feed runtime (`mapping`). */
  raw: VenueWriter | undefined;
  mapping: MappingWriter | undefined;

  constructor(
    readonly name: string,
    blockBytes: number,
  ) {
    this.block = new BlockBuilder(undefined, blockBytes);
  }
}

/** A writer of one stream's records; `maps`: its caller maps each record through the live frame path and hands the events (`MappingWriter`). */
class VenueWriter implements VenueCapture {
  constructor(
    protected readonly s: StreamWriter,
    protected readonly cap: Capture,
    private readonly maps: boolean,
  ) {}

  frame(text: string, conn: number, t: number, bytes?: Uint8Array): number {
    return this.cap.add(this.s, KIND.frame, conn, t, text, bytes, this.maps);
  }

  doc(data: unknown, t: number): number {
    // A document handed over as text takes the text path on replay, as it did live.
    if (typeof data === 'string') return this.cap.add(this.s, KIND.frame, 0, t, data, undefined, this.maps);
    return this.cap.add(this.s, KIND.doc, 0, t, JSON.stringify(data), undefined, this.maps);
  }

  event(e: NormalizedEvent): number {
    return this.cap.add(this.s, KIND.event, 0, e.localTimestamp, pack(e), undefined, this.maps);
  }

  reset(conn: number, instruments?: readonly string[]): number {
    return this.cap.add(this.s, KIND.reset, conn, this.cap.now(), instruments === undefined ? '' : JSON.stringify(instruments), undefined, this.maps);
  }

  session(options: Readonly<Record<string, unknown>>): number {
    return this.cap.add(this.s, KIND.mapper, 0, this.cap.now(), JSON.stringify(options), undefined, this.maps);
  }
}

/** A feed runtime's writer (`Capture.mapping`): its records are tapped as mapped by it, and their events come through `mapped`. */
class MappingWriter extends VenueWriter implements MappingCapture {
  mapped(seq: number, e: NormalizedEvent): void {
    const tap = this.cap.tap;
    if (tap !== undefined && seq > 0) tap.event(seq, e);
  }
}

/**
 * What sees the capture's records as they are appended and the live frame path's events of each
 * (the history index's handoff, src/history/handoff.ts): `record` for every record kept, in seq
 * order, and `event` for each event the live path made of record `seq` (a record appended while
 * another's events come out, by a protocol's hook, puts its events between them: seq says whose).
 * `maps`: the record's writer maps it and hands its events (a feed runtime's `mapping` writer, or
 * a flush marker, which has none); otherwise nobody will, and `conn` and `payload` are the record's
 * as stored (a `Uint8Array` payload is valid only during the call), for the tap to map it.
 */
export interface CaptureTap {
  record(seq: number, stream: string, kind: number, t: number, maps: boolean, conn: number, payload: string | Uint8Array): void;
  event(seq: number, e: NormalizedEvent): void;
}

/**
 * The capture log's writer: every feed runtime appends to it (the `CaptureSink`) and it gives each
 * record the next global sequence number, so the log holds the total receive order across venues.
 * Per call it only appends to its stream's block; a stream's buffer becomes one Brotli block
 * (on libuv's thread pool) when it reaches `blockBytes`, or at `flush()`, which the capture flow
 * (pipelines/capture.ts) calls on an interval, when its write gets its turn: flushes while a
 * stream's earlier write waits add to one block (`seal`). Bounded: past `maxPendingBytes` waiting to be
 * written, and while the disk is nearly full, records are dropped and counted, never queued.
 */
export class Capture implements CaptureSink {
  private readonly writers = new Map<string, StreamWriter>();
  private readonly blockBytes: number;
  private readonly maxPending: number;
  private seq: number;
  private lastFlushSeq = -1;
  private records = 0;
  private pendingBytes = 0;
  private pendingRecords = 0;
  private drops = 0;
  /** The last write failure logged, and when (repeats within FAILURE_LOG_MS are counted in `drops`, not logged). */
  private lastFailure: string | undefined;
  private lastFailureLogged = 0;
  private written = 0;
  private rawWritten = 0;
  private diskBase: number;
  private pausedFor: string | undefined;
  /** Sees each record kept and its live events (the history index's handoff); absent: nothing extra per record. */
  tap: CaptureTap | undefined;

  constructor(
    readonly store: CaptureStore,
    private readonly opts: CaptureOptions,
  ) {
    this.blockBytes = opts.blockBytes ?? BLOCK_BYTES;
    this.maxPending = opts.maxPendingBytes ?? 256 * 1024 * 1024;
    this.seq = store.lastSeq();
    this.diskBase = store.bytes();
  }

  venue(label: VenueLabel): VenueCapture {
    const s = this.writer(label);
    return (s.raw ??= new VenueWriter(s, this, false));
  }

  mapping(label: VenueLabel): MappingCapture {
    const s = this.writer(label);
    return (s.mapping ??= new MappingWriter(s, this, true));
  }

  /** The live per-turn flush ran at `t`: recorded once per turn that captured something. */
  markFlush(t: number): void {
    if (this.seq === this.lastFlushSeq) return;
    // Its record is its event: the flush marker (nothing to map).
    this.add(this.writer(FLUSH_STREAM), KIND.flush, 0, t, '', undefined, true);
    this.lastFlushSeq = this.seq;
  }

  now(): number {
    return this.opts.clock.now();
  }

  /** The sequence number of the last record appended (a reader that waits for `flush()` then finds every record up to it on disk). */
  get lastSeq(): number {
    return this.seq;
  }

  /**
   * Appends one record (see the class comment); the hot path. `bytes`: what a text payload was
   * decoded from, when at hand; `maps`: whether its writer maps it (`CaptureTap`). Answers its
   * sequence number (0: dropped).
   */
  add(w: StreamWriter, kind: number, conn: number, t: number, payload: string | Uint8Array, bytes: Uint8Array | undefined, maps: boolean): number {
    if (this.pausedFor !== undefined || this.pendingBytes > this.maxPending) {
      this.drops++;
      return 0;
    }
    const b = w.block;
    const seq = ++this.seq;
    b.push(kind, conn, seq, t, payload, bytes);
    if (this.tap !== undefined) this.tap.record(seq, w.name, kind, t, maps, conn, payload);
    this.records++;
    this.pendingRecords++;
    this.pendingBytes += payload.length;
    w.payloadBytes += payload.length;
    if (b.size >= this.blockBytes) this.sealFull(w);
    return seq;
  }

  /** Seals every stream's buffer and waits until all of it is written (or dropped). Resumes a paused capture once there is room. */
  async flush(): Promise<void> {
    if (this.pausedFor !== undefined && this.store.hasRoom()) {
      this.opts.log.info('capture resumed: disk space is back');
      this.pausedFor = undefined;
    }
    for (const w of this.writers.values()) this.seal(w);
    await Promise.all([...this.writers.values()].map((w) => w.chain));
  }

  /**
   * Writes a checkpoint of `books` (a BookStore's entries) covering every record so far: feeds
   * apply each frame as it arrives, so the state holds every record appended before this call.
   */
  async checkpoint(books: Iterable<readonly [VenueLabel, string, OrderBook]>): Promise<void> {
    const seq = this.seq;
    const t = this.now();
    const packed = packCheckpoint(books, seq, t);
    try {
      this.written += await this.store.writeCheckpoint({ seq, t, packed });
    } catch (e) {
      this.failed(e);
    }
  }

  /** Retention: drops whole segments older than `maxAgeMs` or past `maxBytes` in total. */
  prune(maxAgeMs: number, maxBytes: number): { readonly removed: number; readonly bytes: number } {
    const r = this.store.prune(this.now(), maxAgeMs, maxBytes);
    if (r.removed > 0) {
      this.diskBase = this.store.bytes() - this.written;
      this.opts.log.info(r, 'capture retention removed segments');
    }
    return r;
  }

  get stats(): CaptureStats {
    return {
      records: this.records,
      bytes: this.diskBase + this.written,
      written: this.written,
      rawWritten: this.rawWritten,
      pending: this.pendingRecords,
      drops: this.drops,
      paused: this.pausedFor !== undefined,
      reason: this.pausedFor,
    };
  }

  /** Writes what is buffered and closes the open segments. */
  async close(): Promise<void> {
    await this.flush();
    await this.store.close();
  }

  private writer(name: string): StreamWriter {
    let w = this.writers.get(name);
    if (w === undefined) this.writers.set(name, (w = new StreamWriter(name, this.blockBytes)));
    return w;
  }

  /**
   * Has the stream's buffered records written (a flush): queues a write behind the stream's earlier
   * ones that ends the block when it starts, unless one already waits, which will take these
   * records too. A writer behind on its compressions (a loaded host listing 108k markets: a
   * second's blocks of every stream took seconds each to come back from the thread pool) thus
   * writes one block per stream per write it gets to, however many flushes came meanwhile, where a
   * block per stream per flush piled up (500 blocks waiting, each a compression's fixed cost).
   */
  private seal(w: StreamWriter): void {
    if (w.waiting !== undefined || w.block.length === 0) return;
    const write: Write = {};
    w.waiting = write;
    this.queue(w, write);
  }

  /** The stream's block is full: ended now (into the write waiting, if one is), so blocks stay near `blockBytes`. */
  private sealFull(w: StreamWriter): void {
    const waiting = w.waiting;
    const write = waiting ?? {};
    write.sealed = this.finish(w);
    w.waiting = undefined;
    if (waiting === undefined) this.queue(w, write);
  }

  /** Ends the stream's block (one copy into its body at most, here); undefined when it holds no record. */
  private finish(w: StreamWriter): Sealed | undefined {
    const records = w.block.length;
    if (records === 0) return undefined;
    const payloadBytes = w.payloadBytes;
    w.payloadBytes = 0;
    const { body, info } = w.block.finish();
    return { body, info, records, payloadBytes };
  }

  /** Queues a block's compression and write behind the stream's earlier ones. */
  private queue(w: StreamWriter, write: Write): void {
    w.chain = w.chain.then(async () => {
      if (w.waiting === write) w.waiting = undefined;
      const block = write.sealed ?? this.finish(w);
      if (block === undefined) return;
      try {
        let compressed: Buffer;
        try {
          compressed = await this.store.seal(block.body);
        } finally {
          w.block.recycle(block.body);
        }
        this.written += await this.store.append(w.name, compressed, block.info);
        this.rawWritten += block.info.rawBytes;
      } catch (e) {
        this.drops += block.records;
        this.failed(e);
      } finally {
        this.pendingBytes -= block.payloadBytes;
        this.pendingRecords -= block.records;
      }
    });
  }

  /** A write that failed: a full disk pauses capture (like the other writes); anything else is logged. */
  private failed(e: unknown): void {
    const full = e instanceof CaptureDiskFullError || (e as NodeJS.ErrnoException).code === 'ENOSPC';
    if (full) {
      if (this.pausedFor === undefined) this.opts.log.warn({ err: (e as Error).message }, 'capture paused: disk nearly full');
      this.pausedFor = (e as Error).message;
      return;
    }
    const err = e instanceof Error ? e.message : String(e);
    const now = this.opts.clock.now();
    // A failure that repeats (a removed or unmounted directory fails every block of every stream)
    // is logged when it first shows and then once a minute with what was dropped meanwhile.
    if (err === this.lastFailure && now - this.lastFailureLogged < FAILURE_LOG_MS) return;
    this.opts.log.error({ err, dropped: this.drops }, 'capture write failed; its records were dropped');
    this.lastFailure = err;
    this.lastFailureLogged = now;
  }
}
