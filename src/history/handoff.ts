/**
 * The live events handed to the history index's thread, so that it indexes what the main thread's
 * feeds made of each capture record instead of mapping every frame a second time (at 108k markets
 * that second set of mappers held ~90 MiB of the thread's heap and took ~56 s of CPU per ten
 * minutes: BENCHMARKS.md, issue 34, candidate (b)).
 *
 * A capture record is appended before the live frame path maps it (src/venues/common/runtime.ts),
 * so each event goes out with the seq of the record it was made of (`VenueCapture.mapped`).
 * `Handoff` (main thread, the capture's tap) keeps, per record kept, its stream, kind and receive
 * time, and each event with its record's seq, until the next sync takes them (`take`: one msgpack
 * buffer, transferred); `handedRecords` (the thread) turns a taken batch back into the records and,
 * per record, its events in order.
 *
 * Only a feed runtime's records come with their events (its writer is `CaptureSink.mapping`). A
 * record appended any other way (`CaptureSink.venue`: a test, an import) had no live events: the
 * tap keeps its connection and payload as stored, and the thread maps it (`HandedFeed`, a
 * `ReplayFeed` made when first needed), so the index and the normalized cache hold for it what a
 * replay of the capture gives, as for every other record. Before this (hand18, reverted in
 * df8cb48) such a record was indexed with no events, and /replay served its window as covered
 * and empty.
 */
import { Packr } from 'msgpackr';
import type { CaptureTap } from '../capture/capture.js';
import { FLUSH_STREAM, KIND, KIND_NAME, type CaptureRecord } from '../capture/record.js';
import { ownStrings, ReplayFeed, type ReplayItem } from '../capture/replay.js';
import type { VenueConfig } from '../config/schema.js';
import type { Logger } from '../core/log.js';
import type { NormalizedEvent } from '../core/types.js';

/** The records of one sync and their live events, as they cross threads. */
export interface HandedBatch {
  /** The seq of its first record (the rest follow one by one: the capture numbers the records it keeps so). */
  readonly first: number;
  readonly count: number;
  /** msgpack of `[t, kinds, streams, names, eventSeqs, events, rawAt, rawConn, rawPayload]` (see `Handoff.take`). */
  readonly bytes: Uint8Array;
}

/** Packs a batch at a time, with msgpackr records (each batch defines its own: no table shared by the threads); 0.5 µs an event against 0.8 without (bench/history-handoff.bench.ts). */
const packr = new Packr({ useRecords: true, moreTypes: true });

/** Past this many bytes, a batch's pack gives msgpackr a fresh buffer of this size (`Handoff.take`). */
const SMALL_PACK = 1 << 20;

/** A growable column of numbers. */
class Column<A extends Float64Array | Uint16Array | Uint8Array> {
  n = 0;
  constructor(
    public a: A,
    private readonly make: (n: number) => A,
  ) {}

