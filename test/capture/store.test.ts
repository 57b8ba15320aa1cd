import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { Capture, CaptureCorruptError, CaptureStore, HOUR_MS, read, type CaptureRecord, type StoreOptions } from '../../src/capture/index.js';
import { StepClock, type Clock } from '../../src/core/clock.js';
import { OrderBook } from '../../src/core/book.js';
import { createLogger, log } from '../../src/core/log.js';

/** The capture writer, store and range reader on a temporary directory. */

const T0 = 1_800_000_000_000 - (1_800_000_000_000 % HOUR_MS);
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'crossbook-capture-'));
  dirs.push(d);
  return d;
}

/** A clock the test sets. */
function clockAt(t: { now: number }): Clock {
  // No step of its own (it starts at -Infinity): it reads what the test set, even back in time.
  return new StepClock(-Infinity, () => t.now);
}

function open(dir: string, opts: StoreOptions = {}, blockBytes?: number): Capture {
  return new Capture(new CaptureStore(dir, opts), { clock: clockAt({ now: T0 }), log, ...(blockBytes ? { blockBytes } : {}) });
}

async function all(store: CaptureStore, from = 0, to = Number.MAX_SAFE_INTEGER, venues?: string[]): Promise<CaptureRecord[]> {
  const out: CaptureRecord[] = [];
  for await (const r of read(store, { from, to, venues, flushes: venues === undefined })) out.push(r);
  return out;
}

