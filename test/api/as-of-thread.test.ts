import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/core/log.js';
import { SliceFile, sliceStarts } from '../../src/history/slice.js';
import { startService, type Service } from '../../src/service.js';

// A read of a moment the index has not reached waits for it (tests wait for the event they need): on a busy
// CI machine the index runs more than the shipped 5 s behind. Below vitest's 60 s, so a stuck index still fails
// as its 503, not as a timeout.
const AS_OF_WAIT_MS = 45_000;
// The close test checks a close that indexed every record: the shipped 10 s bound (capture.historyCloseMs) can be up on
// a busy CI machine, and the close is then cut short on purpose (its own tests cover that). Below vitest's 60 s.
const HISTORY_CLOSE_MS = 45_000;

/**
 * SIMULATOR DATA. The history index runs on its own thread (src/history/client.ts, worker.ts): a
 * thread that dies is said in one log line, `as_of` reads then answer 503 with the reason, /status
 * shows it stopped, and the live reads and the capture go on; closing the service has the thread
 * write its open slice before it ends (what SIGTERM runs).
 */
function service(name: string, seed: number): { dir: string; lines: string[]; start: () => Promise<Service> } {
  const dir = mkdtempSync(join(tmpdir(), `cb-asof-${name}-`));
  const lines: string[] = [];
  const config = loadConfig({
    env: {},
    overrides: {
      dataDir: dir,
      server: { host: '127.0.0.1', port: 0, baseUrl: null },
      sim: { ticksPerSecond: 100, seed, process: 'inline' },
      capture: {
        enabled: true,
        retention: { days: 7, bytes: 1024 ** 3 },
        checkpointIntervalMs: 300_000,
        asOfWaitMs: AS_OF_WAIT_MS,
        historyCloseMs: HISTORY_CLOSE_MS,
      },
    },
  });
  return { dir, lines, start: () => startService(config, { log: createLogger('info', { write: (l: string) => void lines.push(l) }) }) };
}

const dead = service('dead', 31);
const closing = service('close', 37);
let a: Service;
let b: Service;
let c: Service | undefined;
let key: string;

beforeAll(async () => {
  [a, b] = await Promise.all([dead.start(), closing.start()]);
  key = a.keys.create('pro', 'tests').key;
});

afterAll(async () => {
  await a?.close();
  await b?.close();
  await c?.close();
  for (const d of [dead.dir, closing.dir]) rmSync(d, { recursive: true, force: true });
});

async function get(path: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const r = await fetch(`${a.url}/api/v2${path}`, { headers: { 'x-api-key': key } });
  return { status: r.status, json: (await r.json()) as Record<string, unknown> };
}

/** A venue_a market whose quote comes from a book. */
function bookMarket(svc: Service): string | undefined {
  for (const q of svc.state.quotes.all()) if (q.venue === 'venue_a' && q.fromBook && svc.state.books.marketRecvTs(q.venue, q.marketId) > 0) return q.marketId;
  return undefined;
}

