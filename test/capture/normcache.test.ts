import { mkdtempSync, openSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync, closeSync, writeSync, readSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { brotliCompressSync, crc32 } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { Capture, CaptureStore, readBatches, ReplayFeed } from '../../src/capture/index.js';
import { eventLineWriter, itemLine, ndjsonChunks, type EventFilter } from '../../src/capture/ndjson.js';
import { NORM_BLOCK_HEAD, NORM_FORMAT, normalizerVersion, normBlockHeader, unpackNormBlock } from '../../src/capture/normblock.js';
import { NormCache, NormLines, type NormVenueSnapshot } from '../../src/capture/normcache.js';
import { cachedLines } from '../../src/capture/normread.js';
import { loadConfig } from '../../src/config/load.js';
import { VirtualClock } from '../../src/core/clock.js';
import { createLogger, log } from '../../src/core/log.js';
import { HISTORY_LIMITS, HistoryIndex } from '../../src/history/index.js';

/**
 * The normalized cache behind GET /replay (src/capture/normcache.ts, normread.ts): on a session of
 * recorded venue frames (test/fixtures: Kalshi and Polymarket WebSocket captures) written through the
 * real capture writer and followed by the history index that writes the cache (in this process here;
 * on its thread in the service), the cache's answer for a window from the run's start is byte for
 * byte the frames path's (fresh mappers from the window's start, the live frame path, the /replay line
 * writer), for the whole window, a window cut mid-block and every filter; a window that starts
 * mid-run is the whole run's lines from its start on; a corrupt, truncated or other-version entry is
 * logged and the answer goes on from the frames, still byte for byte the same.
 */

const config = loadConfig({ env: {} });
const venues = config.venues;
const kalshi = venues.find((v) => v.protocol === 'kalshi')!;
const poly = venues.find((v) => v.protocol === 'polymarket')!;
const T0 = 1_800_000_000_000;
const fixture = (path: string): string[] => (JSON.parse(readFileSync(join(__dirname, '../fixtures', path), 'utf8')) as unknown[]).map((f) => JSON.stringify(f));

const dirs: string[] = [];
const open: { cap: Capture; index: HistoryIndex }[] = [];
afterEach(async () => {
  // The index closes the cache's files.
  for (const s of open.splice(0)) {
    await s.index.close(s.cap.lastSeq);
    // The capture's segment files too: left open, they were closed by the collector (a warning each).
    await s.cap.close();
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A recorded session captured with the history index writing the cache following it (syncs as the capture flow runs them); `t` its last receive time. */
async function session(
  opts: { version?: string; before?: (cap: Capture) => Promise<void> } = {},
): Promise<{ cap: Capture; norm: NormCache; index: HistoryIndex; t: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'cb-normcache-'));
  dirs.push(dir);
  const cap = new Capture(new CaptureStore(dir), { clock: new VirtualClock(T0), log, blockBytes: 16 * 1024 });
  // What an earlier process captured: before the cache's run, so not in it.
  await opts.before?.(cap);
  // Small blocks, so the session spans many of them and the merge crosses block ends.
  const lines = new NormLines(cap.store, cap.lastSeq, venues, { log, blockBytes: 4 * 1024, version: opts.version ?? normalizerVersion(venues) });
  const index = new HistoryIndex(cap.store, venues, { sliceMs: 300_000, after: cap.lastSeq, from: T0, log, lines });
  open.push({ cap, index });
  // What HistoryClient.normSync does across the thread: the writer's flush, then the index (and the cache) up to it.
  const norm = new NormCache(async () => {
    const upTo = cap.lastSeq;
    await cap.flush();
    return (await index.normView(upTo))!;
  }, cap.store);
  const k = [...fixture('kalshi/ws_orderbook_snapshot_then_delta_spec_example.json'), ...fixture('kalshi/ws_ticker_capture_2026-02-12.json')];
  const pm = [...fixture('polymarket/ws_book_captures_2026-02-12.json'), ...fixture('polymarket/ws_price_change_burst_capture_2026-09-29.json')];
  const a = cap.venue(kalshi.label);
  const b = cap.venue(poly.label);
  let t = T0;
  for (let i = 0; i < Math.max(k.length, pm.length); i++) {
    if (i < k.length) a.frame(k[i]!, 1, (t = T0 + 2 * i));
    if (i < pm.length) b.frame(pm[i]!, 1, (t = T0 + 2 * i + 1));
    if (i % 40 === 39) await norm.sync();
  }
  await norm.sync();
  return { cap, norm, index, t };
}

/** The frames path of GET /replay for a window, after `after` and counted from `count`: what the cache must equal. */
function frames(cap: Capture, from: number, to: number, filter: EventFilter = {}, only?: string[]): (after: number, count: number) => AsyncGenerator<string> {
  const line = itemLine(eventLineWriter(venues, filter));
  return (after, count) =>
    ndjsonChunks(
      new ReplayFeed(venues, log).items(readBatches(cap.store, { from, to, venues: only, flushes: false })),
      (it) => (it.seq > after ? line(it) : undefined),
      count,
    );
}

async function text(chunks: AsyncIterable<string | Uint8Array>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of chunks) parts.push(typeof c === 'string' ? Buffer.from(c) : Buffer.from(c));
  return Buffer.concat(parts).toString('utf8');
}

/** A logger whose lines are kept. */
function logLines(): { logger: typeof log; lines: string[] } {
  const lines: string[] = [];
  const dest = new Writable({
    write(chunk: Buffer, _enc, done): void {
      lines.push(chunk.toString());
      done();
    },
  });
  return { logger: createLogger('info', dest), lines };
}

async function both(
  s: { cap: Capture; norm: NormCache },
  from: number,
  to: number,
  filter: EventFilter = {},
  only: string[] = venues.map((v) => v.label),
  snaps?: NormVenueSnapshot[],
): Promise<{ cached: string; frames: string; fellBack: boolean; lines: string[] }> {
  const f = frames(s.cap, from, to, filter, only);
  const { logger, lines } = logLines();
  let fellBack = false;
  const cached = await text(cachedLines(snaps ?? s.norm.snapshot(only), { from, to, filter, fallback: f, log: logger, onFallback: () => (fellBack = true) }));
  return { cached, frames: await text(f(-Infinity, 0)), fellBack, lines };
}

describe('the normalized cache', () => {
  it('gives the frames path byte for byte: whole session, a window cut mid-block, each filter', async () => {
    const s = await session();
    expect(s.norm.serves([kalshi.label, poly.label], T0)).toBe(true);
    const snap = s.norm.snapshot([kalshi.label, poly.label]);
    expect(snap.reduce((n, v) => n + v.blocks.length, 0)).toBeGreaterThan(6);
    const whole = await both(s, T0, s.t);
    expect(whole.fellBack).toBe(false);
    expect(whole.cached.split('\n').length).toBeGreaterThan(100);
    expect(whole.cached).toBe(whole.frames);
    const mid = T0 + Math.floor((s.t - T0) / 3);
    const cut = await both(s, T0 - 5000, mid);
    expect(cut.cached).toBe(cut.frames);
    expect(cut.cached.length).toBeLessThan(whole.cached.length);
    for (const filter of [{ types: ['book' as const] }, { types: ['trade' as const, 'price' as const] }, { markets: new Set(['FED-23DEC-T3.00']) }]) {
      const r = await both(s, T0, s.t, filter);
      expect(r.cached.split('\n').length).toBeGreaterThan(2);
      expect(r.cached).toBe(r.frames);
    }
    const one = await both(s, T0, s.t, {}, [poly.label]);
    expect(one.cached).toBe(one.frames);
    expect(one.cached).not.toContain(`"platform":"${kalshi.slug}"`);
  });

  it('serves a window that starts mid-run: the lines a window from the run start has from there on, filtered or not', async () => {
    const s = await session();
    const whole = await both(s, T0, s.t);
    const body = (x: string): string[] => x.split('\n').filter((l) => l !== '' && !l.startsWith('{"type":"end"'));
    for (const from of [T0 + 41, T0 + Math.floor((s.t - T0) / 2) + 1, s.t - 3]) {
      expect(s.norm.serves([kalshi.label, poly.label], from)).toBe(true);
      const to = s.t - 2;
      const want = body(whole.cached).filter((l) => {
        const r = JSON.parse(l) as { recv_ts: number };
        return r.recv_ts >= from && r.recv_ts <= to;
      });
      const mid = await both(s, from, to);
      expect(mid.fellBack).toBe(false);
      expect(want.length).toBeGreaterThan(0);
      expect(body(mid.cached)).toEqual(want);
      expect(mid.cached.endsWith(`{"type":"end","count":${want.length}}\n`)).toBe(true);
      // Filtered: the same lines the filtered whole-run answer has from `from` on.
      const filter = { types: ['book' as const], markets: new Set(['FED-23DEC-T3.00']) };
      const fw = body((await both(s, T0, s.t, filter)).cached).filter((l) => (JSON.parse(l) as { recv_ts: number }).recv_ts >= from);
      const fm = await both(s, from, s.t, filter);
      expect(body(fm.cached)).toEqual(fw);
    }
  });

  it("does not serve a window that reaches an earlier process's records (they are not in this run)", async () => {
    const s = await session({
      before: async (cap) => {
        for (let i = 0; i < 5; i++) cap.venue(kalshi.label).frame('{"type":"ticker","sid":1,"msg":{}}', 1, T0 - 1000 + i);
        await cap.flush();
      },
    });
    expect(s.norm.serves([kalshi.label], T0 - 1000)).toBe(false);
    expect(s.norm.serves([kalshi.label], T0 - 996)).toBe(false);
    expect(s.norm.serves([kalshi.label], T0 - 995)).toBe(true);
    expect(s.norm.serves([kalshi.label], T0 + 41)).toBe(true);
  });

  it('stops with the history index it is written from: then it serves nothing', async () => {
    const s = await session();
    expect(s.norm.serves([kalshi.label], T0)).toBe(true);
    const a = s.cap.venue(kalshi.label);
    for (let i = 0; i < 30; i++) a.frame('{"type":"ticker","sid":1,"msg":{}}', 1, s.t + 10 + i);
    // The index falls further behind than its bound allows: it stops, and the cache with it.
    const limits = { ...HISTORY_LIMITS };
    HISTORY_LIMITS.behind = 10;
    try {
      await s.norm.sync();
    } finally {
      Object.assign(HISTORY_LIMITS, limits);
    }
    expect(s.norm.stopped).toContain('the history index it is written from stopped');
    expect(s.norm.serves([kalshi.label], T0)).toBe(false);
  });

  it('a corrupt block is logged and the rest of the window comes from the frames: the same bytes', async () => {
    const s = await session();
    const snap = s.norm.snapshot([kalshi.label, poly.label]);
    const v = snap.find((x) => x.blocks.length >= 3)!;
    // Flip a byte inside the third block's compressed bytes: served blocks before it, frames after.
    const ref = v.blocks[2]!;
    const fd = openSync(v.file, 'r+');
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, ref.offset + NORM_BLOCK_HEAD + 5);
    b[0] = b[0]! ^ 0xff;
    writeSync(fd, b, 0, 1, ref.offset + NORM_BLOCK_HEAD + 5);
    closeSync(fd);
    const r = await both(s, T0, s.t, {}, undefined, snap);
    expect(r.fellBack).toBe(true);
    expect(r.cached).toBe(r.frames);
    const line = r.lines.find((l) => l.includes('normalized cache could not be read'));
    expect(line).toBeDefined();
    expect(line).toContain('checksum does not match');
    expect(line).toContain(v.file);
  });

  it('a truncated file is logged and served from the frames: the same bytes', async () => {
    const s = await session();
    const snap = s.norm.snapshot([kalshi.label, poly.label]);
    const v = snap.find((x) => x.blocks.length >= 2)!;
    truncateSync(v.file, v.blocks[1]!.offset + 10);
    const r = await both(s, T0, s.t, { types: ['book'] }, undefined, snap);
    expect(r.fellBack).toBe(true);
    expect(r.cached).toBe(r.frames);
    expect(r.lines.find((l) => l.includes('normalized cache could not be read'))).toContain('truncated');
  });

  it('a garbled head or a file emptied is a clear log line and the frames, never a crash', async () => {
    const s = await session();
    const snap = s.norm.snapshot([kalshi.label, poly.label]);
    writeFileSync(snap[0]!.file, 'not a cache');
    const r = await both(s, T0, s.t, {}, undefined, snap);
    expect(r.fellBack).toBe(true);
    expect(r.cached).toBe(r.frames);
    expect(r.lines.some((l) => l.includes('normalized cache could not be read'))).toBe(true);
  });

  it('a changed normalizer version ignores the old cache: logged, and the frames (with the fix) are served', async () => {
    const s = await session({ version: 'mappers-as-they-were' });
    const old = s.norm.snapshot([kalshi.label, poly.label]);
    expect(statSync(old[0]!.file).size).toBeGreaterThan(0);
    // The code changed since the files were written: the process now runs another version.
    const now = old.map((v) => ({ ...v, version: 'mappers-fixed' }));
    const r = await both(s, T0, s.t, {}, undefined, now);
    expect(r.fellBack).toBe(true);
    expect(r.cached).toBe(r.frames);
    expect(r.lines.find((l) => l.includes('normalized cache could not be read'))).toContain('written by normalizer version mappers-as-they-were');
  });

  it('a cache written in an earlier block format (Brotli blocks, format 2) is not read: logged, and the frames are served', async () => {
    const v2 = normalizerVersion(venues, undefined, 2);
    expect(NORM_FORMAT).toBeGreaterThan(2);
    expect(v2).not.toBe(normalizerVersion(venues));
    // What the code before LZ4 wrote: its version at the head of each file, Brotli-compressed block bodies.
    const s = await session({ version: v2 });
    const snap = s.norm.snapshot([kalshi.label, poly.label]);
    for (const v of snap) {
      const file = readFileSync(v.file);
      const parts: Buffer[] = [file.subarray(0, v.blocks[0]!.offset)];
      for (const ref of v.blocks) {
        const body = await unpackNormBlock(file.subarray(ref.offset + NORM_BLOCK_HEAD, ref.offset + NORM_BLOCK_HEAD + ref.length), ref.raw);
        const old = brotliCompressSync(body);
        parts.push(normBlockHeader(old, ref.count, ref.firstSeq, ref.lastSeq, ref.raw), old);
      }
      writeFileSync(v.file, Buffer.concat(parts));
    }
    // This code reads the files as its own (its version), with its block list: the head says otherwise.
    const now = snap.map((v) => ({ ...v, version: normalizerVersion(venues) }));
    const r = await both(s, T0, s.t, {}, undefined, now);
    expect(r.fellBack).toBe(true);
    expect(r.cached).toBe(r.frames);
    expect(r.lines.find((l) => l.includes('normalized cache could not be read'))).toContain(`written by normalizer version ${v2}`);
    // Even under this code's version, a Brotli block is refused (it does not decompress as LZ4 to its length), never served.
    const s2 = await session();
    const snap2 = s2.norm.snapshot([kalshi.label, poly.label]);
    const v = snap2.find((x) => x.blocks.length >= 2)!;
    const ref = v.blocks[0]!;
    const fd = openSync(v.file, 'r+');
    const body = Buffer.alloc(ref.length);
    readSync(fd, body, 0, ref.length, ref.offset + NORM_BLOCK_HEAD);
    const brotli = brotliCompressSync(await unpackNormBlock(body, ref.raw));
    // Same length as the LZ4 bytes (padded or cut) and a matching checksum, so only the codec can refuse it.
    const same = Buffer.alloc(ref.length);
    brotli.copy(same, 0, 0, Math.min(brotli.length, ref.length));
    writeSync(fd, same, 0, ref.length, ref.offset + NORM_BLOCK_HEAD);
    closeSync(fd);
    const fixed = snap2.map((x) => (x === v ? { ...x, blocks: [{ ...ref, crc: crc32(same) }, ...x.blocks.slice(1)] } : x));
    const r2 = await both(s2, T0, s2.t, {}, undefined, fixed);
    expect(r2.fellBack).toBe(true);
    expect(r2.cached).toBe(r2.frames);
    expect(r2.lines.find((l) => l.includes('normalized cache could not be read'))).toContain('does not decompress');
  });

  it('read on its thread (NormCache.lines): the same bytes, each filter, a corrupt block served from the frames, a read left early', async () => {
    const s = await session();
    const all = [kalshi.label, poly.label];
    const onThread = async (from: number, to: number, filter: EventFilter = {}): Promise<{ text: string; fellBack: boolean }> => {
      let fellBack = false;
      const text0 = await text(
        s.norm.lines(all, { from, to, filter, fallback: frames(s.cap, from, to, filter, all), log, onFallback: () => (fellBack = true) }),
      );
      return { text: text0, fellBack };
    };
    try {
      for (const filter of [{}, { types: ['book' as const] }, { markets: new Set(['FED-23DEC-T3.00']) }]) {
        const r = await onThread(T0, s.t, filter);
        expect(r.fellBack).toBe(false);
        expect(r.text).toBe(await text(frames(s.cap, T0, s.t, filter, all)(-Infinity, 0)));
      }
      // Two reads at once share the thread: each is whole.
      const [x, y] = await Promise.all([onThread(T0, s.t), onThread(T0, s.t, { types: ['book'] })]);
      expect(x.text).toBe(await text(frames(s.cap, T0, s.t, {}, all)(-Infinity, 0)));
      expect(y.text).toBe(await text(frames(s.cap, T0, s.t, { types: ['book'] }, all)(-Infinity, 0)));
      // A read left after its first chunk: the thread drops it, and the next read is whole.
      const it = s.norm.lines(all, { from: T0, to: s.t, filter: {}, fallback: frames(s.cap, T0, s.t, {}, all), log });
      expect((await it.next()).done).toBe(false);
      await it.return(undefined);
      const again = await onThread(T0, s.t);
      expect(again.text).toBe(await text(frames(s.cap, T0, s.t, {}, all)(-Infinity, 0)));
      // A corrupt block: the thread logs it, the rest comes from the frames, the same bytes.
      const v = s.norm.snapshot(all).find((x) => x.blocks.length >= 3)!;
      const fd = openSync(v.file, 'r+');
      const b = Buffer.alloc(1);
      readSync(fd, b, 0, 1, v.blocks[2]!.offset + NORM_BLOCK_HEAD + 5);
      b[0] = b[0]! ^ 0xff;
      writeSync(fd, b, 0, 1, v.blocks[2]!.offset + NORM_BLOCK_HEAD + 5);
      closeSync(fd);
      const r = await onThread(T0, s.t);
      expect(r.fellBack).toBe(true);
      expect(r.text).toBe(await text(frames(s.cap, T0, s.t, {}, all)(-Infinity, 0)));
      // The thread gone before a read's first chunk: that read is served from the frames, whole.
      const pending = onThread(T0, s.t);
      await s.norm.close();
      const gone = await pending;
      expect(gone.text).toBe(await text(frames(s.cap, T0, s.t, {}, all)(-Infinity, 0)));
    } finally {
      await s.norm.close();
    }
  });

  it('the version follows the mapper code and the venue configuration', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cb-normversion-'));
    dirs.push(dir);
    const mapper = join(dir, 'src', 'venues', 'x', 'mappers.ts');
    rmSync(mapper, { force: true });
    const file = join(dir, 'mappers.ts');
    writeFileSync(file, 'export const price = (s) => Number(s);');
    const v1 = normalizerVersion(venues, [file]);
    expect(normalizerVersion(venues, [file])).toBe(v1);
    writeFileSync(file, 'export const price = (s) => Math.round(Number(s) * 100) / 100;');
    expect(normalizerVersion(venues, [file])).not.toBe(v1);
    const renamed = venues.map((v) => (v.label === kalshi.label ? { ...v, slug: 'kalshi2' } : v));
    expect(normalizerVersion(renamed, [file])).not.toBe(normalizerVersion(venues, [file]));
    // The default covers the real mapper sources.
    expect(normalizerVersion(venues)).toMatch(/^[0-9a-f]{32}$/);
  });
});
