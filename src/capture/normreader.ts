import { Worker } from 'node:worker_threads';
import type { Logger } from '../core/log.js';
import { workerScript } from '../core/script.js';
import type { TypeGroup } from './ndjson.js';
import type { NormVenueSnapshot } from './normcache.js';
import { NORM_CHUNK, type CachedReplay } from './normread.js';

/** Chunks of one read in flight between the thread and the socket (the read's memory: RING × NORM_CHUNK). */
export const NORM_RING = 4;

/** A read the thread runs (`normthread.ts`): the window, the filter as plain data, and the ring its chunks go through. */
export interface NormReadJob {
  readonly type: 'read';
  readonly id: number;
  readonly ring: SharedArrayBuffer;
  readonly snaps: readonly NormVenueSnapshot[];
  readonly from: number;
  readonly to: number;
  readonly types: readonly TypeGroup[] | undefined;
  readonly markets: readonly string[] | undefined;
}

/** To the thread: a read, a ring slot the socket has taken, or a read the client left. */
export type NormThreadRequest =
  NormReadJob | { readonly type: 'free'; readonly id: number; readonly slot: number } | { readonly type: 'cancel'; readonly id: number };

/**
 * From the thread: a chunk in a ring slot; the read done (its end line was the last chunk); the
 * cache failed after `after` with `count` lines served (the frames path goes on from there); or the
 * read itself failed.
 */
export type NormThreadAnswer =
  | { readonly type: 'chunk'; readonly id: number; readonly slot: number; readonly length: number }
  | { readonly type: 'done'; readonly id: number }
  | { readonly type: 'fell'; readonly id: number; readonly after: number; readonly count: number }
  | { readonly type: 'failed'; readonly id: number; readonly error: string };

/** A read's answers as they come, awaited one at a time. */
class Inbox {
  private readonly queue: NormThreadAnswer[] = [];
  private wake: (() => void) | undefined;
  private error: Error | undefined;

  put(a: NormThreadAnswer): void {
    this.queue.push(a);
    this.wake?.();
  }

  fail(e: Error): void {
    this.error = e;
    this.wake?.();
  }

  async next(): Promise<NormThreadAnswer> {
    for (;;) {
      const a = this.queue.shift();
      if (a !== undefined) return a;
      if (this.error !== undefined) throw this.error;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}

/**
 * Reads of the normalized cache on a thread of their own (`normthread.ts`): the thread reads the
 * blocks, decompresses them, merges the venues and writes each chunk into a ring of NORM_RING
 * shared slots; the main thread only hands each slot to the socket and gives it back. Why: on the
 * main thread the read's buffers (a decompressed block per MiB of lines, a chunk buffer per chunk) were
 * external memory that set off the main heap's collections ("external memory pressure", a scavenge
 * every few MiB and mark-compacts), which cost more CPU than the decompression itself
 * (BENCHMARKS.md "Replay from the capture"); on the thread they are a small heap's. A slow reader
 * holds the ring's slots, so the thread waits: memory stays at the ring. One thread serves every
 * read, started at the first and kept (unref'd: it never holds the process).
 */
export class NormReader {
  private thread: Worker | undefined;
  private readonly inboxes = new Map<number, Inbox>();
  private ids = 0;

  constructor(private readonly log: Logger) {}

  /**
   * The window's chunks as `cachedLines` gives them (the same bytes, the end line, the frames path
   * after a failed entry). Each chunk is a view of a ring slot, the stream's until the next pull:
   * the consumer writes or copies it before it asks for the next (src/server/http.ts `pipe` does).
   */
  async *lines(snaps: readonly NormVenueSnapshot[], req: CachedReplay): AsyncGenerator<Uint8Array | string> {
    const id = ++this.ids;
    const inbox = new Inbox();
    this.inboxes.set(id, inbox);
    const thread = this.start();
    const ring = new SharedArrayBuffer(NORM_RING * NORM_CHUNK);
    const markets = req.filter.markets === undefined ? undefined : [...req.filter.markets];
    thread.postMessage({ type: 'read', id, ring, snaps, from: req.from, to: req.to, types: req.filter.types, markets } satisfies NormThreadRequest);
    let sent = false;
    let end: NormThreadAnswer | Error;
    try {
      for (;;) {
        let a: NormThreadAnswer;
        try {
          a = await inbox.next();
        } catch (e) {
          end = e as Error;
          break;
        }
        if (a.type !== 'chunk') {
          end = a;
          break;
        }
        sent = true;
        yield Buffer.from(ring, a.slot * NORM_CHUNK, a.length);
        thread.postMessage({ type: 'free', id, slot: a.slot } satisfies NormThreadRequest);
      }
    } finally {
      this.inboxes.delete(id);
      // A read left early (the client gone) stops on the thread and closes its files.
      if (this.thread === thread) thread.postMessage({ type: 'cancel', id } satisfies NormThreadRequest);
    }
    if (!(end instanceof Error) && end.type === 'done') return;
    if (!(end instanceof Error) && end.type === 'fell') {
      // The thread logged why; the rest of the window comes from the frames.
      req.onFallback?.();
      yield* req.fallback(end.after, end.count);
      return;
    }
    const why = end instanceof Error ? end.message : end.error;
    // Nothing sent yet: the frames path serves the whole window. Mid-answer, a chunk may end inside a line: the answer ends there, without its end line.
    if (sent) throw new Error(`the normalized cache's read thread failed mid-answer: ${why}`);
    req.log.warn({ err: why }, 'replay: the normalized cache could not be read; the window is mapped from the captured frames');
    req.onFallback?.();
    yield* req.fallback(-Infinity, 0);
  }

  /** Ends the thread (reads in flight fail). */
  async close(): Promise<void> {
    const t = this.thread;
    this.thread = undefined;
    for (const inbox of this.inboxes.values()) inbox.fail(new Error('the read thread was closed'));
    await t?.terminate();
  }

  private start(): Worker {
    if (this.thread !== undefined) return this.thread;
    const w = workerScript(import.meta.url, 'normthread');
    const thread = new Worker(w.script, { eval: w.evaluate, workerData: { logLevel: this.log.level }, name: 'replay-read' });
    thread.unref();
    thread.on('message', (a: NormThreadAnswer) => this.inboxes.get(a.id)?.put(a));
    const down = (why: string): void => {
      if (this.thread !== thread) return;
      this.thread = undefined;
      this.log.warn({ reason: why }, 'replay: the normalized cache read thread stopped; the next read starts another');
      for (const inbox of this.inboxes.values()) inbox.fail(new Error(why));
    };
    thread.on('error', (e) => down(`its thread failed: ${e.message}`));
    thread.on('exit', (code) => down(`its thread exited (code ${code})`));
    this.thread = thread;
    return thread;
  }
}
