import { BLOCK_HEAD, type CaptureRecord } from '../capture/record.js';
import type { CaptureStore } from '../capture/store.js';

/**
 * Follows the capture log as it grows: each `read(upTo)` hands out, in sequence order, the records
 * after the last one it handed out, up to `upTo`. It remembers, per stream, the segment and the
 * byte it read to, so a call reads only the blocks written since (never the whole hour's segment
 * again). Blocks written past `upTo` (a stream sealed a full buffer after the caller's flush) are
 * kept until a later call: every record up to `upTo` is on disk once the writer's flush resolved,
 * and the merge waits for all of them.
 */
export class CaptureTail {
  private readonly pos = new Map<string, { readonly firstSeq: number; readonly off: number }>();
  private pending: CaptureRecord[] = [];

  /** Starts after `after` (records up to it, in segments already on disk, are not read). */
  constructor(
    private readonly store: CaptureStore,
    private after: number,
  ) {
    for (const s of store.segments()) {
      const p = this.pos.get(s.stream);
      if (p === undefined || s.firstSeq >= p.firstSeq) this.pos.set(s.stream, { firstSeq: s.firstSeq, off: s.bytes });
    }
  }

  /** The records after the last handed out, up to `upTo`, in sequence order. */
  async read(upTo: number): Promise<CaptureRecord[]> {
    const fresh = this.pending;
    for (const stream of this.store.streams()) {
      let p = this.pos.get(stream);
      const segs = this.store.segments(stream).sort((a, b) => a.firstSeq - b.firstSeq);
      for (const seg of segs) {
        if (p !== undefined && seg.firstSeq < p.firstSeq) continue;
        let off = p !== undefined && seg.firstSeq === p.firstSeq ? p.off : 0;
        for await (const b of this.store.blocks(seg, -Infinity, Infinity, off)) {
          for (const r of b.records) if (r.seq > this.after) fresh.push(r);
          off = b.ref.offset + BLOCK_HEAD + b.ref.length;
        }
        p = { firstSeq: seg.firstSeq, off };
      }
      if (p !== undefined) this.pos.set(stream, p);
    }
    fresh.sort((a, b) => a.seq - b.seq);
    let n = 0;
    while (n < fresh.length && fresh[n]!.seq <= upTo) n++;
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
}
