import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Capture } from '../capture/index.js';
import type { NormView } from '../capture/normcache.js';
import type { VenueConfig } from '../config/schema.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import { workerScript } from '../core/script.js';
import type { HistoryStatus } from '../server/routes/status.js';
import type { EngineState } from '../state/engine.js';
import {
  coversFrom,
  HISTORY_LIMITS,
  notIndexed,
  NotIndexedError,
  restoreRebuilt,
  SliceFiles,
  stateFrom,
  type HistoryWindow,
  type MarketRef,
  type Rebuilt,
} from './index.js';
import { Handoff } from './handoff.js';
import type { Covers, SliceFile } from './slice.js';
import { tailStart } from './tail.js';
import type { Handing, HistoryAnswer, HistoryProgress, HistoryRequest, HistoryWorkerData } from './protocol.js';

/**
 * The index thread's young generation: V8's default (two 16 MiB semi-spaces and the space
 * beside them) kept 32+ MiB of pages resident for a thread whose short-lived objects are one
 * record's frames and events at a time. 6 MiB is 2 MiB semi-spaces, as the simulator's child runs
 * (`--max-semi-space-size=2`); the old generation is not limited (a thread out of memory stops the index).
 */
const HISTORY_THREAD_LIMITS = { maxYoungGenerationSizeMb: 6 };

interface Pending {
  readonly resolve: (a: HistoryAnswer & { type: 'done' }) => void;
  readonly reject: (e: Error) => void;
}

/**
 * The history index as the main thread sees it. The index itself (`HistoryIndex`: its replay
 * mappers, its own `EngineState`, its open slice) runs on a worker thread (`worker.ts`), which
 * reads the capture from disk; this side writes the capture's buffers (`sync()`: the flush, then
 * the last sequence number written goes to the thread), asks the thread for the markets of an
 * `as_of` read (`stateAt`) and mirrors where the index stands from each answer.
 *
 * A thread that dies (an uncaught error, out of memory, terminated) is logged once and not
 * restarted: a fresh replay mapper cannot rebuild a relative-delta venue's books mid-stream, so
 * a restarted index would answer wrong books until every venue sent a snapshot again. `stopped`
 * then says why, `as_of` reads answer 503 with it, and /status shows it; the capture goes on.
 */
export class HistoryClient {
  /** The index's thread. */
  readonly thread: Worker;
  private progress: HistoryProgress;
  private down: string | undefined;
  private closing = false;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  /** The sync posted and not answered yet, and the one that follows it, shared by the calls made meanwhile (`syncTo`). */
  private syncPosted: Promise<void> | undefined;
  private syncNext: { upTo: number; done: Promise<void> } | undefined;
  /** Slice files this thread reads itself (a written slice never changes). */
  private readonly files: SliceFiles;
  /** When this process's index began: its first slice covers from here (or from its start, if later). */
  private readonly from: number;
  /** The capture's tap holding each record and its live events for the thread (`opts.handed`); undefined: the thread reads the capture. */
  private readonly handoff: Handoff | undefined;

