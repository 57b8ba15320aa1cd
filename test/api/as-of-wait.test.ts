import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/core/log.js';
import { startService, type Service } from '../../src/service.js';

/**
 * SIMULATOR DATA. An `as_of` read of a moment the history index may not have reached waits for it
 * at most `capture.asOfWaitMs`, then answers 503 `as_of.index_behind` with Retry-After (at 100k
 * markets on 2 cores the index can be minutes behind the capture, and the read waited for all of
 * it). Here the bound is 0: such a read never waits.
 */
const dir = mkdtempSync(join(tmpdir(), 'cb-asof-wait-'));
let svc: Service;
let key: string;

beforeAll(async () => {
  const config = loadConfig({
    env: {},
    overrides: {
      dataDir: dir,
      server: { host: '127.0.0.1', port: 0, baseUrl: null },
      sim: { ticksPerSecond: 100, seed: 41, process: 'inline' },
      capture: { enabled: true, retention: { days: 7, bytes: 1024 ** 3 }, checkpointIntervalMs: 300_000, asOfWaitMs: 0 },
    },
  });
  svc = await startService(config, { log: createLogger('warn') });
  key = svc.keys.create('pro', 'tests').key;
});

afterAll(async () => {
  await svc?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function get(path: string): Promise<{ status: number; json: Record<string, unknown>; retryAfter: string | null }> {
  const r = await fetch(`${svc.url}/api/v2${path}`, { headers: { 'x-api-key': key } });
  return { status: r.status, json: (await r.json()) as Record<string, unknown>, retryAfter: r.headers.get('retry-after') };
}

describe('as_of reads and an index behind the capture', () => {
  it('answers 503 as_of.index_behind with Retry-After for a moment the index has not reached, and reads a moment it has', async () => {
    const index = svc.bookHistory!;
    const from = index.indexedTo;
    let market: string | undefined;
    await vi.waitFor(
      () => {
        market = [...svc.state.quotes.all()].find((q) => q.venue === 'venue_a' && q.fromBook)?.marketId;
        expect(market).toBeDefined();
        expect(index.indexedTo).toBeGreaterThan(from);
      },
      { timeout: 30_000, interval: 100 },
    );
    const path = `/orderbook?platform=venue_a&market_id=${encodeURIComponent(market!)}&depth=5`;
    // Now: past what the index has reached (a read racing a sync that just indexed this very moment is asked again).
    let behind: Awaited<ReturnType<typeof get>> | undefined;
    let t = 0;
    await vi.waitFor(
      async () => {
        t = Date.now();
        behind = await get(`${path}&as_of=${t}`);
        expect(behind.status).toBe(503);
      },
      { timeout: 30_000, interval: 50 },
    );
    expect(behind!.json).toMatchObject({ code: 'as_of.index_behind', success: false });
    expect(behind!.json['indexed_to']).toBeLessThan(t);
    expect(behind!.json['error']).toMatch(/has not reached it yet \(indexed to \d{4}-/);
    expect(Number(behind!.retryAfter)).toBeGreaterThanOrEqual(1);
    // A moment it has indexed (more than a second before where it stands) is answered without waiting.
    const reached = index.indexedTo;
    await vi.waitFor(() => expect(index.indexedTo).toBeGreaterThan(reached + 1_000), { timeout: 30_000, interval: 100 });
    const past = await get(`${path}&as_of=${reached}`);
    expect(past.status, JSON.stringify(past.json)).toBe(200);
  });
});
