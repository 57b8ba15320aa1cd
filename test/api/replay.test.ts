import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readBatches, ReplayFeed, type ReplayItem } from '../../src/capture/index.js';
import { buildCore, buildHttp, type Core } from '../../src/compose.js';
import { loadConfig } from '../../src/config/load.js';
import { log } from '../../src/core/log.js';
import { Persistence } from '../../src/persist/store.js';
import { HttpServer } from '../../src/server/http.js';

/**
 * GET /api/v2/replay on the real HTTP layer over a capture written by the real writer from recorded
 * venue frames (test/fixtures), and the streamed answer's backpressure on the HTTP server itself.
 */

const config = loadConfig({ env: {} });
const kalshi = config.venues.find((v) => v.protocol === 'kalshi')!;
const poly = config.venues.find((v) => v.protocol === 'polymarket')!;
const fixture = (path: string): string[] => (JSON.parse(readFileSync(join(__dirname, '../fixtures', path), 'utf8')) as unknown[]).map((f) => JSON.stringify(f));
// Receive times a minute ago (inside the default retention, in the past).
const T0 = Date.now() - 60_000;
const POLY_TOKEN = '76670567130917723816490572615540605537878462672464291990940067659127658071111';

let dir: string;
let core: Core;
let http: HttpServer;
let base: string;
let key: string;
let freeKey: string;
let recorded = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cb-replay-'));
  core = buildCore(config, { persistence: new Persistence(dir), log });
  const layer = buildHttp(core);
  http = layer.http;
  const port = await http.listen('127.0.0.1', 0);
  base = `http://127.0.0.1:${port}/api/v2`;
  key = core.keys.create('enterprise', 'tests').key;
  freeKey = core.keys.create('free', 'tests').key;
  const cap = core.capture!;
  const a = cap.venue(kalshi.label);
  const b = cap.venue(poly.label);
  const k = [...fixture('kalshi/ws_orderbook_snapshot_then_delta_spec_example.json'), ...fixture('kalshi/ws_ticker_capture_2026-02-12.json')];
  const pm = fixture('polymarket/ws_price_change_burst_capture_2026-09-29.json');
  for (let i = 0; i < Math.max(k.length, pm.length); i++) {
    if (i < k.length) a.frame(k[i]!, 1, T0 + 2 * i);
    if (i < pm.length) b.frame(pm[i]!, 1, T0 + 2 * i + 1);
    recorded = 2 * i + 1;
  }
  await cap.flush();
});

afterAll(async () => {
  http.close();
  await core.capture?.close();
  await core.persistence.close();
  rmSync(dir, { recursive: true, force: true });
});

async function get(query: string, k = key): Promise<{ status: number; type: string | null; lines: Record<string, unknown>[]; text: string }> {
  const r = await fetch(`${base}/replay?${query}`, { headers: { 'x-api-key': k } });
  const text = await r.text();
  const lines = r.ok
    ? text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    : [];
  return { status: r.status, type: r.headers.get('content-type'), lines, text };
}

