import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Capture, CaptureStore } from '../../src/capture/index.js';
import { loadConfig } from '../../src/config/load.js';
import { VirtualClock } from '../../src/core/clock.js';
import { log } from '../../src/core/log.js';
import { BACKGROUND_NICE, currentThreadId } from '../../src/core/priority.js';
import { HistoryClient } from '../../src/history/client.js';
import type { Handoff } from '../../src/history/handoff.js';
import { HISTORY_LIMITS, HistoryIndex, NotIndexedError } from '../../src/history/index.js';
import { sliceStarts } from '../../src/history/slice.js';

/**
 * The history index on its thread against the same index called on this thread, on a real Kalshi
 * snapshot and delta (test/fixtures/kalshi, the venue's documented example) written to a capture
 * right after the thread is asked for, before it is up: the thread reads them (it starts from
 * where the capture stood when it was asked for, not from where it stands once the thread runs).
 */
const dir = mkdtempSync(join(tmpdir(), 'cb-hist-thread-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const config = loadConfig({ env: {} });
const kalshi = config.venues.find((v) => v.protocol === 'kalshi')!;
const frames = (
  JSON.parse(readFileSync(new URL('../fixtures/kalshi/ws_orderbook_snapshot_then_delta_spec_example.json', import.meta.url), 'utf8')) as unknown[]
).map((f) => JSON.stringify(f));
const T0 = 1_800_000_000_000;
const market = [{ venue: kalshi.label, marketId: 'FED-23DEC-T3.00' }];

function write(cap: Capture): void {
  const w = cap.venue(kalshi.label);
  w.frame(frames[0]!, 1, T0);
  w.frame(frames[1]!, 1, T0 + 500);
}

describe('the history index thread', () => {
  it('rebuilds the same book as the index on the calling thread, before and after the delta, and writes its slice at close', async () => {
    const clock = new VirtualClock(T0);
    const here = new Capture(new CaptureStore(join(dir, 'here')), { clock, log });
    const index = new HistoryIndex(here.store, config.venues, { sliceMs: 300_000, after: here.lastSeq, from: T0 });
    write(here);
    const upTo = here.lastSeq;
    await here.flush();
    await index.sync(upTo);

    const there = new Capture(new CaptureStore(join(dir, 'there')), { clock, log });
    const client = new HistoryClient(there, config.venues, { sliceMs: 300_000, log });
    write(there);
    await client.sync();
    expect(client.indexedTo).toBe(T0 + 500);
    expect(client.gaps).toBe(0);
    for (const t of [T0 + 100, T0 + 600]) {
      const a = index.stateAt(t, market).books.marketBook(kalshi.label, 'FED-23DEC-T3.00');
      const b = (await client.stateAt(t, market)).books.marketBook(kalshi.label, 'FED-23DEC-T3.00');
      expect(a, String(t)).toBeDefined();
      expect(b, String(t)).toEqual(a);
    }
    const before = (await client.stateAt(T0 + 100, market)).books.marketBook(kalshi.label, 'FED-23DEC-T3.00');
    const after = (await client.stateAt(T0 + 600, market)).books.marketBook(kalshi.label, 'FED-23DEC-T3.00');
    // The snapshot's book, then what the delta made of it (the example's delta takes a level the snapshot does not hold: the book resyncs).
    expect(before?.bids.length).toBeGreaterThan(0);
    expect(after).not.toEqual(before);
    await client.close();
    expect(sliceStarts(join(there.store.dir, '_history'))).toEqual([Math.floor(T0 / 300_000) * 300_000]);
    // A moment of a slice on disk is read on the calling thread, from the file (the thread has ended).
    expect((await client.stateAt(T0 + 100, market)).books.marketBook(kalshi.label, 'FED-23DEC-T3.00')).toEqual(before);
    await here.close();
    await there.close();
  });

  it.each([false, true])(
    'posts one sync at a time: the calls made while it waits for its answer share one follow-up, up to the furthest seq they asked for (handed %s)',
    async (handed) => {
      const cap = new Capture(new CaptureStore(join(dir, `coalesce-${handed}`)), { clock: new VirtualClock(T0), log });
      // Handed: the records (written here, not by a feed runtime: mapped on the thread) go at each call, unanswered.
      const client = new HistoryClient(cap, config.venues, { sliceMs: 300_000, log, handed });
      // What is still outstanding as each answer comes (the client's own listener has taken the answer by then).
      const outstanding: number[] = [];
      client.thread.on('message', () => outstanding.push(client.outstanding));
      const w = cap.venue(kalshi.label);
      // A hundred syncs before the thread can answer one (the capture flow's, a second apart, while the thread is held up).
      const calls: Promise<void>[] = [];
      for (let i = 0; i < 100; i++) {
        w.frame(frames[i === 0 ? 0 : 1]!, 1, T0 + i);
        calls.push(client.sync());
      }
      await Promise.all(calls);
      expect(client.indexedTo).toBe(T0 + 99);
      expect(client.gaps).toBe(0);
      expect(outstanding.length).toBeGreaterThan(0);
      expect(Math.max(...outstanding)).toBeLessThanOrEqual(1);
      expect(client.outstanding).toBe(0);
      await client.close();
      await cap.close();
    },
  );

  it('hands the thread what the handoff holds at each sync before its flush, and whenever it holds a batch, without waiting for a sync (handed)', async () => {
    const limits = { ...HISTORY_LIMITS };
    HISTORY_LIMITS.handBatch = 10;
    try {
      const cap = new Capture(new CaptureStore(join(dir, 'hand-early')), { clock: new VirtualClock(T0), log });
      const client = new HistoryClient(cap, config.venues, { sliceMs: 300_000, log, handed: true });
      const tap = cap.tap as Handoff;
      const w = cap.venue(kalshi.label);
      // A burst of frames, a few per turn of the event loop (a socket's chunk), and no sync: held, it would all wait for one pack.
      let most = 0;
      for (let i = 0; i < 200; i++) {
        w.frame(frames[i === 0 ? 0 : 1]!, 1, T0 + i);
        most = Math.max(most, tap.held);
        if (i % 3 === 2) await Promise.resolve();
      }
      // At most a batch and the frames of one turn.
      expect(most).toBeLessThanOrEqual(HISTORY_LIMITS.handBatch + 3);
      w.frame(frames[1]!, 1, T0 + 200);
      expect(tap.held).toBeGreaterThan(0);
      // A sync hands them before it waits for the capture's flush (which, behind, takes tens of seconds).
      const synced = client.sync();
      await Promise.resolve();
      expect(tap.held).toBe(0);
      await synced;
      expect(client.indexedTo).toBe(T0 + 200);
      expect(client.gaps).toBe(0);
      await client.close();
      await cap.close();
    } finally {
      Object.assign(HISTORY_LIMITS, limits);
    }
  });

  it('at the default limits, hands a burst on in batches of at most 1,024 records and events: a take is one synchronous pack on the main thread', async () => {
    // Each take packs what it holds in one go (0.5-1 µs an event): the per-second sync's take of a
    // second of the live fan-out bench's events was 1-4 ms of the main thread in one task.
    const cap = new Capture(new CaptureStore(join(dir, 'hand-default')), { clock: new VirtualClock(T0), log });
    const client = new HistoryClient(cap, config.venues, { sliceMs: 300_000, log, handed: true });
    const tap = cap.tap as Handoff;
    const w = cap.venue(kalshi.label);
    let most = 0;
    for (let i = 0; i < 3_000; i++) {
      w.frame(frames[i === 0 ? 0 : 1]!, 1, T0 + i);
      most = Math.max(most, tap.held);
      if (i % 3 === 2) await Promise.resolve();
    }
    expect(most).toBeLessThanOrEqual(1_024 + 3);
    await client.sync();
    expect(client.indexedTo).toBe(T0 + 2_999);
    expect(client.gaps).toBe(0);
    await client.close();
    await cap.close();
  });

  it('a close with no time left indexes nothing more and drops its open slice, leaving the rest in the capture; one with time catches up and writes it', async () => {
    const clock = new VirtualClock(T0);
    const runs: { indexedTo: number; slices: number[] }[] = [];
    for (const withinMs of [0, 60_000]) {
      const cap = new Capture(new CaptureStore(join(dir, `close-${withinMs}`)), { clock, log });
      const client = new HistoryClient(cap, config.venues, { sliceMs: 300_000, log });
      write(cap);
      await client.sync();
      expect(client.indexedTo).toBe(T0 + 500);
      // Captured after the index's last sync: what a close finds the thread behind by.
      const w = cap.venue(kalshi.label);
      for (let i = 1; i <= 20_000; i++) w.frame(frames[1]!, 1, T0 + 500 + i);
      await client.close({ withinMs, clock });
      runs.push({ indexedTo: client.indexedTo, slices: sliceStarts(join(cap.store.dir, '_history')) });
      // Either way the capture holds every frame (the raw record /replay reads).
      expect(cap.lastSeq).toBe(20_002);
      await cap.close();
    }
    const slice = [Math.floor(T0 / 300_000) * 300_000];
    expect(runs).toEqual([
      { indexedTo: T0 + 500, slices: [] },
      { indexedTo: T0 + 20_500, slices: slice },
    ]);
  });

  it('a slice dropped by a close cut short is a gap to as_of reads, on the thread and from disk, not the slice before', async () => {
    const hist = join(dir, 'gap');
    // First process: its first slice (from T0) is written when the next begins, 5 minutes on; that one is dropped at close.
    const clock = new VirtualClock(T0);
    const cap = new Capture(new CaptureStore(hist), { clock, log });
    const client = new HistoryClient(cap, config.venues, { sliceMs: 300_000, log });
    write(cap);
    cap.venue(kalshi.label).frame(frames[1]!, 1, T0 + 300_500);
    await client.sync();
    expect(client.slicesOnDisk).toEqual([T0]);
    await client.close({ withinMs: 0, clock });
    await cap.close();
    expect(sliceStarts(join(hist, '_history'))).toEqual([T0]);

    // Next process, a minute into the next window (named for the window, covering from when it began).
    clock.advanceTo(T0 + 400_000);
    const next = new Capture(new CaptureStore(hist), { clock, log });
    const again = new HistoryClient(next, config.venues, { sliceMs: 300_000, log });
    write2(next, T0 + 410_000);
    await again.sync();
    expect(await gapAt(again, T0 + 100)).toBeUndefined();
    // Before the next process began: the dropped slice's stretch and the stop. Answered by the thread (its open slice is named for the window's start)...
    for (const t of [T0 + 300_000, T0 + 350_000, T0 + 399_999]) expect(await gapAt(again, t), String(t)).toEqual([T0 + 300_000, T0 + 400_000]);
    expect(await gapAt(again, T0 + 400_000)).toBeUndefined();
    await again.close();
    await next.close();
    // ...and from the files once it is written.
    expect(sliceStarts(join(hist, '_history'))).toEqual([T0, T0 + 300_000]);
    expect(await gapAt(again, T0 + 350_000)).toEqual([T0 + 300_000, T0 + 400_000]);
    expect(await gapAt(again, T0 + 410_000)).toBeUndefined();
  });

  /** The gap an as_of read of `t` falls in ([before, after]), or undefined when it reads. */
  async function gapAt(client: HistoryClient, t: number): Promise<[number | undefined, number | undefined] | undefined> {
    try {
      await client.stateAt(t, market);
      return undefined;
    } catch (e) {
      if (e instanceof NotIndexedError) return [e.before, e.after];
      throw e;
    }
  }

  function write2(cap: Capture, at: number): void {
    const w = cap.venue(kalshi.label);
    w.frame(frames[0]!, 2, at);
    w.frame(frames[1]!, 2, at + 500);
  }

  /** The nice value of each thread of this process (Linux /proc), by thread id. */
  function nices(): Map<number, number> {
    const out = new Map<number, number>();
    for (const tid of readdirSync('/proc/self/task')) {
      try {
        const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
        out.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
      } catch {
        // The thread ended.
      }
    }
    return out;
  }

  it.runIf(process.platform === 'linux')('runs at the background priority, and the thread that started it as it was', async () => {
    const before = nices();
    const main = currentThreadId()!;
    const cap = new Capture(new CaptureStore(join(dir, 'nice')), { clock: new VirtualClock(T0), log });
    const client = new HistoryClient(cap, config.venues, { sliceMs: 300_000, log });
    write(cap);
    // Answered: the thread is up and has run its start.
    await client.sync();
    const lowered = [...nices()].filter(([tid, nice]) => !before.has(tid) && nice === BACKGROUND_NICE);
    expect(lowered.length).toBeGreaterThanOrEqual(1);
    expect(nices().get(main)).toBe(before.get(main));
    await client.close();
    await cap.close();
  });
});