  constructor(
    private readonly capture: Capture,
    private readonly venues: readonly VenueConfig[],
    private readonly opts: {
      readonly sliceMs: number;
      readonly log?: Logger | undefined;
      /** The normalized cache behind /replay, written on the thread (absent: off): its normalizer version and bound on disk. */
      readonly lines?: { readonly version: string; readonly maxBytes: number } | undefined;
      /**
       * Hand the thread each record with the events the live feeds made of it (handoff.ts), so it
       * maps again only the records no feed runtime mapped (`CaptureSink.venue`, carried with their
       * payloads). Default: the thread reads and maps the capture.
       */
      readonly handed?: boolean | undefined;
    },
  ) {
    const from = capture.now();
    this.from = from;
    this.progress = { indexedTo: from, first: undefined, slicesOnDisk: [], inMemory: [], stopped: undefined, written: 0, gaps: 0 };
    this.files = new SliceFiles(join(capture.store.dir, '_history'));
    const data: HistoryWorkerData = {
      dir: capture.store.dir,
      venues,
      sliceMs: opts.sliceMs,
      // Taken here, with `after`: what is written before the thread is up is read by it, not skipped.
      after: capture.lastSeq,
      tail: tailStart(capture.store),
      from,
      logLevel: opts.log?.level ?? 'info',
      lines: opts.lines,
      handed: opts.handed === true,
    };
    // Set with `after`: every record after it is held for the thread.
    // Full (`handBatch` records and events), it is handed at once, not held until the next sync.
    this.handoff =
      opts.handed === true
        ? new Handoff(
            () => HISTORY_LIMITS.behind,
            () => HISTORY_LIMITS.handBatch,
            () => this.handOn(),
          )
        : undefined;
    if (this.handoff !== undefined) capture.tap = this.handoff;
    const w = workerScript(import.meta.url, 'worker');
    this.thread = new Worker(w.script, { eval: w.evaluate, workerData: data, name: 'history', resourceLimits: HISTORY_THREAD_LIMITS });
    // Held only while an answer is awaited: an idle index never keeps the process alive.
    this.thread.unref();
    this.thread.on('message', (a: HistoryAnswer) => this.answered(a));
    this.thread.on('error', (e) => this.died(`its thread failed: ${e.message}`));
    this.thread.on('exit', (code) => this.died(`its thread exited (code ${code})`));
  }

  /** Why the index stopped following the capture (a bound passed, or its thread died); undefined while it runs. */
  get stopped(): string | undefined {
    return this.down ?? this.progress.stopped;
  }

  /** The receive time up to which every captured record is indexed (as of the thread's last answer). */
  get indexedTo(): number {
    return this.progress.indexedTo;
  }

  /** The starts of the slices on disk, oldest first. */
  get slicesOnDisk(): readonly number[] {
    return this.progress.slicesOnDisk;
  }

  /** Slices written by this process. */
  get written(): number {
    return this.progress.written;
  }

  /** Records whose sequence number did not follow the previous one. */
  get gaps(): number {
    return this.progress.gaps;
  }

  /**
   * Writes what the capture buffers, then has the index read every record up to it. The thread
   * runs one catch-up at a time and folds the requests that wait into one: a slow catch-up never
   * piles up work, and the capture's writes never wait for the index.
   */
  async sync(): Promise<void> {
    const upTo = this.capture.lastSeq;
    // The thread indexes the handed records, not the disk: they go now, whatever the flush takes (a capture writer
    // behind at a 108k listing has flushes of tens of seconds). After what runs now: a record's events all out.
    queueMicrotask(() => this.handOn());
    await this.capture.flush();
    await this.syncTo(upTo);
  }

  /**
   * Posts a sync up to `upTo`, or, while one is posted and not answered (the thread busy: a slice
   * being written, a long catch-up), joins the one sync that follows it, which goes once it is
   * answered, up to the furthest seq of the calls that joined it (the handoff's records still go
   * at each call, unanswered: `handOn`). The capture flow syncs every second without waiting:
   * posting a sync each time, a thread held up for minutes had a request queued per second, and
   * as many entries in `pending` waiting for answers.
   */
  private syncTo(upTo: number): Promise<void> {
    if (this.stopped !== undefined || this.closing) return Promise.resolve();
    const posted = this.syncPosted;
    if (posted === undefined) {
      // A failed catch-up was logged by the thread, a dead thread by `died`: the capture flow goes on either way.
      const p = this.request({ type: 'sync', id: 0, upTo, limits: { ...HISTORY_LIMITS }, ...this.handing() }).then(
        () => undefined,
        () => undefined,
      );
      this.syncPosted = p;
      void p.then(() => {
        if (this.syncPosted === p) this.syncPosted = undefined;
      });
      return p;
    }
    // What the handoff holds goes now all the same: held here until the follow-up, a listing's minutes of events would wait as objects on the main heap.
    this.handOn();
    const next = this.syncNext;
    if (next !== undefined) {
      next.upTo = Math.max(next.upTo, upTo);
      return next.done;
    }
    const f: { upTo: number; done: Promise<void> } = { upTo, done: Promise.resolve() };
    f.done = posted.then(() => {
      this.syncNext = undefined;
      return this.syncTo(f.upTo);
    });
    this.syncNext = f;
    return f.done;
  }