describe('the history index thread', () => {
  it('answers as_of reads from its thread while it runs, and /status says ok', async () => {
    const index = a.bookHistory!;
    const from = index.indexedTo;
    await vi.waitFor(
      () => {
        expect(bookMarket(a)).toBeDefined();
        expect(index.indexedTo).toBeGreaterThan(from);
      },
      { timeout: 30_000, interval: 100 },
    );
    const path = `/orderbook?platform=venue_a&market_id=${encodeURIComponent(bookMarket(a)!)}&depth=10`;
    const live = await get(path);
    expect(live.status).toBe(200);
    const past = await get(`${path}&as_of=${live.json['as_of_ms'] as number}`);
    expect(past.status).toBe(200);
    // The book's both sides at that moment, as live answered them (the body has no top-level bids: they are under yes and no).
    expect((live.json['yes'] as { bids: unknown[] }).bids.length).toBeGreaterThan(0);
    expect([past.json['yes'], past.json['no']]).toEqual([live.json['yes'], live.json['no']]);
    const st = await get('/status');
    expect(st.json['history']).toMatchObject({ status: 'ok', reason: null });
  });

  it('dies with one log line; as_of reads then answer 503 with the reason, /status says stopped, live reads go on', async () => {
    const index = a.bookHistory!;
    await index.thread.terminate();
    await vi.waitFor(() => expect(index.stopped).toMatch(/its thread exited \(code 1\)/), { timeout: 30_000, interval: 50 });
    const died = dead.lines.map((l) => JSON.parse(l) as { msg: string; reason?: string }).filter((l) => l.msg === 'history index thread died');
    expect(died).toHaveLength(1);
    expect(died[0]!.reason).toMatch(/not restarted/);
    // What the capture's tap held for the thread is dropped, and it holds nothing more (no queue growing on the main thread).
    expect(a.capture!.tap).toBeUndefined();
    const path = `/orderbook?platform=venue_a&market_id=${encodeURIComponent(bookMarket(a)!)}&depth=10`;
    const live = await get(path);
    expect(live.status).toBe(200);
    const past = await get(`${path}&as_of=${live.json['as_of_ms'] as number}`);
    expect(past.status).toBe(503);
    expect(past.json['code']).toBe('as_of.index_stopped');
    expect(past.json['error']).toMatch(/history index stopped: its thread exited/);
    await vi.waitFor(
      async () => {
        const st = await get('/status');
        expect(st.json['history']).toMatchObject({ status: 'stopped', reason: expect.stringMatching(/thread exited/) });
      },
      { timeout: 10_000, interval: 50 },
    );
    // The capture flow's syncs go on writing the capture without the thread.
    const written = a.capture!.stats.written;
    await vi.waitFor(() => expect(a.capture!.stats.written).toBeGreaterThan(written), { timeout: 30_000, interval: 100 });
  });

  it('writes its open slice when the service closes (as on SIGTERM), then ends', async () => {
    const index = b.bookHistory!;
    const from = index.indexedTo;
    await vi.waitFor(
      () => {
        expect(bookMarket(b)).toBeDefined();
        expect(index.indexedTo).toBeGreaterThan(from);
      },
      { timeout: 30_000, interval: 100 },
    );
    const market = bookMarket(b)!;
    const hist = join(b.capture!.store.dir, '_history');
    // 5-minute slices: the open one is on disk only after the close (one before it only if the test ran across a 5-minute boundary).
    const written = sliceStarts(hist);
    expect(written.length).toBeLessThanOrEqual(1);
    await b.close();
    expect(b.capture!.tap).toBeUndefined();
    const starts = sliceStarts(hist);
    expect(starts).toHaveLength(written.length + 1);
    // The market's part: its book's snapshot among its events of the first slice holding it (the venue
    // connected in the first slice, or in the second when the test ran across a 5-minute boundary first).
    const parts = starts.map((s) => SliceFile.open(hist, s).market(`venue_a\u0000${market}`)).filter((p) => p !== undefined);
    expect(parts.length).toBeGreaterThan(0);
    expect(parts[0]!.events.some(([, e]) => e.type === 'book_snapshot')).toBe(true);
    expect(index.stopped).toBeUndefined();
    expect(closing.lines.some((l) => l.includes('history index thread died'))).toBe(false);
  });

  it('started again on the same DATA_DIR: a moment while it was stopped is a 400 as_of.not_indexed naming the gap, a moment before the stop reads', async () => {
    const hist = join(closing.dir, 'capture', '_history');
    // The closed service's last slice: the one its close wrote.
    const start = sliceStarts(hist).at(-1);
    const covers = SliceFile.open(hist, start!).covers!;
    expect(covers[0]).toBeGreaterThanOrEqual(start!);
    // The stop's moment has passed on this clock before the next process begins (its index covers from then).
    await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(covers[1] + 1), { timeout: 5_000, interval: 5 });
    const again = (c = await closing.start());
    const ckey = again.keys.create('pro', 'tests').key;
    const read = async (path: string): Promise<{ status: number; json: Record<string, unknown> }> => {
      const r = await fetch(`${again.url}/api/v2${path}`, { headers: { 'x-api-key': ckey } });
      return { status: r.status, json: (await r.json()) as Record<string, unknown> };
    };
    // A market the closed service had a book of (its state is still in memory).
    const path = `/orderbook?platform=venue_a&market_id=${encodeURIComponent(bookMarket(b)!)}&depth=10`;
    // Once the new process has indexed its first event, the gap has both ends.
    let stopped: { status: number; json: Record<string, unknown> } | undefined;
    await vi.waitFor(
      async () => {
        stopped = await read(`${path}&as_of=${covers[1] + 1}`);
        expect(stopped.json['gap_to']).toEqual(expect.any(Number));
      },
      { timeout: 30_000, interval: 100 },
    );
    expect(stopped!.status).toBe(400);
    expect(stopped!.json).toMatchObject({ code: 'as_of.not_indexed', gap_from: covers[1] });
    expect(stopped!.json['gap_to']).toBeGreaterThan(covers[1] + 1);
    expect(String(stopped!.json['error'])).toContain(new Date(covers[1]).toISOString());
    const before = await read(`${path}&as_of=${covers[1]}`);
    expect((before.json['yes'] as { bids: unknown[] }).bids.length).toBeGreaterThan(0);
    expect(before.status).toBe(200);
  });
});
