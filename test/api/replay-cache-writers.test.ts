import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subscription } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { readBatches, ReplayFeed } from '../../src/capture/index.js';
import { eventLineWriter, itemLine, ndjsonChunks } from '../../src/capture/ndjson.js';
import { buildCore, buildHttp, type Core } from '../../src/compose.js';
import { loadConfig } from '../../src/config/load.js';
import { log } from '../../src/core/log.js';
import type { Trade } from '../../src/core/types.js';
import { Persistence } from '../../src/persist/store.js';
import type { HttpServer } from '../../src/server/http.js';
import { createVenueFeed } from '../../src/venues/common/runtime.js';
import { KalshiMapper } from '../../src/venues/kalshi/mappers.js';
import { ScriptedSocket } from '../support/scripted-socket.js';

/**
 * The service's history thread takes a feed runtime's records with the events the runtime made of
 * them, and maps itself every record appended any other way (`CaptureSink.venue`: a test, an
 * import). In one service: a Kalshi feed runtime (a scripted socket delivers recorded frames, a
 * REST page goes through its frame path) and Polymarket frames and an event written straight into
 * the capture. /replay serves the window from the normalized cache, and its lines are the frames
 * path's (ReplayFeed over the capture), both venues' lines in it. Recorded frames from test/fixtures.
 */

const config = loadConfig({ env: {}, overrides: { capture: { replayCache: true } } });
const kalshi = config.venues.find((v) => v.protocol === 'kalshi')!;
const poly = config.venues.find((v) => v.protocol === 'polymarket')!;
const json = (path: string): unknown => JSON.parse(readFileSync(join(__dirname, '../fixtures', path), 'utf8')) as unknown;
const frames = (path: string): string[] => (json(path) as unknown[]).map((f) => JSON.stringify(f));
const T0 = Date.now() - 60_000;

let dir: string;
let core: Core;
let http: HttpServer;
let base: string;
let key: string;
let sub: Subscription | undefined;
let to = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cb-replay-writers-'));
  core = buildCore(config, { persistence: new Persistence(dir), log });
  http = buildHttp(core).http;
  base = `http://127.0.0.1:${await http.listen('127.0.0.1', 0)}/api/v2`;
  key = core.keys.create('enterprise', 'tests').key;

  // Written straight into the service's capture: frames and a built event, mapped by nobody live.
  const b = core.capture!.venue(poly.label);
  const pm = [...frames('polymarket/ws_book_captures_2026-02-12.json'), ...frames('polymarket/ws_price_change_burst_capture_2026-09-29.json')];
  pm.forEach((f, i) => {
    b.frame(f, 1, T0 + i);
    if (i === 3) b.event(trade(T0 + i));
  });

  // A feed runtime on the same capture (its writer maps what it appends and hands the events).
  let socket: ScriptedSocket | undefined;
  const ingest = { ...config.ingest, heartbeatMs: 600_000, reconnectMinMs: 600_000, reconnectMaxMs: 600_000 };
  const feed = createVenueFeed(
    { venue: kalshi, endpoints: { rest: 'http://127.0.0.1:9/', ws: 'ws://127.0.0.1:9/' }, ingest, log, capture: core.capture },
    'kalshi',
    (rt) => ({
      mapper: new KalshiMapper(rt.venue, rt.log, { stats: rt.stats }),
      start: () => {
        rt.frame(json('kalshi/rest_markets_page_first2_2026-09-13.json'), rt.now());
        void rt.stream({ url: 'ws://127.0.0.1:9/', onOpen: () => undefined });
      },
    }),
    {
      createWebSocket: () => {
        socket = new ScriptedSocket();
        return socket as unknown as WebSocket;
      },
    },
  );
  let live = 0;
  sub = feed.events$.subscribe(() => live++);
  socket!.open();
  for (const f of [...frames('kalshi/ws_orderbook_snapshot_then_delta_spec_example.json'), ...frames('kalshi/ws_ticker_capture_2026-02-12.json')])
    socket!.frame(f);
  expect(live).toBeGreaterThan(10);
  to = Date.now();
  await core.normCache!.sync();
});

afterAll(async () => {
  sub?.unsubscribe();
  http.close();
  await core.bookHistory?.close();
  await core.capture?.close();
  await core.persistence.close();
  rmSync(dir, { recursive: true, force: true });
});

function trade(t: number): Trade {
  return { type: 'trade', venue: poly.label, timestamp: t, localTimestamp: t, marketId: 'm-raw', tradeId: 'raw-1', price: 5000, yesPrice: Number.NaN, size: 3 };
}

describe('GET /replay from the normalized cache, with records of a feed runtime and records written otherwise', () => {
  it('serves the frames path lines of both: the runtime handed its events, the thread mapped the rest', async () => {
    const served = core.normCache!.counts.served;
    const r = await fetch(`${base}/replay?from=${T0}&to=${to}`, { headers: { 'x-api-key': key } });
    expect(r.status).toBe(200);
    const body = await r.text();
    expect(core.normCache!.counts.served).toBe(served + 1);
    expect(core.normCache!.counts.fellBack).toBe(0);

    let frames = '';
    const items = new ReplayFeed(config.venues).items(readBatches(core.capture!.store, { from: T0, to, flushes: false }));
    for await (const c of ndjsonChunks(items, itemLine(eventLineWriter(config.venues, {})))) frames += c;
    expect(body).toBe(frames);
    const lines = body.split('\n').filter((l) => l !== '' && !l.startsWith('{"type":"end"'));
    const of = (venue: string): string[] => lines.filter((l) => l.includes(`"${venue}"`));
    expect(of(kalshi.label).length).toBeGreaterThan(10);
    expect(of(poly.label).length).toBeGreaterThan(50);
    expect(lines.some((l) => l.includes('"raw-1"'))).toBe(true);
  });
});