describe('GET /replay', () => {
  it('streams the events of the window as NDJSON in receive order, each with seq, recv_ts and platform, then the end line', async () => {
    const r = await get(`from=${T0}&to=${T0 + recorded}`);
    expect(r.status).toBe(200);
    expect(r.type).toBe('application/x-ndjson');
    const end = r.lines.at(-1)!;
    const events = r.lines.slice(0, -1);
    expect(end).toEqual({ type: 'end', count: events.length });
    expect(events.length).toBeGreaterThan(50);
    const seqs = events.map((l) => l['seq'] as number);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(new Set(events.map((l) => l['platform']))).toEqual(new Set([kalshi.slug, poly.slug]));
    for (const l of events) expect(l['recv_ts']).toBe(l['localTimestamp']);
    // The same events ReplayFeed gives over the same records.
    const items: ReplayItem[] = [];
    for await (const batch of new ReplayFeed(config.venues).items(readBatches(core.capture!.store, { from: T0, to: T0 + recorded, flushes: false })))
      items.push(...batch);
    expect(events.map((l) => [l['seq'], l['type']])).toEqual(items.flatMap((i) => (i.type === 'event' ? [[i.seq, i.event.type]] : [])));
  });

  it('filters by platform, types and market_ids; takes ISO 8601 times', async () => {
    const books = await get(`from=${new Date(T0).toISOString()}&to=${new Date(T0 + recorded).toISOString()}&platform=${poly.slug}&types=book`);
    const ev = books.lines.slice(0, -1);
    expect(ev.length).toBeGreaterThan(10);
    expect(new Set(ev.map((l) => l['type']))).toEqual(new Set(['book_snapshot', 'book_delta']));
    expect(new Set(ev.map((l) => l['platform']))).toEqual(new Set([poly.slug]));
    const one = await get(`from=${T0}&to=${T0 + recorded}&market_ids=FED-23DEC-T3.00`);
    const evs = one.lines.slice(0, -1);
    expect(evs.length).toBeGreaterThan(0);
    expect(new Set(evs.map((l) => l['market_id']))).toEqual(new Set(['FED-23DEC-T3.00']));
    expect(one.lines.at(-1)).toEqual({ type: 'end', count: evs.length });
    // A window with nothing in it is just the end line.
    expect((await get(`from=${T0 - 10_000}&to=${T0 - 1}`)).lines).toEqual([{ type: 'end', count: 0 }]);
    expect(books.lines.some((l) => l['instrument'] === POLY_TOKEN)).toBe(true);
  });

  it('answers bad input with a 400 naming the problem, and a window outside retention with a 400 saying what is kept', async () => {
    const bad = async (q: string): Promise<{ code: string; error: string }> => {
      const r = await fetch(`${base}/replay?${q}`, { headers: { 'x-api-key': key } });
      expect(r.status).toBe(400);
      return (await r.json()) as { code: string; error: string };
    };
    expect((await bad(`to=${T0}`)).error).toContain('from');
    expect((await bad(`from=yesterday&to=${T0}`)).error).toMatch(/from.*ms since the epoch or an ISO 8601 time/);
    expect((await bad(`from=${T0 + 10}&to=${T0}`)).error).toContain('is after');
    expect((await bad(`from=${T0}&to=${T0 + 1}&types=book,quotes`)).error).toContain('"quotes"');
    expect((await bad(`from=${T0}&to=${T0 + 1}&platform=venue_zz`)).code).toBe('validation.invalid');
    const old = await bad('from=1000&to=2000');
    expect(old.code).toBe('replay.outside_retention');
    expect(old.error).toContain('outside what capture retains');
    expect((await bad(`from=${Date.now() + 3_600_000}&to=${Date.now() + 7_200_000}`)).code).toBe('replay.outside_retention');
  });

  it('is plan-gated: the free plan gets a 403', async () => {
    const r = await get(`from=${T0}&to=${T0 + 1}`, freeKey);
    expect(r.status).toBe(403);
    expect(JSON.parse(r.text)).toMatchObject({ code: 'auth.endpoint_blocked' });
  });
});

