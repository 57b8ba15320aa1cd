import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Capture, CaptureStore, HOUR_MS, read, type CaptureRecord } from '../../src/capture/index.js';
import { StepClock } from '../../src/core/clock.js';
import { loadConfig } from '../../src/config/load.js';
import { createLogger, log } from '../../src/core/log.js';
import { HistoryIndex } from '../../src/history/index.js';
import { CaptureTail, tailStart } from '../../src/history/tail.js';
import { tempDir } from '../support/temp.js';

/** CaptureTail: the history index's reader of the capture as it grows, a bounded batch at a time. */

const T0 = 1_800_000_000_000 - (1_800_000_000_000 % HOUR_MS);

/** A capture on `dir` with small blocks (many per stream), its clock at T0. */
function open(dir: string): Capture {
  return new Capture(new CaptureStore(dir), { clock: new StepClock(-Infinity, () => T0), log, blockBytes: 1_500 });
}

/** `n` records over three venues and the flush stream, unevenly (venue_c seldom, so its blocks span many seqs). */
function write(cap: Capture, from: number, n: number): void {
  for (let i = from; i < from + n; i++) {
    cap.venue('venue_a').frame(`{"type":"orderbook_delta","i":${i},"msg":{"market_ticker":"KX-${i % 5}"}}`, 1, T0 + i);
    if (i % 2 === 0) cap.venue('venue_b').frame(`[{"event_type":"price_change","i":${i}}]`, 1, T0 + i);
    if (i % 37 === 0) cap.venue('venue_c').frame(`{"i":${i}}`, 1, T0 + i);
    if (i % 10 === 0) cap.markFlush(T0 + i);
  }
}

async function everything(store: CaptureStore): Promise<CaptureRecord[]> {
  const out: CaptureRecord[] = [];
  for await (const r of read(store, { from: 0, to: Number.MAX_SAFE_INTEGER, flushes: true })) out.push(r);
  return out;
}

/** Reads batches of at most about `max` until none is due; returns them. */
async function drain(tail: CaptureTail, upTo: number, max: number): Promise<CaptureRecord[][]> {
  const batches: CaptureRecord[][] = [];
  for (;;) {
    const b = await tail.read(upTo, max);
    if (b.length === 0) return batches;
    batches.push(b);
  }
}

/** A capture with `n` records written and flushed, and a tail that follows it from its start. */
async function started(n: number): Promise<{ dir: string; cap: Capture; tail: CaptureTail }> {
  const dir = tempDir('cb-tail-');
  const cap = open(dir);
  const tail = new CaptureTail(new CaptureStore(dir), 0, tailStart(new CaptureStore(dir)));
  write(cap, 0, n);
  await cap.flush();
  return { dir, cap, tail };
}

describe('CaptureTail', () => {
  it('hands out every record once, in sequence order, a bounded batch at a time', async () => {
    const { dir, cap, tail } = await started(600);
    const batches = await drain(tail, cap.lastSeq, 50);
    const got = batches.flat();
    expect(got.map((r) => r.seq)).toEqual(Array.from({ length: cap.lastSeq }, (_, i) => i + 1));
    expect(got).toEqual(await everything(new CaptureStore(dir)));
    expect(batches.length).toBeGreaterThan(cap.lastSeq / 100);
    // A batch is about `max` records: those up to after + max, and at most what the streams' blocks
    // read past it carry up to the lowest of them (a block here holds at most ~40 records).
    for (const b of batches) expect(b.length).toBeLessThanOrEqual(50 + 4 * 40);
    await cap.close();
  });

  it('goes on where it stopped as the capture grows, and never hands out a record past upTo', async () => {
    const { dir, cap, tail } = await started(300);
    const upTo = Math.floor(cap.lastSeq / 2);
    const first = (await drain(tail, upTo, 30)).flat();
    expect(first.map((r) => r.seq)).toEqual(Array.from({ length: upTo }, (_, i) => i + 1));
    write(cap, 300, 300);
    await cap.flush();
    const rest = (await drain(tail, cap.lastSeq, 30)).flat();
    expect([...first, ...rest]).toEqual(await everything(new CaptureStore(dir)));
    await cap.close();
  });

  it('gives at least one record a call while any is due, even with a batch of one', async () => {
    const { cap, tail } = await started(120);
    const batches = await drain(tail, cap.lastSeq, 1);
    expect(batches.flat().map((r) => r.seq)).toEqual(Array.from({ length: cap.lastSeq }, (_, i) => i + 1));
    expect(batches.every((b) => b.length >= 1)).toBe(true);
    await cap.close();
  });

  it('unbounded, one call hands out everything due, as before batches', async () => {
    const { dir, cap, tail } = await started(400);
    expect(await tail.read(cap.lastSeq)).toEqual(await everything(new CaptureStore(dir)));
    expect(await tail.read(cap.lastSeq)).toEqual([]);
    await cap.close();
  });
});

describe('the history index when its capture directory is removed', () => {
  it('logs a sync failure that repeats once, then once per 60 in a row (with the count), not every second', async () => {
    const dir = tempDir('cb-tail-gone-');
    const cap = open(dir);
    write(cap, 0, 20);
    await cap.flush();
    const lines: string[] = [];
    const index = new HistoryIndex(new CaptureStore(dir), loadConfig({ env: {} }).venues, {
      sliceMs: 300_000,
      after: 0,
      from: T0,
      log: createLogger('info', { write: (l: string) => void lines.push(l) }),
    });
    const failures = (): number[] =>
      lines
        .map((l) => JSON.parse(l) as { msg: string; times: number })
        .flatMap((l) => (l.msg.startsWith('history index: reading the capture failed') ? [l.times] : []));
    await index.sync(cap.lastSeq);
    expect(failures()).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
    for (let i = 0; i < 125; i++) await expect(index.sync(cap.lastSeq + 1 + i)).rejects.toThrow(/ENOENT/);
    expect(failures()).toEqual([1, 61, 121]);
  });
});
