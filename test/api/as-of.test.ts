import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { HISTORY_LIMITS } from '../../src/history/index.js';
import { startService, type Service } from '../../src/service.js';

// A read of a moment the index has not reached waits for it (tests wait for the event they need): on a busy
// CI machine the index runs more than the shipped 5 s behind. Below vitest's 60 s, so a stuck index still fails
// as its 503, not as a timeout.
const AS_OF_WAIT_MS = 45_000;

/**
 * SIMULATOR DATA. `as_of` over the real service: the simulator's venues on loopback, capture on
 * with 2-second history slices. A live answer carries `as_of`; asking again with that `as_of`
 * rebuilds the state from the capture log (the history index) and answers the same body, both
 * while the moment is in the open slice (memory) and once its slice is written to disk.
 */
const dir = mkdtempSync(join(tmpdir(), 'cb-asof-'));
const SLICE_MS = 2000;
const config = loadConfig({
  env: {},
  overrides: {
    dataDir: dir,
    server: { host: '127.0.0.1', port: 0, baseUrl: null },
    sim: { ticksPerSecond: 400, seed: 23, process: 'inline' },
    ingest: { pollMs: 300 },
    capture: { enabled: true, retention: { days: 7, bytes: 1024 ** 3 }, checkpointIntervalMs: SLICE_MS, asOfWaitMs: AS_OF_WAIT_MS },
  },
});

// The open slice's packed chunks small, so they go to disk within a 2-second slice and the reads
// of the open slice below come from its file (at 1 MiB, a slice of this world never fills one).
HISTORY_LIMITS.chunkBytes = 4096;

let svc: Service;
let key: string;
let freeKey: string;

beforeAll(async () => {
  svc = await startService(config);
  key = svc.keys.create('pro', 'tests').key;
  freeKey = svc.keys.create('free', 'tests').key;
});