  /** Hands the thread what the handoff holds without asking for an answer (before a flush, while a sync is posted, or the handoff full): it queues it for the next sync. */
  private handOn(): void {
    if (this.handoff === undefined || this.down !== undefined) return;
    const h = this.handing();
    if (h.handed === undefined && h.lost === undefined) return;
    this.post({ type: 'hand', id: 0, ...h });
  }

  /** Posts `m` to the thread, the buffer of a batch it hands transferred, not copied. */
  private post(m: HistoryRequest): void {
    const handed = 'handed' in m ? m.handed : undefined;
    this.thread.postMessage(m, handed === undefined ? [] : [handed.bytes.buffer as ArrayBuffer]);
  }

  /** Requests posted to the thread and not answered yet (syncs among them: at most one, `syncTo`). */
  get outstanding(): number {
    return this.pending.size;
  }

  /**
   * Writes what the capture buffers, has the thread index it and write the normalized cache's open
   * blocks, and answers the cache's view (what a /replay read copies from). Rejects when the thread
   * is gone or was started without the cache.
   */
  async normSync(): Promise<NormView> {
    if (this.closing) throw new Error('the history index is closing');
    const upTo = this.capture.lastSeq;
    await this.capture.flush();
    const a = await this.request({ type: 'norm', id: 0, upTo, limits: { ...HISTORY_LIMITS }, ...this.handing() });
    if (a.norm === undefined) throw new Error('the history thread keeps no normalized cache (capture.replayCache off)');
    return a.norm;
  }

  /** What `as_of` may ask for: from the first slice kept (and not before `retainedFrom`) to now; undefined: nothing indexed yet. */
  window(now: number, retainedFrom: number): HistoryWindow | undefined {
    const first = this.progress.first;
    return first === undefined ? undefined : { from: Math.max(first, retainedFrom), to: now };
  }

  /**
   * The state of `markets` at receive time `t`. A moment in a slice on disk is read here, from the
   * file (one market's part decompressed and applied: no round trip, no wait behind the thread's
   * catch-up); a moment in the slice the thread holds in memory, or one it answers better (a file
   * pruned meanwhile), is rebuilt on the thread and its books sent back.
   */
  async stateAt(t: number, markets: readonly MarketRef[]): Promise<EngineState> {
    const { slicesOnDisk, inMemory } = this.progress;
    let start: number | undefined;
    for (const s of slicesOnDisk) if (s <= t && (start === undefined || s > start)) start = s;
    const file = start !== undefined && !inMemory.some((s) => s <= t && s >= start!) ? this.file(start) : undefined;
    if (file !== undefined) {
      const gap = notIndexed(t, start!, [...slicesOnDisk, ...inMemory], (s) => this.coverOf(s));
      if (gap !== undefined) throw gap;
      try {
        return stateFrom(this.venues, file, t, markets);
      } catch {
        this.files.delete(start!);
      }
    }
    const a = await this.request({ type: 'rebuild', id: 0, t, markets });
    if (a.notIndexed) throw new NotIndexedError(t, a.notIndexed[0] ?? undefined, a.notIndexed[1] ?? undefined);
    return restoreRebuilt(this.venues, markets, a.rebuilt as Rebuilt);
  }

  /** Slice file `start`, opened here (undefined: it does not open; the thread answers instead). */
  private file(start: number): SliceFile | undefined {
    try {
      return this.files.get(start);
    } catch {
      this.files.delete(start);
      return undefined;
    }
  }