describe('capture store', () => {
  it('compresses one block at a time, in the order asked: a small block waits for a large one before it', async () => {
    const store = new CaptureStore(tempDir());
    const large = randomBytes(8 * 1024 * 1024);
    const small = Buffer.from('{"type":"orderbook_delta"}');
    const done: string[] = [];
    const a = store.seal(large).then((b) => (done.push('large'), b));
    const b = store.seal(small).then((b) => (done.push('small'), b));
    const [ca, cb] = await Promise.all([a, b]);
    // On the pool together, the small block's few bytes finish long before 8 MiB do.
    expect(done).toEqual(['large', 'small']);
    expect(brotliDecompressSync(ca).equals(large)).toBe(true);
    expect(brotliDecompressSync(cb).equals(small)).toBe(true);
  });

  it('keeps every record with its venue, receive time, kind, connection and payload, in one global order across venues', async () => {
    const dir = tempDir();
    const cap = open(dir, {}, 2_000);
    const a = cap.venue('venue_a');
    const b = cap.venue('venue_b');
    for (let i = 0; i < 500; i++) {
      a.frame(`{"type":"orderbook_delta","seq":${i},"msg":{"market_ticker":"KX-${i % 7}"}}`, 1 + (i % 2), T0 + i);
      if (i % 3 === 0) b.frame(`[{"event_type":"price_change","i":${i}}]`, 1, T0 + i);
      if (i % 100 === 0) cap.markFlush(T0 + i);
    }
    b.doc({ markets: [{ id: 'm1', question: 'Will it rain? ☔' }] }, T0 + 600);
    a.reset(2, ['KX-1']);
    a.reset(1);
    await cap.close();
    const recs = await all(new CaptureStore(dir));
    expect(recs).toHaveLength(500 + 167 + 5 + 1 + 2);
    expect(recs.map((r) => r.seq)).toEqual(recs.map((_, i) => i + 1));
    expect(recs[0]).toEqual({
      seq: 1,
      venue: 'venue_a',
      t: T0,
      kind: 'frame',
      conn: 1,
      payload: '{"type":"orderbook_delta","seq":0,"msg":{"market_ticker":"KX-0"}}',
    });
    expect(recs[1]).toMatchObject({ venue: 'venue_b', kind: 'frame', payload: '[{"event_type":"price_change","i":0}]' });
    expect(recs[2]).toMatchObject({ venue: '_turn', kind: 'flush', t: T0 });
    expect(recs.at(-3)).toMatchObject({ venue: 'venue_b', kind: 'doc', payload: '{"markets":[{"id":"m1","question":"Will it rain? ☔"}]}' });
    expect(recs.at(-2)).toMatchObject({ kind: 'reset', conn: 2, payload: '["KX-1"]' });
    expect(recs.at(-1)).toMatchObject({ kind: 'reset', conn: 1, payload: '' });
    // A window and a venue filter (without the flush markers).
    const w = await all(new CaptureStore(dir), T0 + 100, T0 + 199, ['venue_a']);
    expect(w.map((r) => r.t)).toEqual(Array.from({ length: 100 }, (_, i) => T0 + 100 + i));
    // A new process continues the sequence.
    const again = open(dir);
    again.venue('venue_c').frame('{}', 1, T0 + 700);
    await again.close();
    expect((await all(new CaptureStore(dir))).at(-1)).toMatchObject({ seq: recs.length + 1, venue: 'venue_c' });
  });

  it('compresses: a block of similar frames takes several times fewer bytes than the frames', async () => {
    const dir = tempDir();
    const cap = open(dir);
    let raw = 0;
    for (let i = 0; i < 5_000; i++) {
      const f = `{"type":"orderbook_delta","sid":3,"seq":${1000 + i},"msg":{"market_ticker":"KXBTCD-26DEC31-T${100000 + (i % 50) * 250}","price_dollars":"0.${String(10 + (i % 80)).padStart(2, '0')}00","delta_fp":"${(i % 13) - 6}.00","side":"${i % 2 ? 'yes' : 'no'}"}}`;
      raw += f.length;
      cap.venue('venue_a').frame(f, 1, T0 + i);
    }
    await cap.close();
    expect(cap.stats.written).toBeLessThan(raw / 5);
    expect(cap.stats.bytes).toBe(cap.stats.written);
  });

  it('retention drops whole segments: older than the age, then the oldest past the byte budget', async () => {
    const dir = tempDir();
    const cap = open(dir);
    for (let h = 0; h < 5; h++) {
      for (let i = 0; i < 50; i++) cap.venue('venue_a').frame(`{"h":${h},"i":${i}}`, 1, T0 + h * HOUR_MS + i);
      await cap.flush();
    }
    await cap.close();
    const store = new CaptureStore(dir);
    expect(store.segments().map((s) => s.hour)).toEqual([0, 1, 2, 3, 4].map((h) => T0 + h * HOUR_MS));
    // Now = the end of hour 4; keep 2.5 hours: hours 0 and 1 ended more than that ago.
    const r = store.prune(T0 + 5 * HOUR_MS, 2.5 * HOUR_MS, Number.MAX_SAFE_INTEGER);
    expect(r.removed).toBe(2);
    expect(store.segments().map((s) => s.hour)).toEqual([2, 3, 4].map((h) => T0 + h * HOUR_MS));
    const recs = await all(store);
    expect(recs).toHaveLength(150);
    expect(recs[0]!.payload).toBe('{"h":2,"i":0}');
    // Bytes: only the newest segment fits.
    const last = store.segments().at(-1)!;
    store.prune(T0 + 5 * HOUR_MS, 100 * HOUR_MS, last.bytes);
    expect(store.segments().map((s) => s.hour)).toEqual([T0 + 4 * HOUR_MS]);
  });

  it('a corrupt block is a clear error naming the file, the blocks before it still read, and the file is left as it was', async () => {
    const dir = tempDir();
    const cap = open(dir);
    for (let i = 0; i < 3; i++) {
      cap.venue('venue_a').frame(`{"block":${i}}`, 1, T0 + i);
      await cap.flush();
    }
    await cap.close();
    const store = new CaptureStore(dir);
    const seg = store.segments()[0]!;
    const refs = store.headers(seg.file);
    expect(refs).toHaveLength(3);
    const bytes = readFileSync(seg.file);
    bytes[refs[1]!.offset + 56 + 2]! ^= 0xff; // a byte inside the second block's compressed bytes
    writeFileSync(seg.file, bytes);
    const seen: CaptureRecord[] = [];
    const err = await (async () => {
      for await (const r of read(store, { from: 0, to: Number.MAX_SAFE_INTEGER })) seen.push(r);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CaptureCorruptError);
    expect((err as Error).message).toContain(seg.file);
    expect((err as Error).message).toContain(`at byte ${refs[1]!.offset}`);
    expect(seen.map((r) => r.payload)).toEqual(['{"block":0}']);
    expect(readFileSync(seg.file).equals(bytes)).toBe(true);
    // A file that is not a segment at all.
    writeFileSync(seg.file, 'not a capture file');
    await expect(all(store)).rejects.toThrow(/bad magic/);
  });

  it('a short last block (a write cut off by a crash) is skipped, and the next process writes a new segment', async () => {
    const dir = tempDir();
    const cap = open(dir);
    cap.venue('venue_a').frame('{"n":1}', 1, T0);
    await cap.close();
    const seg = new CaptureStore(dir).segments()[0]!;
    appendFileSync(seg.file, Buffer.from([0x43, 0x42, 0x4c, 0x4b, 0xff, 0xff]));
    const again = open(dir);
    again.venue('venue_a').frame('{"n":2}', 1, T0 + 1);
    await again.close();
    const store = new CaptureStore(dir);
    expect(store.segments()).toHaveLength(2);
    expect((await all(store)).map((r) => r.payload)).toEqual(['{"n":1}', '{"n":2}']);
    expect(store.tornTails).toBe(1);
  });

  it('a nearly full disk pauses capture (records dropped and counted, nothing written, no crash) and it resumes once there is room', async () => {
    const dir = tempDir();
    const disk = { free: 1024 };
    const cap = open(dir, { freeBytes: () => disk.free, minFreeBytes: 64 * 1024 });
    const a = cap.venue('venue_a');
    a.frame('{"lost":1}', 1, T0);
    await cap.flush();
    expect(cap.stats).toMatchObject({ paused: true, drops: 1, pending: 0 });
    expect(cap.stats.reason).toContain('disk nearly full');
    a.frame('{"lost":2}', 1, T0 + 1);
    expect(cap.stats.drops).toBe(2);
    disk.free = 1024 * 1024 * 1024;
    await cap.flush();
    expect(cap.stats.paused).toBe(false);
    a.frame('{"kept":3}', 1, T0 + 2);
    await cap.close();
    expect((await all(new CaptureStore(dir))).map((r) => r.payload)).toEqual(['{"kept":3}']);
  });

  it('a write failure that repeats (its directory removed) is logged once, then once a minute with the drops counted', async () => {
    const dir = tempDir();
    const lines: string[] = [];
    const t = { now: T0 };
    const gone = (): number => {
      throw Object.assign(new Error(`ENOENT: no such file or directory, statfs '${dir}'`), { code: 'ENOENT' });
    };
    const cap = new Capture(new CaptureStore(dir, { freeBytes: gone }), {
      clock: clockAt(t),
      log: createLogger('info', { write: (l: string) => void lines.push(l) }),
    });
    const failures = (): { err: string; dropped: number }[] =>
      lines
        .map((l) => JSON.parse(l) as { msg: string; err: string; dropped: number })
        .filter((l) => l.msg.startsWith('capture write failed'))
        .map(({ err, dropped }) => ({ err, dropped }));
    for (let i = 0; i < 5; i++) {
      cap.venue('venue_a').frame(`{"n":${i}}`, 1, t.now);
      cap.venue('venue_b').frame(`{"n":${i}}`, 1, t.now);
      await cap.flush();
      t.now += 1_000;
    }
    expect(cap.stats.drops).toBe(10);
    expect(failures()).toEqual([{ err: expect.stringContaining('ENOENT') as string, dropped: 1 }]);
    t.now += 60_000;
    cap.venue('venue_a').frame('{"n":5}', 1, t.now);
    await cap.flush();
    expect(failures().map((f) => f.dropped)).toEqual([1, 11]);
    expect(cap.stats.paused).toBe(false); // not a full disk: the next block is tried again
    await cap.close();
  });

  it("while a stream's write waits for the compression before it, the flushes meanwhile add their records to that write, not a block each", async () => {
    const dir = tempDir();
    const store = new CaptureStore(dir);
    const cap = new Capture(store, { clock: clockAt({ now: T0 }), log });
    const busy = store.seal(randomBytes(8 * 1024 * 1024)); // the one compression at a time is taken
    const a = cap.venue('venue_a');
    const flushes: Promise<void>[] = [];
    for (let i = 0; i < 10; i++) {
      a.frame(`{"n":${i}}`, 1, T0 + i);
      flushes.push(cap.flush());
    }
    await Promise.all([busy, ...flushes]);
    await cap.close();
    expect(store.segments('venue_a').flatMap((s) => store.headers(s.file).map((b) => b.count))).toEqual([10]);
    expect((await all(new CaptureStore(dir))).map((r) => r.payload)).toEqual(Array.from({ length: 10 }, (_, i) => `{"n":${i}}`));
    expect(cap.stats).toMatchObject({ records: 10, pending: 0, drops: 0 });
  });

  it('a block filled while a write waits goes into that write, and the blocks after it follow in order', async () => {
    const dir = tempDir();
    const store = new CaptureStore(dir);
    const cap = new Capture(store, { clock: clockAt({ now: T0 }), log, blockBytes: 200 });
    const busy = store.seal(randomBytes(8 * 1024 * 1024));
    const a = cap.venue('venue_a');
    const payloads: string[] = [];
    const flushes: Promise<void>[] = [];
    for (let i = 0; i < 40; i++) {
      payloads.push(`{"n":${i},"pad":"${'x'.repeat(i % 7)}"}`);
      a.frame(payloads[i]!, 1, T0 + i);
      if (i % 3 === 0) flushes.push(cap.flush());
    }
    await Promise.all([busy, ...flushes]);
    await cap.close();
    const blocks = store.segments('venue_a').flatMap((s) => store.headers(s.file));
    for (const b of blocks) expect(b.rawBytes).toBeLessThan(400); // near blockBytes: a waiting write took a full block as it was
    expect(blocks.map((b) => b.firstSeq)).toEqual([...blocks.map((b) => b.firstSeq)].sort((x, y) => x - y));
    expect((await all(new CaptureStore(dir))).map((r) => [r.seq, r.payload])).toEqual(payloads.map((p, i) => [i + 1, p]));
  });

  it('past its buffer bound new records are dropped, not queued', () => {
    const dir = tempDir();
    const cap = new Capture(new CaptureStore(dir), { clock: clockAt({ now: T0 }), log, maxPendingBytes: 100, blockBytes: 1 << 30 });
    for (let i = 0; i < 10; i++) cap.venue('venue_a').frame('{"abcdefghijklmnopqrstuvwxyz":0123456789}', 1, T0);
    expect(cap.stats.pending).toBe(3);
    expect(cap.stats.drops).toBe(7);
  });

  it('book checkpoints: the books with the seq they cover; a moment is the latest checkpoint before it plus the records after its seq', async () => {
    const dir = tempDir();
    const t = { now: T0 };
    const cap = new Capture(new CaptureStore(dir), { clock: clockAt(t), log });
    const book = new OrderBook('KX-1');
    book.snapshot([[4000, 10]], [[4200, 5]], T0);
    const a = cap.venue('venue_a');
    a.frame('{"n":1}', 1, T0);
    a.frame('{"n":2}', 1, T0 + 1);
    t.now = T0 + 10;
    await cap.checkpoint([['venue_a', 'KX-1', book]]);
    book.apply([['bid', 4000, 0]], T0 + 20);
    a.frame('{"n":3}', 1, T0 + 20);
    t.now = T0 + 30;
    await cap.checkpoint([
      ['venue_a', 'KX-1', book],
      ['venue_a', 'KX-2', new OrderBook('KX-2')],
    ]);
    a.frame('{"n":4}', 1, T0 + 40);
    await cap.close();
    const store = new CaptureStore(dir);
    expect(await store.checkpointAt(T0 + 5)).toBeUndefined();
    expect(await store.checkpointAt(T0 + 25)).toEqual({
      seq: 2,
      t: T0 + 10,
      books: [{ venue: 'venue_a', instrument: 'KX-1', bids: [[4000, 10]], asks: [[4200, 5]], ts: T0 }],
    });
    const cp = (await store.checkpointAt(T0 + 45))!;
    expect(cp).toMatchObject({ seq: 3, t: T0 + 30, books: [{ instrument: 'KX-1', bids: [], asks: [[4200, 5]] }] });
    const after = (await all(store, cp.t, T0 + 45)).filter((r) => r.seq > cp.seq);
    expect(after.map((r) => r.payload)).toEqual(['{"n":4}']);
    // A damaged checkpoint is a clear error.
    writeFileSync(store.checkpoints().at(-1)!.file, 'garbage');
    await expect(store.checkpointAt(T0 + 45)).rejects.toThrow(/checkpoint does not read back/);
  });
});
