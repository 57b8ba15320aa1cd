import { FLUSH_STREAM, type CaptureRecord } from './record.js';
import { HOUR_MS, type CaptureStore, type SegmentInfo } from './store.js';

/** A window of the capture log. */
export interface ReadRange {
  /** Receive times, ms since epoch, inclusive. */
  readonly from: number;
  readonly to: number;
  /** Venue labels to read (default: all); flush markers are read unless `flushes` is false. */
  readonly venues?: readonly string[] | undefined;
  readonly flushes?: boolean | undefined;
}

/** Records merged per batch handed out (bounded: a batch never waits for more than one block per stream). */
const BATCH = 4096;

/**
 * The records of a window in sequence order (the total receive order across venues), in batches:
 * a k-way merge of the venues' segments, holding at most two decompressed blocks per stream (the one merged and the next, read ahead), so
 * memory stays bounded however long the window. Streaming: nothing is read more than a block ahead of what is asked for.
 */
export async function* readBatches(store: CaptureStore, range: ReadRange): AsyncGenerator<CaptureRecord[]> {
  const wanted = range.venues === undefined ? undefined : new Set(range.venues);
  const streams = store.streams().filter((s) => (s === FLUSH_STREAM ? range.flushes !== false : wanted === undefined || wanted.has(s)));
  const sources: Source[] = [];
  for (const s of streams) {
    const src = new Source(blocksOf(store, s, range));
    if (await src.fill()) sources.push(src);
  }
  const out: CaptureRecord[] = [];
  try {
    yield* merge(sources, out);
  } finally {
    // A reader that stops early (a client gone) closes the segments it had open.
    for (const s of sources) await s.close();
  }
}

async function* merge(sources: Source[], out: CaptureRecord[]): AsyncGenerator<CaptureRecord[]> {
  while (sources.length > 0) {
    // The source with the smallest next seq; a linear scan (a handful of venues).
    let best = 0;
    let bestSeq = sources[0]!.head();
    for (let i = 1; i < sources.length; i++) {
      const s = sources[i]!.head();
      if (s < bestSeq) {
        best = i;
        bestSeq = s;
      }
    }
    const src = sources[best]!;
    // Take every record of this source below the next source's head in one go.
    let limit = Infinity;
    for (let i = 0; i < sources.length; i++) if (i !== best) limit = Math.min(limit, sources[i]!.head());
    src.takeBelow(limit, out);
    // Hand out what is merged before reading further (an error further on does not take it along).
    if (out.length >= BATCH || (src.empty() && out.length > 0)) {
      yield out;
      out = [];
    }
    if (src.empty() && !(await src.fill())) sources.splice(best, 1);
  }
  if (out.length > 0) yield out;
}

/** The records of a window one at a time, in sequence order (see readBatches). */
export async function* read(store: CaptureStore, range: ReadRange): AsyncGenerator<CaptureRecord> {
  for await (const batch of readBatches(store, range)) yield* batch;
}

/** One stream's records in the window, a block at a time. */
async function* blocksOf(store: CaptureStore, stream: string, range: ReadRange): AsyncGenerator<CaptureRecord[]> {
  const segs = store
    .segments(stream)
    // A block lives in the file of the hour its first record arrived in and may run a little past it.
    .filter((s: SegmentInfo) => s.hour <= range.to && s.hour + 2 * HOUR_MS > range.from)
    .sort((a, b) => a.firstSeq - b.firstSeq);
  for (const seg of segs)
    for await (const b of store.blocks(seg, range.from, range.to)) {
      const recs = b.ref.minT >= range.from && b.ref.maxT <= range.to ? b.records : b.records.filter((r) => r.t >= range.from && r.t <= range.to);
      if (recs.length > 0) yield recs;
    }
}

/**
 * One stream of the merge. While its block is being merged, the next one is already asked for, so
 * its read and decompression (libuv's thread pool) overlap the replay's work on the main thread
 * instead of the main thread waiting for them: two blocks per stream in memory at most.
 */
class Source {
  private recs: CaptureRecord[] = [];
  private i = 0;
  private next: Promise<IteratorResult<CaptureRecord[]>> | undefined;

  constructor(private readonly it: AsyncIterator<CaptureRecord[]>) {}

  /** Loads the next block; false when the stream has no more. */
  async fill(): Promise<boolean> {
    const n = await (this.next ?? this.it.next());
    this.next = undefined;
    if (n.done === true) return false;
    this.recs = n.value;
    this.i = 0;
    this.next = this.it.next();
    // Its failure is the next fill's to report (or nobody's, once the reader stopped early).
    this.next.catch(() => undefined);
    return true;
  }

  head(): number {
    return this.recs[this.i]!.seq;
  }

  empty(): boolean {
    return this.i >= this.recs.length;
  }

  async close(): Promise<void> {
    await this.it.return?.(undefined);
  }

  takeBelow(limit: number, out: CaptureRecord[]): void {
    const recs = this.recs;
    let i = this.i;
    while (i < recs.length && recs[i]!.seq < limit) out.push(recs[i++]!);
    this.i = i;
  }
}
