import { BLOCK_HEAD, type CaptureRecord } from '../capture/record.js';
import { SEGMENT_HEAD, type CaptureStore, type SegmentInfo } from '../capture/store.js';

/** Where a tail starts: per stream, its newest segment and the byte it ends at. */
export type TailStart = readonly (readonly [stream: string, firstSeq: number, off: number])[];

/** The end of every stream's newest segment now (what a tail started now skips). */
export function tailStart(store: CaptureStore): TailStart {
  const pos = new Map<string, SegmentInfo>();
  for (const s of store.segments()) {
    const p = pos.get(s.stream);
    if (p === undefined || s.firstSeq >= p.firstSeq) pos.set(s.stream, s);
  }
  return [...pos.values()].map((s) => [s.stream, s.firstSeq, s.bytes] as const);
}

/**
 * Follows the capture log as it grows: each `read(upTo, max)` hands out, in sequence order, the
 * records after the last one it handed out, up to `upTo`, about `max` at a time. It remembers, per
 * stream, the segment and the byte it read to, so a call reads only the blocks written since (never
 * the whole hour's segment again). Blocks written past what a call hands out (a stream sealed a
 * full buffer after the caller's flush, or a batch ended) are kept until a later call: every record
 * up to `upTo` is on disk once the writer's flush resolved, and the merge waits for all of them.
 *
 * A batch is bounded so a follower that fell behind (the history index while it wrote a slice)
 * does not hold every record since in memory at once: a stream is read until a block of it passes
 * `after + max` (its later blocks wait for a later call), and a call hands out the records up to
 * the lowest sequence number such a stream reached, which every stream has delivered up to (a
 * stream is read in sequence order, and one read to its end holds every record up to `upTo`). So a
 * batch holds about `max` records plus one block per stream, and always at least one record while
 * any is due (a jump in sequence numbers is crossed, not waited on).
 */
export class CaptureTail {
  private readonly pos = new Map<string, { readonly firstSeq: number; readonly off: number; readonly last: number }>();
  private pending: CaptureRecord[] = [];

  /**
   * Starts after `after`: records up to it, in the segments `from` lists (`tailStart`, taken when
   * `after` was), are not read. The start is taken by the writer's thread and handed over: one taken
   * later, on the index's thread, would skip what was written in between.
   */
  constructor(
    private readonly store: CaptureStore,
    private after: number,
    from: TailStart = tailStart(store),
  ) {
    for (const [stream, firstSeq, off] of from) this.pos.set(stream, { firstSeq, off, last: after });
  }

  /** The next records after the last handed out, up to `upTo` (about `max` of them), in sequence order; none when none is due. */
  async read(upTo: number, max = Infinity): Promise<CaptureRecord[]> {
    const fresh = this.pending;
    const lim = Math.min(upTo, this.after + max);
    // The lowest sequence number a stream left unread past (Infinity: every stream read to its end).
    let reached = Infinity;
    for (const stream of this.store.streams()) {
      let p = this.pos.get(stream);
      // A stream already read past the batch waits: the records of it that are due are in hand.
      if (p !== undefined && p.last > lim) {
        reached = Math.min(reached, p.last);
        continue;
      }
      const segs = this.store.segments(stream).sort((a, b) => a.firstSeq - b.firstSeq);
      let stopped = false;
      for (const seg of segs) {
        if (p !== undefined && seg.firstSeq < p.firstSeq) continue;
        // A segment the writer has just created (its magic not yet written) holds no block yet: it is read
        // on a later call, from its start (the position stays on the segment before it).
        if (seg.bytes <= SEGMENT_HEAD) continue;
        let off = p !== undefined && seg.firstSeq === p.firstSeq ? p.off : 0;
        let last = p?.last ?? this.after;
        for await (const b of this.store.blocks(seg, -Infinity, Infinity, off)) {
          for (const r of b.records) if (r.seq > this.after) fresh.push(r);
          off = b.ref.offset + BLOCK_HEAD + b.ref.length;
          last = Math.max(last, b.ref.lastSeq);
          if (last > lim) {
            stopped = true;
            break;
          }
        }
        p = { firstSeq: seg.firstSeq, off, last };
        if (stopped) {
          reached = Math.min(reached, last);
          break;
        }
      }
      if (p !== undefined) this.pos.set(stream, p);
    }
    const bound = Math.min(upTo, reached);
    fresh.sort((a, b) => a.seq - b.seq);
    let n = 0;
    while (n < fresh.length && fresh[n]!.seq <= bound) n++;
    this.pending = fresh.slice(n);
    const out = n === fresh.length ? fresh : fresh.slice(0, n);
    if (n > 0) this.after = out[n - 1]!.seq;
    return out;
  }
}

/**
 * The runs of a follower of the capture (`sync()` of the history index and of the normalized
 * cache): never overlapping, and calls made while one waits to start share it (it starts after
 * them, so it covers what they ask for): a slow catch-up never piles up a queue. A run that fails
 * is handed to `failed` (and rejects its callers); the next one runs anyway.
 */
export class SerialSync {
  private chain: Promise<void> = Promise.resolve();
  private queued: Promise<void> | undefined;

  constructor(
    private readonly body: () => Promise<void>,
    private readonly failed: (e: unknown) => void,
  ) {}

  run(): Promise<void> {
    if (this.queued) return this.queued;
    const run = this.chain.then(() => {
      this.queued = undefined;
      return this.body();
    });
    this.queued = run;
    this.chain = run.catch(this.failed);
    return run;
  }

  /** Resolves when the runs begun so far have ended (a failed one included, handed to `failed`). */
  settled(): Promise<void> {
    return this.chain;
  }
}