afterAll(async () => {
  await svc?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function get(path: string, k = key): Promise<{ status: number; text: string; json: Record<string, unknown> }> {
  const r = await fetch(`${svc.url}/api/v2${path}`, { headers: { 'x-api-key': k } });
  const text = await r.text();
  return { status: r.status, text, json: JSON.parse(text) as Record<string, unknown> };
}

/** Markets of a venue whose quote comes from a book. */
function bookMarkets(venue: string, n: number): string[] {
  const out: string[] = [];
  for (const q of svc.state.quotes.all())
    if (q.venue === venue && q.fromBook && svc.state.books.marketRecvTs(q.venue, q.marketId) > 0) {
      out.push(q.marketId);
      if (out.length === n) break;
    }
  return out;
}

describe('as_of: reads of the past, the same body as the live answer that carried it', () => {
  const live: { path: string; text: string; asOf: number }[] = [];

  it('every state read says as_of (ISO 8601) and as_of_ms (the receive time of the last event it reflects)', async () => {
    await vi.waitFor(
      () => {
        expect(bookMarkets('venue_a', 4).length).toBe(4);
        expect(bookMarkets('venue_b', 4).length).toBe(4);
        expect([...svc.matching.allGroups()].some((g) => g.members.some((x) => svc.state.books.marketRecvTs(x.venue, x.marketId) > 0))).toBe(true);
      },
      { timeout: 30_000, interval: 100 },
    );
    const books = [...bookMarkets('venue_a', 4).map((m) => ['venue_a', m]), ...bookMarkets('venue_b', 4).map((m) => ['venue_b', m])];
    for (const [v, m] of books) {
      const path = `/orderbook?platform=${v}&market_id=${encodeURIComponent(m!)}&depth=10`;
      const r = await get(path);
      expect(r.status).toBe(200);
      const asOf = r.json['as_of_ms'] as number;
      expect(asOf).toBeGreaterThan(0);
      expect(r.json['as_of']).toBe(new Date(asOf).toISOString());
      live.push({ path, text: r.text, asOf });
    }
    const ids = books.map(([v, m]) => `${v}:${m}`).join(',');
    const bulk = await get(`/prices/bulk?ids=${encodeURIComponent(ids)}`);
    expect(bulk.status).toBe(200);
    const prices = Object.values(bulk.json['prices'] as Record<string, { updated_at: string }>);
    expect(bulk.json['as_of']).toBe(
      prices
        .map((x) => x.updated_at)
        .sort()
        .at(-1),
    );
    live.push({ path: `/prices/bulk?ids=${encodeURIComponent(ids)}`, text: bulk.text, asOf: bulk.json['as_of_ms'] as number });
    const group = [...svc.matching.allGroups()].find((g) => g.members.some((x) => svc.state.books.marketRecvTs(x.venue, x.marketId) > 0));
    expect(group).toBeDefined();
    const unified = await get(`/unified-orderbook?group_id=${group!.groupId}`);
    expect(unified.status).toBe(200);
    expect(unified.json['timestamp']).toBe(unified.json['as_of']);
    live.push({ path: `/unified-orderbook?group_id=${group!.groupId}`, text: unified.text, asOf: unified.json['as_of_ms'] as number });

    const lastEvent = svc.state.current!.localTimestamp;
    for (const path of ['/arb', '/ev', '/markets?limit=5']) {
      const r = await get(path);
      expect(r.status, path).toBe(200);
      const ms = r.json['as_of_ms'] as number;
      expect(r.json['as_of'], path).toBe(new Date(ms).toISOString());
      // Receive times of events, not the wall time of the read: never past the last event applied now.
      expect(ms, path).toBeLessThanOrEqual(svc.state.current!.localTimestamp);
      if (path !== '/markets?limit=5') expect(ms, path).toBeGreaterThanOrEqual(lastEvent);
    }
  });

  it('an as_of read (ms or ISO) answers the same body, from the open slice and again once the slice is on disk', async () => {
    expect(live.length).toBeGreaterThan(8);
    for (const l of live) {
      const r = await get(`${l.path}&as_of=${l.asOf}`);
      expect(r.status, `${l.path} ${r.text}`).toBe(200);
      expect(r.text, l.path).toBe(l.text);
    }
    const first = live[0]!;
    expect((await get(`${first.path}&as_of=${new Date(first.asOf).toISOString()}`)).text).toBe(first.text);
    // Wait until the slices holding these moments are written, then read them from the files.
    const index = svc.bookHistory!;
    const newest = Math.max(...live.map((l) => l.asOf));
    await vi.waitFor(() => expect(index.indexedTo).toBeGreaterThan(Math.floor(newest / SLICE_MS) * SLICE_MS + 2 * SLICE_MS), {
      timeout: 30_000,
      interval: 100,
    });
    await index.sync();
    for (const l of live) expect(index.slicesOnDisk).toContain(Math.floor(l.asOf / SLICE_MS) * SLICE_MS);
    for (const l of live) expect((await get(`${l.path}&as_of=${l.asOf}`)).text, `${l.path} from disk`).toBe(l.text);
  });

  it('answers a bad or unretained as_of with a 400 naming the retained window, and a plan without as_of with a 403', async () => {
    const path = live[0]!.path;
    const bad = await get(`${path}&as_of=yesterday`);
    expect(bad.status).toBe(400);
    expect(bad.json['error']).toMatch(/as_of.*ms since the epoch or an ISO 8601 time/);
    for (const t of ['1000', '2001-01-01T00:00:00Z', String(Date.now() + 3_600_000)]) {
      const r = await get(`${path}&as_of=${t}`);
      expect(r.status, t).toBe(400);
      expect(r.json['code']).toBe('as_of.outside_retention');
      expect(r.json['error']).toMatch(/outside what capture retains: \d{4}-.* \.\. now/);
      expect(r.json['retained_from']).toBeTypeOf('number');
    }
    const ids = `/prices/bulk?ids=venue_a:X&as_of=1000`;
    expect((await get(ids)).json['code']).toBe('as_of.outside_retention');
    const free = await get(`${path}&as_of=${live[0]!.asOf}`, freeKey);
    expect(free.status).toBe(403);
    expect(free.json['code']).toBe('auth.endpoint_blocked');
  });
});

describe('the history index has bounds (last: it stops the index of this service)', () => {
  it('stops past its open-slice bound with a log line, and as_of reads then answer 503 saying why while live reads go on', async () => {
    const index = svc.bookHistory!;
    const path = live0();
    const bound = HISTORY_LIMITS.openEvents;
    HISTORY_LIMITS.openEvents = 1;
    try {
      await vi.waitFor(
        async () => {
          await index.sync();
          expect(index.stopped).toMatch(/open slice passed 1 events/);
        },
        { timeout: 30_000, interval: 200 },
      );
    } finally {
      HISTORY_LIMITS.openEvents = bound;
    }
    // The capture's tap no longer holds records for the stopped index (nothing queues on the main thread).
    expect(svc.capture!.tap).toBeUndefined();
    const live = await get(path);
    expect(live.status).toBe(200);
    const r = await get(`${path}&as_of=${live.json['as_of_ms'] as number}`);
    expect(r.status).toBe(503);
    expect(r.json['code']).toBe('as_of.index_stopped');
    expect(r.json['error']).toMatch(/history index stopped/);
    // The dropped open slice's file went with it.
    expect(readdirSync(join(dir, 'capture', '_history')).filter((n) => n.endsWith('.open'))).toEqual([]);
  });
});

/** An order book path of a venue_a market with a book. */
function live0(): string {
  return `/orderbook?platform=venue_a&market_id=${encodeURIComponent(bookMarkets('venue_a', 1)[0]!)}&depth=10`;
}