describe('streamed answers: backpressure', () => {
  it('a reader that pauses holds the stream back (nothing is pulled past what the socket takes); resumed, it gets every chunk in order', async () => {
    const server = new HttpServer(log);
    const CHUNK = 256 * 1024;
    const TOTAL = 400; // 100 MiB if nothing held it back
    let pulled = 0;
    let finished = false;
    server.get('/big', () => ({
      status: 200,
      body: '',
      contentType: 'text/plain',
      stream: (async function* () {
        try {
          for (let i = 0; i < TOTAL; i++) {
            pulled++;
            yield String(i % 10).repeat(CHUNK);
          }
        } finally {
          finished = true;
        }
      })(),
    }));
    const port = await server.listen('127.0.0.1', 0, 'off');
    try {
      const sock = net.connect(port, '127.0.0.1');
      let received = 0;
      const firstBytes = new Promise<void>((resolve) => sock.once('data', () => resolve()));
      sock.on('data', (d: Buffer) => (received += d.length));
      sock.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n');
      await firstBytes;
      sock.pause();
      // Wait until the server stops pulling: the count holds over consecutive looks.
      let last = -1;
      let still = 0;
      await vi.waitFor(
        () => {
          still = pulled === last ? still + 1 : 0;
          last = pulled;
          expect(still).toBeGreaterThanOrEqual(5);
        },
        { timeout: 30_000, interval: 50 },
      );
      expect(pulled * CHUNK).toBeLessThan(48 * 1024 * 1024);
      expect(finished).toBe(false);
      const done = new Promise<void>((resolve) => sock.on('data', () => received >= TOTAL * CHUNK && resolve()));
      sock.resume();
      await done;
      expect(pulled).toBe(TOTAL);
      sock.destroy();
    } finally {
      server.close();
    }
  });

  it('large chunks reach a node:http client whole under backpressure: every byte, in order, the chunk framing intact', async () => {
    const server = new HttpServer(log);
    // 1 MiB chunks of distinct text: a chunk whose data went missing behind its head breaks the framing or the hash.
    const chunks = Array.from({ length: 7 }, (_, i) =>
      Buffer.from(
        createHash('sha256')
          .update(String(i))
          .digest('hex')
          .repeat(16 * 1024),
      ),
    );
    const TOTAL = 48;
    const want = createHash('sha256');
    for (let i = 0; i < TOTAL; i++) want.update(chunks[i % chunks.length]!);
    server.get('/big', () => ({
      status: 200,
      body: '',
      stream: (async function* () {
        for (let i = 0; i < TOTAL; i++) yield i % 2 === 0 ? chunks[i % chunks.length]! : chunks[i % chunks.length]!.toString('latin1');
      })(),
    }));
    const port = await server.listen('127.0.0.1', 0, 'off');
    try {
      for (let round = 0; round < 3; round++) {
        const got = await new Promise<{ hash: string; bytes: number }>((resolve, reject) => {
          const h = createHash('sha256');
          let bytes = 0;
          let seen = 0;
          const req = httpRequest({ host: '127.0.0.1', port, path: '/big' }, (res) => {
            res.on('data', (c: Buffer) => {
              h.update(c);
              bytes += c.length;
              // The reader stops now and then for a turn, so the server meets backpressure again and again.
              if (++seen % 5 === 0) {
                res.pause();
                setImmediate(() => res.resume());
              }
            });
            res.on('end', () => resolve({ hash: h.digest('hex'), bytes }));
            res.on('error', reject);
          });
          req.on('error', reject);
          req.end();
        });
        expect(got.bytes).toBe(TOTAL * chunks[0]!.length);
        expect(got.hash).toBe(want.copy().digest('hex'));
      }
    } finally {
      server.close();
    }
  });

  it('a client gone ends the stream (its finally runs)', async () => {
    const server = new HttpServer(log);
    let finished = false;
    let pulled = 0;
    server.get('/endless', () => ({
      status: 200,
      body: '',
      stream: (async function* () {
        try {
          for (;;) {
            pulled++;
            yield 'x'.repeat(64 * 1024);
          }
        } finally {
          finished = true;
        }
      })(),
    }));
    const port = await server.listen('127.0.0.1', 0, 'off');
    try {
      const sock = net.connect(port, '127.0.0.1');
      const first = new Promise<void>((resolve) => sock.once('data', () => resolve()));
      sock.write('GET /endless HTTP/1.1\r\nHost: x\r\n\r\n');
      await first;
      sock.pause();
      sock.destroy();
      await vi.waitFor(() => expect(finished).toBe(true), { timeout: 30_000, interval: 20 });
      expect(pulled).toBeLessThan(10_000);
    } finally {
      server.close();
    }
  });
});
