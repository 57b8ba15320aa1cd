import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBatches, ReplayFeed } from '../../src/capture/index.js';
import { eventLineWriter, itemLine, ndjsonChunks, type EventFilter } from '../../src/capture/ndjson.js';
import { buildCore, buildHttp, type Core } from '../../src/compose.js';
import { loadConfig } from '../../src/config/load.js';
import { log } from '../../src/core/log.js';
import { Persistence } from '../../src/persist/store.js';
import type { HttpServer } from '../../src/server/http.js';

/**
 * GET /api/v2/replay served from the normalized cache on the real service (written on the history
 * index's thread): a session of recorded venue frames (test/fixtures) captured by the service's
 * writer; a window from the session's start is served from the cache, byte for byte what the frames
 * path gives; a window that starts mid-session is served from the cache too, the same lines the
 * window from the start has from there on (filtered or not).
 */

const config = loadConfig({ env: {}, overrides: { capture: { replayCache: true } } });
const kalshi = config.venues.find((v) => v.protocol === 'kalshi')!;
const poly = config.venues.find((v) => v.protocol === 'polymarket')!;
const fixture = (path: string): string[] => (JSON.parse(readFileSync(join(__dirname, '../fixtures', path), 'utf8')) as unknown[]).map((f) => JSON.stringify(f));
const T0 = Date.now() - 60_000;

let dir: string;
let core: Core;
let http: HttpServer;
let base: string;
let key: string;
let last = T0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cb-replay-cache-'));
  core = buildCore(config, { persistence: new Persistence(dir), log });
  http = buildHttp(core).http;
  base = `http://127.0.0.1:${await http.listen('127.0.0.1', 0)}/api/v2`;
  key = core.keys.create('enterprise', 'tests').key;
  const k = [...fixture('kalshi/ws_orderbook_snapshot_then_delta_spec_example.json'), ...fixture('kalshi/ws_ticker_capture_2026-02-12.json')];
  const pm = [...fixture('polymarket/ws_book_captures_2026-02-12.json'), ...fixture('polymarket/ws_price_change_burst_capture_2026-09-29.json')];
  const a = core.capture!.venue(kalshi.label);
  const b = core.capture!.venue(poly.label);
  for (let i = 0; i < Math.max(k.length, pm.length); i++) {
    if (i < k.length) a.frame(k[i]!, 1, (last = T0 + 2 * i));
    if (i < pm.length) b.frame(pm[i]!, 1, (last = T0 + 2 * i + 1));
  }
  // The capture flow's background step: written, then mapped into the cache.
  await core.normCache!.sync();
});

afterAll(async () => {
  http.close();
  await core.bookHistory?.close();
  await core.capture?.close();
  await core.persistence.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What the frames path (fresh mappers from `from`, the /replay line writer) gives for a window. */
async function framesText(from: number, to: number, filter: EventFilter = {}): Promise<string> {
  let s = '';
  const items = new ReplayFeed(config.venues).items(readBatches(core.capture!.store, { from, to, flushes: false }));
  for await (const c of ndjsonChunks(items, itemLine(eventLineWriter(config.venues, filter)))) s += c;
  return s;
}

async function replay(query: string): Promise<string> {
  const r = await fetch(`${base}/replay?${query}`, { headers: { 'x-api-key': key } });
  expect(r.status).toBe(200);
  return r.text();
}

describe('GET /replay from the normalized cache', () => {
  it('serves a window from the session start from the cache, byte for byte the frames path', async () => {
    const served = core.normCache!.counts.served;
    const body = await replay(`from=${T0}&to=${last}`);
    expect(core.normCache!.counts.served).toBe(served + 1);
    expect(core.normCache!.counts.fellBack).toBe(0);
    expect(body.split('\n').length).toBeGreaterThan(100);
    expect(body).toBe(await framesText(T0, last));
    const books = await replay(`from=${T0 - 1000}&to=${last - 50}&types=book&market_ids=FED-23DEC-T3.00`);
    expect(core.normCache!.counts.served).toBe(served + 2);
    expect(books).toBe(await framesText(T0 - 1000, last - 50, { types: ['book'], markets: new Set(['FED-23DEC-T3.00']) }));
  });

  it('serves a window that starts mid-session from the cache: the lines of the window from the start, from there on', async () => {
    const served = core.normCache!.counts.served;
    const from = T0 + 41;
    const lines = (body: string, min: number): string[] =>
      body.split('\n').filter((l) => l !== '' && !l.startsWith('{"type":"end"') && (JSON.parse(l) as { recv_ts: number }).recv_ts >= min);
    const whole = await replay(`from=${T0}&to=${last}`);
    const body = await replay(`from=${from}&to=${last}`);
    expect(core.normCache!.counts.served).toBe(served + 2);
    const want = lines(whole, from);
    expect(want.length).toBeGreaterThan(10);
    expect(lines(body, from)).toEqual(want);
    expect(body.endsWith(`{"type":"end","count":${want.length}}\n`)).toBe(true);
    const q = `types=book,trade&market_ids=FED-23DEC-T3.00`;
    expect(lines(await replay(`from=${from}&to=${last}&${q}`), from)).toEqual(lines(await replay(`from=${T0}&to=${last}&${q}`), from));
  });
});