  push(v: number): void {
    if (this.n === this.a.length) {
      const b = this.make(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = v;
  }

  /** Its values, copied out, and emptied (it keeps its room). */
  take(): A {
    const out = this.a.slice(0, this.n) as A;
    this.n = 0;
    return out;
  }
}

/**
 * The main thread's side: the capture's tap. Holds the records appended and the events mapped
 * since the last `take`, at most `limit` records: past it (no sync took them: the capture flow is
 * stuck) it lets go of them and of everything after, and `take` answers `overflow` (the index then
 * stops, as it stops when it falls that far behind). `off` (the index stopped or its thread died)
 * drops them too and holds nothing more.
 */
export class Handoff implements CaptureTap {
  private first = 0;
  private readonly t = new Column(new Float64Array(1024), (n) => new Float64Array(n));
  private readonly kinds = new Column(new Uint8Array(1024), (n) => new Uint8Array(n));
  private readonly streams = new Column(new Uint16Array(1024), (n) => new Uint16Array(n));
  private readonly eventSeqs = new Column(new Float64Array(1024), (n) => new Float64Array(n));
  private events: NormalizedEvent[] = [];
  private readonly streamIds = new Map<string, number>();
  private readonly names: string[] = [];
  /** The records no feed runtime maps (`CaptureTap`): their places in the batch, connections and payloads, for the thread to map. */
  private rawAt: number[] = [];
  private rawConn: number[] = [];
  private rawPayload: (string | Uint8Array)[] = [];
  /** Records let go of (past `limit`), reported by the next `take`. */
  private overflowed = 0;
  private stopped = false;
  /** `full` is queued (a microtask) and has not run yet. */
  private due = false;

  /**
   * `limit`: the records it holds at most (past it, it lets go of them). `batch` and `full`: once
   * it holds `batch` records and events together, `full` is called (once, in a microtask: after the
   * frame or document being mapped now has all its events out, so a take never splits a record's
   * events), for its holder to take them then rather than at its next sync. A take packs its
   * records and events in one synchronous pass on the main thread, 10-50 µs an event for market
   * and book events at load 15 (bench/handoff-scale.bench.ts): what a sync took after a capture
   * flush of 22 s (a 108k listing) was 47k events and a 1.9 s pause, and a flush held up for
   * minutes would have it pack hundreds of thousands at once.
   */
  constructor(
    private readonly limit: () => number,
    private readonly batch: () => number = () => Infinity,
    private readonly full?: () => void,
  ) {}

  /** Queues `full` once the batch bound is reached (see the constructor). */
  private filled(): void {
    if (this.due || this.full === undefined || this.t.n + this.events.length < this.batch()) return;
    this.due = true;
    queueMicrotask(() => {
      this.due = false;
      if (!this.stopped) this.full!();
    });
  }

  record(seq: number, stream: string, kind: number, t: number, maps: boolean, conn: number, payload: string | Uint8Array): void {
    if (this.stopped) return;
    if (this.t.n === 0) this.first = seq;
    else if (this.t.n >= this.limit()) {
      this.overflowed = this.t.n;
      this.off();
      return;
    }
    let id = this.streamIds.get(stream);
    if (id === undefined) {
      id = this.names.length;
      this.names.push(stream);
      this.streamIds.set(stream, id);
    }
    if (!maps) {
      this.rawAt.push(this.t.n);
      this.rawConn.push(conn);
      // A copy: an event record's payload is a view of msgpackr's buffer, which later packs write over once it wraps.
      this.rawPayload.push(typeof payload === 'string' ? payload : payload.slice());
    }
    this.t.push(t);
    this.kinds.push(kind);
    this.streams.push(id);
    this.filled();
  }

  event(seq: number, e: NormalizedEvent): void {
    if (this.stopped) return;
    this.eventSeqs.push(seq);
    this.events.push(e);
    this.filled();
  }

  /** Records held (not yet taken). */
  get held(): number {
    return this.t.n;
  }

  /** The records it let go of when it passed its bound (undefined: it did not). */
  get overflow(): number | undefined {
    return this.overflowed > 0 ? this.overflowed : undefined;
  }

  /** Everything held, as one batch for the thread (undefined: nothing held, or stopped); it holds nothing after. */
  take(): HandedBatch | undefined {
    if (this.stopped || this.t.n === 0) return undefined;
    const first = this.first;
    const count = this.t.n;
    const events = this.events;
    const raw = [this.rawAt, this.rawConn, this.rawPayload];
    this.events = [];
    this.rawAt = [];
    this.rawConn = [];
    this.rawPayload = [];
    const packed = packr.pack([this.t.take(), this.kinds.take(), this.streams.take(), this.names, this.eventSeqs.take(), events, ...raw]);
    // A copy of its own: msgpackr's buffer is shared with the packs that follow, and this one is transferred.
    const bytes = new Uint8Array(packed);
    // msgpackr packs into one buffer of its module (the capture's event records too), grown to 2-4x the largest pack
    // and kept, then allocated again at that size: a 16 MiB batch (a listing burst's second) left ~60 MiB of array
    // buffers on the main thread for the rest of the run. After a large batch it gets a small one again.
    if (packed.byteLength > SMALL_PACK) packr.useBuffer(Buffer.allocUnsafeSlow(SMALL_PACK));
    return { first, count, bytes };
  }

  /** Lets go of everything held and holds nothing more. */
  off(): void {
    this.stopped = true;
    this.t.n = this.kinds.n = this.streams.n = this.eventSeqs.n = 0;
    this.events = [];
    this.rawAt = [];
    this.rawConn = [];
    this.rawPayload = [];
  }
}

/**
 * One record of a handed batch, shaped as the capture reads it back. `handed`: its events came
 * with it (`items`; its payload is not carried); otherwise it carries its connection and payload
 * and has no items: nothing mapped it yet (`HandedFeed`).
 */
export interface HandedRecord {
  readonly record: CaptureRecord;
  readonly items: ReplayItem[];
  readonly handed: boolean;
}

/**
 * The thread's side: a batch as its records, in seq order, each with the items `ReplayFeed` gives
 * for it when its events were handed (an event's item carries its record's seq; a flush record its
 * marker).
 */
export function handedRecords(b: HandedBatch): HandedRecord[] {
  const [t, kinds, streams, names, eventSeqs, events, rawAt, rawConn, rawPayload] = packr.unpack(b.bytes) as [
    Float64Array,
    Uint8Array,
    Uint16Array,
    string[],
    Float64Array,
    NormalizedEvent[],
    number[],
    number[],
    (string | Uint8Array)[],
  ];
  if (
    t.length !== b.count ||
    kinds.length !== b.count ||
    streams.length !== b.count ||
    eventSeqs.length !== events.length ||
    rawConn.length !== rawAt.length ||
    rawPayload.length !== rawAt.length
  )
    throw new Error(`a handed batch does not hold what it says (${b.count} records from ${b.first})`);
  const order = seqOrder(eventSeqs);
  const out: HandedRecord[] = [];
  let j = 0;
  let r = 0;
  for (let i = 0; i < b.count; i++) {
    const seq = b.first + i;
    const kind = KIND_NAME[kinds[i]!];
    if (kind === undefined) throw new Error(`a handed record ${seq} of unknown kind ${kinds[i]}`);
    const venue = names[streams[i]!]!;
    // Events of a record that is not in the batch (before it: cannot be) are skipped with it.
    while (j < order.length && eventSeqs[order[j]!]! < seq) j++;
    if (rawAt[r] === i) {
      // Its own string (msgpackr's reader hands out slices of one string per batch).
      const payload = rawPayload[r]!;
      out.push({
        record: { seq, venue, t: t[i]!, kind, conn: rawConn[r]!, payload: typeof payload === 'string' ? (ownStrings(payload) as string) : payload },
        items: [],
        handed: false,
      });
      r++;
      continue;
    }
    const record: CaptureRecord = { seq, venue, t: t[i]!, kind, conn: 0, payload: '' };
    const items: ReplayItem[] = [];
    if (kinds[i] === KIND.flush) items.push({ type: 'flush', seq, at: record.t });
    while (j < order.length && eventSeqs[order[j]!] === seq) {
      // Strings of their own: msgpackr's reader hands out slices of one string per batch, which a kept key would hold whole.
      items.push({ type: 'event', seq, event: ownStrings(events[order[j]!]) as NormalizedEvent });
      j++;
    }
    out.push({ record, items, handed: true });
  }
  if (r !== rawAt.length) throw new Error(`a handed batch does not hold what it says (${rawAt.length} records to map, ${r} found)`);
  return out;
}

/**
 * The thread's items of handed records: a handed record's events as they came; any other record
 * mapped here, through a `ReplayFeed` made when first needed, as a replay of the capture maps it.
 *
 * That holds while each stream's feed session is all of one kind: a replay runs a stream's records
 * through one mapper from its session's `mapper` record on, so a record no runtime mapped, in the
 * middle of a runtime's session (or the other way round), changes what the replay makes of the
 * records after it, which the live events cannot say and a mapper here without the session's
 * earlier records cannot make. `apply` answers why for such a record, and the index stops rather
 * than index something a replay would not give (as_of then answers 503, /replay maps the frames).
 */
export class HandedFeed {
  private feed: ReplayFeed | undefined;
  /** Per stream, whether its current session's records are handed with their events (set by its first record, or its `mapper` record). */
  private readonly handedSession = new Map<string, boolean>();

  constructor(
    private readonly venues: readonly VenueConfig[],
    private readonly log?: Logger,
  ) {}

  /** The items of `h` (its own, or `out` filled); a string: why the index cannot take it. */
  apply(h: HandedRecord, out: ReplayItem[]): readonly ReplayItem[] | string {
    const r = h.record;
    if (r.venue !== FLUSH_STREAM) {
      const session = this.handedSession.get(r.venue);
      if (r.kind === 'mapper' || session === undefined) this.handedSession.set(r.venue, h.handed);
      else if (session !== h.handed)
        return h.handed
          ? `a feed runtime's record ${r.seq} of ${r.venue} came in a session whose records it did not write (no mapper record of its own before it); a replay of the capture maps it with that session's mapper, which the live events cannot say`
          : `record ${r.seq} of ${r.venue} was appended by a writer other than its feed runtime during the runtime's session; the live events after it did not see it, and a replay of the capture maps it with the session's mapper, which this thread does not hold`;
    }
    if (h.handed) return h.items;
    out.length = 0;
    (this.feed ??= new ReplayFeed(this.venues, this.log)).apply(r, out);
    return out;
  }
}

/**
 * The events' indexes ordered by their record's seq, stable: an event comes out after the events
 * of a record appended while its own record's events were still coming out (a protocol's hook).
 */
function seqOrder(seqs: Float64Array): number[] {
  const order = Array.from(seqs.keys());
  for (let i = 1; i < seqs.length; i++)
    if (seqs[i]! < seqs[i - 1]!) {
      order.sort((a, b) => seqs[a]! - seqs[b]! || a - b);
      break;
    }
  return order;
}