  /** What slice `start` covers: one the thread holds from its start (or this process's) on, one on disk as its file says. */
  private coverOf(start: number): Covers | undefined {
    return this.progress.inMemory.includes(start) ? [coversFrom(start, this.from), Infinity] : this.file(start)?.covers;
  }

  /** The index on /status. */
  status(): HistoryStatus {
    const reason = this.stopped ?? null;
    return { status: reason === null ? 'ok' : 'stopped', reason, indexed_to: this.indexedTo, slices: this.slicesOnDisk.length };
  }

  /**
   * Writes what the capture holds, has the thread index it and write its open slice, and ends the
   * thread. `withinMs` (on `clock`) bounds it: when it is up, the thread stops catching up after the
   * batch it is indexing, and stops writing its open slice after the batch of markets it is at
   * (the file dropped); it logs what it left.
   */
  async close(bound?: { readonly withinMs: number; readonly clock: Clock }): Promise<void> {
    if (this.closing) return;
    const upTo = this.capture.lastSeq;
    await this.capture.flush();
    const hurry = (): void => this.thread.postMessage({ type: 'hurry', id: 0 } satisfies HistoryRequest);
    // 0: no catch-up at all (posted before the close: the thread reads its port in order).
    if (this.down === undefined && bound?.withinMs === 0) hurry();
    const closed = this.down === undefined ? this.request({ type: 'close', id: 0, upTo, at: this.capture.now(), ...this.handing() }) : undefined;
    this.closing = true;
    this.release();
    const cancel = closed && bound && bound.withinMs > 0 ? bound.clock.after(bound.withinMs, hurry) : undefined;
    await closed?.catch((e: unknown) => this.opts.log?.error({ err: (e as Error).message }, 'history index: its open slice was not written at close'));
    cancel?.();
    await this.thread.terminate();
  }

  /**
   * What the handoff holds, taken for the request about to be posted (taken and posted in one go,
   * so the batches reach the thread in seq order), or how many records it let go of.
   */
  private handing(): Handing {
    const h = this.handoff;
    if (h === undefined) return {};
    const lost = h.overflow;
    return lost !== undefined ? { lost } : { handed: h.take() };
  }

  /** The thread takes no more records (it stopped, died or closes): the handoff lets go of what it holds and is taken off the capture. */
  private release(): void {
    if (this.handoff === undefined) return;
    this.handoff.off();
    if (this.capture.tap === this.handoff) this.capture.tap = undefined;
  }

  private request(m: HistoryRequest): Promise<HistoryAnswer & { type: 'done' }> {
    if (this.down !== undefined) return Promise.reject(new Error(this.down));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) this.thread.ref();
      this.pending.set(id, { resolve, reject });
      this.post({ ...m, id });
    });
  }

  private answered(a: HistoryAnswer): void {
    this.progress = a.progress;
    if (a.progress.stopped !== undefined) this.release();
    const p = this.pending.get(a.id);
    if (p === undefined) return;
    this.settled(a.id);
    if (a.type === 'done') p.resolve(a);
    else p.reject(new Error(a.error));
  }

  private settled(id: number): void {
    this.pending.delete(id);
    if (this.pending.size === 0) this.thread.unref();
  }

  /** The thread is gone: said once, every waiting request refused with the reason, and no more sent. */
  private died(why: string): void {
    if (this.down !== undefined) return;
    const reason = `the history index stopped: ${why}; it is not restarted (as_of reads need a restart of the service), the capture goes on`;
    this.release();
    // A thread that ends after answering `close` ends as it should.
    if (!this.closing) {
      this.down = reason;
      this.opts.log?.error({ reason }, 'history index thread died');
    }
    for (const [id, p] of this.pending) {
      this.settled(id);
      p.reject(new Error(reason));
    }
  }
}
